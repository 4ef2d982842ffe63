"""Commit-first on pairwise judges and tournaments: one answer per question, shared by both orders of a comparison and
by every pair on that question in a run (a tournament answers each question once for all its candidates); a given
reference wins; a failed answer is recorded on the comparison."""

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
from tests.pairwise.helpers import answer, slots

TRUTH = {"What is 6 x 7?": "42", "What is the capital of France?": "Paris"}


def is_solver(request: ChatRequest) -> bool:
    return request.messages[0]["content"].endswith(SOLVER_INSTRUCTION)


def reference_in(request: ChatRequest) -> str | None:
    found = re.search(r"<reference>\n(.*?)\n</reference>", request.messages[1]["content"], re.S)
    return found.group(1) if found else None


def reply(request: ChatRequest, attempt: int) -> str:
    """The solver answers from TRUTH; the judge prefers the slot holding the reference's answer (A without one)."""
    if is_solver(request):
        return TRUTH[request.messages[-1]["content"]]
    reference = reference_in(request)
    if "<response_a>" not in request.messages[1]["content"]:  # the pointwise method: one response scored alone
        response = re.search(r"<response>\n(.*?)\n</response>", request.messages[1]["content"], re.S)
        assert response is not None
        right = reference is not None and reference in response.group(1)
        return json.dumps({"matches_reference": "yes" if right else "no", "verdict": "yes" if right else "no"})
    a, b = slots(request)
    if reference is None:
        return answer("A", 0.9)
    return answer("A" if reference in a else "B" if reference in b else "tie", 0.9)


def pairwise(transport: ScriptedTransport, **options: Any) -> jw.PairwiseJudge:
    options.setdefault("method", "verdict")
    options.setdefault("commit_first", True)
    return jw.PairwiseJudge(
        "openai/judge", transport=transport, cache=False, retry=RetryPolicy(max_retries=0), **options
    )


def test_both_orders_share_one_answer() -> None:
    transport = ScriptedTransport(reply)
    result = pairwise(transport).compare("What is 6 x 7?", "It is 41.", "It is 42.")
    assert sum(is_solver(r) for r in transport.requests) == 1
    orders = [r for r in transport.requests if not is_solver(r)]
    assert len(orders) == 2 and {reference_in(r) for r in orders} == {"42"}
    assert result.winner == "B" and result.consistent is True
    assert result.reference_source == "judge" and result.made_reference == "42" and result.reference is None
    assert result.verdicts[0].prompt_tokens == 20  # the first order carries the answer's cost


@pytest.mark.parametrize("method", ["verdict", "pointwise"])
def test_compare_many_answers_each_question_once(method: str) -> None:
    transport = ScriptedTransport(reply)
    table = pairwise(transport, method=method).compare_many(
        ["What is 6 x 7?", "What is 6 x 7?", "What is the capital of France?"],
        ["41", "42", "Paris"],
        ["42", "43", "Lyon"],
        progress=False,
    )
    asked = [r.messages[-1]["content"] for r in transport.requests if is_solver(r)]
    assert sorted(asked) == ["What is 6 x 7?", "What is the capital of France?"]
    assert table["winner"].tolist() == ["B", "A", "A"]
    assert table["reference_source"].tolist() == ["judge"] * 3
    assert table["made_reference"].tolist() == ["42", "42", "Paris"]


def test_a_given_reference_wins_in_a_comparison() -> None:
    transport = ScriptedTransport(reply)
    judge = pairwise(transport)
    result = judge.compare("What is 6 x 7?", "It is 41.", "It is 42.", reference="41")
    assert not any(is_solver(r) for r in transport.requests)
    assert result.winner == "A" and result.reference_source == "given" and result.made_reference is None
    with_default = pairwise(ScriptedTransport(reply), reference="41").compare("What is 6 x 7?", "41", "42")
    assert with_default.reference_source == "given"


def test_a_failed_answer_is_recorded_on_the_comparison() -> None:
    def failing(request: ChatRequest, attempt: int) -> str:
        if is_solver(request):
            raise CallFailure("bad request", 400)
        return reply(request, attempt)

    transport = ScriptedTransport(failing)
    table = pairwise(transport).compare_many(["What is 6 x 7?"], ["41"], ["42"], progress=False)
    assert table["winner"].isna().all() and table["reference_source"].tolist() == ["judge"]
    assert table["error"].iloc[0].startswith("input: answering first (judge) failed:")
    assert not any(not is_solver(r) for r in transport.requests)  # nothing judged without its reference
    assert len(table.attrs["verdicts"]) == 2 and all(v["error"] for v in table.attrs["verdicts"])


def test_a_tournament_answers_each_question_once_for_all_candidates() -> None:
    transport = ScriptedTransport(reply)
    questions = ["What is 6 x 7?", "What is the capital of France?"]
    candidates = {"right": ["42", "Paris"], "wrong": ["41", "Lyon"], "vague": ["a number", "a city"]}
    result = jw.Tournament(pairwise(transport), seed=1, bootstrap=20).run(questions, candidates, progress=False)
    asked = sorted(r.messages[-1]["content"] for r in transport.requests if is_solver(r))
    assert asked == sorted(questions)  # 3 pairs × 2 questions × 2 orders, 2 answers
    assert sum(not is_solver(r) for r in transport.requests) == 12
    assert result.ranking.iloc[0]["candidate"] == "right"
    assert set(result.matches["reference_source"]) == {"judge"}
    assert set(result.matches["made_reference"]) == {"42", "Paris"}


def test_a_tournament_in_batches_answers_each_question_once() -> None:
    transport = ScriptedTransport(reply)
    candidates = {f"c{i}": ["42", "Paris"] for i in range(4)}
    tournament = jw.Tournament(pairwise(transport), format="swiss", seed=0, bootstrap=20)
    tournament.run(list(TRUTH), candidates, progress=False)
    assert sum(is_solver(r) for r in transport.requests) == 2


def test_two_different_conversations_answer_no_one_question() -> None:
    first = [{"role": "user", "content": "6 x 7?"}, {"role": "assistant", "content": "42"}]
    second = [{"role": "user", "content": "7 x 6?"}, {"role": "assistant", "content": "41"}]
    transport = ScriptedTransport(reply)
    with pytest.raises(jw.InputError, match="no one question"):
        pairwise(transport).compare(conversation_a=first, conversation_b=second)
    with pytest.raises(jw.InputError, match="no one question"):
        jw.Tournament(pairwise(transport)).run(candidates={"x": [first], "y": [second]}, progress=False)
    assert transport.requests == []


def test_replies_to_a_shared_history_are_answered_from_it() -> None:
    transport = ScriptedTransport(lambda r, a: "42" if is_solver(r) else answer("B", 0.9))
    history = [{"role": "user", "content": "What is 6 x 7?"}]
    pairwise(transport).compare(history=history, response_a="41", response_b="42")
    (asked,) = [r for r in transport.requests if is_solver(r)]
    assert asked.messages[1:] == ({"role": "user", "content": "What is 6 x 7?"},)


def test_estimate_counts_one_answer_per_question() -> None:
    judge = pairwise(ScriptedTransport(reply))
    estimate = judge.estimate_cost(["What is 6 x 7?"] * 2, ["41", "42"], ["42", "43"])
    assert estimate.judges[0].answering_calls == 1 and estimate.judges[0].calls == 5


def test_a_pairwise_panel_passes_commit_first_to_its_judges() -> None:
    transport = ScriptedTransport(reply)
    panel = jw.PairwisePanel(["openai/a", "openai/b"], method="verdict", commit_first=True, transport=transport)
    result = panel.compare("What is 6 x 7?", "41", "42")
    assert result.winner == "B" and [r.reference_source for r in result.vote_list] == ["judge", "judge"]
    assert sum(is_solver(r) for r in transport.requests) == 2  # each judge's own model answers


CORRECTED = [  # an ignores_correction conversation: the user corrects the number of guests
    {"role": "user", "content": "I'm baking for 6 guests, two eggs each. How many eggs?"},
    {"role": "assistant", "content": "12 eggs."},
    {"role": "user", "content": "Sorry, it's 8 guests now. How many eggs do I need?"},
]


def corrected_model(request: ChatRequest, attempt: int) -> str:
    """A weak model (the judge's own) that answers from the first turn and forgets the correction; a strong solver
    that reads the whole history; a judge that follows the reference it is given, and slot A without one."""
    if is_solver(request):
        read = " ".join(m["content"] for m in request.messages[1:])
        return "16" if request.model == "openai/strong" and "8 guests" in read else "12"
    found = re.search(r"<reference>\n(.*?)\n</reference>", "\n".join(m["content"] for m in request.messages), re.S)
    reference = found.group(1) if found else None
    a, b = slots(request)
    if reference is None:
        return answer("A", 0.9)
    return answer("A" if reference in a else "B" if reference in b else "tie", 0.9)


def test_a_stronger_solver_keeps_the_correction_the_judges_own_answer_forgets() -> None:
    """Commit-first on a conversation's next turn with `solver=` a stronger model (issue 35 item 2): the solver answers
    from the whole history, correction included, so the reply that uses it wins in both orders; the judge's own
    answer, which forgets the correction, would have crowned the stale reply."""
    kept, stale = "You need 16 eggs for 8 guests.", "You need 12 eggs."
    strong, judged = ScriptedTransport(corrected_model), ScriptedTransport(corrected_model)
    judge = pairwise(judged, solver=jw.ModelSolver("openai/strong", transport=strong, cache=False))
    result = judge.compare(history=CORRECTED, response_a=stale, response_b=kept)
    assert result.winner == "B" and [v.winner for v in result.vote_list] == ["B", "B"]  # both orders, unswapped
    assert result.reference_source == "solver:openai/strong" and result.made_reference == "16"
    asked = [r for r in strong.requests if is_solver(r)]
    assert len(asked) == 1 and asked[0].model == "openai/strong"  # one answer for both orders
    assert not any(is_solver(r) for r in judged.requests)
    assert [m["content"] for m in asked[0].messages[1:]] == [m["content"] for m in CORRECTED]

    weak = ScriptedTransport(corrected_model)
    own = pairwise(weak).compare(history=CORRECTED, response_a=kept, response_b=stale)
    assert own.winner == "B" and own.reference_source == "judge" and own.made_reference == "12"  # the stale reply
