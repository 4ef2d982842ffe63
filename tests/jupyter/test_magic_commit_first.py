"""`%%judge --commit-first` / `--solver` in every mode, against a loopback server that answers questions and grades
against the reference it is shown."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pandas as pd
import pytest
from IPython.core.error import UsageError

from judgewidgets.scoring._commit import SOLVER_INSTRUCTION
from judgewidgets.testing import OpenAITestServer
from tests.jupyter.shell import magic_shell


def is_solver(body: dict[str, Any]) -> bool:
    return body["messages"][0]["content"].endswith(SOLVER_INSTRUCTION)


def respond(body: dict[str, Any]) -> str:
    """Answers 366 to every question; a judgment is right when the judged text holds the reference shown."""
    if is_solver(body):
        return "A leap year has 366 days."
    text = body["messages"][1]["content"]
    reference = re.search(r"<reference>\n(.*?)\n</reference>", text, re.S)
    shown = re.findall(r"<(response|response_a|response_b|submission)>\n(.*?)\n</\1>", text, re.S)
    numbers = set(re.findall(r"\d+", reference.group(1))) if reference else set()
    holds = [bool(numbers & set(re.findall(r"\d+", t))) for _, t in shown]
    schema = json.dumps(body.get("response_format", {}))
    if "<response_a>" in text:
        return json.dumps({"verdict": "A" if holds[0] and not holds[1] else "B" if holds[1] else "tie"})
    if '"score"' in schema:
        return json.dumps({"score": 5 if holds and holds[0] else 1})
    return json.dumps({"verdict": "MET" if holds and holds[0] else "UNMET"})


@pytest.fixture(scope="module")
def server() -> Iterator[OpenAITestServer]:
    with OpenAITestServer(respond) as running:
        yield running


@pytest.fixture
def ip(server: OpenAITestServer, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    yield from magic_shell(server, monkeypatch, judges="openai/a")


CELL = """prompt: How many days are in a leap year?
response: 365 days.

prompt: How many days are in a leap year?
response: It has 366.
"""


def solver_calls(server: OpenAITestServer) -> int:
    return sum(1 for b in server.stats.bodies if b and is_solver(b))


def test_score_mode_commits_first_once_per_question(ip, server: OpenAITestServer) -> None:  # type: ignore[no-untyped-def]
    server.reset_stats()
    ip.run_cell_magic("judge", "--commit-first --out scored --no-chart", CELL)
    table = ip.user_ns["scored"].to_df()
    assert table["judge_1"].tolist() == pytest.approx([0.0, 1.0], abs=0.05)
    assert table["reference_source"].tolist() == ["judge", "judge"]
    assert table["judge_1_made_reference"].tolist() == ["A leap year has 366 days."] * 2
    assert solver_calls(server) <= 1  # one question (a repeat run answers from the cache)


def test_a_solver_model_answers_served_at_the_same_api_base(ip, server: OpenAITestServer) -> None:  # type: ignore[no-untyped-def]
    server.reset_stats()
    ip.run_cell_magic("judge", "--solver openai/strong --out scored --no-chart", CELL)
    table = ip.user_ns["scored"].to_df()
    assert table["reference_source"].tolist() == ["solver:openai/strong"] * 2
    models = {b["model"] for b in server.stats.bodies if b and is_solver(b)}
    assert models <= {"strong"}


def test_rubric_pairwise_and_tournament_modes_commit_first(ip, server: OpenAITestServer) -> None:  # type: ignore[no-untyped-def]
    ip.user_ns["rubric_yaml"] = "- requirement: The answer is correct.\n  name: correct\n"
    ip.user_ns["answers"] = pd.DataFrame({"prompt": ["Days in a leap year?"] * 2, "response": ["365", "366"]})
    ip.run_line_magic("judge", "--rubric rubric_yaml --data answers --commit-first --out graded --no-chart")
    graded = ip.user_ns["graded"]
    assert [r.score for r in graded.reports] == [0.0, 1.0]
    pair = "question: Days in a leap year?\na: 365\nb: 366\n"
    ip.run_cell_magic("judge", "--mode pairwise --commit-first --out compared", pair)
    compared = ip.user_ns["compared"]
    assert compared["winner"].tolist() == ["B"] and compared["reference_source"].tolist() == ["judge"]
    cell = "questions: ['Days in a leap year?']\ncandidates: {short: ['365'], right: ['366']}\n"
    ip.run_cell_magic("judge", "--mode tournament --commit-first --out ranked --no-chart", cell)
    ranked = ip.user_ns["ranked"]
    assert ranked.ranking.iloc[0]["candidate"] == "right"
    assert set(ranked.matches["reference_source"]) == {"judge"}


def test_commit_first_options_are_listed_and_checked(ip) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(UsageError, match="solver"):
        ip.run_cell_magic("judge", "--solver 42", CELL)
    help_text = ip.find_cell_magic("judge").__doc__
    assert "--commit-first" in help_text and "--solver" in help_text


def test_commit_first_short_grades_only_against_a_short_answer(ip) -> None:  # type: ignore[no-untyped-def]
    ip.run_cell_magic("judge", "--commit-first short --out scored --no-chart", CELL)
    table = ip.user_ns["scored"].to_df()  # the server's sentence restates the question around "366": short
    assert table["reference_source"].tolist() == ["judge"] * 2
    assert table["judge_1"].tolist() == pytest.approx([0.0, 1.0], abs=0.05)
    ip.user_ns["asked"] = pd.DataFrame({"prompt": ["Why is the sky blue?"] * 2, "response": ["Scattering.", "Dust."]})
    ip.run_line_magic("judge", "--data asked --commit-first short --out open --no-chart")
    opened = ip.user_ns["open"].to_df()  # the same sentence adds six words to this question: not short
    assert opened["reference_source"].tolist() == ["none: the answer made first was not short"] * 2
    assert opened["judge_1_made_reference"].tolist() == ["A leap year has 366 days."] * 2


def test_commit_first_off_sends_no_question_first(ip, server: OpenAITestServer) -> None:  # type: ignore[no-untyped-def]
    server.reset_stats()
    ip.run_cell_magic("judge", "--commit-first off --out scored --no-chart", CELL)
    assert solver_calls(server) == 0
    assert (
        "reference_source" not in ip.user_ns["scored"].to_df()
        or ip.user_ns["scored"].to_df()["reference_source"].isna().all()
    )
