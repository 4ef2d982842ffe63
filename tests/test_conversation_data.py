"""The clear-cut conversations as shipped (judgewidgets/data/conversations/clear_cut.jsonl) and their loaders,
`jw.datasets.conversations()` and `jw.datasets.conversation_pairs()`: every record a valid conversation ending with
the assistant's turn, twins that differ in their last reply only, and tables the judges read as they are."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import pandas as pd
import pytest

import judgewidgets as jw
from judgewidgets.conversations import judged_views, parse_conversation
from judgewidgets.datasets import CONVERSATION_KINDS
from judgewidgets.datasets._load import _records
from judgewidgets.pairwise._batch import pairs_from
from judgewidgets.templates._builtin import CONVERSATION_TEMPLATES

TEMPLATE_OF = {
    "forgets_constraint": "knowledge_retention",
    "contradicts": "consistency",
    "ignores_correction": "knowledge_retention",
    "unsafe_repeat": "role_adherence",
    "wrong_tool": "task_completion",
}


@pytest.fixture(scope="module")
def records() -> list[dict[str, Any]]:
    return _records("conversations/clear_cut.jsonl")


def test_forty_five_pairs_nine_of_each_kind(records: list[dict[str, Any]]) -> None:
    assert len(records) == 90 and len({r["id"] for r in records}) == 90
    assert Counter(r["kind"] for r in records) == {kind: 18 for kind in CONVERSATION_KINDS}
    for pair_id, labels in _by_pair(records).items():
        assert sorted(labels) == [0, 1], pair_id
    assert {r["id"] for r in records} == {f"{r['pair_id']}-{('bad', 'good')[r['label']]}" for r in records}


def test_every_record_is_a_short_conversation_ending_with_the_assistant(records: list[dict[str, Any]]) -> None:
    for record in records:
        assert set(record) == {"id", "pair_id", "kind", "label", "template", "note", "messages"}
        conversation = parse_conversation(record["messages"])
        assert 3 <= len(conversation) <= 7, record["id"]
        assert conversation.messages[-1].role == "assistant", record["id"]
        assert [m.role for m in conversation.messages].count("user") >= 1
        (view,) = judged_views([conversation], "last_turn")  # raises unless the assistant's turn ends it
        assert view.judged == (len(conversation) - 1, len(conversation))
        assert record["template"] == TEMPLATE_OF[record["kind"]] and record["template"] in CONVERSATION_TEMPLATES
        assert record["note"].endswith(".") and record["note"].count(". ") == 0, record["id"]


def test_twins_differ_in_their_last_reply_only(records: list[dict[str, Any]]) -> None:
    pairs: dict[str, dict[int, list[dict[str, Any]]]] = {}
    for record in records:
        pairs.setdefault(record["pair_id"], {})[record["label"]] = record["messages"]
    for pair_id, twins in pairs.items():
        good, bad = twins[1], twins[0]
        assert good[:-1] == bad[:-1] and good[-1] != bad[-1], pair_id
    histories = [json.dumps(twins[1][:-1]) for twins in pairs.values()]
    assert len(set(histories)) == len(histories)  # every pair has its own history


def test_wrong_tool_replies_call_a_listed_tool_and_the_others_reply_in_text(records: list[dict[str, Any]]) -> None:
    for record in records:
        last = parse_conversation(record["messages"]).messages[-1]
        if record["kind"] != "wrong_tool":
            assert last.content and not last.tool_calls, record["id"]
            continue
        system = record["messages"][0]
        assert system["role"] == "system" and len(last.tool_calls) == 1, record["id"]
        call = last.tool_calls[0]
        assert f"- {call.name}(" in system["content"] and isinstance(json.loads(call.arguments), dict)


def test_the_loader_gives_one_row_per_conversation() -> None:
    frame = jw.datasets.conversations()
    assert list(frame.columns) == ["id", "pair_id", "kind", "label", "template", "note", "messages"]
    assert len(frame) == 90 and frame["label"].sum() == 45
    assert all(isinstance(m, list) and m[-1]["role"] == "assistant" for m in frame["messages"])
    tools = jw.datasets.conversations("wrong_tool")
    assert len(tools) == 18 and set(tools["kind"]) == {"wrong_tool"}
    assert len(jw.datasets.conversations(["contradicts", "unsafe_repeat"])) == 36
    with pytest.raises(jw.InputError, match="unknown conversation kind"):
        jw.datasets.conversations("rude")


def test_the_pairs_put_the_twins_side_by_side() -> None:
    pairs = jw.datasets.conversation_pairs()
    assert len(pairs) == 45 and pairs["pair_id"].is_unique
    assert pairs["label"].tolist() == ["A", "B"] * 22 + ["A"]
    for row in pairs.to_dict("records"):
        assert row["history"][-1]["role"] == "user" and len(row["good"]) == len(row["bad"]) == 1
        slots = (
            (row["response_a"], row["response_b"]) if row["label"] == "A" else (row["response_b"], row["response_a"])
        )
        assert slots == (row["good"], row["bad"])
    frame = jw.datasets.conversations()
    good = frame[frame["label"] == 1].set_index("pair_id")["messages"]
    assert all(good[r["pair_id"]] == [*r["history"], *r["good"]] for r in pairs.to_dict("records"))
    some = jw.datasets.conversation_pairs(["contradicts", "wrong_tool"])
    assert (
        len(some) == 18 and some["label"].tolist() == pairs.set_index("pair_id").loc[some["pair_id"], "label"].tolist()
    )


def test_a_pairwise_judge_reads_the_pairs_as_they_are() -> None:
    pairs = jw.datasets.conversation_pairs()
    items, table = pairs_from(pairs, None, None, None)
    assert len(items) == 45 and isinstance(table, pd.DataFrame)
    assert all(item.conversation_a is not None and item.conversation_b is not None for item in items)
    assert items[0].conversation_a.history == items[0].conversation_b.history  # type: ignore[union-attr]


def _by_pair(records: list[dict[str, Any]]) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for record in records:
        out.setdefault(record["pair_id"], []).append(record["label"])
    return out
