"""benchmarks/reference_grounding.py's code path on the loopback test server: an oracle that tells right answers from
wrong ones only when the request is grounded (it asks for `matches_reference`), and is fooled otherwise (every answer
"correct"), so the printed before / after rows and targets map onto the right templates and versions."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from tests.benchmark_scripts import BENCHMARKS, run_on_server

CASES = pd.read_csv(BENCHMARKS / "data" / "reference_qa.csv")
WRONG = set(CASES["wrong"])


def oracle(body: dict[str, Any]) -> str:
    """Right answers high and wrong ones low when grounded; every answer at the top of the scale otherwise."""
    response = re.search(r"<response>\n(.*?)\n</response>", body["messages"][1]["content"], re.S)
    assert response is not None
    properties = body["response_format"]["json_schema"]["schema"]["properties"]
    grounded = "matches_reference" in properties
    right = not (grounded and response.group(1) in WRONG)
    answer: dict[str, Any] = {"matches_reference": "yes" if right else "no"} if grounded else {}
    if "verdict" in properties:
        labels = properties["verdict"]["enum"]
        answer["verdict"] = labels[0] if right else labels[-1]  # correct / yes first, incorrect / no last
    else:
        answer["score"] = properties["score"]["maximum"] if right else properties["score"]["minimum"]
    return json.dumps(answer)


def table(out: str) -> dict[tuple[str, str], list[str]]:
    """The printed rows: (template, version) -> right, wrong, wrong<=.5, right>=.5, pairs, failed, s/judgment."""
    rows = re.findall(r"^(\w+) +(before|after) +(.*)$", out, re.M)
    return {(name, version): rest.split() for name, version, rest in rows}


def test_the_benchmark_measures_the_ungrounded_and_the_grounded_template(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    argv = ["--fresh", "--model", "judge", "--n", "6", "--out", str(tmp_path / "rows.csv")]
    rows = run_on_server("reference_grounding", argv, oracle)
    out = capsys.readouterr().out
    assert len(rows) == 6 * 2 * 2 * 6 and (tmp_path / "rows.csv").exists()  # questions × answers × versions × templates
    printed = table(out)
    for name in ("true_false_uncertain", "true_false", "likert", "instruction_following", "follows_instruction"):
        right, wrong, low, high, pairs, failed, _ = printed[name, "before"]  # fooled: every answer at the top
        assert float(right) > 0.9 and float(wrong) > 0.9 and (low, high, pairs, failed) == ("0%", "100%", "0/6", "0")
        right, wrong, low, high, pairs, failed, _ = printed[name, "after"]
        assert float(right) > 0.9 and float(wrong) < 0.1 and (low, high, pairs, failed) == ("100%", "100%", "6/6", "0")
        assert f"targets, {name}: 5/5 — every target met" in out
    assert "targets, continuous: 5/5 — every target met" in out  # written scores: 100 and 0
    assert all(row["error"] is None for row in rows)


def test_quick_runs_three_templates_on_ten_questions(capsys: pytest.CaptureFixture[str]) -> None:
    rows = run_on_server("reference_grounding", ["--fresh", "--model", "judge", "--quick"], oracle)
    assert {row["template"] for row in rows} == {"true_false_uncertain", "true_false", "likert"}
    assert len({row["question"] for row in rows}) == 10
    assert "NOT met" not in capsys.readouterr().out


TRUTH = dict(zip(CASES["question"], CASES["reference"]))


def answering_oracle(body: dict[str, Any]) -> str:
    """The solver (no answer schema) answers with the true reference; every judgment as `oracle`, which tells right
    from wrong only when shown a reference."""
    if "response_format" not in body:
        return TRUTH.get(body["messages"][-1]["content"], "no idea")
    if "<response>" not in body["messages"][1]["content"]:  # LLMBar's pairwise prompts: answer A
        return json.dumps({"verdict": "A"})
    return oracle(body)


def test_commit_first_is_measured_beside_no_reference_and_the_true_one(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["--fresh", "--model", "judge", "--n", "6", "--commit-first", "--llmbar-n", "3"]
    rows = run_on_server("reference_grounding", argv, answering_oracle)
    out = capsys.readouterr().out
    printed = dict(
        ((t, s), rest.split())
        for t, s, rest in re.findall(
            r"^(\w+) +(no reference|commit-first short|commit-first|true reference) +(.*)$", out, re.M
        )
    )
    assert printed["true_false_uncertain", "no reference"][:5] == ["1.00", "1.00", "0%", "100%", "0/6"]
    assert printed["true_false_uncertain", "commit-first"][:5] == ["1.00", "0.00", "100%", "100%", "6/6"]
    assert "targets, true_false_uncertain commit-first: 3/3 — every target met" in out
    assert printed["true_false_uncertain", "commit-first short"][:5] == ["1.00", "0.00", "100%", "100%", "6/6"]
    assert "made answers the judge finds different from the true reference: 0 of 6" in out
    assert re.search(r"^ *commit-first short +3 ", out, re.M) and "LLMBar Natural" in out
    made = {r["made_reference"] for r in rows if r["setting"] == "commit-first"}
    assert made == set(CASES["reference"].head(6))
