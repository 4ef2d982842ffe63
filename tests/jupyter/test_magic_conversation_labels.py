"""`%judge --data chats --conversation-col C --labels ...`: a person's label per conversation corrects the
aggregate score (PPI++) as for single answers, matched by id, by the conversation itself (lists or JSON text) or
by the judged texts; a malformed conversation or a per-turn target is a UsageError before any call. A real
IPython shell against the loopback server."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from IPython.core.error import UsageError

import judgewidgets as jw
from judgewidgets.testing import OpenAITestServer, json_score
from tests.jupyter.shell import magic_shell

LENIENT = '[[reply:{"score": 5}]]'  # the judge's answer planted in the last reply: it passes all but two


@pytest.fixture(scope="module")
def server() -> Iterator[OpenAITestServer]:
    with OpenAITestServer(json_score(5)) as running:
        yield running


@pytest.fixture
def ip(server: OpenAITestServer, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    for shell in magic_shell(server, monkeypatch):
        shell.user_ns["chats"] = chats()
        yield shell


def chat(i: int, n: int) -> list[dict[str, Any]]:
    planted = '[[reply:{"score": 1}]]' if i >= n - 2 else LENIENT
    return [
        {"role": "system", "content": "Answer in French."},
        {"role": "user", "content": f"Question {i}?"},
        {"role": "assistant", "content": f"Réponse {i}."},
        {"role": "user", "content": f"And then {i}?"},
        {"role": "assistant", "content": f"Then {i}. {planted}"},
    ]


def chats(n: int = 20) -> pd.DataFrame:
    """n chats the judge scores 5 (all but the last two, scored 1); the person passes the even ones."""
    return pd.DataFrame(
        {
            "id": [f"c{i}" for i in range(n)],
            "messages": [chat(i, n) for i in range(n)],
            "truth": ["pass" if i % 2 == 0 else "fail" for i in range(n)],
        }
    )


LINE = "--data chats --conversation-col messages --no-chart --out scored"


def test_labels_by_id_correct_the_pass_rate_of_conversations(ip) -> None:  # type: ignore[no-untyped-def]
    ip.user_ns["mine"] = chats().iloc[:10][["id", "truth"]]
    ip.run_line_magic("judge", f"{LINE} --labels mine --label-col truth --id-col id --pass-threshold 0.5")
    estimates = ip.user_ns["scored_estimates"]
    passed = estimates["pass_rate"]
    assert passed.n_items == 20 and passed.n_labelled == 10
    assert passed.judge_only[0] == pytest.approx(18 / 20)  # the judge's own pass rate: lenient
    assert passed.labels_only[0] == pytest.approx(0.5)
    result = ip.user_ns["scored"]
    assert result.to_df()["turn"].tolist() == [2] * 20  # the last turns judged, one row per conversation
    truth = chats().iloc[:10]["truth"].map({"pass": 1.0, "fail": 0.0}).set_axis(pd.RangeIndex(10))
    same = jw.estimate_quality(result, truth, "pass_rate", pass_threshold=0.5)
    assert passed.estimate == pytest.approx(same.estimate) and passed.low == pytest.approx(same.low)


def test_labels_by_the_conversation_itself_from_a_csv_of_json(ip, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    frame = chats()
    labels = tmp_path / "labels.csv"
    written = frame.iloc[:8].assign(messages=frame["messages"].iloc[:8].map(lambda m: json.dumps(m, indent=1)))
    written[["messages", "truth"]].rename(columns={"truth": "label"}).to_csv(labels, index=False)
    ip.run_line_magic("judge", f"{LINE} --labels {labels} --pass-threshold 0.5 --target whole")
    passed = ip.user_ns["scored_estimates"]["pass_rate"]
    assert passed.n_labelled == 8 and passed.labels_only[0] == pytest.approx(0.5)
    assert ip.user_ns["scored"].to_df()["turn"].isna().all()  # whole conversations


def test_labels_by_the_judged_texts_of_a_label_queue(ip, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    ip.run_line_magic("judge", LINE)
    table = ip.user_ns["scored"].to_df()[["prompt", "response"]].iloc[:6]
    queue = jw.LabelQueue(table, kind="pass_fail", store=tmp_path / "store.jsonl")
    for row in range(6):
        queue.model.label("pass" if row % 2 == 0 else "fail", row=row)
    ip.user_ns["queue"] = queue
    for source in (str(tmp_path / "store.jsonl"), "queue"):  # the store's item keys, the queue's texts
        ip.run_line_magic("judge", f"{LINE} --labels {source}")
        mean = ip.user_ns["scored_estimates"]["mean"]
        assert mean.n_labelled == 6 and mean.labels_only[0] == pytest.approx(0.5)


@pytest.mark.parametrize(
    ("broken", "message"),
    [
        ([{"content": "no role"}, {"role": "assistant", "content": "x"}], "has no role"),
        ([{"role": "wizard", "content": "hi"}, {"role": "assistant", "content": "x"}], "wizard"),
        ([], "empty"),
        ([{"role": "user", "content": "hi"}, {"role": "tool", "tool_call_id": "c9", "content": "{}"}], "c9"),
    ],
)
def test_a_malformed_conversation_is_a_usage_error_before_any_call(ip, server, broken, message) -> None:  # type: ignore[no-untyped-def]
    frame = chats()
    frame.at[4, "messages"] = broken
    ip.user_ns["chats"] = frame
    ip.user_ns["mine"] = frame.iloc[:10][["id", "truth"]]
    before = server.stats.total
    with pytest.raises(UsageError, match=message):
        ip.run_line_magic("judge", f"{LINE} --labels mine --label-col truth --id-col id")
    assert server.stats.total == before


def test_label_problems_with_conversations_are_usage_errors_before_any_call(ip, server) -> None:  # type: ignore[no-untyped-def]
    before = server.stats.total
    ip.user_ns["mine"] = chats().iloc[:10][["id", "truth"]]
    with pytest.raises(UsageError, match="one label per conversation"):
        ip.run_line_magic("judge", f"{LINE} --target each_turn --labels mine --label-col truth --id-col id")
    bad = pd.DataFrame({"messages": ['[{"role": "user"'], "label": ["pass"]})
    ip.user_ns["bad"] = bad
    with pytest.raises(UsageError, match="row 0 of column 'messages'"):
        ip.run_line_magic("judge", f"{LINE} --labels bad")
    other = pd.DataFrame({"messages": [chat(99, 100), chat(98, 100)], "label": ["pass", "fail"]})
    ip.user_ns["other"] = other
    with pytest.raises(UsageError, match="not judged here"):
        ip.run_line_magic("judge", f"{LINE} --labels other")
    assert server.stats.total == before
