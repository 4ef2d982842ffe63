"""Commit-first in rubric grading: the criteria about correctness are graded against an answer to the query made
first (once per query, for every criterion and submission), the others as without it; a given reference wins; a
failed answer leaves the vote abstaining with the error; what cannot work is an error before any call."""

from __future__ import annotations

import json
import re
from typing import Any

import pandas as pd
import pytest

import judgewidgets as jw
from judgewidgets.engine import ChatRequest, RetryPolicy
from judgewidgets.engine._litellm import CallFailure
from judgewidgets.scoring._commit import SOLVER_INSTRUCTION
from judgewidgets.testing import ScriptedTransport

RUBRIC = jw.Rubric(
    [
        jw.Criterion("The answer is factually correct.", name="correct"),
        jw.Criterion("The answer is polite.", name="polite"),
        jw.Criterion(
            "How complete is the answer?",
            name="complete",
            options=[{"label": "full", "value": 1.0}, {"label": "partial", "value": 0.0}],
            correctness=True,
        ),
    ]
)


def is_solver(request: ChatRequest) -> bool:
    return request.messages[0]["content"].endswith(SOLVER_INSTRUCTION)


def reply(request: ChatRequest, attempt: int) -> str:
    """The solver answers 42; a criterion is MET (option 1) when the submission holds the reference it was shown,
    or when it was shown none."""
    if is_solver(request):
        return "42"
    text = request.messages[1]["content"]
    reference = re.search(r"<reference>\n(.*?)\n</reference>", text, re.S)
    submission = re.search(r"<submission>\n(.*?)\n</submission>", text, re.S)
    met = reference is None or (submission is not None and reference.group(1) in submission.group(1))
    if "selected_option" in json.dumps(request.params.get("response_format", {})) or "option" in text.lower()[-400:]:
        return json.dumps({"explanation": "checked", "selected_option": 1 if met else 2})
    return json.dumps({"verdict": "MET" if met else "UNMET"})


def grader(transport: ScriptedTransport, **options: Any) -> jw.CriterionGrader:
    judge = jw.LLMJudge(
        "openai/judge", transport=transport, cache=False, structured_output=True, retry=RetryPolicy(max_retries=0)
    )
    return jw.CriterionGrader([judge], seed=1, shuffle_options=False, binary_prompt="met_unmet", **options)


DATA = pd.DataFrame({"prompt": ["What is 6 x 7?", "What is 6 x 7?"], "response": ["It is 42.", "It is 41."]})


def votes(result: jw.GradingResult) -> pd.DataFrame:
    return pd.concat([r.votes_df().assign(row=i) for i, r in enumerate(result.reports)], ignore_index=True)


def test_correctness_criteria_are_graded_against_the_answer_made_first() -> None:
    transport = ScriptedTransport(reply)
    result = grader(transport, commit_first=True).grade_many(RUBRIC, DATA, progress=False)
    assert sum(is_solver(r) for r in transport.requests) == 1  # one query: one answer for all
    table = votes(result)
    by = table.set_index(["row", "criterion"])
    assert by.loc[(0, "correct"), "verdict"] == "MET" and by.loc[(1, "correct"), "verdict"] == "UNMET"
    assert (
        by.loc[(0, "complete"), "selected_label"] == "full" and by.loc[(1, "complete"), "selected_label"] == "partial"
    )
    assert by.loc[(1, "polite"), "verdict"] == "MET"  # not about correctness: graded as without a reference
    assert set(table[table["criterion"] != "polite"]["reference_source"]) == {"judge"}
    assert table[table["criterion"] == "polite"]["reference_source"].isna().all()
    assert set(table["made_reference"].dropna()) == {"42"}
    polite = [r for r in transport.requests if not is_solver(r) and "polite" in r.messages[0]["content"]]
    assert polite and all("<reference>" not in r.messages[1]["content"] for r in polite)


async def test_one_grade_and_a_given_reference_wins() -> None:
    transport = ScriptedTransport(reply)
    report = await grader(transport, commit_first=True).agrade(RUBRIC, "It is 41.", "What is 6 x 7?", "41")
    assert not any(is_solver(r) for r in transport.requests)
    correct = next(c for c in report.criteria if c.name == "correct")
    assert correct.verdict == jw.CriterionVerdict.MET and correct.votes[0].reference_source == "given"


def test_a_failed_answer_abstains_with_the_error() -> None:
    def failing(request: ChatRequest, attempt: int) -> str:
        if is_solver(request):
            raise CallFailure("InternalServerError: down", 500)
        return reply(request, attempt)

    report = grader(ScriptedTransport(failing), commit_first=True).grade(RUBRIC, "It is 42.", "What is 6 x 7?")
    correct = next(c for c in report.criteria if c.name == "correct")
    vote = correct.votes[0]
    assert vote.verdict == jw.CriterionVerdict.CANNOT_ASSESS and vote.reference_source == "judge"
    assert vote.error is not None and vote.error.startswith("infrastructure: answering first (judge) failed")
    polite = next(c for c in report.criteria if c.name == "polite")
    assert polite.verdict == jw.CriterionVerdict.MET and polite.votes[0].error is None


def test_a_solver_for_every_judge_and_each_judges_own_setting() -> None:
    transport = ScriptedTransport(reply)
    committed = grader(transport, solver="openai/strong")
    assert all(j.committer is not None and j.committer.source == "solver:openai/strong" for j in committed.judges)
    own = jw.LLMJudge("openai/judge", commit_first=True)
    assert jw.CriterionGrader([own]).judges[0].committer is not None
    assert jw.CriterionGrader([own], commit_first=False).judges[0].committer is None


def test_what_cannot_work_is_an_error_before_any_call() -> None:
    transport = ScriptedTransport(reply)
    polite_only = jw.Rubric([jw.Criterion("The answer is polite.")])
    with pytest.raises(jw.InputError, match="has none"):
        grader(transport, commit_first=True).grade(polite_only, "Hi", "Hello?")
    with pytest.raises(jw.InputError, match="has none"):
        grader(transport, commit_first=True).grade_many(RUBRIC, ["It is 42."], query_col=None, progress=False)
    assert transport.requests == []


def test_estimate_counts_one_answer_per_query() -> None:
    estimate = grader(ScriptedTransport(reply), commit_first=True).estimate_cost(RUBRIC, DATA)
    row = estimate.judges[0]
    assert row.answering_calls == 1 and row.calls == 2 * 3 + 1  # one query: one answer


def test_correctness_is_read_from_the_criterions_words_unless_given() -> None:
    assert jw.Criterion("Contains no factual errors.").about_correctness
    assert jw.Criterion("Gets the arithmetic right", name="accuracy").about_correctness
    assert not jw.Criterion("Is written in plain English.").about_correctness
    assert not jw.Criterion("States the correct year.", correctness=False).about_correctness
    assert jw.Criterion("Names the capital.", correctness=True).about_correctness
