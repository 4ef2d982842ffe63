"""Commit-first in a pipeline: each distinct question is answered once before any stage, every stage grades against
that answer, the table says where each item's reference came from; a failed answer is recorded on every stage."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

import judgewidgets as jw
from judgewidgets.engine import ChatRequest, RetryPolicy
from judgewidgets.engine._litellm import CallFailure
from judgewidgets.scoring._commit import SOLVER_INSTRUCTION
from judgewidgets.testing import ScriptedTransport

PROMPTS = ["What is 6 x 7?", "What is 6 x 7?", "Capital of France?"]
RESPONSES = ["42", "41", "Paris"]


def is_solver(request: ChatRequest) -> bool:
    return request.messages[0]["content"].endswith(SOLVER_INSTRUCTION)


def reply(request: ChatRequest, attempt: int) -> str:
    if is_solver(request):
        if "France" in request.messages[-1]["content"]:
            raise CallFailure("bad request", 400)
        return "42"
    text = request.messages[1]["content"]
    reference = re.search(r"<reference>\n(.*?)\n</reference>", text, re.S)
    judged = re.search(r"<(?:response|submission)>\n(.*?)\n</(?:response|submission)>", text, re.S)
    right = reference is not None and judged is not None and reference.group(1) in judged.group(1)
    if "criterion" in json.dumps(request.params.get("response_format", {})) or "<submission>" in text:
        return json.dumps({"verdict": "MET" if right else "UNMET"})
    return json.dumps({"matches_reference": "yes" if right else "no", "verdict": "correct" if right else "incorrect"})


def judge(transport: ScriptedTransport, **options: Any) -> jw.LLMJudge:
    return jw.LLMJudge(
        "openai/judge",
        template="true_false",
        transport=transport,
        cache=False,
        structured_output=True,
        retry=RetryPolicy(max_retries=0),
        **options,
    )


def test_one_answer_per_question_for_every_stage() -> None:
    transport = ScriptedTransport(reply)
    rubric = jw.Rubric([jw.Criterion("The answer is correct.")])
    grader = jw.CriterionGrader([judge(transport)], binary_prompt="met_unmet", seed=1)
    pipeline = jw.EvaluationPipeline(
        {"judge": judge(transport), "rubric": (rubric, grader)}, commit_first=True, min_score=None
    )
    table = pipeline.run(PROMPTS, RESPONSES, progress=False)
    asked = [r.messages[-1]["content"] for r in transport.requests if is_solver(r)]
    assert sorted(asked) == ["Capital of France?", "What is 6 x 7?"]  # once each, for both stages
    assert table["reference_source"].tolist() == ["judge"] * 3
    assert table["made_reference"].tolist()[:2] == ["42", "42"] and table["made_reference"].isna().tolist()[2]
    assert table["judge"].tolist()[:2] == [1.0, 0.0] and table["rubric"].tolist()[:2] == [1.0, 0.0]
    failed = table.iloc[2]
    assert failed["judge_error"].startswith("input: answering first (judge) failed")
    assert failed["rubric_error"] == failed["judge_error"] and failed["needs_human_review"]
    assert not any("France" in r.messages[1]["content"] for r in transport.requests if not is_solver(r))
    assert table.attrs["usage"]["commit-first"]["attempts"] >= 2


def test_a_given_reference_wins_and_a_solver_answers_for_mixed_models() -> None:
    transport = ScriptedTransport(reply)
    other = jw.LLMJudge("openai/other", transport=transport, cache=False)
    with pytest.raises(jw.ConfigurationError, match="name the one that answers with solver="):
        jw.EvaluationPipeline({"a": judge(transport), "b": other}, commit_first=True)
    solver = jw.ModelSolver("openai/strong", transport=ScriptedTransport(lambda r, a: "42"), cache=False)
    pipeline = jw.EvaluationPipeline({"a": judge(transport)}, solver=solver, min_score=None)
    table = pipeline.run(PROMPTS[:2], RESPONSES[:2], ["41", None], progress=False)
    assert table["reference_source"].tolist() == ["given", "solver:openai/strong"]
    assert table["a"].tolist() == [0.0, 0.0]  # 42 against the given 41; 41 against the made 42


def test_estimate_counts_the_answers_once() -> None:
    pipeline = jw.EvaluationPipeline({"a": judge(ScriptedTransport(reply))}, commit_first=True)
    estimate = pipeline.estimate_cost(PROMPTS, RESPONSES)
    rows = {row.judge: row for row in estimate.judges}
    assert rows["commit-first"].calls == 2 and rows["commit-first"].answering_calls == 2
    assert rows["a: judge_1"].calls == 3
