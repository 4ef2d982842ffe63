"""The fast path (direct OpenAI-compatible HTTP) against the loopback server, and its equality with litellm."""

from __future__ import annotations

import asyncio
import gc
import json
import math
import warnings
from collections.abc import Iterator

import pandas as pd
import pytest

import judgewidgets as jw
from judgewidgets.engine import (
    AutoTransport,
    CallSettings,
    ChatRequest,
    LiteLLMTransport,
    OpenAIHTTPTransport,
    resolve_transport,
    select_transport,
)
from judgewidgets.engine._http_pool import HTTPPool
from judgewidgets.engine._litellm import CallFailure
from judgewidgets.testing import FaultPlan, OpenAITestServer, json_score
from tests.fakes import schema_aware

FAST_RETRY = jw.RetryPolicy(initial_delay=0.01, max_delay=0.05)
SECRET = "sk-test-secret-fast"


@pytest.fixture(scope="module")
def server() -> Iterator[OpenAITestServer]:
    with OpenAITestServer(json_score(4), faults=FaultPlan(hang_seconds=2.0)) as running:
        yield running


def request(server: OpenAITestServer, text: str = "a", **params: object) -> ChatRequest:
    options: dict[str, object] = {"api_base": server.base_url, "api_key": SECRET, "temperature": 0.0}
    options.update(params)
    return ChatRequest("openai/test", ({"role": "user", "content": text},), options)


CLIENTS = ["http11", "aiohttp"]


def attempt(
    server: OpenAITestServer, text: str = "a", timeout: float = 5.0, client: str = "http11", **params: object
) -> object:
    """One attempt on a fresh transport, in a fresh loop (which closes the transport's clients)."""
    transport = OpenAIHTTPTransport(client=client)  # type: ignore[arg-type]
    return asyncio.run(transport.complete(request(server, text, **params), timeout))


# --- which path a request takes ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("model", "params", "path"),
    [
        ("openai/my-model", {"api_base": "http://127.0.0.1:8000/v1"}, "fast"),
        ("openai/gpt-4o-mini", {}, "fast"),  # the OpenAI API itself
        ("hosted_vllm/llama", {"api_base": "http://127.0.0.1:8000/v1", "max_tokens": 5}, "fast"),
        ("hosted_vllm/llama", {}, "litellm"),  # no base URL: litellm reports it
        ("anthropic/claude-3-5-haiku-latest", {"api_base": "http://127.0.0.1:8000"}, "litellm"),
        ("ollama/llama3", {"api_base": "http://127.0.0.1:11434"}, "litellm"),
        ("local", {}, "litellm"),
        ("openai/gpt-4o-mini", {"mock_response": "x"}, "litellm"),  # a litellm-only argument
        ("openai/gpt-4o-mini", {"api_version": "2024-01-01"}, "litellm"),
    ],
)
def test_select_transport(model: str, params: dict, path: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HOSTED_VLLM_API_BASE", raising=False)
    assert select_transport(model, params) == path


def test_bare_openai_model_names_take_the_fast_path() -> None:
    assert select_transport("gpt-4o-mini", {"temperature": 0.0}) == "fast"
    assert select_transport("claude-3-5-haiku-latest", {}) == "litellm"


def test_transport_option_of_a_judge() -> None:
    assert isinstance(jw.LLMJudge("openai/x").settings.transport, AutoTransport)
    assert isinstance(jw.LLMJudge("openai/x", transport="auto").settings.transport, AutoTransport)
    assert isinstance(jw.LLMJudge("openai/x", transport="litellm").settings.transport, LiteLLMTransport)
    forced = jw.LLMJudge("openai/x", transport="fast").settings.transport
    assert isinstance(forced, OpenAIHTTPTransport) and forced.forced
    custom = LiteLLMTransport()
    judge = jw.LLMJudge("openai/x", transport=custom)
    assert judge.settings.transport is custom and judge.with_options(name="b").settings.transport is custom
    assert isinstance(CallSettings().transport, AutoTransport)
    with pytest.raises(jw.ConfigurationError, match="transport must be"):
        resolve_transport("quick")  # type: ignore[arg-type]


def test_litellm_global_settings_keep_openai_calls_on_litellm(monkeypatch: pytest.MonkeyPatch) -> None:
    litellm = pytest.importorskip("litellm")
    monkeypatch.setattr(litellm, "api_base", "http://127.0.0.1:4000/v1")
    assert select_transport("openai/gpt-4o-mini", {}) == "litellm"  # the user routed openai/ calls globally
    assert select_transport("openai/gpt-4o-mini", {"api_base": "http://127.0.0.1:8000/v1"}) == "fast"


def test_proxy_from_the_environment(server: OpenAITestServer, monkeypatch: pytest.MonkeyPatch) -> None:
    """HTTP_PROXY is honoured as httpx honours it: the loopback server stands in for the proxy here."""
    monkeypatch.setenv("HTTP_PROXY", server.url)
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    server.reset_stats()
    req = ChatRequest("openai/test", ({"role": "user", "content": "a"},), {"api_base": "http://judge.invalid:8000/v1"})
    assert asyncio.run(OpenAIHTTPTransport().complete(req, 5.0)).content
    assert server.stats.total == 1


def test_auto_transport_routes_each_request() -> None:
    auto = AutoTransport()
    fast = ChatRequest("openai/x", (), {"api_base": "http://127.0.0.1:1/v1"})
    assert auto.route(fast) is auto.fast
    assert auto.route(ChatRequest("anthropic/x", (), {})) is auto.litellm
    assert auto.route(ChatRequest("openai/x", (), {"mock_response": "y"})) is auto.litellm


# --- one attempt -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("client", CLIENTS)
def test_completion_fields(server: OpenAITestServer, client: str) -> None:
    server.reset_stats()
    completion = attempt(server, "one two three", client=client, logprobs=True, top_logprobs=2)
    assert completion.content == '{"score": 4, "explanation": "Test explanation."}'
    assert completion.prompt_tokens == 3 and completion.completion_tokens == 5  # the server counts words
    assert completion.cost_usd is None and completion.latency_s > 0 and not completion.cached
    assert completion.logprobs[0].keys() == {"token", "logprob", "top_logprobs"}
    assert len(completion.logprobs[0]["top_logprobs"]) == 2
    assert "".join(t["token"] for t in completion.logprobs) == completion.content
    recorded = server.stats.requests[-1]
    assert recorded.authorization and recorded.path == "/v1/chat/completions"
    assert recorded.body["model"] == "test"  # the provider prefix is not sent, as with litellm
    assert "api_key" not in recorded.body and "api_base" not in recorded.body


def test_key_from_the_environment(server: OpenAITestServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env")
    server.reset_stats()
    req = ChatRequest("openai/test", ({"role": "user", "content": "a"},), {"api_base": server.base_url})
    asyncio.run(OpenAIHTTPTransport().complete(req, 5.0))
    assert server.stats.requests[-1].authorization


@pytest.mark.parametrize(
    ("directive", "status", "name"),
    [
        ("[[fault:429]]", 429, "RateLimitError"),
        ("[[fault:500]]", 500, "InternalServerError"),
        ("[[fault:503]]", 503, "ServiceUnavailableError"),
        ("[[fault:malformed]]", 500, "InternalServerError: malformed response body"),
    ],
)
@pytest.mark.parametrize("client", CLIENTS)
def test_failures_carry_status_and_name(
    server: OpenAITestServer, directive: str, status: int, name: str, client: str
) -> None:
    with pytest.raises(CallFailure) as caught:
        attempt(server, f"a {directive}", client=client)
    assert caught.value.status_code == status and str(caught.value).startswith(name)
    assert SECRET not in str(caught.value)


@pytest.mark.parametrize("client", CLIENTS)
def test_retry_after_is_read_from_the_headers(server: OpenAITestServer, client: str) -> None:
    with pytest.raises(CallFailure) as caught:
        attempt(server, "a [[fault:429]]", client=client)
    assert caught.value.retry_after == pytest.approx(0.05)


@pytest.mark.parametrize("client", CLIENTS)
def test_timeout_is_a_408(server: OpenAITestServer, client: str) -> None:
    with pytest.raises(CallFailure) as caught:
        attempt(server, "a [[fault:timeout]]", timeout=0.2, client=client)
    assert caught.value.status_code == 408 and str(caught.value).startswith("Timeout")


@pytest.mark.parametrize("client", CLIENTS)
def test_refused_connection_has_no_status(client: str) -> None:
    req = ChatRequest("openai/test", ({"role": "user", "content": "a"},), {"api_base": "http://127.0.0.1:9/v1"})
    with pytest.raises(CallFailure) as caught:
        asyncio.run(OpenAIHTTPTransport(client=client).complete(req, 5.0))  # type: ignore[arg-type]
    assert caught.value.status_code is None and str(caught.value).startswith("APIConnectionError")


def test_json_fallback_writes_the_same_bytes() -> None:
    orjson = pytest.importorskip("orjson")
    body = {
        "messages": [{"role": "user", "content": 'é ü "q" \\ \n\t\x01 \u2028 😀'}],
        "model": "m",
        "temperature": 0.0,
    }
    body["top_p"] = 0.7
    assert orjson.dumps(body) == json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()


async def test_body_is_byte_identical_to_litellm_s() -> None:
    """The fast path sends what the openai SDK under litellm sends, byte for byte."""
    from aiohttp import web

    bodies: list[bytes] = []

    async def chat(request: web.Request) -> web.Response:
        bodies.append(await request.read())
        return web.json_response({"choices": [{"message": {"role": "assistant", "content": "ok"}}], "usage": {}})

    app = web.Application()
    app.router.add_post("/v1/chat/completions", chat)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    try:
        base = f"http://127.0.0.1:{runner.addresses[0][1]}/v1"
        judge = jw.LLMJudge(
            "openai/m", template="likert", api_base=base, api_key=SECRET, probability_weighted=True, max_tokens=50
        )
        params = judge.request_params()
        messages = judge.template.messages("q é", "a 😀", explanations=False)
        req = ChatRequest("openai/m", messages, params)
        fast = OpenAIHTTPTransport()
        await fast.complete(req, 5.0)
        await LiteLLMTransport().complete(req, 5.0)
        await fast.aclose()
    finally:
        await runner.cleanup()
    assert bodies[0] == bodies[1]
    assert list(json.loads(bodies[0])) == [
        "messages",
        "model",
        "logprobs",
        "max_tokens",
        "response_format",
        "temperature",
        "top_logprobs",
    ]


# --- sessions ----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("client", CLIENTS)
def test_one_client_per_loop_closed_when_the_loop_ends(server: OpenAITestServer, client: str) -> None:
    transport = OpenAIHTTPTransport(client=client)  # type: ignore[arg-type]

    async def run() -> object:
        await asyncio.gather(*(transport.complete(request(server, f"x{i}"), 5.0) for i in range(20)))
        assert len(transport.clients()) == 1
        return transport.clients()[0]

    gc.collect()  # earlier tests' garbage is not this test's business
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ResourceWarning)
        opened = asyncio.run(run())
        assert opened.closed and not transport.clients()  # asyncio.run's shutdown_asyncgens closed it
        asyncio.run(run())  # a new loop gets a new client
        del opened
        gc.collect()
    assert not [w for w in caught if issubclass(w.category, ResourceWarning) or "session" in str(w.message)]


@pytest.mark.parametrize("client", CLIENTS)
async def test_aclose_and_reopen(server: OpenAITestServer, client: str) -> None:
    transport = OpenAIHTTPTransport(client=client)  # type: ignore[arg-type]
    await transport.complete(request(server), 5.0)
    await transport.aclose()
    assert not transport.clients()
    assert (await transport.complete(request(server), 5.0)).content
    await transport.aclose()


def test_pool_connections_stay_within_the_concurrency_limit(server: OpenAITestServer) -> None:
    judge = jw.LLMJudge(
        "openai/test",
        template="likert",
        api_base=server.base_url,
        api_key=SECRET,
        cache=False,
        max_concurrency=4,
        probability_weighted=False,
    )
    result = judge.score([f"q{i}" for i in range(40)], ["a"] * 40, progress=False)
    assert result.score_list == [0.75] * 40
    (pool,) = judge.settings.transport.fast.clients()
    assert isinstance(pool, HTTPPool) and 1 <= pool.connections <= 4


def test_proxied_requests_take_aiohttp(server: OpenAITestServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HTTP_PROXY", server.url)
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    transport = OpenAIHTTPTransport()
    req = ChatRequest("openai/test", ({"role": "user", "content": "a"},), {"api_base": "http://judge.invalid:8000/v1"})

    async def run() -> list[str]:
        await transport.complete(req, 5.0)
        return [type(client).__name__ for client in transport.clients()]

    assert asyncio.run(run()) == ["AiohttpClient"]


def test_unknown_client_is_refused() -> None:
    with pytest.raises(jw.ConfigurationError, match="client must be"):
        OpenAIHTTPTransport(client="curl")  # type: ignore[arg-type]


def test_transport_pickles_without_its_connections(server: OpenAITestServer) -> None:
    import pickle

    transport = OpenAIHTTPTransport(forced=True, client="aiohttp")
    asyncio.run(transport.complete(request(server), 5.0))
    copy = pickle.loads(pickle.dumps(transport))
    assert (copy.forced, copy.client, copy.clients()) == (True, "aiohttp", [])


def test_sync_calls_reuse_the_background_loop_client(server: OpenAITestServer) -> None:
    judge = jw.LLMJudge(
        "openai/test",
        template="likert",
        api_base=server.base_url,
        api_key=SECRET,
        cache=False,
        probability_weighted=False,
    )
    assert judge.score(["q"], ["a"], progress=False).score_list == [0.75]
    assert judge.score(["q2"], ["a"], progress=False).score_list == [0.75]
    assert len(judge.settings.transport.fast.clients()) == 1


def test_key_never_reaches_results_caches_or_reprs(server: OpenAITestServer, tmp_path) -> None:  # type: ignore[no-untyped-def]
    cache = jw.CallCache(tmp_path / "calls.sqlite")
    judge = jw.LLMJudge("openai/test", template="likert", api_base=server.base_url, api_key=SECRET, cache=cache)
    result = judge.score(["q", "q"], ["a [[fault:500]]", "fine"], progress=False)
    cache.close()
    assert SECRET not in repr(judge) and SECRET not in repr(judge.settings.transport)
    assert SECRET not in result.votes_df.to_csv()
    assert SECRET.encode() not in (tmp_path / "calls.sqlite").read_bytes()


# --- the two paths give the same results -------------------------------------------------------------------------


# The faults the test server injects at random: 429 with retry-after, 500, 503, malformed JSON, empty completions.
# Timeouts have their own small test below: a judge timeout short enough to test quickly would also cut off
# ordinary calls on a busy machine, where litellm's ~5 ms of CPU per call adds up.
PLAN = FaultPlan(
    rate_limit=0.06, server_error=0.04, overloaded=0.03, malformed=0.03, empty=0.03, seed=11, retry_after=0.01
)
PATHS = ("litellm", "fast (http11)", "fast (aiohttp)")


def transport_of(path: str) -> str | AutoTransport:
    if path == "litellm":
        return "litellm"
    if path == "fast (http11)":
        return "auto"
    return AutoTransport(fast=OpenAIHTTPTransport(client="aiohttp"))


def equality_panel(base: str, broken: str, transport: str | AutoTransport) -> jw.LLMPanel:
    common = {"api_key": SECRET, "cache": False, "retry": FAST_RETRY, "transport": transport}
    return jw.LLMPanel(
        [
            jw.LLMJudge("openai/likert", template="likert", name="likert", reasks=0, api_base=base, **common),
            jw.LLMJudge(
                "openai/weighted",
                template="likert",
                name="weighted",
                probability_weighted=True,
                api_base=base,
                **common,
            ),
            jw.LLMJudge(
                "openai/tfu",
                template="true_false_uncertain",
                name="explained",
                explanations=True,
                api_base=base,
                max_tokens=64,
                **common,
            ),
            jw.LLMJudge("openai/down", template="likert", name="down", api_base=broken, **common),
        ]
    )


def normalised_votes(result: jw.PanelResult) -> pd.DataFrame:
    """The votes without latency and rate-limit waits; an infrastructure error keeps its category and failure name
    (litellm prefixes its own wording, the fast path gives the server's message), a parse error stays whole."""
    votes = result.votes.drop(columns=["latency_s", "waited_s"])
    votes["attempts"] = [v.attempts for v in result.vote_list]
    errors = [v.error for v in result.vote_list]
    votes["error"] = [e if e is None or e.startswith("parse:") else ":".join(e.split(":")[:2]) for e in errors]
    return votes


def run_paths(items: int) -> dict[str, jw.PanelResult]:
    prompts = [f"Question {i}?" for i in range(items)]
    responses = [f"Answer {i}." for i in range(items)]
    responses[1] = "Answer [[fault:500]]"  # fails on every attempt, for every judge
    responses[2] = "Answer [[reply:not json at all]]"  # unreadable: a parse error, or re-asked and answered
    results = {}
    for path in PATHS:
        # A fresh server per path: the fault draws depend on the request bytes and how often each was seen.
        with (
            OpenAITestServer(schema_aware, faults=PLAN) as live,
            OpenAITestServer(faults=FaultPlan(server_error=1.0)) as broken,
        ):
            panel = equality_panel(live.base_url, broken.base_url, transport_of(path))
            results[path] = panel.score(prompts, responses, progress=False)
    return results


@pytest.fixture(scope="module")
def results() -> dict[str, jw.PanelResult]:
    return run_paths(40)


@pytest.mark.parametrize("path", PATHS[1:])
def test_both_paths_give_identical_dataframes(results: dict[str, jw.PanelResult], path: str) -> None:
    slow, fast = results["litellm"], results[path]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the always-failing judge leaves aggregates over fewer judges
        fast_df = fast.to_df()
        pd.testing.assert_frame_equal(slow.to_df(), fast_df)
    pd.testing.assert_frame_equal(normalised_votes(slow), normalised_votes(fast))


def test_the_equality_run_exercised_every_fault(results: dict[str, jw.PanelResult]) -> None:
    fast = results["fast (http11)"]
    votes = normalised_votes(fast)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fast_df = fast.to_df()
    assert (votes.loc[votes.judge == "down", "error"] == "infrastructure: InternalServerError").all()
    assert votes.loc[votes.judge == "weighted", "score"].dropna().map(lambda s: not (s * 4).is_integer()).any()
    assert votes.loc[(votes.item == 2) & (votes.judge == "likert"), "error"].str.startswith("parse:").all()
    assert fast_df["explained_explanation"].str.startswith("Because").sum() > 30
    assert (votes["attempts"] > 1).sum() > 10  # the fault plan was exercised, and identically
    assert votes["prompt_tokens"].notna().sum() > 100 and not math.isnan(votes["score"].sum())


def test_timeouts_give_identical_dataframes_on_every_path() -> None:
    """A call that hangs once is retried; one that always hangs is recorded after the last attempt."""
    responses = ["fine", "slow once [[fault-once:timeout]]", "stuck [[fault:timeout]]"]
    frames = {}
    for path in PATHS:
        with OpenAITestServer(faults=FaultPlan(hang_seconds=3.0)) as server:
            judge = jw.LLMJudge(
                "openai/test",
                template="likert",
                api_base=server.base_url,
                api_key=SECRET,
                cache=False,
                retry=FAST_RETRY,
                timeout=1.0,
                transport=transport_of(path),  # type: ignore[arg-type]
            )
            result = jw.LLMPanel([judge]).score(["q"] * 3, responses, progress=False)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            frames[path] = (result.to_df(), normalised_votes(result))
    for path in PATHS[1:]:
        pd.testing.assert_frame_equal(frames["litellm"][0], frames[path][0])
        pd.testing.assert_frame_equal(frames["litellm"][1], frames[path][1])
    votes = frames["fast (http11)"][1]
    assert votes["attempts"].tolist() == [1, 2, 3]
    assert votes["error"].tolist()[2] == "infrastructure: Timeout" and votes["score"].notna().tolist()[:2] == [True] * 2
