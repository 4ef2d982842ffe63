"""The whole call path over real HTTP, on each transport (litellm; the fast path on its own HTTP/1.1 pool and on
aiohttp) against the loopback server: faults are retried or recorded, never lost."""

from __future__ import annotations

import math
import uuid
import warnings
from collections.abc import Iterator

import pytest

import judgewidgets as jw
from judgewidgets.engine import AutoTransport, OpenAIHTTPTransport
from judgewidgets.testing import FaultPlan, OpenAITestServer, json_score

FAST = jw.RetryPolicy(initial_delay=0.01, max_delay=0.05)


@pytest.fixture(scope="module")
def server() -> Iterator[OpenAITestServer]:
    with OpenAITestServer(json_score(4)) as running:
        yield running


@pytest.fixture(params=["litellm", "http11", "aiohttp"])
def transport(request: pytest.FixtureRequest) -> object:
    """The `transport=` of a judge: litellm, the fast path (default client), the fast path on aiohttp."""
    if request.param == "litellm":
        return "litellm"
    return AutoTransport(fast=OpenAIHTTPTransport(client=request.param))


def judge(server: OpenAITestServer, transport: object, **kwargs: object) -> jw.LLMJudge:
    """A judge scored from its written answers: these tests are about delivery (probabilities have their own)."""
    options: dict[str, object] = {
        "probability_weighted": False,
        "api_base": server.base_url,
        "api_key": "sk-test-secret",
        "retry": FAST,
        "transport": transport,
    }
    options.update(kwargs)
    return jw.LLMJudge("openai/test", template="likert", **options)  # type: ignore[arg-type]


def test_scores_over_http_with_usage_and_structured_output(server: OpenAITestServer, transport: object) -> None:
    server.reset_stats()
    result = judge(server, transport).score(["q1", "q2"], ["a1", "a2"], progress=False)
    assert result.score_list == [0.75, 0.75]
    vote = result.vote_list[0]
    assert vote.prompt_tokens and vote.completion_tokens and vote.latency_s > 0
    body = server.stats.requests[-1].body
    assert body["response_format"]["type"] == "json_schema"
    assert body["response_format"]["json_schema"]["schema"]["properties"]["score"]["maximum"] == 5


def test_permanent_fault_is_recorded_and_the_batch_survives(server: OpenAITestServer, transport: object) -> None:
    responses = ["fine", "broken [[fault:500]]", "fine too"]
    result = judge(server, transport).score(["q"] * 3, responses, progress=False)
    df = result.to_df()
    assert df.loc[0, "score"] == 0.75 and df.loc[2, "score"] == 0.75
    assert math.isnan(df.loc[1, "score"])
    assert df.loc[1, "error"].startswith("infrastructure: InternalServerError")
    assert result.vote_list[1].attempts == 3


@pytest.mark.parametrize("kind", ["429", "500", "503", "malformed"])
def test_transient_faults_are_retried(server: OpenAITestServer, kind: str, transport: object) -> None:
    fresh = f"answer {uuid.uuid4().hex} [[fault-once:{kind}]]"  # a body this server has not seen on another path
    vote = judge(server, transport).score(["q"], [fresh], progress=False).vote_list[0]
    assert vote.score == 0.75 and vote.error is None and vote.attempts == 2


def test_timeout_is_retried_then_recorded(server: OpenAITestServer, transport: object) -> None:
    slow = judge(server, transport, timeout=0.3, retry=jw.RetryPolicy(max_retries=1, initial_delay=0.01))
    vote = slow.score(["q"], ["answer [[fault:timeout]]"], progress=False).vote_list[0]
    assert math.isnan(vote.score) and vote.error.startswith("infrastructure:") and vote.attempts == 2


def test_empty_answer_is_reasked(server: OpenAITestServer, transport: object) -> None:
    # The re-ask's last message no longer carries the directive, so the server answers it properly.
    vote = judge(server, transport, reasks=1).score(["q"], ["answer [[fault:empty]]"], progress=False).vote_list[0]
    assert vote.score == 0.75 and vote.attempts == 2
    vote = judge(server, transport, reasks=0).score(["q"], ["answer [[fault:empty]]"], progress=False).vote_list[0]
    assert math.isnan(vote.score) and vote.error == "parse: the judge returned an empty answer"


def test_random_faults_lose_no_row(transport: object) -> None:
    plan = FaultPlan(rate_limit=0.05, server_error=0.05, malformed=0.02, overloaded=0.03, seed=3, retry_after=0.01)
    with OpenAITestServer(json_score(5), faults=plan) as faulty:
        panel = jw.LLMPanel(
            [
                judge(faulty, transport, name="a", retry=jw.RetryPolicy(max_retries=1, initial_delay=0.01)),
                judge(faulty, transport, name="b"),
            ]
        )
        result = panel.score([f"q{i}" for i in range(60)], ["a"] * 60, progress=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        df = result.to_df()
    assert len(df) == 60 and len(result.vote_list) == 120
    votes = result.votes
    assert votes.loc[votes["score"].isna(), "error"].notna().all()
    assert votes["score"].notna().sum() >= 110
    assert (votes["score"].dropna() == 1.0).all()


def test_api_key_stays_out_of_everything(server: OpenAITestServer, tmp_path, transport: object) -> None:  # type: ignore[no-untyped-def]
    cache = jw.CallCache(tmp_path / "calls.sqlite")
    the_judge = judge(server, transport, cache=cache)
    result = the_judge.score(["q"], ["a [[fault:500]]"], progress=False)
    cache.close()
    assert "sk-test-secret" not in repr(the_judge)
    assert "sk-test-secret" not in result.votes_df.to_csv()
    assert b"sk-test-secret" not in (tmp_path / "calls.sqlite").read_bytes()


def test_retry_after_header_is_read_from_litellm_errors(server: OpenAITestServer) -> None:
    from judgewidgets.engine._litellm import classify

    litellm = pytest.importorskip("litellm")
    with pytest.raises(litellm.RateLimitError) as caught:
        litellm.completion(
            model="openai/test",
            messages=[{"role": "user", "content": "x [[fault:429]]"}],
            api_base=server.base_url,
            api_key="sk-test",
            num_retries=0,
            max_retries=0,
        )
    failure = classify(caught.value)
    assert failure.status_code == 429 and failure.retry_after == pytest.approx(0.05)
