"""Reasoning models judge on their defaults: no parameter they refuse is sent (temperature, top_p, logprobs;
max_tokens becomes max_completion_tokens), their reasoning tokens are counted and billed, an answer cut off by its
budget is an unscored row whose error begins "cut off:", and the thinking text stays out of the verdict. Against
the loopback server, which refuses those parameters with OpenAI's and Anthropic's own 400s."""

from __future__ import annotations

import math

import pytest

import judgewidgets as jw
from judgewidgets._errors import ConfigurationError
from judgewidgets.engine import Caller
from judgewidgets.testing import OpenAITestServer, json_score

SCHEMA = {"type": "object", "properties": {"score": {"type": "integer"}}}
THINKING = {"type": "enabled", "budget_tokens": 1024}


@pytest.fixture(scope="module")
def server():
    with OpenAITestServer(json_score(4, "Because it is right.")) as server:
        yield server


def test_what_a_reasoning_model_is_sent() -> None:
    caller = Caller("openai/o4-mini", max_tokens=300, top_p=0.5, cache=False)
    assert caller.reasons() and not caller.uses_probabilities()
    sent = caller.for_reasoning(caller.request_params(SCHEMA))
    assert "temperature" not in sent and "top_p" not in sent and "logprobs" not in sent
    assert sent["max_completion_tokens"] == 300 and "max_tokens" not in sent
    assert Caller("openai/o4-mini", temperature=1).for_reasoning({"temperature": 1.0}) == {"temperature": 1.0}
    chat = Caller("openai/gpt-4o-mini", cache=False)
    assert not chat.reasons() and chat.for_reasoning({"temperature": 0.0}) == {"temperature": 0.0}
    assert not Caller("openai/gpt-5-chat-latest").reasons() and Caller("openai/gpt-5-mini").reasons()
    claude = Caller("anthropic/claude-sonnet-4-5", thinking=THINKING)
    sent = claude.for_reasoning({"temperature": 0.0, "top_k": 5, "thinking": THINKING})
    assert sent == {"thinking": THINKING, "max_tokens": 1024 + 1024}
    room = claude.for_reasoning({"max_tokens": 300, "thinking": THINKING})
    assert room["max_tokens"] == 1024 + 300  # the answer's room after thinking


def test_a_thinking_budget_without_room_for_the_verdict_is_refused_before_any_call() -> None:
    with pytest.raises(ConfigurationError, match="no room for the verdict"):
        jw.LLMJudge("anthropic/claude-sonnet-4-5", thinking=THINKING, max_tokens=1030)
    with pytest.raises(ConfigurationError, match="budget_tokens >= 1024"):
        jw.LLMJudge("anthropic/claude-sonnet-4-5", thinking={"type": "enabled", "budget_tokens": 500})


@pytest.mark.parametrize("transport", ["fast", "litellm"])
def test_an_openai_reasoning_judge_on_defaults_loses_no_row(server, transport: str) -> None:
    server.reset_stats()
    judge = jw.LLMJudge(
        "openai/o4-mini",
        api_base=server.base_url,
        api_key="sk-test",
        cache=False,
        transport=transport,
        reasoning_effort="low",
    )
    result = judge.score(["q1", "q2", "q3"], ["a"] * 3, progress=False)
    votes = result.votes
    assert votes["error"].isna().all() and (votes["score"] == 0.75).all()
    note = "a reasoning model returns no logprobs: the written answer is the score"
    assert all(v.score_source == "answer" and v.fallback == note for v in result.vote_list)
    assert list(votes["reasoning_tokens"]) == [96, 96, 96]
    assert server.stats.by_status == {200: 3}
    assert result.usage.cost_usd == pytest.approx(server.stats.bill.cost_usd, rel=1e-9)


@pytest.mark.parametrize("transport", ["fast", "litellm"])
def test_an_answer_cut_off_by_its_budget_is_never_a_score(server, transport: str) -> None:
    judge = jw.LLMJudge(
        "openai/o4-mini", api_base=server.base_url, api_key="sk-test", cache=False, transport=transport, max_tokens=50
    )
    result = judge.score(["q1", "q2"], ["a", "a"], progress=False)
    for vote in result.vote_list:
        assert math.isnan(vote.score) and vote.error.startswith("cut off: the model's budget of 50 tokens")
        assert vote.reasoning_tokens == 50 and vote.attempts == 1  # not re-asked: the same budget would run out
    assert server.stats.requests[-1].body["max_completion_tokens"] == 50


def test_claude_with_thinking_judges_and_keeps_its_thinking_apart(server, monkeypatch) -> None:
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
    judge = jw.LLMJudge(
        "anthropic/claude-sonnet-4-5", api_key="sk-test", cache=False, thinking=THINKING, explanations=True
    )
    result = judge.score(["q1"], ["a"], progress=False)
    vote = result.vote_list[0]
    assert vote.error is None and vote.score == 0.75 and vote.explanation == "Because it is right."
    sent = server.stats.requests[-1].body
    assert "temperature" not in sent and sent["max_tokens"] == 2048 and sent["thinking"] == THINKING
    assert vote.completion_tokens == 1024 + 7  # thinking billed as output (the answer is 7 words)
    cut = jw.LLMJudge("anthropic/claude-sonnet-4-5", api_key="sk-test", cache=False, thinking=THINKING, max_tokens=1100)
    long = "[[reply:" + "word " * 100 + "]]"
    assert cut.score([long], ["a"], progress=False).vote_list[0].error.startswith("cut off:")


def test_the_thinking_is_the_explanation_only_when_the_answer_gives_none(server, monkeypatch) -> None:
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
    judge = jw.LLMJudge(
        "anthropic/claude-sonnet-4-5", api_key="sk-test", cache=False, thinking=THINKING, explanations=True
    )
    vote = judge.score(['q [[reply:{"score": 4}]]'], ["a"], progress=False).vote_list[0]
    assert vote.score == 0.75 and vote.explanation.startswith("Weigh the response against the criteria")
    assert "Weigh" not in vote.raw  # the verdict's text holds no thinking


def test_thinking_is_never_asked_with_a_prefilled_answer(server) -> None:
    caller = Caller("anthropic/claude-sonnet-4-5", api_base=server.url, thinking=THINKING)
    assert caller.messages_api_elsewhere() and not caller.uses_prefill()
    judge = jw.LLMJudge(
        "anthropic/claude-sonnet-4-5", api_base=server.url, api_key="sk-test", cache=False, thinking=THINKING
    )
    vote = judge.score(["q"], ["a"], progress=False).vote_list[0]
    sent = server.stats.requests[-1].body
    assert vote.error is None and sent["messages"][-1]["role"] == "user" and "temperature" not in sent
