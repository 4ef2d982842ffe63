"""A run's budget (`max_cost_usd=`): no call starts that could take the spend past it, the items left are recorded
as not run (never raised), and a rerun with a larger budget pays only for them."""

from __future__ import annotations

import asyncio
import logging
import math
from collections.abc import Iterator

import pytest

import judgewidgets as jw
from judgewidgets.engine import CallSession, CallSettings, ChatRequest, Completion
from judgewidgets.engine._budget import Budget, check_max_cost
from judgewidgets.engine._litellm import import_litellm, token_prices
from judgewidgets.testing import OpenAITestServer, ScriptedTransport, json_score

PRICED = "openai/gpt-4o-mini"  # priced in litellm's bundled map
UNPRICED = "openai/judgewidgets-unpriced-test-model"
PROMPTS = [f"Question {i}: what is {i} plus {i}? Show the steps of the sum in a few words." for i in range(30)]
RESPONSES = [f"It is {2 * i}." for i in range(30)]


def request(text: str = "hello", model: str = PRICED, max_tokens: int | None = None) -> ChatRequest:
    params = {} if max_tokens is None else {"max_tokens": max_tokens}
    return ChatRequest(model, ({"role": "user", "content": text},), params)


# --- the budget itself ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("bad", [-0.01, math.nan, math.inf, True, False, "1.0", [1.0]])
def test_a_bad_budget_is_one_configuration_error(bad: object) -> None:
    with pytest.raises(jw.ConfigurationError, match="max_cost_usd must be a number of dollars >= 0"):
        check_max_cost(bad)


def test_a_budget_of_none_means_none_and_numbers_are_dollars() -> None:
    assert check_max_cost(None) is None
    assert check_max_cost(0) == 0.0 and check_max_cost(2) == 2.0


def test_the_estimate_prices_the_prompt_and_a_typical_answer_capped_by_max_tokens() -> None:
    budget = Budget(1.0)
    _, completion_price = token_prices(PRICED)  # type: ignore[misc]
    long_answer, short_answer = budget.estimate(request()), budget.estimate(request(max_tokens=4))
    assert long_answer > short_answer > 0
    assert long_answer - short_answer == pytest.approx((132 - 4) * completion_price)
    assert budget.estimate(request(model="local")) == 0.0  # the embedded judge is free: a budget never stops it


async def test_a_call_that_fits_once_the_calls_in_flight_answer_waits_for_them() -> None:
    budget = Budget(1.0)
    one = budget.estimate(request())
    budget.limit = 2.5 * one  # room for two reserved calls, not three
    first, second = await budget.reserve(request()), await budget.reserve(request())
    third = asyncio.ensure_future(budget.reserve(request()))
    await asyncio.sleep(0.01)
    assert not third.done(), "the third call waits: it fits only if the calls in flight cost less than estimated"
    budget.settle(first, one / 10)  # the first answered cheaply: now the third fits
    assert (await third).held == pytest.approx(one)
    budget.settle(second, one)
    fourth = asyncio.ensure_future(budget.reserve(request()))
    await asyncio.sleep(0.01)
    assert not fourth.done(), "with 1.1 calls' worth spent, a fourth fits if the third costs less than 0.4"
    budget.settle(await third, one)  # it did not: 2.1 spent, and another would pass 2.5
    with pytest.raises(jw.JudgeCallError, match=r"not run, the budget of \$.* was reached") as refused:
        await fourth
    assert refused.value.kind == "budget" and refused.value.attempts == 0
    assert budget.not_run == 1 and budget.in_flight == 0 and budget.reserved == 0.0


async def test_a_failed_call_releases_its_reservation_and_an_unknown_cost_counts_as_estimated() -> None:
    budget = Budget(1.0)
    held = await budget.reserve(request())
    budget.settle(held, 0.0)
    assert budget.spent == 0.0 and budget.reserved == 0.0
    held = await budget.reserve(request())
    budget.settle(held, None)
    assert budget.spent == pytest.approx(held.held) and budget.reserved == 0.0


async def test_the_session_refuses_what_the_budget_does_not_allow_and_counts_the_real_cost() -> None:
    transport = ScriptedTransport(lambda r, a: '{"score": 4}', cost_usd=0.003)
    session = CallSession(budget=Budget(0.01))
    settings = CallSettings(transport=transport)
    answers: list[Completion | jw.JudgeCallError] = []
    for i in range(6):  # one at a time: the first reserves its estimate ($0.00008), later ones what it cost
        try:
            answers.append(await session.complete(request(f"q{i}"), settings, []))
        except jw.JudgeCallError as exc:
            answers.append(exc)
    paid = [a for a in answers if isinstance(a, Completion)]
    assert len(paid) == 3 and len(transport.requests) == 3  # $0.009 spent; a fourth could pass $0.01
    assert all(isinstance(a, jw.JudgeCallError) and a.kind == "budget" for a in answers[3:])
    assert session.budget is not None and session.budget.spent == pytest.approx(0.009)
    assert session.budget.scale > 30, "the answers cost far more than estimated: reservations grew to match"


# --- a run's budget, end to end --------------------------------------------------------------------------------


@pytest.mark.filterwarnings("ignore:rows .* miss some judges:RuntimeWarning")
def test_a_panel_stops_at_its_budget_mid_batch_and_a_rerun_pays_only_for_the_rest(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with OpenAITestServer(json_score(4), latency=0.02) as server:
        judge = jw.LLMJudge(PRICED, api_base=server.base_url, api_key="sk-test", max_concurrency=4)
        panel = jw.LLMPanel(
            [judge.with_options(name="a"), judge.with_options(name="b")],
            scoring_templates=["likert", "continuous"],  # two requests per item (alike ones would be sent once)
        )
        estimate = panel.estimate_cost(PROMPTS, RESPONSES).total_usd
        one = judge.with_options(cache=False, template="likert").score(PROMPTS[:1], RESPONSES[:1], progress=False)
        server.reset_stats()
        assert estimate is not None and one.usage.cost_usd is not None
        budget = 20 * one.usage.cost_usd  # room for about 20 of the 60 calls
        with caplog.at_level(logging.WARNING, logger="judgewidgets"):
            first = panel.score(PROMPTS, RESPONSES, progress=False, max_cost_usd=budget)
        sent = server.stats.total
        not_run = [v for v in first.vote_list if v.error]
        assert 0 < len(not_run) < len(first.vote_list), "the budget stopped the run part way"
        assert all(v.error == f"budget: not run, the budget of ${budget:.2g} was reached" for v in not_run)
        assert all(math.isnan(v.score) and v.cost_usd == 0.0 and v.attempts == 0 for v in not_run)
        assert sent == len(first.vote_list) - len(not_run), "a call not run never reached the server"
        spent = first.usage.cost_usd
        assert spent is not None and 0 < spent <= budget
        assert first.not_run == len(not_run) and first.summary()["not_run"].sum() == len(not_run)
        assert f"{len(not_run)} of {len(first.vote_list)} votes not run" in first._repr_html_()
        assert f"{len(not_run)} calls not run: the budget of ${budget:.2g} was reached" in caplog.text
        assert first._dump().metrics["not_run"] == len(not_run)

        second = panel.score(PROMPTS, RESPONSES, progress=False, max_cost_usd=10 * estimate)
        assert server.stats.total - sent == len(not_run), "the rerun sent only the calls not run"
        assert all(v.error is None for v in second.vote_list) and second.not_run == 0
        assert sum(v.cached for v in second.vote_list) == len(first.vote_list) - len(not_run)


def test_a_budget_of_zero_runs_nothing_and_raises_nothing() -> None:
    transport = ScriptedTransport(lambda r, a: '{"score": 4}')
    judge = jw.LLMJudge(PRICED, transport=transport, template="likert")
    result = judge.score(PROMPTS[:5], RESPONSES[:5], progress=False, max_cost_usd=0)
    assert transport.requests == [] and result.not_run == 5
    assert result.usage.cost_usd == 0.0


def test_a_bad_budget_is_refused_before_any_call() -> None:
    transport = ScriptedTransport(lambda r, a: '{"score": 4}')
    judge = jw.LLMJudge(PRICED, transport=transport)
    for bad in (-1, math.nan, True):
        with pytest.raises(jw.ConfigurationError, match="max_cost_usd"):
            judge.score(PROMPTS[:2], RESPONSES[:2], progress=False, max_cost_usd=bad)
    assert transport.requests == []


@pytest.fixture
def unpriced_model() -> Iterator[str]:
    litellm = import_litellm()
    yield UNPRICED
    litellm.model_cost.pop(UNPRICED, None)


def test_a_model_without_a_price_is_one_error_before_any_call_until_a_price_is_registered(
    unpriced_model: str,
) -> None:
    transport = ScriptedTransport(lambda r, a: '{"score": 4}')
    judge = jw.LLMJudge(unpriced_model, transport=transport)
    with pytest.raises(jw.ConfigurationError, match="litellm has no price for model") as refused:
        judge.score(PROMPTS[:3], RESPONSES[:3], progress=False, max_cost_usd=1.0)
    assert "litellm.register_model" in str(refused.value) and transport.requests == []
    assert judge.score(PROMPTS[:3], RESPONSES[:3], progress=False).not_run == 0  # no budget: no price needed
    import_litellm().register_model(
        {unpriced_model: {"input_cost_per_token": 1e-6, "output_cost_per_token": 2e-6, "litellm_provider": "openai"}}
    )
    transport = ScriptedTransport(lambda r, a: '{"score": 3}')
    result = judge.with_options(transport=transport).score(PROMPTS[3:6], RESPONSES[3:6], progress=False, max_cost_usd=1)
    assert result.not_run == 0 and [v.score for v in result.vote_list] == [0.5, 0.5, 0.5]
    assert len(transport.requests) == 3


def test_a_call_that_reaches_an_unpriced_model_anyway_is_not_run() -> None:
    """A judge of your own may call any model through the session: the budget refuses what it cannot price."""

    async def run() -> jw.JudgeCallError:
        session = CallSession(budget=Budget(1.0))
        transport = ScriptedTransport(lambda r, a: "x")
        with pytest.raises(jw.JudgeCallError) as refused:
            await session.complete(request(model=UNPRICED), CallSettings(transport=transport), [])
        assert transport.requests == []
        return refused.value

    error = asyncio.run(run())
    assert error.kind == "budget" and "litellm has no price" in str(error)
