"""benchmarks/no_reference.py's measures and its code path on the loopback test server (a served model: the default
does not commit first there, so both settings judge without a reference and an oracle fooled without one passes
every wrong answer)."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from judgewidgets.scoring._commit import asks_for_a_fact
from judgewidgets.testing import OpenAITestServer
from tests.benchmark_scripts import BENCHMARKS, load_benchmark

CASES = pd.read_csv(BENCHMARKS / "data" / "no_reference_qa.csv")


def fooled(body: dict[str, Any]) -> str:
    """Every answer correct (what a judge without a reference tends to say)."""
    return json.dumps({"verdict": "correct"})


def test_the_question_sets_are_whole() -> None:
    assert len(CASES) == 40 and CASES["kind"].value_counts().to_dict() == dict.fromkeys(
        ("year", "unit", "off_by_one", "name"), 10
    )
    assert not CASES.isna().any().any() and (CASES["right"] != CASES["wrong"]).all()
    ours = pd.read_csv(BENCHMARKS / "data" / "reference_qa.csv")
    assert not set(CASES["question"]) & set(ours["question"])  # held out: no question of the tuned set
    later = pd.read_csv(BENCHMARKS / "data" / "no_reference_later_qa.csv")
    assert len(later) == 20 and not later.isna().any().any() and (later["right"] != later["wrong"]).all()
    assert not set(later["question"]) & (set(CASES["question"]) | set(ours["question"]))
    asked = [*CASES["question"], *ours["question"], *later["question"]]
    assert all(map(asks_for_a_fact, asked))  # what the default answers first


def test_the_share_counts_a_question_only_when_both_answers_are_on_their_side() -> None:
    bench = load_benchmark("no_reference")
    rows = [
        {"question": q, "answer": a, "score": s, "reference_source": "judge", "error": None, "prompt_tokens": 100,
         "completion_tokens": 10}
        for q, a, s in [("q1", "right", 0.9), ("q1", "wrong", 0.1), ("q2", "right", 0.69), ("q2", "wrong", 0.0),
                        ("q3", "right", 1.0), ("q3", "wrong", math.nan)]
    ]  # fmt: skip
    summary = bench.summarise(rows)
    assert summary["both"] == pytest.approx(1 / 3) and summary["right_high"] == pytest.approx(2 / 3)
    assert summary["usd"] == pytest.approx(6 * (100 * 0.15e-6 + 10 * 0.60e-6))
    pairs = pd.DataFrame({"label": ["A", "B", "A"]})
    assert bench.pair_accuracy({0: 0.9, 1: 0.1, 2: 0.5, 3: 0.5, 4: 0.2, 5: 0.8}, pairs) == pytest.approx(0.5)


def test_the_script_prints_both_settings(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    out = tmp_path / "rows.csv"
    with OpenAITestServer(fooled) as server:
        argv = ["--sets", "held_out", "--templates", "true_false_uncertain", "--llmbar-n", "0", "--fresh"]
        load_benchmark("no_reference").main(
            [*argv, "--model", "judge", "--api-base", server.base_url, "--out", str(out)]
        )
    printed = capsys.readouterr().out
    rows = re.findall(r"^held_out +true_false_uncertain +(today|default) +(\d+)% +(\d+)% +(\d+)%", printed, re.M)
    assert [(setting, both, low, high) for setting, both, low, high in rows] == [
        ("today", "0", "0", "100"),
        ("default", "0", "0", "100"),
    ]
    assert len(pd.read_csv(out)) == 2 * 2 * 40
