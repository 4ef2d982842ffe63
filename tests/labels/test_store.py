"""LabelStore: round trip, latest label wins, clears, torn lines, a writer killed mid-labelling, concurrent
writers."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
import warnings
from pathlib import Path

import pandas as pd
import pytest

import judgewidgets as jw
from judgewidgets.labels import LabelRecord, LabelStore, LabelsView, content_key


def test_round_trip_through_the_file(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "labels.jsonl"  # the folder is made on the first label
    store = LabelStore(path, kind="pass_fail", who="ana")
    record = store.add("item-1", "pass", note="clear answer")
    store.add("item-2", "fail")
    assert record.who == "ana" and record.kind == "pass_fail" and record.when.endswith("+00:00")
    again = LabelStore(path)
    assert again.records() == store.records()
    table = again.labels
    assert list(table.columns) == ["item", "label", "who", "when", "note"]
    assert table["label"].tolist() == ["pass", "fail"] and table["note"].iloc[0] == "clear answer"
    assert table["note"].isna().tolist() == [False, True]
    lines = path.read_text().splitlines()
    assert [json.loads(line)["item"] for line in lines] == ["item-1", "item-2"]


def test_the_latest_label_wins_and_clear_removes(tmp_path: Path) -> None:
    store = LabelStore(tmp_path / "labels.jsonl", kind="score")
    store.add("a", 2)
    store.add("b", 5)
    store.add("a", 4)  # relabelled
    store.clear("b")
    store.add("c", 1)
    again = LabelStore(tmp_path / "labels.jsonl")
    assert {k: r.label for k, r in again.latest().items()} == {"a": 4, "c": 1}
    assert "b" not in again and "a" in again and len(again) == 2
    assert len(again.records()) == 5  # the history stays in the file
    assert list(again.labels.columns) == ["item", "label", "who", "when"]  # no note given: no note column


def test_in_memory_store_needs_no_file(tmp_path: Path) -> None:
    store = LabelStore(None, kind="pairwise")
    store.add("x", "A")
    store.add("x", "tie")
    assert store.get("x") is not None and store.get("x").label == "tie"  # type: ignore[union-attr]
    assert store.path is None and "in memory" in repr(store)
    assert list(tmp_path.iterdir()) == []


def test_a_torn_last_line_is_skipped_and_the_next_label_starts_a_fresh_line(tmp_path: Path) -> None:
    path = tmp_path / "labels.jsonl"
    LabelStore(path, kind="pass_fail").add("a", "pass")
    with path.open("ab") as file:
        file.write(b'{"item": "b", "label": "fa')  # a writer died mid-line
    with pytest.warns(RuntimeWarning, match="cut off"):
        store = LabelStore(path, kind="pass_fail")
    assert set(store.latest()) == {"a"} and store.skipped == [2]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the same torn line is not reported twice
        store.add("c", "fail")
        assert set(store.latest()) == {"a", "c"}
    assert path.read_text().splitlines()[2].startswith('{"item":"c"')  # on a line of its own
    with pytest.warns(RuntimeWarning, match="line 2 .* not a label record"):
        reopened = LabelStore(path)
    assert {k: r.label for k, r in reopened.latest().items()} == {"a": "pass", "c": "fail"}


def test_a_store_of_another_kind_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "labels.jsonl"
    LabelStore(path, kind="score").add("a", 3)
    with pytest.raises(jw.InputError, match="holds score labels, not pass_fail"):
        LabelStore(path, kind="pass_fail")
    with pytest.raises(jw.InputError, match="say which kind"):
        LabelStore(tmp_path / "other.jsonl").add("a", "pass")
    with pytest.raises(jw.InputError, match="is a folder"):
        LabelStore(tmp_path)


def test_content_keys_ignore_column_names_and_missing_fields() -> None:
    key = content_key(prompt="2+2?", response="4", reference=None)
    assert key == content_key(response="4", prompt="2+2?")
    assert key == content_key(prompt="2+2?", response="4", reference=float("nan"))
    assert key != content_key(prompt="2+2?", response="4", reference="4")
    assert key != content_key(prompt="2+2?", response="5")


def test_labels_view_reads_like_a_dict(tmp_path: Path) -> None:
    store = LabelStore(tmp_path / "labels.jsonl", kind="pass_fail")
    view = LabelsView(store, {0: "k0", 1: "k1", 2: "k2"})
    store.add("k1", "fail")
    assert view == {1: "fail"} and view.get(0) is None and len(view) == 1
    LabelStore(tmp_path / "labels.jsonl", kind="pass_fail").add("k2", "pass")  # another writer
    assert dict(view) == {1: "fail", 2: "pass"}


_KILLED_WRITER = textwrap.dedent(
    """
    import sys
    from judgewidgets.labels import LabelStore

    store = LabelStore(sys.argv[1], kind="pass_fail", who="child")
    for i in range(1_000_000):
        # Every fifth label carries a 200 kB note: a kill can land inside its write.
        note = "n" * (200_000 if i % 5 == 4 else 100)
        store.add(f"item-{i}", "pass" if i % 2 else "fail", note=note)
        print(i, flush=True)  # reported as given only once add() returned
    """
)


def test_labels_survive_a_writer_killed_mid_labelling(tmp_path: Path) -> None:
    path = tmp_path / "labels.jsonl"
    child = subprocess.Popen(
        [sys.executable, "-c", _KILLED_WRITER, str(path)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    assert child.stdout is not None
    reported = []
    for line in child.stdout:
        reported.append(int(line))
        if len(reported) == 60:
            os.kill(child.pid, signal.SIGKILL)
            break
    reported += [int(line) for line in child.stdout]  # what it printed before it died
    child.wait(timeout=30)
    assert child.returncode == -signal.SIGKILL, child.stderr.read() if child.stderr else ""
    assert reported == list(range(len(reported))) and len(reported) >= 60

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        store = LabelStore(path, kind="pass_fail")
    # Only a line cut off by the kill may be skipped, and only the last one.
    assert all("cut off" in str(w.message) for w in caught)
    assert len(store.skipped) <= 1
    labels = {k: r.label for k, r in store.latest().items()}
    for i in reported:
        assert labels[f"item-{i}"] == ("pass" if i % 2 else "fail")
    # At most the label it was writing when it died is there beyond those it reported.
    assert len(labels) - len(reported) in (0, 1)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a torn line is warned about above
        store.add("after-the-crash", "pass")
        reopened = LabelStore(path, kind="pass_fail")
    assert reopened.get("after-the-crash") is not None
    assert len(reopened.latest()) == len(labels) + 1
    last = path.read_bytes().split(b"\n")[-2]
    assert json.loads(last)["item"] == "after-the-crash"


_CONCURRENT_WRITER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from judgewidgets.labels import LabelStore

    path, name, go = sys.argv[1], sys.argv[2], Path(sys.argv[3])
    store = LabelStore(path, kind="score", who=name)
    while not go.exists():
        time.sleep(0.001)
    for i in range(200):
        store.add(f"{name}-{i}", i % 5 + 1, note=name * 3000)  # 6-9 kB lines: larger than a pipe's atomic write
    """
)


def test_two_processes_appending_at_once_write_400_intact_records(tmp_path: Path) -> None:
    path, go = tmp_path / "labels.jsonl", tmp_path / "go"
    writers = [
        subprocess.Popen([sys.executable, "-c", _CONCURRENT_WRITER, str(path), name, str(go)], stderr=subprocess.PIPE)
        for name in ("w1", "w2")
    ]
    time.sleep(0.1)
    go.touch()
    reader = LabelStore(path, kind="score")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a reader never sees half a line while they write
        while any(w.poll() is None for w in writers):
            reader.records()
            time.sleep(0.002)
    for writer in writers:
        assert writer.returncode == 0, writer.stderr.read() if writer.stderr else ""
    lines = path.read_bytes().split(b"\n")
    assert lines[-1] == b"" and len(lines) == 401
    records = [LabelRecord.model_validate_json(line) for line in lines[:-1]]
    for name in ("w1", "w2"):
        mine = [r for r in records if r.who == name]
        assert [r.item for r in mine] == [f"{name}-{i}" for i in range(200)]  # each writer's order kept
        assert all(r.note == name * 3000 and r.label == int(r.item.split("-")[1]) % 5 + 1 for r in mine)
    assert len(reader.records()) == 400 and reader.skipped == []


def test_a_label_its_kind_cannot_take_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    path = tmp_path / "labels.jsonl"
    store = LabelStore(path, kind="pass_fail")
    with pytest.raises(jw.InputError, match="'maybe' is not a pass_fail label"):
        store.add("k", "maybe")
    assert not path.exists() and store.records() == []
    store.add("k", "pass")
    for bad, kind in (("A", None), (3, None), ("pass", "pairwise")):
        with pytest.raises(jw.InputError):
            store.add("k", bad, kind=kind)
    assert len(path.read_text().splitlines()) == 1
    scores = LabelStore(tmp_path / "scores.jsonl", kind="score", scale=(1, 5))
    with pytest.raises(jw.InputError, match="whole number from 1 to 5"):
        scores.add("k", 7)
    LabelStore(tmp_path / "any.jsonl", kind="score").add("k", 7.5)  # no scale given: any number
    with pytest.raises(jw.InputError, match="both the plan and its probability"):
        store.add("j", "pass", plan="abc")
    with pytest.raises(jw.InputError, match="probability is the chance"):
        store.add("j", "pass", plan="abc", probability=1.5)
    with pytest.raises(jw.InputError, match="unknown label kind"):
        LabelStore(tmp_path / "x.jsonl", kind="likert")


def test_a_store_already_holding_a_bad_line_opens_and_says_which(tmp_path: Path) -> None:
    path = tmp_path / "labels.jsonl"
    LabelStore(path, kind="pass_fail").add("a", "pass")
    with path.open("a") as file:  # written by hand, or by a version that did not check
        file.write(json.dumps({"item": "b", "label": "maybe", "kind": "pass_fail", "who": "x", "when": "t"}) + "\n")
        file.write(json.dumps({"item": "c", "label": "fail", "kind": "pass_fail", "who": "x", "when": "t"}) + "\n")
    with pytest.warns(RuntimeWarning, match="line 2 .*label 'maybe' for item b is not a pass_fail label"):
        store = LabelStore(path, kind="pass_fail")
    assert set(store.latest()) == {"a", "c"} and store.skipped == [2]
    assert "maybe" in store.problems[0]
    with pytest.warns(RuntimeWarning, match="maybe"):
        queue = jw.LabelQueue(
            pd.DataFrame({"prompt": ["p"], "response": ["r"]}), kind="pass_fail", store=path
        )  # opens: the bad line is left out, and the queue says so
    assert "could not be read" in queue.status.value and "maybe" in queue.status.value


def test_subscribers_hear_every_label_written_through_the_store(tmp_path: Path) -> None:
    store = LabelStore(tmp_path / "labels.jsonl", kind="pass_fail")
    heard: list[str] = []
    store.subscribe(lambda record: heard.append(f"{record.item}:{record.action}"))

    class Listener:
        def hear(self, record: LabelRecord) -> None:
            heard.append("bound")

    listener = Listener()
    store.subscribe(listener.hear)
    store.add("a", "pass")
    del listener  # a widget that is gone is not kept alive, nor called
    store.clear("a")
    assert heard == ["a:label", "bound", "a:clear"]
