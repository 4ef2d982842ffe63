"""benchmarks/rubric_criteria.py's code path on the loopback test server: an oracle judge scores 100 % under
every binary prompt (so each prompt's answers map back onto MET / UNMET the right way), a contrarian 0 %."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.benchmark_scripts import BENCHMARKS, run_on_server

CASES = [json.loads(line) for line in (BENCHMARKS / "data" / "rubric_criteria.jsonl").read_text().splitlines()]


def judge(contrary: bool):  # type: ignore[no-untyped-def]
    """A judge that knows each case's label (or says the opposite), answering in the words its prompt asks for."""

    def reply(body: dict[str, Any]) -> str:
        system, user = body["messages"][0]["content"], body["messages"][1]["content"]
        submission = re.search(r"<(?:response|submission)>\n(.*?)\n</(?:response|submission)>", user, re.S)
        assert submission is not None
        case = next(c for c in CASES if c["submission"] == submission.group(1) and c["requirement"] in system)
        met = (case["truth"] == "MET") != contrary
        if "names a flaw" in system:
            verdict = "fail" if met else "pass"
        elif "statement about the response is correct" in system:
            verdict = "correct" if met else "incorrect"
        else:
            verdict = "MET" if met else "UNMET"
        return json.dumps({"verdict": verdict, "explanation": "checked"})

    return reply


@pytest.mark.parametrize(("contrary", "expected"), [(False, "50/50 = 100.0%"), (True, " 0/50 =  0.0%")])
def test_every_prompt_maps_the_judges_words_back_onto_the_labels(
    contrary: bool, expected: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    argv = ["--llmbar-n", "0", "--fresh", "--model", "judge", "--out", str(tmp_path / "rows.csv")]
    rows = run_on_server("rubric_criteria", argv, judge(contrary))
    out = capsys.readouterr().out
    assert [line.split()[0] for line in out.splitlines() if expected in line] == ["statement", "met_unmet"]
    assert len(rows) == 100 and (tmp_path / "rows.csv").exists()
    assert all((row["verdict"] == row["truth"]) != contrary for row in rows)
