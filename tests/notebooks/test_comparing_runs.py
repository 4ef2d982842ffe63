"""The comparing_runs tutorial, cell by cell in an IPython shell, its judges on the loopback server (the embedded
judge's run is test_binder_notebooks): every cell runs, and the comparison finds what the prose says it finds."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import nbformat
import pytest
from IPython.core.interactiveshell import InteractiveShell

from judgewidgets.testing import OpenAITestServer

ROOT = Path(__file__).resolve().parents[2]
# What each reference's right answer contains (a response without it is wrong).
RIGHT = {
    "canberra": "canberra",
    "eight": "8|eight",
    "au": r"\bau\b",
    "jane austen": "austen",
    "100 °c": "100",
    "jupiter": "jupiter",
    "seven": "seven|7",
    "9": r"\b9\b",
}


def grader(body: dict[str, Any]) -> str:
    """A judge that knows the answers: a likert 5 or 1, correct or incorrect, by the reference."""
    text = body["messages"][-1]["content"]
    reference = re.search(r"<reference>\n(.*?)\n</reference>", text, re.S).group(1).strip().lower()  # type: ignore[union-attr]
    response = re.search(r"<response>\n(.*?)\n</response>", text, re.S).group(1).strip().lower()  # type: ignore[union-attr]
    right = re.search(RIGHT[reference], response) is not None
    fields = body["response_format"]["json_schema"]["schema"]["properties"]
    answer: dict[str, Any] = {"matches_reference": "yes" if right else "no"}
    if "score" in fields:
        answer["score"] = 5 if right else 1
    if "verdict" in fields:
        answer["verdict"] = "correct" if right else "incorrect"
    return json.dumps(answer)


def test_the_tutorial_runs_and_finds_the_three_regressions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    notebook = nbformat.read(ROOT / "notebooks" / "comparing_runs.ipynb", as_version=4)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    shell = InteractiveShell.instance()
    with OpenAITestServer(grader) as server:
        for cell in notebook.cells:
            if cell.cell_type != "code":
                continue
            judge = f'jw.LLMJudge("openai/tutorial", api_base="{server.base_url}", cache=False, '
            source = cell.source.replace('jw.LLMJudge("local", ', judge)
            source = source.replace("!judgewidgets ", f"!{sys.executable} -m judgewidgets ")
            outcome = shell.run_cell(source, store_history=False)
            assert outcome.success, f"{cell.source}\n{outcome.error_in_exec or outcome.error_before_exec!r}"
        assert server.stats.total == 32  # 8 answers × 2 judges × 2 runs, as the introduction says
    comparison = shell.user_ns["comparison"]
    assert comparison.regressions()["input"].tolist() == [
        "What is the capital of Australia?",
        "Who wrote the novel Pride and Prejudice?",
        "What is the square root of 81?",
    ]
    assert sorted(comparison.improvements()["input"]) == [
        "What is the chemical symbol for gold?",
        "What is the largest planet in the Solar System?",
    ]
    assert sorted(shell.user_ns["evals"].names) == ["v1", "v2"] and (tmp_path / "evals" / "v1" / "run.json").exists()
    printed = capfd.readouterr()
    assert "v2 is worse than v1 beyond the margin 0.05" in printed.out
    # `!` runs the command in a terminal: its stderr arrives on the same stream as its stdout
    assert "judgewidgets: regression: evals/v2 is worse than evals/v1" in printed.out + printed.err
    assert "exit status: 1" in printed.out
