"""Pacing per endpoint: limits learned from headers and from 429s alone, a 429 pausing the whole endpoint, rate
limits retried while the endpoint makes progress, one pacer per endpoint shared by every judge, rpm=/tpm=, the
progress read-out, estimate_cost's duration and the waits recorded on results. No timed assertions: the servers'
limits are high enough that each test takes a second or two, and what is checked is what happened, not how fast."""

from __future__ import annotations

import asyncio
import logging
import math
import threading
import time
from typing import Any

import pytest

import judgewidgets as jw
from judgewidgets.engine import CallFailure, RateLimits, RetryPolicy, rate_limits
from judgewidgets.engine._pacing import EndpointPacer, Ticket
from judgewidgets.testing import OpenAITestServer, ProviderLimit, ScriptedTransport, json_score
from tests.cascade.helpers import pairwise_transport

KEY = "sk-pacing-secret-0123456789"
FAST = RetryPolicy(initial_delay=0.01, max_delay=0.05)


def likert_panel(base_url: str, transport: str = "auto", model: str = "openai/limited", **kwargs: Any) -> jw.LLMPanel:
    """Three judges on one model (so one endpoint), as a user writes a panel; no cache: every call is made."""
    return jw.LLMPanel(
        [
            jw.LLMJudge(
                model,
                name=f"j{i}",
                temperature=i / 10,
                api_base=base_url,
                api_key=KEY,
                cache=False,
                transport=transport,  # type: ignore[arg-type]
                retry=FAST,
                **kwargs,
            )
            for i in range(3)
        ]
    )


def items(n: int) -> tuple[list[str], list[str]]:
    return [f"question {i}" for i in range(n)], [f"answer {i}" for i in range(n)]


# --- learning the limit ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("headers", "transport"), [("openai", "auto"), ("openai", "litellm"), ("anthropic", "auto")])
def test_limits_are_learned_from_the_headers_of_answers(headers: str, transport: str) -> None:
    limit = ProviderLimit(rpm=3000, burst=4, headers=headers, retry_after=0.2)  # type: ignore[arg-type]
    with OpenAITestServer(json_score(4), latency=0.01, limit=limit) as server:
        result = likert_panel(server.base_url, transport).score(*items(10), progress=False)
        refused = server.stats.by_status.get(429, 0)
    assert result.votes["error"].isna().all() and len(result.to_df()) == 10
    (row,) = rate_limits.table.to_dict("records")
    assert row["source"] == "headers" and row["rpm"] == 3000
    assert row["answered"] == 30 and row["rate_limited"] == refused
    assert row["pace_rpm"] == pytest.approx(3000 * 0.97)
    # The first call went alone, so its answer's headers paced the rest: nothing was flooded.
    assert refused <= 2


def test_limits_are_learned_from_429s_alone() -> None:
    limit = ProviderLimit(rpm=1200, burst=2, headers="none", retry_after=0.05)
    with OpenAITestServer(json_score(4), latency=0.01, limit=limit) as server:
        result = likert_panel(server.base_url).score(*items(12), progress=False)
        refused = server.stats.by_status.get(429, 0)
    df = result.to_df()
    assert len(df) == 12 and df["avg"].notna().all()  # every row, in order
    assert df["prompt"].tolist() == items(12)[0]
    assert refused > 0  # a bare server says nothing until it refuses
    pacer = rate_limits.pacers[0]
    assert pacer.source == "429s" and pacer.rpm is None
    assert 0 < pacer.requests_per_minute() < math.inf
    assert pacer.refusals == refused and pacer.answers == 36
    votes = result.vote_list
    assert sum(v.attempts for v in votes) == 36 + refused  # every refused attempt was retried, none counted as lost


def test_a_429_pauses_the_whole_endpoint() -> None:
    started: list[tuple[float, str]] = []
    refused_at: list[float] = []

    def reply(request, attempt):  # type: ignore[no-untyped-def]
        text = request.messages[-1]["content"]
        started.append((time.monotonic(), text))
        if "item 2" in text and attempt == 0:
            refused_at.append(time.monotonic())
            raise CallFailure("RateLimitError: slow down", 429, retry_after=0.4)
        return '{"score": 4}'

    transport = ScriptedTransport(reply, paced=True)
    judge = jw.LLMJudge("openai/m", transport=transport, structured_output=True, max_concurrency=1, retry=FAST)
    result = judge.score([f"item {i}" for i in range(6)], ["a"] * 6, progress=False)
    assert result.votes["error"].isna().all()
    (refusal,) = refused_at
    later = [t for t, _ in started if t > refusal]
    assert later and min(later) >= refusal + 0.4  # no call of the endpoint started during the pause, not only item 2
    assert result.vote_list[2].attempts == 2


def test_a_pause_holds_back_every_loop_and_thread() -> None:
    pacer = EndpointPacer("openai/m at http://x")
    ticket = asyncio.run(pacer.acquire())
    pacer.rate_limited(ticket, 0.3)
    times: list[float] = []

    def other_loop() -> None:
        async def go() -> None:
            t = await pacer.acquire()
            times.append(time.monotonic())
            pacer.answered(t)

        asyncio.run(go())

    begun = time.monotonic()
    threads = [threading.Thread(target=other_loop) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(times) == 3 and min(times) >= begun + 0.29
    assert pacer.refusals == 1 and pacer.answers == 3


def test_refusals_of_calls_sent_before_a_pause_do_not_pause_again() -> None:
    clock = [100.0]
    pacer = EndpointPacer("m", clock=lambda: clock[0])
    first = Ticket(sent_at=100.0, waited_s=0.0, paced=True)
    second = Ticket(sent_at=100.0, waited_s=0.0, paced=True)
    pacer.rate_limited(first, 2.0)
    clock[0] = 101.0
    pacer.rate_limited(second, 2.0)  # sent with the first: the first pause answers it
    assert pacer._paused_until == 102.0
    assert pacer.holding_back() == "m: paused 1 s by a rate limit"


# --- a rate limit is not a failure -------------------------------------------------------------------------------


def test_rate_limits_are_retried_beyond_max_retries_while_the_endpoint_makes_progress() -> None:
    def reply(request, attempt):  # type: ignore[no-untyped-def]
        if "slow" in request.messages[-1]["content"] and attempt < 5:
            raise CallFailure("RateLimitError: try again", 429, retry_after=0.01)
        return '{"score": 4}'

    judge = jw.LLMJudge(
        "openai/m", transport=ScriptedTransport(reply), structured_output=True, retry=RetryPolicy(max_retries=0)
    )
    result = judge.score(["fast", "slow", "fast too"], ["a"] * 3, progress=False)
    assert result.votes["error"].isna().all()
    assert result.vote_list[1].attempts == 6  # five 429s and the answer, with max_retries=0


def test_a_rate_limit_gives_up_once_the_endpoint_answered_nothing_for_the_stated_time() -> None:
    def reply(request, attempt):  # type: ignore[no-untyped-def]
        if "stuck" in request.messages[-1]["content"]:
            raise CallFailure("RateLimitError: daily limit reached", 429, retry_after=0.02)
        return '{"score": 4}'

    policy = RetryPolicy(max_retries=0, rate_limit_patience=0.3, initial_delay=0.01)
    judge = jw.LLMJudge("openai/m", transport=ScriptedTransport(reply), structured_output=True, retry=policy)
    result = judge.score(["fine", "stuck", "fine too"], ["a"] * 3, progress=False)
    votes = result.vote_list
    assert votes[0].error is None and votes[2].error is None  # the rest of the batch is kept
    assert votes[1].error is not None and votes[1].error.startswith("infrastructure: RateLimitError")
    assert "answered nothing for 0.3 s" in votes[1].error and "rate_limit_patience" in votes[1].error
    assert votes[1].attempts > 2


def test_other_failures_keep_the_retry_policy() -> None:
    def reply(request, attempt):  # type: ignore[no-untyped-def]
        raise CallFailure("InternalServerError: boom", 500)

    judge = jw.LLMJudge(
        "openai/m", transport=ScriptedTransport(reply), retry=RetryPolicy(max_retries=2, initial_delay=0.01)
    )
    vote = judge.score(["q"], ["a"], progress=False).vote_list[0]
    assert vote.attempts == 3 and vote.error is not None and "boom" in vote.error


def test_a_spent_quota_is_not_a_rate_limit() -> None:
    def reply(request, attempt):  # type: ignore[no-untyped-def]
        raise CallFailure("RateLimitError: You exceeded your current quota (insufficient_quota)", 429)

    judge = jw.LLMJudge(
        "openai/m", transport=ScriptedTransport(reply), retry=RetryPolicy(max_retries=1, initial_delay=0.01)
    )
    vote = judge.score(["q"], ["a"], progress=False).vote_list[0]
    assert vote.attempts == 1 and (vote.error or "").startswith("infrastructure: quota spent (not a rate limit")


@pytest.mark.parametrize("patience", [0, -1, float("nan"), "600", True])
def test_invalid_patience_is_refused(patience: object) -> None:
    with pytest.raises(jw.ConfigurationError, match="rate_limit_patience"):
        RetryPolicy(rate_limit_patience=patience)  # type: ignore[arg-type]


# --- one pacer per endpoint --------------------------------------------------------------------------------------


def test_two_panels_and_a_pairwise_judge_on_one_endpoint_share_one_pacer() -> None:
    with OpenAITestServer(json_score(4), limit=ProviderLimit(rpm=6000, burst=10)) as server:
        first, second = likert_panel(server.base_url), likert_panel(server.base_url, transport="litellm")

        async def both() -> None:
            await asyncio.gather(first.ascore(*items(4), progress=False), second.ascore(*items(5), progress=False))

        asyncio.run(both())  # a user's own loop ...
        first.score(*items(2), progress=False)  # ... and the sync facade's private one
        pairwise = jw.PairwiseJudge(
            "openai/limited",
            method="probability",
            api_base=server.base_url,
            api_key=KEY,
            transport=pairwise_transport(lambda q: 0.8),
            cache=False,
        )
        pairwise.compare("q", "good 1", "bad 1")
    assert len(rate_limits) == 1
    pacer = rate_limits.pacers[0]
    assert pacer.answers == 3 * (4 + 5 + 2) + 2 and pacer.source == "headers"


def test_different_keys_and_bases_get_different_pacers(monkeypatch: pytest.MonkeyPatch) -> None:
    limits = RateLimits()
    a = {"api_base": "http://127.0.0.1:1/v1", "api_key": "sk-one-0123456789"}
    same = limits.pacer("openai/m", dict(a))
    assert limits.pacer("openai/m", {**a, "temperature": 0.3}) is same
    assert limits.pacer("openai/m", {**a, "api_key": "sk-two-0123456789"}) is not same
    assert limits.pacer("openai/m", {**a, "api_base": "http://127.0.0.1:2/v1"}) is not same
    assert limits.pacer("openai/other", a) is not same  # OpenAI and Anthropic limit each model on its own
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env-one-0123456789")
    from_env = limits.pacer("gpt-4o-mini", {})
    assert limits.pacer("openai/gpt-4o-mini", {}) is from_env  # a bare name is the provider's model
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env-two-0123456789")
    assert limits.pacer("openai/gpt-4o-mini", {}) is not from_env
    assert len(limits) == 6
    limits.reset()
    assert len(limits) == 0 and limits.table.empty


def test_the_key_never_appears_in_the_pacers(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    with OpenAITestServer(json_score(4), limit=ProviderLimit(rpm=6000, burst=10)) as server:
        base = server.base_url.replace("http://", f"http://user:{KEY}@")
        judge = jw.LLMJudge("openai/limited", api_base=base, api_key=KEY, cache=False)
        judge.score(*items(2), progress=False)
    (pacer,) = rate_limits.pacers
    seen = " ".join(
        [repr(rate_limits), repr(pacer), pacer.label, rate_limits.table.to_csv(), str(list(rate_limits._pacers))]
    )
    assert KEY not in seen and "user:" not in seen and "(key 1)" in pacer.label
    assert KEY not in caplog.text
    with pytest.raises(TypeError):
        import pickle

        pickle.dumps(rate_limits)


# --- rpm= and tpm= -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "bad", [{"rpm": 0}, {"rpm": -5}, {"tpm": "200000"}, {"rpm": True}, {"tpm": math.inf}, {"rpm": math.nan}]
)
@pytest.mark.parametrize(
    "build",
    [
        lambda kw: jw.LLMJudge("openai/m", **kw),
        lambda kw: jw.LLMPanel(["openai/m", "openai/n"], **kw),
        lambda kw: jw.PairwiseJudge("openai/m", **kw),
        lambda kw: jw.CriterionGrader(judges=["openai/m"], **kw),
        lambda kw: jw.SequentialRater(judges=["openai/m"], **kw),
    ],
    ids=["LLMJudge", "LLMPanel", "PairwiseJudge", "CriterionGrader", "SequentialRater"],
)
def test_rpm_and_tpm_are_checked_before_any_call(build: Any, bad: dict[str, Any]) -> None:
    name = next(iter(bad))
    with pytest.raises(jw.ConfigurationError, match=f"^{name} must be the endpoint's"):
        build(bad)
    assert len(rate_limits) == 0


def test_rpm_and_tpm_are_kept_by_with_options() -> None:
    judge = jw.LLMJudge("openai/gpt-4o-mini", rpm=500, tpm=200_000)
    copy = judge.with_options(name="strict")
    assert (copy.settings.rpm, copy.settings.tpm) == (500, 200_000)
    assert judge.caller.options()["rpm"] == 500
    pairwise = jw.PairwiseJudge("openai/gpt-4o-mini", rpm=50)
    assert pairwise.with_options(swap=False).caller.settings.rpm == 50


def test_a_configured_tier_paces_every_judge_of_the_endpoint() -> None:
    transport = ScriptedTransport(lambda r, a: '{"score": 4}', paced=True)
    judge = jw.LLMJudge("openai/m", transport=transport, structured_output=True, rpm=1200, tpm=1_000_000)
    result = judge.score(*items(8), progress=False)
    pacer = rate_limits.pacers[0]
    assert (pacer.source, pacer.rpm, pacer.tpm) == ("configured", 1200, 1_000_000)
    assert pacer.requests_per_minute() == pytest.approx(1200 * 0.97)
    assert result.usage.waited_s > 0  # eight calls at 20 a second: all but the first waited their turn
    other = jw.LLMJudge("openai/m", transport=transport, structured_output=True, cache=False)  # no rpm= this time
    other.score(*items(2), progress=False)
    assert rate_limits.pacers == [pacer] and pacer.answers == 10


def test_mocked_and_embedded_answers_are_not_paced() -> None:
    judge = jw.LLMJudge("openai/m", mock_response='{"score": 4}', rpm=1)  # one a minute would take minutes
    result = judge.score(*items(3), progress=False)
    assert result.votes["error"].isna().all() and result.usage.waited_s == 0


# --- what the user sees ------------------------------------------------------------------------------------------


class Recorder:
    def __init__(self) -> None:
        self.done = 0
        self.said: list[str | None] = []

    def advance(self, n: int = 1) -> None:
        self.done += n

    def status(self, text: str | None) -> None:
        self.said.append(text)

    def close(self) -> None:
        pass


def test_the_progress_bar_says_when_a_rate_limit_holds_the_run_back(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("judgewidgets._run.PACING_STATUS_INTERVAL_S", 0.05)
    transport = ScriptedTransport(lambda r, a: '{"score": 4}', paced=True)
    judge = jw.LLMJudge("openai/gpt-m", transport=transport, structured_output=True, rpm=600)
    recorder = Recorder()
    judge.score(*items(8), progress=recorder)
    assert recorder.done == 8
    assert "openai/gpt-m: rate limit, 582 calls/min" in recorder.said


def test_the_tqdm_bar_shows_the_status_after_it() -> None:
    from judgewidgets._progress import TqdmProgress

    bar = TqdmProgress(3, "judging")
    bar.status("openai/gpt-4o-mini: paused 12 s by a rate limit")
    assert "paused 12 s" in str(bar._bar)
    bar.status(None)
    assert "paused" not in str(bar._bar)
    bar.close()


def test_estimate_cost_gives_a_duration_when_the_limits_are_known() -> None:
    prompts, responses = items(120)
    unknown = jw.LLMJudge("openai/gpt-4o-mini").estimate_cost(prompts, responses)
    assert unknown.duration_s is None and "at the known rate limits" not in str(unknown)
    panel = jw.LLMPanel([jw.LLMJudge("openai/gpt-4o-mini", template=t, rpm=600) for t in ("likert", "true_false")])
    estimate = panel.estimate_cost(prompts, responses)
    # 240 calls sharing one endpoint at 600 a minute (paced at 97 % of it): 24.7 s
    assert estimate.duration_s == pytest.approx(240 / 600 * 60 / 0.97)
    assert "about 25 s at the known rate limits" in str(estimate) and "limits 600 RPM" in str(estimate)
    by_tokens = jw.LLMJudge("openai/gpt-4o-mini", tpm=1_000).estimate_cost(prompts, responses)
    tokens = by_tokens.judges[0].prompt_tokens + by_tokens.judges[0].completion_tokens
    assert by_tokens.duration_s == pytest.approx(tokens / 1_000 * 60 / 0.97)
    assert by_tokens.to_df().loc[0, "tpm"] == 1_000


def test_estimate_cost_uses_the_limits_the_provider_stated() -> None:
    with OpenAITestServer(json_score(4), limit=ProviderLimit(rpm=6000, burst=10)) as server:
        judge = jw.LLMJudge("openai/limited", api_base=server.base_url, api_key=KEY, cache=False)
        assert judge.estimate_cost(*items(60)).duration_s is None
        judge.score(*items(2), progress=False)
        estimate = judge.estimate_cost(*items(60))
    assert estimate.judges[0].rpm == 6000 and estimate.duration_s == pytest.approx(60 / 6000 * 60 / 0.97)


# --- the waits are recorded --------------------------------------------------------------------------------------


def test_the_waits_are_recorded_on_votes_and_kept_by_saved_runs(tmp_path: Any) -> None:
    transport = ScriptedTransport(lambda r, a: '{"score": 4}', paced=True)
    judge = jw.LLMJudge("openai/m", transport=transport, structured_output=True, rpm=1200)
    result = judge.score(*items(6), progress=False)
    waits = [v.waited_s for v in result.vote_list]
    assert waits[0] == 0 and all(w > 0 for w in waits[1:])
    assert result.usage.waited_s == pytest.approx(sum(waits))
    assert "waited_s" in result.votes.columns
    result.save(tmp_path / "run")
    again = jw.load(tmp_path / "run")
    assert again.usage.waited_s == pytest.approx(result.usage.waited_s)


def test_token_counts_follow_what_the_provider_billed() -> None:
    pacer = EndpointPacer("m")
    pacer.configure(None, 60_000)

    async def one(billed: int) -> None:
        ticket = await pacer.acquire(110.0, prompt_tokens=100.0)
        pacer.answered(ticket, None, billed)

    for _ in range(20):
        asyncio.run(one(200))  # the provider counts twice what litellm's tokenizer did
    assert pacer._token_scale == pytest.approx(2.0, rel=0.02)


def test_the_benchmark_runs_on_its_own_limiter() -> None:
    from tests.benchmark_scripts import load_benchmark

    benchmark = load_benchmark("rate_limits")
    argv = ["--scale", "0.02", "--only", "1200-headers", "1200-bare", "--transports", "auto", "--latency", "0.01"]
    rows = asyncio.run(benchmark.main(argv))
    assert [r["lost"] for r in rows] == [0, 0] and [r["calls"] for r in rows] == [12, 12]
    assert rows[0]["learned"] == "headers"
