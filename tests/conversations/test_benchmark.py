"""benchmarks/conversations.py's code path on the loopback test server (no model): a judge that reads the judged
reply right scores every setting 100 %, one that always picks the first slot is half right and never agrees with
itself across orders."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

import pytest

import judgewidgets as jw
from tests.benchmark_scripts import load_benchmark, run_on_server

SETTINGS = [
    "last turn, true_false",
    "last turn, likert",
    "last turn, own template",
    "whole, own template",
    "pairwise, default (probability)",  # a server that returns logprobs
    "pairwise, verdict",
]


def bad_markers() -> list[tuple[str, ...]]:
    """What identifies each bad twin's last reply in a judge's request: its text, or a tool call's name and
    arguments (both must be there)."""
    frame = jw.datasets.conversations()
    markers = []
    for messages in frame[frame["label"] == 0]["messages"]:
        last = messages[-1]
        calls = last.get("tool_calls") or []
        markers.append(tuple(p for c in calls for p in (c["function"]["name"], c["function"]["arguments"])))
        if last["content"]:
            markers[-1] = (last["content"],)
    return markers


def judge(first_slot: bool = False) -> Callable[[dict[str, Any]], str]:
    """A judge that answers the request's own schema: the good verdict for a good reply and the bad one for a bad
    reply (or, `first_slot`, always slot A and always the good verdict)."""
    markers = bad_markers()

    def bad(part: str) -> bool:
        return any(all(m in part for m in marker) for marker in markers)

    def reply(body: dict[str, Any]) -> str:
        schema = body["response_format"]["json_schema"]["schema"]["properties"]
        text = body["messages"][1]["content"]
        if "verdict" in schema and schema["verdict"]["enum"][0] == "A":
            a = re.search(r"<response_a>\n(.*?)\n</response_a>", text, re.S).group(1)  # type: ignore[union-attr]
            return json.dumps({"verdict": "A" if first_slot or not bad(a) else "B"})
        judged = text[text.index("<response>") :] if "<response>" in text else text[text.rindex("<turn ") :]
        worse = bad(judged) and not first_slot
        if "score" in schema:
            return json.dumps({"score": 1 if worse else 5})
        choices = schema["verdict"]["enum"]
        return json.dumps({"verdict": choices[-1] if worse else choices[0]})

    return reply


def test_a_judge_that_reads_the_reply_is_right_everywhere(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["--limit", "10", "--methods", "default,verdict", "--templates", "true_false,likert,own", "--fresh"]
    summaries = run_on_server("conversations", argv, judge())
    assert [s["setting"] for s in summaries] == SETTINGS
    for s in summaries:
        assert s["failed"] == 0 and s["accuracy"] == 1.0, s
        assert s["accuracy_low"] <= s["accuracy"] <= s["accuracy_high"]
    pointwise, pairwise = summaries[:4], summaries[4:]
    assert [s["judged"] for s in pointwise] == [20, 20, 20, 20] and all(s["twins_ordered"] == 10 for s in pointwise)
    assert all(s["judged"] == 10 and s["positional_agreement"] == 1.0 for s in pairwise)
    out = capsys.readouterr().out
    assert "10 twin pairs (20 conversations: forgets_constraint 2, contradicts 2" in out
    assert "accuracy by kind" in out and "wrong_tool" in out and "1.11× target, met" in out


def test_a_judge_that_always_picks_the_first_slot_is_half_right() -> None:
    argv = ["--limit", "5", "--methods", "verdict", "--templates", "true_false", "--fresh"]
    summaries = run_on_server("conversations", argv, judge(first_slot=True))
    last_turn, whole, pairwise = summaries
    assert last_turn["accuracy"] == 0.5 and last_turn["twins_ordered"] == 0  # passes every reply, good and bad
    assert whole["setting"] == "whole, own template" and whole["accuracy"] == 0.5
    assert pairwise["accuracy"] == 0.5 and pairwise["positional_agreement"] == 0.0
    assert pairwise["both_orders_right"] == 0.0


def test_accuracy_by_kind_keeps_the_mt_bench_kinds() -> None:
    """With --mt-bench, the MT-Bench pairs' kinds ("mt_bench wrong", ...) are columns of the per-kind table beside
    the clear-cut set's, so their accuracy is shown, not a row of blanks."""
    script = load_benchmark("conversations")
    rows = [
        {"setting": "pairwise, verdict", "kind": "contradicts", "correct": 1.0},
        {"setting": "pairwise, MT-Bench turn 2, verdict", "kind": "mt_bench wrong", "correct": 0.5},
        {"setting": "pairwise, MT-Bench turn 2, verdict", "kind": "mt_bench history", "correct": 0.0},
    ]
    table = script.by_kind(rows)
    assert list(table.columns) == ["contradicts", "mt_bench wrong", "mt_bench history"]
    assert table.loc["pairwise, MT-Bench turn 2, verdict", "mt_bench wrong"] == 0.5
