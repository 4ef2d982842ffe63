"""benchmarks/rubric_choices.py's code path on the loopback test server: an oracle judge picks every true option
under every shuffle (so the displayed numbers map back onto the options the right way), a contrarian none."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.benchmark_scripts import BENCHMARKS, run_on_server

CASES = [json.loads(line) for line in (BENCHMARKS / "data" / "rubric_choices.jsonl").read_text().splitlines()]


def judge(contrary: bool):  # type: ignore[no-untyped-def]
    """A judge that knows each case's true option (or picks another real one), answering with its number."""

    def reply(body: dict[str, Any]) -> str:
        system, user = body["messages"][0]["content"], body["messages"][1]["content"]
        submission = re.search(r"<submission>\n(.*?)\n</submission>", user, re.S)
        assert submission is not None
        case = next(
            c
            for c in CASES
            if c["submission"] == submission.group(1) and f"Criterion: {c['criterion']['requirement']}\n" in system
        )
        shown = dict((label, int(n)) for n, label in re.findall(r"^(\d+)\. (.+)$", system, re.M))
        labels = [o["label"] for o in case["criterion"]["options"]]
        pick = next(label for label in labels if label != case["truth"]) if contrary else case["truth"]
        return json.dumps({"selected_option": shown[pick], "explanation": "checked"})

    return reply


@pytest.mark.parametrize(("contrary", "expected"), [(False, "36/36 = 100.0%"), (True, " 0/36 =  0.0%")])
def test_the_displayed_option_numbers_map_back_onto_the_options(
    contrary: bool, expected: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    argv = ["--fresh", "--model", "judge", "--seeds", "0,1", "--out", str(tmp_path / "rows.csv")]
    rows = run_on_server("rubric_choices", argv, judge(contrary))
    out = capsys.readouterr().out
    assert sum(line.startswith("seed") and expected in line for line in out.splitlines()) == 2  # both shuffles
    assert "same option picked under every shuffle: 36/36" in out
    assert len(rows) == 72 and (tmp_path / "rows.csv").exists()
    assert all((row["picked"] == row["truth"]) != contrary for row in rows)
    if not contrary:  # the oracle's values order every pair of differently labelled ordinal responses
        ordered = re.search(r"ordinal pairs ordered right by expected value (\S+)/(\d+)", out)
        assert ordered is not None and float(ordered.group(1)) == int(ordered.group(2)) > 0
