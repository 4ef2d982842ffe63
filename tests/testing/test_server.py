"""The loopback OpenAI test server: wire format, responders, directives, faults, latency, stats, modes.

Called with httpx (exact HTTP behaviour) and with litellm (what the judging engine will see).
"""

from __future__ import annotations

import asyncio
import itertools
import json
import math
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from pydantic import ValidationError

from judgewidgets.testing import (
    FaultPlan,
    OpenAITestServer,
    ServerStats,
    echo,
    fixed,
    hashed_score,
    json_score,
)

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

ROOT = Path(__file__).resolve().parents[2]


def _body(text: str, **extra: Any) -> dict[str, Any]:
    return {
        "model": "test-model",
        "messages": [
            {"role": "system", "content": "You are a strict judge."},
            {"role": "user", "content": text},
        ],
        **extra,
    }


def _post(
    http: httpx.Client, server: OpenAITestServer, text: str, timeout: float = 5.0, **extra: Any
) -> httpx.Response:
    return http.post(f"{server.base_url}/chat/completions", json=_body(text, **extra), timeout=timeout)


def shout(body: dict[str, Any]) -> str:
    """A custom module-level responder: picklable, so it works with spawn=True."""
    return body["messages"][-1]["content"].upper()


@pytest.fixture(scope="module")
def http():
    # One client for the module: a new httpx client per call costs an SSL context (~50 ms here).
    with httpx.Client(timeout=5) as client:
        yield client


@pytest.fixture
def server():
    with OpenAITestServer() as s:
        yield s


@pytest.fixture(scope="module")
def litellm():
    import litellm

    litellm.suppress_debug_info = True
    return litellm


async def _acomplete(litellm: Any, server: OpenAITestServer, text: str, **kwargs: Any) -> Any:
    kwargs.setdefault("num_retries", 0)  # litellm's and the openai SDK's own retries would hide faults
    return await litellm.acompletion(
        model="openai/test",
        api_base=server.base_url,
        api_key="sk-test",
        messages=[{"role": "user", "content": text}],
        **kwargs,
    )


# -- wire format ---------------------------------------------------------------------------------------------


def test_chat_completion_shape_and_usage(http: httpx.Client, server: OpenAITestServer) -> None:
    assert server.base_url == f"http://127.0.0.1:{server.port}/v1"
    response = _post(http, server, "Is the sky blue?")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("application/json")
    data = response.json()
    assert data["object"] == "chat.completion"
    assert data["id"].startswith("chatcmpl-")
    assert isinstance(data["created"], int)
    assert data["model"] == "test-model"
    choice = data["choices"][0]
    assert choice["finish_reason"] == "stop"
    assert choice["message"]["role"] == "assistant"
    assert choice["logprobs"] is None
    content = choice["message"]["content"]
    usage = data["usage"]
    assert usage["prompt_tokens"] == 5 + 4  # words of the system and the user message
    assert usage["completion_tokens"] == len(content.split())
    assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"]


def test_routes_without_v1_and_models(http: httpx.Client, server: OpenAITestServer) -> None:
    response = http.post(f"{server.url}/chat/completions", json=_body("hi"))
    assert response.status_code == 200
    models = http.get(f"{server.base_url}/models").json()
    assert models["object"] == "list"
    assert [m["id"] for m in models["data"]] == ["test"]


def test_bad_requests_get_openai_errors(http: httpx.Client, server: OpenAITestServer) -> None:
    url = f"{server.base_url}/chat/completions"
    not_json = http.post(url, content=b"{not json", headers={"content-type": "application/json"})
    assert not_json.status_code == 400
    assert not_json.json()["error"]["type"] == "invalid_request_error"
    assert http.post(url, json={"model": "m"}).status_code == 400
    assert http.post(url, json=_body("x", stream=True)).status_code == 400
    typo = _post(http, server, "x [[fault:418]]")
    assert typo.status_code == 400
    assert "unknown fault" in typo.json()["error"]["message"]


def test_multimodal_content_parts_are_read(http: httpx.Client, server: OpenAITestServer) -> None:
    body = {
        "model": "m",
        "messages": [{"role": "user", "content": [{"type": "text", "text": "a b [[reply:ok]]"}]}],
    }
    data = http.post(f"{server.base_url}/chat/completions", json=body).json()
    assert data["choices"][0]["message"]["content"] == "ok"
    assert data["usage"]["prompt_tokens"] == 3


# -- responders and the reply directive ----------------------------------------------------------------------


def test_default_responder_is_deterministic_and_in_range(http: httpx.Client, server: OpenAITestServer) -> None:
    contents = [_post(http, server, f"prompt number {i}").json()["choices"][0]["message"]["content"] for i in range(40)]
    again = [_post(http, server, f"prompt number {i}").json()["choices"][0]["message"]["content"] for i in range(40)]
    assert contents == again
    scores = [json.loads(c)["score"] for c in contents]
    assert all(1 <= s <= 5 for s in scores)
    assert len(set(scores)) >= 3  # spread over the scale, not constant
    assert isinstance(json.loads(contents[0])["explanation"], str)
    # The hash is stable (not Python's salted hash): the same in this process as in the server thread.
    assert contents[7] == hashed_score()(_body("prompt number 7"))
    # It depends on the last user message only, not on the model or the system prompt.
    other = {"model": "x", "messages": [{"role": "user", "content": "prompt number 7"}]}
    assert hashed_score()(other) == contents[7]


def test_shipped_responders() -> None:
    body = _body("Hello there")
    assert fixed("plain")(body) == "plain"
    assert json.loads(json_score(4)(body)) == {"score": 4, "explanation": "Test explanation."}
    assert json.loads(json_score(0.5, "why")(body)) == {"score": 0.5, "explanation": "why"}
    assert echo()(body) == "Hello there"
    assert 7 <= json.loads(hashed_score(7, 9)(body))["score"] <= 9
    with pytest.raises(ValueError):
        hashed_score(5, 1)


def test_custom_responder_and_reply_directive(http: httpx.Client) -> None:
    with OpenAITestServer(lambda body: f"model was {body['model']}") as server:
        assert _post(http, server, "x").json()["choices"][0]["message"]["content"] == "model was test-model"
        planted = _post(http, server, 'judge this [[reply:{"score": 2}]] please')
        assert planted.json()["choices"][0]["message"]["content"] == '{"score": 2}'


def test_responder_error_becomes_500(http: httpx.Client) -> None:
    def broken(body: dict[str, Any]) -> str:
        raise KeyError("nope")

    with OpenAITestServer(broken) as server:
        response = _post(http, server, "x")
        assert response.status_code == 500
        assert "KeyError" in response.json()["error"]["message"]
        assert server.stats.by_fault == {"responder_error": 1}


# -- logprobs -----------------------------------------------------------------------------------------------


def test_logprobs_digit_carries_the_score(http: httpx.Client, server: OpenAITestServer) -> None:
    data = _post(http, server, 'rate [[reply:{"score": 4}]]', logprobs=True, top_logprobs=5).json()
    choice = data["choices"][0]
    tokens = choice["logprobs"]["content"]
    assert "".join(t["token"] for t in tokens) == choice["message"]["content"] == '{"score": 4}'
    digit = next(t for t in tokens if t["token"] == "4")
    assert math.exp(digit["logprob"]) == pytest.approx(0.9)
    top = digit["top_logprobs"]
    assert len(top) == 5
    assert top[0]["token"] == "4"
    assert [t["token"] for t in top[1:]] == ["3", "5", "2", "6"]  # nearest digits are likeliest
    assert all(a["logprob"] >= b["logprob"] for a, b in itertools.pairwise(top))
    assert sum(math.exp(t["logprob"]) for t in top) <= 1 + 1e-9
    for token in tokens:
        assert token["bytes"] == list(token["token"].encode())
        assert len(token["top_logprobs"]) == 5
        assert len({t["token"] for t in token["top_logprobs"]}) == 5
    # Deterministic.
    again = _post(http, server, 'rate [[reply:{"score": 4}]]', logprobs=True, top_logprobs=5).json()
    assert again["choices"][0]["logprobs"] == choice["logprobs"]


def test_logprobs_without_top_logprobs(http: httpx.Client, server: OpenAITestServer) -> None:
    tokens = _post(http, server, "[[reply:7]]", logprobs=True).json()["choices"][0]["logprobs"]["content"]
    assert tokens == [{"token": "7", "logprob": math.log(0.9), "bytes": [55], "top_logprobs": []}]
    ten = _post(http, server, "[[reply:7]]", logprobs=True, top_logprobs=20).json()["choices"][0]["logprobs"]
    assert sorted(t["token"] for t in ten["content"][0]["top_logprobs"]) == list("0123456789")


# -- faults: directives -------------------------------------------------------------------------------------


def test_sticky_fault_directives(http: httpx.Client, server: OpenAITestServer) -> None:
    for _ in range(2):  # sticky: the same request fails every time
        limited = _post(http, server, "x [[fault:429]]")
        assert limited.status_code == 429
        assert limited.headers["retry-after"] == "0.05"
        assert limited.headers["retry-after-ms"] == "50"
        assert limited.json()["error"]["code"] == "rate_limit_exceeded"
    assert _post(http, server, "x [[fault:500]]").status_code == 500
    assert _post(http, server, "x [[fault:503]]").status_code == 503
    assert _post(http, server, "x [[fault:overloaded]]").status_code == 503

    malformed = _post(http, server, "x [[fault:malformed]]")
    assert malformed.status_code == 200
    with pytest.raises(json.JSONDecodeError):
        malformed.json()

    empty = _post(http, server, "x [[fault:empty]]").json()
    assert empty["choices"][0]["message"]["content"] == ""
    assert empty["usage"]["completion_tokens"] == 0

    started = time.perf_counter()
    with pytest.raises(httpx.ReadTimeout):
        _post(http, server, "x [[fault:timeout]]", timeout=0.3)
    assert time.perf_counter() - started < 2

    stats = server.stats
    assert stats.by_status == {429: 2, 500: 1, 503: 2, 200: 2, 504: 1}
    assert stats.by_fault == {
        "rate_limit": 2,
        "server_error": 1,
        "overloaded": 2,
        "malformed": 1,
        "empty": 1,
        "timeout": 1,
    }
    # The rest of a batch is untouched by a failing row.
    assert _post(http, server, "a healthy row").status_code == 200


def test_fault_once_fails_only_the_first_sighting(http: httpx.Client, server: OpenAITestServer) -> None:
    assert _post(http, server, "row 1 [[fault-once:500]]").status_code == 500
    assert _post(http, server, "row 1 [[fault-once:500]]").status_code == 200
    assert _post(http, server, "row 1 [[fault-once:500]]").status_code == 200
    assert _post(http, server, "row 2 [[fault-once:429]]").status_code == 429  # another body: fails once too
    assert _post(http, server, "row 2 [[fault-once:429]]").status_code == 200
    # Once it passes, a reply directive in the same message applies.
    assert _post(http, server, "[[fault-once:503]] [[reply:B]]").status_code == 503
    assert _post(http, server, "[[fault-once:503]] [[reply:B]]").json()["choices"][0]["message"]["content"] == "B"


def test_timeout_fault_does_not_block_other_requests() -> None:
    plan = FaultPlan(hang_seconds=30)
    with OpenAITestServer(faults=plan) as server:

        async def go() -> None:
            async with httpx.AsyncClient(timeout=5) as client:
                url = f"{server.base_url}/chat/completions"
                hanging = [
                    asyncio.create_task(client.post(url, json=_body(f"h{i} [[fault:timeout]]"))) for i in range(20)
                ]
                await asyncio.sleep(0.1)
                started = time.perf_counter()
                ok = await client.post(url, json=_body("fine"))
                assert ok.status_code == 200
                assert time.perf_counter() - started < 1
                assert server.stats.in_flight >= 20
                for task in hanging:
                    task.cancel()
                await asyncio.gather(*hanging, return_exceptions=True)

        asyncio.run(go())
        started = time.perf_counter()
    assert time.perf_counter() - started < 2  # stopping cuts the hanging requests off


# -- faults: the seeded plan --------------------------------------------------------------------------------


def test_fault_plan_validation() -> None:
    with pytest.raises(ValidationError):
        FaultPlan(rate_limit=0.7, server_error=0.5)
    with pytest.raises(ValidationError):
        FaultPlan(timeout=-0.1)
    with pytest.raises(ValidationError):
        FaultPlan(rate_limt=0.1)  # type: ignore[call-arg]
    plan = FaultPlan(rate_limit=0.25, empty=0.25)
    assert plan.total_rate == 0.5
    with pytest.raises(ValidationError):
        plan.rate_limit = 0.0  # type: ignore[misc]
    assert plan.model_copy(update={"seed": 3}).seed == 3
    assert FaultPlan().draw(b"anything", 0) is None


def _statuses(http: httpx.Client, plan: FaultPlan, n: int = 200) -> list[int]:
    with OpenAITestServer(json_score(3), faults=plan) as server:
        return [_post(http, server, f"item {i}", timeout=0.5).status_code for i in range(n)]


def test_fault_plan_is_seeded_and_roughly_at_rate(http: httpx.Client) -> None:
    plan = FaultPlan(rate_limit=0.1, server_error=0.1, overloaded=0.1, seed=7)
    first = _statuses(http, plan)
    assert first == _statuses(http, plan)  # same seed, same failing rows
    assert first != _statuses(http, plan.model_copy(update={"seed": 8}))
    assert 20 <= sum(s != 200 for s in first) <= 100  # ~30 % of 200
    assert {429, 500, 503} <= set(first)


def test_fault_plan_retry_gets_a_fresh_draw(http: httpx.Client) -> None:
    plan = FaultPlan(server_error=0.5, seed=1)
    with OpenAITestServer(faults=plan) as server:
        for i in range(20):
            attempts = 1
            while _post(http, server, f"row {i}").status_code != 200:  # a retried row eventually succeeds
                attempts += 1
                assert attempts < 30
        assert 0 < server.stats.by_fault["server_error"] < server.stats.total


def test_rate_limit_retry_after_is_configurable(http: httpx.Client) -> None:
    with OpenAITestServer(faults=FaultPlan(retry_after=2)) as server:
        response = _post(http, server, "[[fault:rate_limit]]")
        assert (response.headers["retry-after"], response.headers["retry-after-ms"]) == ("2", "2000")


# -- latency ------------------------------------------------------------------------------------------------


async def test_latency_is_concurrent() -> None:
    # A raw aiohttp client: httpx's pool slows down badly with ~100 warm connections, litellm adds its own
    # per-call overhead; this test is about the server.
    import aiohttp

    async with OpenAITestServer(latency=0.2) as server, aiohttp.ClientSession() as session:
        url = f"{server.base_url}/chat/completions"

        async def one(i: int) -> int:
            async with session.post(url, json=_body(f"q{i}")) as response:
                await response.read()
                return response.status

        single = time.perf_counter()
        assert await one(-1) == 200
        assert time.perf_counter() - single >= 0.2
        started = time.perf_counter()
        statuses = await asyncio.gather(*(one(i) for i in range(100)))
        elapsed = time.perf_counter() - started
        assert statuses == [200] * 100
        assert 0.2 <= elapsed < 1.5
        assert server.stats.max_in_flight == 100


def test_jitter_adds_bounded_delay(http: httpx.Client) -> None:
    with OpenAITestServer(latency=0.05, jitter=0.1) as server:
        durations = []
        for i in range(5):
            started = time.perf_counter()
            _post(http, server, f"j{i}")
            durations.append(time.perf_counter() - started)
    assert all(0.05 <= d < 0.6 for d in durations)


# -- stats --------------------------------------------------------------------------------------------------


def test_stats_record_bodies_and_never_the_key(http: httpx.Client) -> None:
    with OpenAITestServer(record=3) as server:
        fmt = {"type": "json_object"}
        secret = "sk-very-secret-value"
        http.post(
            f"{server.base_url}/chat/completions",
            json=_body("with key", response_format=fmt),
            headers={"Authorization": f"Bearer {secret}"},
        )
        _post(http, server, "without key")
        stats = server.stats
        assert isinstance(stats, ServerStats)
        assert stats.total == 2
        assert stats.requests[0].body is not None
        assert stats.requests[0].body["response_format"] == fmt
        assert [r.authorization for r in stats.requests] == [True, False]
        assert [r.path for r in stats.requests] == ["/v1/chat/completions"] * 2
        assert secret not in stats.model_dump_json()
        for i in range(5):
            _post(http, server, f"more {i}")
        stats = server.stats
        assert stats.total == 7
        assert [b["messages"][-1]["content"] for b in stats.bodies if b] == ["more 2", "more 3", "more 4"]
        server.reset_stats()
        assert server.stats == ServerStats()


def test_a_server_with_a_key_refuses_other_keys_with_401(http: httpx.Client) -> None:
    with OpenAITestServer(json_score(3), api_key="sk-right") as server:
        url = f"{server.base_url}/chat/completions"
        good = http.post(url, json=_body("q"), headers={"Authorization": "Bearer sk-right"})
        wrong = http.post(url, json=_body("q"), headers={"Authorization": "Bearer sk-wrong-secret"})
        missing = http.post(url, json=_body("q"))
        assert good.status_code == 200
        assert [wrong.status_code, missing.status_code] == [401, 401]
        assert wrong.json()["error"]["code"] == "invalid_api_key"
        assert "sk-wrong-secret" in wrong.text  # echoed, as careless servers do: clients must redact it
        stats = server.stats
        assert stats.by_status == {200: 1, 401: 2}
        assert "sk-wrong-secret" not in stats.model_dump_json()


def test_stats_do_not_count_models_or_stats_routes(http: httpx.Client, server: OpenAITestServer) -> None:
    http.get(f"{server.base_url}/models")
    _ = server.stats
    assert server.stats.total == 0


# -- lifecycle ----------------------------------------------------------------------------------------------


def test_start_stop_without_context_manager(http: httpx.Client) -> None:
    server = OpenAITestServer()
    assert not server.running
    with pytest.raises(RuntimeError):
        _ = server.base_url
    server.start()
    try:
        assert server.running
        assert "thread" in repr(server)
        with pytest.raises(RuntimeError):
            server.start()
        assert _post(http, server, "x").status_code == 200
    finally:
        server.stop()
    server.stop()  # twice is fine
    assert not server.running


async def test_async_context_manager_inside_running_loop(http: httpx.Client) -> None:
    async with OpenAITestServer(json_score(5)) as server, httpx.AsyncClient() as client:
        response = await client.post(f"{server.base_url}/chat/completions", json=_body("x"))
        assert json.loads(response.json()["choices"][0]["message"]["content"])["score"] == 5
        # A blocking call from inside the loop does not deadlock: the server has its own loop.
        assert _post(http, server, "sync from async").status_code == 200


@pytest.mark.parametrize("spawn", [False, True])
def test_port_in_use_fails_with_the_reason(spawn: bool) -> None:
    with OpenAITestServer() as taken:
        server = OpenAITestServer(port=taken.port, spawn=spawn)
        with pytest.raises(RuntimeError, match=r"(?i)address already in use|errno 98"):
            server.start()
        assert not server.running


def test_two_servers_get_different_ports() -> None:
    with OpenAITestServer() as a, OpenAITestServer() as b:
        assert a.port != b.port


# -- litellm ------------------------------------------------------------------------------------------------


async def test_litellm_completion_shape(litellm: Any) -> None:
    async with OpenAITestServer(json_score(4)) as server:
        response = await _acomplete(litellm, server, "Rate this answer: 42")
        assert json.loads(response.choices[0].message.content) == {
            "score": 4,
            "explanation": "Test explanation.",
        }
        assert response.usage.prompt_tokens == 4
        assert response.usage.completion_tokens == 5  # whitespace-separated words
        assert response.usage.total_tokens == 9
        assert server.stats.requests[-1].authorization is True


async def test_litellm_sends_response_format_and_reads_logprobs(litellm: Any) -> None:
    async with OpenAITestServer(json_score(3)) as server:
        response = await _acomplete(
            litellm, server, "x", logprobs=True, top_logprobs=3, response_format={"type": "json_object"}
        )
        body = server.stats.bodies[-1]
        assert body is not None
        assert body["response_format"] == {"type": "json_object"}
        assert body["logprobs"] is True and body["top_logprobs"] == 3
        tokens = response.choices[0].logprobs.content  # typed objects in litellm's response
        digit = next(t for t in tokens if t.token == "3")
        assert [t.token for t in digit.top_logprobs] == ["3", "2", "4"]


async def test_litellm_rate_limit_exposes_retry_after(litellm: Any) -> None:
    async with OpenAITestServer(faults=FaultPlan(retry_after=0.25)) as server:
        with pytest.raises(litellm.RateLimitError) as info:
            await _acomplete(litellm, server, "x [[fault:429]]")
        error = info.value
        assert error.status_code == 429
        # litellm rebuilds `error.response` without the provider's headers; the real ones are here:
        assert error.litellm_response_headers["retry-after"] == "0.25"
        assert error.litellm_response_headers["retry-after-ms"] == "250"
        assert "retry-after" not in error.response.headers
        assert server.stats.total == 1  # num_retries=0: no hidden retry


@pytest.mark.parametrize(
    ("directive", "error_name", "status"),
    [
        ("500", "InternalServerError", 500),
        ("503", "ServiceUnavailableError", 503),
        ("malformed", "InternalServerError", 500),  # litellm reports a bad JSON body as a 500
    ],
)
async def test_litellm_error_faults(litellm: Any, directive: str, error_name: str, status: int) -> None:
    async with OpenAITestServer() as server:
        with pytest.raises(getattr(litellm, error_name)) as info:
            await _acomplete(litellm, server, f"x [[fault:{directive}]]")
        assert info.value.status_code == status
        assert server.stats.total == 1


async def test_litellm_empty_and_timeout(litellm: Any) -> None:
    async with OpenAITestServer() as server:
        empty = await _acomplete(litellm, server, "x [[fault:empty]]")
        assert empty.choices[0].message.content in ("", None)
        started = time.perf_counter()
        with pytest.raises(litellm.Timeout) as info:
            await _acomplete(litellm, server, "x [[fault:timeout]]", timeout=0.3)
        assert time.perf_counter() - started < 3
        assert info.value.status_code == 408


async def test_litellm_retry_recovers_from_fault_once(litellm: Any) -> None:
    async with OpenAITestServer(json_score(2)) as server:
        response = await _acomplete(litellm, server, "y [[fault-once:500]]", num_retries=1)
        assert json.loads(response.choices[0].message.content)["score"] == 2
        assert server.stats.by_status == {500: 1, 200: 1}


async def test_litellm_retries_by_default(litellm: Any) -> None:
    """Without num_retries/max_retries the openai SDK under litellm retries twice (honouring retry-after-ms):
    the engine must pass max_retries=0 itself to keep one retry policy in one place."""
    async with OpenAITestServer() as server:
        with pytest.raises(litellm.RateLimitError):
            await litellm.acompletion(
                model="openai/test",
                api_base=server.base_url,
                api_key="sk-test",
                messages=[{"role": "user", "content": "[[fault:429]]"}],
            )
        assert server.stats.total == 3


async def test_litellm_batch_with_one_permanently_failing_row(litellm: Any) -> None:
    async with OpenAITestServer(latency=0.05) as server:
        texts = [f"item {i}" for i in range(10)]
        texts[3] += " [[fault:500]]"
        results = await asyncio.gather(*(_acomplete(litellm, server, t) for t in texts), return_exceptions=True)
        failed = [i for i, r in enumerate(results) if isinstance(r, Exception)]
        assert failed == [3]
        assert isinstance(results[3], litellm.InternalServerError)


# -- process mode and CLI -----------------------------------------------------------------------------------


def test_spawned_server(http: httpx.Client) -> None:
    plan = FaultPlan(rate_limit=1.0, retry_after=0.5)
    with OpenAITestServer(json_score(5), spawn=True) as server:
        assert "process" in repr(server)
        assert server._process is not None
        process = server._process
        data = _post(http, server, "x").json()
        assert json.loads(data["choices"][0]["message"]["content"])["score"] == 5
        assert _post(http, server, "[[fault:500]]").status_code == 500
        stats = server.stats  # fetched over HTTP from the child
        assert stats.total == 2
        assert stats.by_status == {200: 1, 500: 1}
        assert stats.requests[0].body == _body("x")
        server.reset_stats()
        assert server.stats.total == 0
    assert process.returncode == 0  # stopped by closing its stdin, not killed
    with OpenAITestServer(faults=plan, spawn=True) as server:
        response = _post(http, server, "x")
        assert (response.status_code, response.headers["retry-after"]) == (429, "0.5")


def test_spawned_server_with_custom_module_level_responder(http: httpx.Client) -> None:
    with OpenAITestServer(shout, spawn=True) as server:
        assert _post(http, server, "hey").json()["choices"][0]["message"]["content"] == "HEY"


def test_spawn_rejects_unpicklable_responder() -> None:
    with pytest.raises(TypeError, match="picklable"):
        OpenAITestServer(lambda body: "x", spawn=True).start()


def test_spawn_rejects_responder_from_main() -> None:
    def local(body: dict[str, Any]) -> str:
        return "x"

    local.__module__ = "__main__"
    with pytest.raises(TypeError, match="__main__"):
        OpenAITestServer(local, spawn=True).start()


def test_public_names_are_exported_sorted() -> None:
    import judgewidgets.testing as testing

    public = {name for name in vars(testing) if not name.startswith("_")}
    assert testing.__all__ == sorted(testing.__all__)
    assert set(testing.__all__) == public


def test_command_line(http: httpx.Client) -> None:
    command = [sys.executable, "-m", "judgewidgets.testing", "--reply", "cli says hi", "--latency", "0.01"]
    command += ["--server-error", "0", "--loop", "asyncio"]
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
    }
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    try:
        assert process.stdout is not None
        base_url = process.stdout.readline().decode().strip()
        assert base_url.startswith("http://127.0.0.1:") and base_url.endswith("/v1")
        response = http.post(f"{base_url}/chat/completions", json=_body("x"))
        assert response.json()["choices"][0]["message"]["content"] == "cli says hi"
    finally:
        process.terminate()
        assert process.wait(10) == 0  # SIGTERM stops it cleanly
