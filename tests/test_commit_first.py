"""Commit-first on LLMJudge and LLMPanel (scoring/_commit.py): a model answers each question before the judge grades
against that answer. Scripted transports count the requests: the answer is made once per distinct question (in a
run without a cache, and across runs with one), a given reference wins, a solver that fails is recorded on the
vote, and bad configuration is one error before any call."""

from __future__ import annotations

import json
import math
import re
from typing import Any

import pytest

import judgewidgets as jw
from judgewidgets.engine import ChatRequest, RetryPolicy
from judgewidgets.engine._litellm import CallFailure
from judgewidgets.scoring._commit import SOLVER_INSTRUCTION, ModelSolver, Question, Solution
from judgewidgets.testing import ScriptedTransport

FAST_RETRY = RetryPolicy(max_retries=0)
ANSWERS = {"What is the capital of France?": "Paris is the capital of France.", "What is 6 x 7?": "42."}


def is_solver(request: ChatRequest) -> bool:
    """Whether a request asks a question first (the solver's), not for a verdict."""
    return request.messages[0]["content"].endswith(SOLVER_INSTRUCTION)


def reference_in(request: ChatRequest) -> str | None:
    found = re.search(r"<reference>\n(.*?)\n</reference>", request.messages[1]["content"], re.S)
    return found.group(1) if found else None


def response_in(request: ChatRequest) -> str:
    found = re.search(r"<response>\n(.*?)\n</response>", request.messages[1]["content"], re.S)
    assert found, request.messages
    return found.group(1)


def grader(request: ChatRequest, attempt: int) -> str:
    """The solver answers from ANSWERS; the judge says correct when the response shares a word with the reference it
    was given (and "not sure" without one)."""
    if is_solver(request):
        return ANSWERS.get(request.messages[-1]["content"], "I do not know.")
    reference = reference_in(request)
    if reference is None:
        return json.dumps({"verdict": "not sure"})
    words = set(re.findall(r"\w+", reference.lower())) - {"is", "the", "of"}
    same = bool(words & set(re.findall(r"\w+", response_in(request).lower())))
    return json.dumps({"matches_reference": "yes" if same else "no", "verdict": "correct" if same else "incorrect"})


def judge(transport: ScriptedTransport, **options: Any) -> jw.LLMJudge:
    options.setdefault("commit_first", True)
    options.setdefault("cache", False)
    return jw.LLMJudge(
        "openai/judge", template="true_false_uncertain", transport=transport, retry=FAST_RETRY, **options
    )


PROMPTS = ["What is the capital of France?"] * 3 + ["What is 6 x 7?"]
RESPONSES = ["Paris.", "Lyon.", "It is Paris.", "42"]


def test_the_answer_is_made_once_per_question_and_graded_against() -> None:
    transport = ScriptedTransport(grader)
    result = judge(transport).score(PROMPTS, RESPONSES, progress=False)
    asked = [r for r in transport.requests if is_solver(r)]
    assert sorted(r.messages[-1]["content"] for r in asked) == sorted(set(PROMPTS))  # no cache: in-run dedupe
    assert asked[0].params["temperature"] == 0.0 and "response_format" not in asked[0].params
    graded = [r for r in transport.requests if not is_solver(r)]
    assert {reference_in(r) for r in graded} == set(ANSWERS.values())
    assert result.score_list == [1.0, 0.0, 1.0, 1.0]
    table = result.to_df()
    assert table["reference_source"].tolist() == ["judge"] * 4
    assert table["made_reference"].tolist() == [ANSWERS[p] for p in PROMPTS]
    assert {"reference_source", "made_reference"} <= set(result.votes.columns)


async def test_async_twin_and_the_answers_cost_counted_once() -> None:
    transport = ScriptedTransport(grader, prompt_tokens=10, completion_tokens=3, cost_usd=0.001)
    result = await judge(transport).ascore(PROMPTS, RESPONSES, progress=False)
    first = next(v for v in result.vote_list if v.item == 0)
    shared = next(v for v in result.vote_list if v.item == 1)
    assert first.prompt_tokens == 20 and first.cost_usd == pytest.approx(0.002)  # its judgment and the answer
    assert shared.prompt_tokens == 10 and shared.cost_usd == pytest.approx(0.001)  # its judgment alone
    assert result.usage.cost_usd == pytest.approx(0.001 * len(transport.requests))


def test_answers_are_cached_across_runs(tmp_path: Any) -> None:
    cache = str(tmp_path / "calls.sqlite")
    transport = ScriptedTransport(grader)
    judge(transport, cache=cache).score(PROMPTS, RESPONSES, progress=False)
    made = len(transport.requests)
    again = judge(transport, cache=cache).score(PROMPTS, RESPONSES, progress=False)
    assert len(transport.requests) == made  # every answer and judgment from the cache
    assert all(v.cached for v in again.vote_list)
    assert again.to_df()["made_reference"].tolist() == [ANSWERS[p] for p in PROMPTS]


def test_a_given_reference_wins() -> None:
    transport = ScriptedTransport(grader)
    references = [None, "Lyon", None, "forty-two"]
    result = judge(transport).score(PROMPTS, RESPONSES, references, progress=False)
    asked = [r.messages[-1]["content"] for r in transport.requests if is_solver(r)]
    assert asked == ["What is the capital of France?"]  # 6 x 7 has its reference: never asked
    table = result.to_df()
    assert table["reference_source"].tolist() == ["judge", "given", "judge", "given"]
    assert table["made_reference"].isna().tolist() == [False, True, False, True]
    graded = {response_in(r): reference_in(r) for r in transport.requests if not is_solver(r)}
    assert graded["Lyon."] == "Lyon" and graded["42"] == "forty-two"


def test_a_failing_solver_is_recorded_on_the_votes_not_raised() -> None:
    def reply(request: ChatRequest, attempt: int) -> str:
        if is_solver(request) and "6 x 7" in request.messages[-1]["content"]:
            raise CallFailure("server error", 500)
        return grader(request, attempt)

    transport = ScriptedTransport(reply)
    result = judge(transport).score(PROMPTS, RESPONSES, progress=False)
    failed = result.vote_list[3]
    assert math.isnan(failed.score) and failed.reference_source == "judge"
    assert failed.error is not None and failed.error.startswith("infrastructure: answering first (judge) failed:")
    assert [v.score for v in result.vote_list[:3]] == [1.0, 0.0, 1.0]  # the rest of the batch is judged
    assert not any("6 x 7" in r.messages[-1]["content"] for r in transport.requests if not is_solver(r))
    assert result.to_df()["error"].notna().tolist() == [False, False, False, True]


class TableSolver:
    """A solver of one's own: answers from a table, raises for what it does not know."""

    name = "table"

    def __init__(self) -> None:
        self.asked: list[str] = []

    def check(self) -> None:
        pass

    async def asolve(self, question: Question, session: Any) -> str | Solution:
        self.asked.append(question.text)
        if question.text not in ANSWERS:
            raise KeyError(question.text)
        return ANSWERS[question.text]


def test_a_solver_of_ones_own_answers_and_its_exceptions_are_recorded() -> None:
    solver = TableSolver()
    transport = ScriptedTransport(grader)
    result = judge(transport, solver=solver).score(
        [*PROMPTS, "Who wrote Hamlet?"], [*RESPONSES, "Shakespeare"], progress=False
    )
    assert sorted(solver.asked) == sorted({*PROMPTS, "Who wrote Hamlet?"})
    assert not any(is_solver(r) for r in transport.requests)
    assert [v.reference_source for v in result.vote_list] == ["solver:table"] * 5
    assert result.vote_list[4].error is not None and "KeyError" in result.vote_list[4].error
    assert result.score_list[:4] == [1.0, 0.0, 1.0, 1.0]


def test_a_solver_model_answers_for_the_judge() -> None:
    strong = ScriptedTransport(lambda r, a: "Paris.")
    weak = ScriptedTransport(grader)
    solver = ModelSolver("openai/strong", transport=strong, cache=False)
    result = judge(weak, solver=solver).score(PROMPTS[:2], RESPONSES[:2], progress=False)
    assert len(strong.requests) == 1 and strong.requests[0].model == "openai/strong"
    assert not any(is_solver(r) for r in weak.requests)
    assert result.to_df()["reference_source"].tolist() == ["solver:openai/strong"] * 2
    assert result.score_list == [1.0, 0.0]


def test_a_generator_answers_with_its_own_prompt_and_the_judges_cache(tmp_path: Any) -> None:
    strong = ScriptedTransport(lambda r, a: "Paris.")
    generator = jw.Generator("openai/strong", system_prompt="Reply with one word.", transport=strong)
    cache = str(tmp_path / "calls.sqlite")
    for _ in range(2):
        judge(ScriptedTransport(grader), solver=generator, cache=cache).score(
            PROMPTS[:2], RESPONSES[:2], progress=False
        )
    assert len(strong.requests) == 1  # cached with the judge's cache, though a Generator's own is off
    assert strong.requests[0].messages[0] == {"role": "system", "content": "Reply with one word."}


def test_naming_a_solver_turns_commit_first_on_and_a_string_is_a_model() -> None:
    plain = jw.LLMJudge("openai/judge", solver="openai/gpt-4o")
    assert plain.committer is not None and plain.committer.source == "solver:openai/gpt-4o"
    assert isinstance(plain.committer.solver, ModelSolver) and plain.committer.solver.model == "openai/gpt-4o"
    assert jw.LLMJudge("openai/judge").committer is None
    own = jw.LLMJudge("openai/judge", commit_first=True, temperature=0.7, api_key="sk-secret-1234")
    assert own.committer is not None and own.committer.source == "judge"
    messages, params = own.committer.solver.request(Question("Q?", ({"role": "user", "content": "Q?"},)))
    assert params["temperature"] == 0.0 and "logprobs" not in params and params["max_tokens"] > 0
    assert messages[0] == {"role": "system", "content": SOLVER_INSTRUCTION}
    copy = own.with_options(name="copy")
    assert copy.commit_first is True and copy.committer is not None


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"commit_first": False, "solver": "openai/gpt-4o"}, "needs commit_first=True"),
        ({"commit_first": True, "solver": 42}, "solver must be a model string, a Generator or a Solver"),
        ({"commit_first": "yes"}, "commit_first must be True"),
        ({"solver": "  "}, "solver must name a model"),
    ],
)
def test_bad_configuration_is_one_error_at_construction(options: dict[str, Any], message: str) -> None:
    with pytest.raises(jw.ConfigurationError, match=message):
        jw.LLMJudge("openai/judge", **options)


def test_an_unknown_solver_model_fails_before_any_call() -> None:
    transport = ScriptedTransport(grader)
    unknown = judge(transport, solver="no-such-provider-xyz/model")
    with pytest.raises(jw.ConfigurationError):
        unknown.score(PROMPTS, RESPONSES, progress=False)
    assert transport.requests == []


def test_estimate_counts_the_answering_calls() -> None:
    estimate = judge(ScriptedTransport(grader)).estimate_cost(PROMPTS, RESPONSES, [None, None, None, "42"])
    row = estimate.judges[0]
    assert row.answering_calls == 1 and row.calls == 5  # one question to answer, four judgments
    assert "1 answering first" in str(estimate)
    plain = jw.LLMJudge("openai/judge", transport=ScriptedTransport(grader)).estimate_cost(PROMPTS, RESPONSES)
    assert plain.judges[0].answering_calls == 0 and plain.judges[0].calls == 4
    assert row.prompt_tokens > plain.judges[0].prompt_tokens


def test_a_panel_answers_once_per_question_with_one_solver_and_once_per_model_without() -> None:
    transport = ScriptedTransport(grader)
    members = [
        jw.LLMJudge("openai/judge", name="a", template="true_false_uncertain", transport=transport, cache=False),
        jw.LLMJudge("openai/judge", name="b", template="true_false", transport=transport, cache=False),
    ]
    result = jw.LLMPanel(members, commit_first=True).score(PROMPTS, RESPONSES, progress=False)
    asked = [r for r in transport.requests if is_solver(r)]
    assert len(asked) == 2  # the same model asked the same way: one answer per question for both judges
    table = result.to_df()
    assert table["reference_source"].tolist() == ["judge"] * 4
    assert {"a_made_reference", "b_made_reference"} <= set(table.columns)
    assert result.votes["reference_source"].notna().all() and not result.votes["error"].notna().any()

    solver = TableSolver()
    jw.LLMPanel(["openai/x", "openai/y"], solver=solver, transport=ScriptedTransport(grader), cache=False).score(
        PROMPTS, RESPONSES, progress=False
    )
    assert sorted(solver.asked) == sorted(set(PROMPTS))


def test_a_panel_refuses_commit_first_for_a_judge_that_cannot() -> None:
    class Minimal:
        name, weight = "minimal", 1.0

        async def ajudge(self, items: Any, session: Any, progress: Any) -> list[jw.Vote]:
            return []

    with pytest.raises(jw.ConfigurationError, match="cannot commit first"):
        jw.LLMPanel(["openai/x", Minimal()], commit_first=True)


CHAT = [
    {"role": "system", "content": "You are terse."},
    {"role": "user", "content": "What is 6 x 7?"},
    {"role": "assistant", "content": "41."},
]


def test_a_conversations_turn_is_answered_from_its_history() -> None:
    transport = ScriptedTransport(lambda r, a: "42." if is_solver(r) else json.dumps({"verdict": "incorrect"}))
    judge(transport).score(conversations=[CHAT], progress=False)
    (asked,) = [r for r in transport.requests if is_solver(r)]
    assert asked.messages[0] == {"role": "system", "content": f"You are terse.\n\n{SOLVER_INSTRUCTION}"}
    assert asked.messages[1:] == ({"role": "user", "content": "What is 6 x 7?"},)


def test_a_whole_conversation_answers_no_question() -> None:
    transport = ScriptedTransport(grader)
    with pytest.raises(jw.InputError, match="whole conversation"):
        judge(transport).score(conversations=[CHAT], target="whole", progress=False)
    with pytest.raises(jw.InputError, match="whole conversation"):
        jw.LLMPanel([judge(transport)]).score(conversations=[CHAT], target="whole", progress=False)
    assert transport.requests == []
    given = judge(transport).score(conversations=[CHAT], references=["42"], target="whole", progress=False)
    assert given.vote_list[0].reference_source == "given"


def test_a_saved_run_keeps_where_its_references_came_from(tmp_path: Any) -> None:
    result = judge(ScriptedTransport(grader)).score(PROMPTS, RESPONSES, progress=False)
    result.save(tmp_path / "run")
    loaded = jw.load(tmp_path / "run")
    assert loaded.to_df()["made_reference"].tolist() == result.to_df()["made_reference"].tolist()
    assert [v.reference_source for v in loaded.vote_list] == ["judge"] * 4


def test_a_panels_settings_replace_its_judges_own() -> None:
    member = jw.LLMJudge("openai/judge", solver="openai/strong")
    assert jw.LLMPanel([member], commit_first=False).judges[0].committer is None
    assert jw.LLMPanel([member]).judges[0].committer is not None
    panel = jw.LLMPanel([member], commit_first=True)
    assert panel.judges[0].committer is not None and panel.judges[0].committer.source == "judge"


def test_short_only_grades_against_short_answers_and_without_a_reference_otherwise() -> None:
    def reply(request: ChatRequest, attempt: int) -> str:
        if is_solver(request) and "Why" in request.messages[-1]["content"]:
            return "Because the air scatters blue light more than red light, by Rayleigh scattering."
        return grader(request, attempt)

    transport = ScriptedTransport(reply)
    prompts = ["What is 6 x 7?", "Why is the sky blue?"]
    result = judge(transport, commit_first="short").score(prompts, ["42", "Scattering."], progress=False)
    first, second = result.vote_list
    assert first.reference_source == "judge" and first.made_reference == "42." and first.score == 1.0
    assert second.reference_source == "none: the answer made first was not short" and second.error is None
    assert second.made_reference is not None and second.made_reference.startswith("Because")
    graded = [r for r in transport.requests if not is_solver(r) and "sky" in r.messages[1]["content"]]
    assert len(graded) == 1 and reference_in(graded[0]) is None  # judged as without commit-first
    assert second.score == 0.5  # the grader's "not sure" without a reference
    with pytest.raises(jw.ConfigurationError, match='True, "short", False or None'):
        jw.LLMJudge("openai/judge", commit_first="long")
