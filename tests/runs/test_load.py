"""save / jw.load: every result kind round-trips (identical tables, working methods), no secret is written, and
a folder that is not a run this version can read says why."""

from __future__ import annotations

import json
import math
import warnings
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import judgewidgets as jw
from judgewidgets import _runfiles
from judgewidgets._records import Item, Vote
from judgewidgets.runs import KINDS

from .helpers import PROMPTS, RESPONSES, SECRET, judge, make

# What must come back identical for each kind: attributes, or methods called without arguments.
CHECKS: dict[str, list[str]] = {
    "judge": ["to_df", "votes", "scores", "score_list", "judge", "usage"],
    "panel": ["to_df", "votes", "summary", "review", "consensus", "errors", "chart", "usage"],
    "pairwise": ["votes", "row", "model_dump", "usage"],
    "pairwise_panel": ["votes", "model_dump", "usage"],
    "pairwise_table": ["frame", "attrs_verdicts", "position_bias", "usage"],
    "tournament": ["ranking", "matches", "stability", "win_matrix", "to_df", "chart", "questions", "usage"],
    "corrected_ranking": ["ranking", "long", "comparisons", "covariance", "chart", "summary"],
    "rubric_report": ["to_df", "votes_df", "model_dump", "usage"],
    "grading": ["to_df", "votes_df", "inter_judge_agreement", "review", "verdict_chart", "usage"],
    "leveled_report": ["to_df", "model_dump", "usage"],
    "leveled": ["to_df", "usage"],
    "aspects": ["to_df", "summary", "votes", "passed", "chart", "usage"],
    "pipeline": ["frame", "attrs_usage", "usage"],
    "sequential": ["summary", "trace", "chart", "usage"],
    "sequential_batch": ["frame", "traces", "chart", "usage"],
    "cascade": ["table", "judgments", "stages", "summary", "chart"],
    "alignment": ["table", "levers", "per_fold", "learning_curve", "disagreements", "chosen", "summary", "chart"],
    "estimate": ["to_df", "model_dump", "chart", "summary"],
    "label_plan": ["table", "items", "id", "summary", "probabilities"],
    "meta_evaluation": ["table", "summary", "verdicts", "chart"],
}


def _get(result: Any, name: str) -> Any:
    if name == "frame":
        return pd.DataFrame(result)
    if name.startswith("attrs_"):
        value = result.attrs[name.removeprefix("attrs_")]
        return pd.DataFrame(value) if isinstance(value, list) else value
    if name == "position_bias":
        return jw.position_bias(result)
    value = getattr(result, name)
    if callable(value):
        value = value()
    return value.to_dict() if hasattr(value, "to_dict") and not isinstance(value, (pd.DataFrame, pd.Series)) else value


def _same(a: Any, b: Any) -> None:
    if isinstance(a, pd.DataFrame):
        pd.testing.assert_frame_equal(a, b)
    elif isinstance(a, pd.Series):
        pd.testing.assert_series_equal(a, b)
    else:  # NaN != NaN: compare the JSON text (charts' specs, records, summaries)
        assert json.dumps(a, sort_keys=True, default=str) == json.dumps(b, sort_keys=True, default=str)


def test_the_kinds_table_covers_every_kind() -> None:
    assert set(KINDS) == set(CHECKS)


@pytest.mark.parametrize("kind", list(CHECKS))
def test_every_kind_round_trips(kind: str, tmp_path: Path) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        original = make(kind)
    assert isinstance(original, KINDS[kind]) and original._dump().kind == kind
    folder = original.save(tmp_path / kind)
    assert folder == tmp_path / kind and (folder / "run.json").is_file()
    again = jw.load(folder)
    assert type(again) is type(original)
    for name in CHECKS[kind]:
        _same(_get(original, name), _get(again, name))
    meta = json.loads((folder / "run.json").read_text())
    assert meta["kind"] == kind and meta["format_version"] == _runfiles.FORMAT_VERSION
    for entry in meta["tables"].values():  # every table is a Parquet file pandas reads as it is
        assert len(pd.read_parquet(folder / entry["file"])) == entry["rows"]
    again.save(tmp_path / "again")  # a loaded result saves again, the same tables
    assert jw.load(tmp_path / "again")._dump().metrics.keys() == original._dump().metrics.keys()


def test_votes_keep_none_nan_nested_values_and_odd_text(tmp_path: Path) -> None:
    votes = [
        Vote(item=0, judge="j", score=0.5, raw='{"score": 3}', probabilities={"3": 0.7, "4": 0.3}, confidence=0.7),
        Vote(item=1, judge="j", score=math.nan, raw="broken \ud83d surrogate", error="parse: no score", cost_usd=None),
    ]
    result = jw.JudgeResult([Item("p0", "r0"), Item("p1", "r1", reference="ref")], votes, "j")
    again = jw.load(result.save(tmp_path / "odd"))
    assert [repr(v.model_dump()) for v in again.vote_list] == [repr(v.model_dump()) for v in votes]
    assert again.items == result.items and again.vote_list[1].cost_usd is None


def test_run_json_describes_the_run_without_its_secrets(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ambient = "env-secret-0a1b2c3d4e5f"
    monkeypatch.setenv("OPENAI_API_KEY", ambient)
    password = "hunter2hunter2"
    keyed = judge(
        "keyed",
        api_base=f"https://user:{password}@example.invalid/v1",
        extra_headers={"Authorization": f"Bearer {SECRET}-header"},
        explanations=True,
    )
    panel = jw.LLMPanel([keyed, judge("plain")])
    result = panel.score(PROMPTS, RESPONSES, progress=False)
    folder = result.save(tmp_path / "v1")
    saved = b"".join(f.read_bytes() for f in folder.iterdir())
    for secret in (SECRET, password, ambient, "Bearer"):
        assert secret.encode() not in saved, secret
    meta = json.loads((folder / "run.json").read_text())
    text = json.dumps(meta)
    assert "api_key" not in text and "extra_headers" not in text
    made_by = meta["made_by"]
    assert made_by["type"] == "LLMPanel" and [j["name"] for j in made_by["judges"]] == ["keyed", "plain"]
    first = made_by["judges"][0]
    assert first["model"] == "openai/scripted" and first["template"]["name"] == "likert"
    assert first["explanations"] is True and first["api_base"] == "https://user:***@example.invalid/v1"
    assert meta["models"] == ["openai/scripted"] and meta["judges"] == ["keyed", "plain"]
    assert meta["versions"]["judgewidgets"] == jw.__version__ and meta["versions"]["pandas"] == pd.__version__
    assert meta["inputs"]["items"] == 4 and len(meta["inputs"]["fingerprint"]) == 64
    assert meta["usage"]["prompt_tokens"] == 80 and meta["usage"]["cost_usd"] == pytest.approx(0.008)
    assert meta["metrics"]["mean_score"] == pytest.approx(0.75) and "mean_score/keyed" in meta["metrics"]
    # The same items judged again share the fingerprint; other items do not.
    same = judge().score(PROMPTS, RESPONSES, progress=False).save(tmp_path / "same")
    other = judge().score(PROMPTS[:3], RESPONSES[:3], progress=False).save(tmp_path / "other")
    prints = [json.loads((f / "run.json").read_text())["inputs"]["fingerprint"] for f in (folder, same, other)]
    assert prints[0] == prints[1] != prints[2]


def test_a_key_shaped_value_is_masked_whatever_its_name() -> None:
    from judgewidgets._provenance import describe

    shown = describe({"note": f"use {SECRET} here", "session_token": "abc", "nested": {"password": "x"}})
    assert shown == {"note": "use *** here", "nested": {}}


def _saved(tmp_path: Path) -> Path:
    return judge().score(PROMPTS, RESPONSES, progress=False).save(tmp_path / "run")


def _edit(folder: Path, **changes: Any) -> None:
    meta = json.loads((folder / "run.json").read_text())
    meta.update(changes)
    (folder / "run.json").write_text(json.dumps(meta))


def test_a_newer_or_older_format_says_why(tmp_path: Path) -> None:
    folder = _saved(tmp_path)
    _edit(folder, format_version=_runfiles.FORMAT_VERSION + 1)
    with pytest.raises(jw.SavedRunError, match=r"newer|upgrade judgewidgets"):
        jw.load(folder)
    _edit(folder, format_version=0)
    with pytest.raises(jw.SavedRunError, match=r"format 0, which this judgewidgets .* cannot read"):
        jw.load(folder)
    _edit(folder, format_version="1")
    with pytest.raises(jw.SavedRunError, match="no valid format_version"):
        jw.load(folder)


def test_an_older_format_with_a_migration_loads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = _saved(tmp_path)
    _edit(folder, format_version=0, kind="judge_v0")
    upgraded = {0: lambda meta: {**meta, "kind": "judge"}}
    monkeypatch.setattr(_runfiles, "MIGRATIONS", upgraded)
    assert isinstance(jw.load(folder), jw.JudgeResult)


def test_what_is_not_a_run_says_so(tmp_path: Path) -> None:
    with pytest.raises(jw.SavedRunError, match="no such folder"):
        jw.load(tmp_path / "missing")
    (tmp_path / "empty").mkdir()
    with pytest.raises(jw.SavedRunError, match=r"no run\.json"):
        jw.load(tmp_path / "empty")
    folder = _saved(tmp_path)
    _edit(folder, kind="hologram")
    with pytest.raises(jw.SavedRunError, match="'hologram' result, which this judgewidgets does not know"):
        jw.load(folder)
    _edit(folder, kind="judge", format="something-else")
    with pytest.raises(jw.SavedRunError, match="does not describe a judgewidgets run"):
        jw.load(folder)
    _edit(folder, format=_runfiles.FORMAT)
    (folder / "votes.parquet").unlink()
    with pytest.raises(jw.SavedRunError, match="lacks its table 'votes'"):
        jw.load(folder)
    (folder / "run.json").write_text("{not json")
    with pytest.raises(jw.SavedRunError, match="cannot be read as JSON"):
        jw.load(folder)


def test_a_table_that_no_longer_fits_its_class_says_so(tmp_path: Path) -> None:
    folder = _saved(tmp_path)
    pd.DataFrame({"item": [0]}).to_parquet(folder / "votes.parquet")
    with pytest.raises(jw.SavedRunError, match="could not be rebuilt as a judge result"):
        jw.load(folder)


def test_saving_never_overwrites_by_surprise_and_leaves_nothing_half_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    result = judge().score(PROMPTS, RESPONSES, progress=False)
    folder = result.save(tmp_path / "v1")
    with pytest.raises(jw.SavedRunError, match=r"already holds a saved run .*overwrite=True"):
        result.save(folder)
    smaller = judge().score(PROMPTS[:2], RESPONSES[:2], progress=False)
    smaller.save(folder, overwrite=True)
    assert len(jw.load(folder).items) == 2
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "mine.txt").write_text("keep me")
    with pytest.raises(jw.SavedRunError, match="holds other files"):
        result.save(tmp_path / "notes", overwrite=True)
    (tmp_path / "file").write_text("x")
    with pytest.raises(jw.SavedRunError, match="is a file"):
        result.save(tmp_path / "file")

    def broken(*args: Any) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(_runfiles, "write_rows", broken)
    with pytest.raises(OSError, match="disk full"):
        result.save(tmp_path / "v2")
    with pytest.raises(OSError, match="disk full"):
        result.save(folder, overwrite=True)
    assert not (tmp_path / "v2").exists() and len(jw.load(folder).items) == 2  # the old run is intact
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file", "notes", "v1"]  # no staging folder left


def test_only_results_can_be_saved(tmp_path: Path) -> None:
    with pytest.raises(jw.SavedRunError, match="not a judgewidgets result"):
        _runfiles.write(object(), tmp_path / "x")


def _damage(file: Path, how: str) -> None:
    data = file.read_bytes()
    if how == "missing":
        file.unlink()
    elif how == "truncated":
        file.write_bytes(data[: len(data) // 2])
    elif how == "empty":
        file.write_bytes(b"")
    else:  # garbage: text where the file's own format was
        file.write_bytes(b'{"this is": "not what was saved"' if file.suffix == ".parquet" else b"\x00\x9f garbage {")


@pytest.fixture(scope="module")
def saved_kinds(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A saved run of every kind, made once for the damage tests (each test copies the one it breaks)."""
    root = tmp_path_factory.mktemp("kinds")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return {kind: make(kind).save(root / kind) for kind in CHECKS}


@pytest.mark.parametrize("how", ["missing", "truncated", "empty", "garbage"])
@pytest.mark.parametrize("kind", list(CHECKS))
def test_every_damaged_file_of_every_kind_is_a_saved_run_error(
    kind: str, how: str, saved_kinds: dict[str, Path], tmp_path: Path
) -> None:
    import shutil

    files = sorted(p.name for p in saved_kinds[kind].iterdir())
    assert "run.json" in files and any(name.endswith(".parquet") for name in files)
    for name in files:
        folder = tmp_path / name
        shutil.copytree(saved_kinds[kind], folder)
        _damage(folder / name, how)
        with pytest.raises(jw.SavedRunError) as raised:
            jw.load(folder)
        message = str(raised.value)
        assert name in message or (name == "run.json" and "run.json" in message), message
        assert "Traceback" not in message and len(message.splitlines()) == 1, message
        assert sorted(p.name for p in folder.iterdir()) == sorted(set(files) - ({name} if how == "missing" else set()))


@pytest.mark.parametrize(
    "change",
    [
        {"tables": "votes.parquet"},
        {"tables": {"votes": "votes.parquet"}},
        {"tables": {"votes": {"file": ""}}},
        {"state": ["not", "a", "mapping"]},
        {"metrics": 3},
        {"judges": "j"},
        {"kind": None},
    ],
)
def test_run_json_that_parses_but_was_changed_says_so(change: dict[str, Any], tmp_path: Path) -> None:
    folder = _saved(tmp_path)
    _edit(folder, **change)
    with pytest.raises(jw.SavedRunError, match=r"run\.json|lacks its table"):
        jw.load(folder)


def test_a_json_cell_that_is_not_json_names_its_table(tmp_path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    votes = [Vote(item=0, judge="j", score=0.5, raw='{"score": 3}', probabilities={"3": 0.7, "4": 0.3})]
    folder = jw.JudgeResult([Item("p0", "r0")], votes, "j").save(tmp_path / "probabilities")
    meta = json.loads((folder / "run.json").read_text())
    table, entry = next((n, e) for n, e in meta["tables"].items() if e.get("json_columns"))
    column = entry["json_columns"][0]
    data = pq.read_table(folder / entry["file"])
    broken = data.set_column(
        data.column_names.index(column), column, pa.array(["{not json"] * len(data), type=pa.string())
    )
    pq.write_table(broken, folder / entry["file"])
    with pytest.raises(jw.SavedRunError, match=rf"table {table!r} \({entry['file']}\) that cannot be read"):
        jw.load(folder)
