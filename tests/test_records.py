"""Text that cannot be encoded (a lone surrogate, as `json.loads('"\\ud83d"')` gives) is refused before any call,
naming its row, and where it arises during a run (a model's own answer fed back) it fails only its own vote."""

from __future__ import annotations

import json
import math

import pytest

import judgewidgets as jw
from judgewidgets.engine import CallSession, CallSettings, ChatRequest
from judgewidgets.pairwise import PairwiseJudge
from judgewidgets.rubrics import CriterionGrader, Rubric
from judgewidgets.testing import ScriptedTransport

LONE = json.loads('"broken emoji \\ud83d here"')


@pytest.mark.parametrize("cache", [True, False])
def test_a_lone_surrogate_is_refused_up_front_naming_the_row(cache: bool) -> None:
    transport = ScriptedTransport(lambda r, a: '{"score": 4}')
    judge = jw.LLMJudge("openai/m", transport=transport, cache=cache)
    with pytest.raises(jw.InputError, match=r"responses at position 2 .*'\\ud83d'.*lone surrogate"):
        judge.score(["q1", "q2", "q3"], ["fine", "also fine", LONE], progress=False)
    with pytest.raises(jw.InputError, match="prompts at position 0"):
        jw.LLMPanel([judge]).score([LONE], ["a"], progress=False)
    assert transport.requests == []  # nothing was sent


def test_other_entry_points_refuse_it_too() -> None:
    transport = ScriptedTransport(lambda r, a: '{"verdict": "A", "confidence": 0.9}')
    with pytest.raises(jw.InputError, match="responses_b at position 0"):
        PairwiseJudge("openai/m", transport=transport).compare_many(["q"], ["a"], [LONE], progress=False)
    rubric = Rubric.from_yaml("name: r\ncriteria:\n  - name: c\n    requirement: says hello\n")
    grader = CriterionGrader(judges=[jw.LLMJudge("openai/m", transport=transport)])
    with pytest.raises(jw.InputError, match="submission holds a character"):
        grader.grade(rubric, LONE)
    assert transport.requests == []


async def test_an_unencodable_request_fails_its_own_vote_only() -> None:
    """The engine's own guard, for text that arises during a run (e.g. a model's answer sent back in a re-ask)."""
    session = CallSession()
    settings = CallSettings(transport=ScriptedTransport(lambda r, a: "ok"), cache=jw.CallCache())
    request = ChatRequest("openai/m", ({"role": "user", "content": LONE},))
    with pytest.raises(jw.JudgeCallError, match="lone surrogate") as caught:
        await session.complete(request, settings, [])
    assert caught.value.kind == "input"
    ok = await session.complete(request.with_messages(({"role": "user", "content": "fine"},)), settings, [])
    assert ok.content == "ok"


def _answer_with_a_lone_surrogate(body: dict) -> str:
    """Row "bad" gets an answer whose JSON escapes decode to a lone surrogate; every other row a score."""
    text = body["messages"][-1]["content"]
    return "no score \ud83d" if "bad" in text else '{"score": 4}'


@pytest.mark.parametrize("transport", ["litellm", "fast"])
def test_a_judge_answer_with_a_lone_surrogate_costs_one_row(transport: str) -> None:
    from judgewidgets.testing import OpenAITestServer

    with OpenAITestServer(_answer_with_a_lone_surrogate) as server:
        judge = jw.LLMJudge(
            "openai/test",
            api_base=server.base_url,
            api_key="sk-test",
            transport=transport,
            retry=jw.RetryPolicy(0),
            probability_weighted=False,
        )
        result = judge.score(["q1", "q2", "q3"], ["a", "bad", "c"], progress=False)
    assert [v.score for v in result.vote_list][::2] == [0.75, 0.75]
    assert math.isnan(result.vote_list[1].score) and result.vote_list[1].error is not None
