"""The fast path: OpenAI-compatible chat completions over one pooled aiohttp session per event loop.

litellm spends milliseconds of CPU per call building and validating response objects; at a few thousand calls
per second against a vLLM/SGLang/llama.cpp server the client, not the server, becomes the limit. This transport
sends the body the openai SDK sends (compact UTF-8 JSON: messages and model, then the parameters in
alphabetical order) and reads back only what a `Completion` holds. Each failed attempt becomes a `CallFailure`
with the HTTP status and `retry-after`, so the engine's one retry policy, the cache, the accounting and key
redaction apply unchanged. Keys are read per call (from `api_key` or the provider's environment variable) and
never kept, logged or put into a message.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
import time
import weakref
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from .._version import __version__
from ._litellm import CallFailure, cost_of, is_local_model
from ._request import ChatRequest, Completion

try:  # orjson is optional: ~3x faster than json for these bodies, and byte-identical for them
    import orjson

    def _dumps(value: Any) -> bytes:
        return orjson.dumps(value)

    _loads = orjson.loads
except ImportError:  # pragma: no cover - exercised where orjson is not installed
    import json

    def _dumps(value: Any) -> bytes:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()

    _loads = json.loads

__all__ = ["BODY_KWARGS", "ROUTING_KWARGS", "OpenAIHTTPTransport", "openai_endpoint"]

OPENAI_BASE_URL = "https://api.openai.com/v1"

# provider → (key env var, base URL env vars, default base URL): the providers whose API is OpenAI's own.
_PROVIDERS: dict[str, tuple[str, tuple[str, ...], str | None]] = {
    "openai": ("OPENAI_API_KEY", ("OPENAI_BASE_URL", "OPENAI_API_BASE"), OPENAI_BASE_URL),
    "hosted_vllm": ("HOSTED_VLLM_API_KEY", ("HOSTED_VLLM_API_BASE",), None),
}

# Arguments that say where and how to send a request: consumed here, never put in the body. Retries are the
# engine's, so litellm's retry counts mean nothing on this path.
ROUTING_KWARGS = frozenset(
    {"api_base", "base_url", "api_key", "timeout", "extra_headers", "headers", "num_retries", "max_retries"}
)
# Fields of the chat completions API sent as given. A request with any other argument (`mock_response`,
# `metadata`, `drop_params`, `api_version`, ...) is litellm's to interpret, so it stays on the litellm path.
BODY_KWARGS = frozenset(
    {
        "frequency_penalty",
        "logit_bias",
        "logprobs",
        "max_completion_tokens",
        "max_tokens",
        "n",
        "parallel_tool_calls",
        "presence_penalty",
        "reasoning_effort",
        "response_format",
        "seed",
        "service_tier",
        "stop",
        "temperature",
        "tool_choice",
        "tools",
        "top_logprobs",
        "top_p",
        "user",
        "extra_body",
    }
)

# The exception names litellm (and the openai SDK) give each status, so both paths name a failure alike.
_ERROR_NAMES = {
    400: "BadRequestError",
    401: "AuthenticationError",
    403: "PermissionDeniedError",
    404: "NotFoundError",
    408: "Timeout",
    409: "ConflictError",
    422: "UnprocessableEntityError",
    429: "RateLimitError",
    500: "InternalServerError",
    503: "ServiceUnavailableError",
}
_MAX_MESSAGE = 500


@lru_cache(maxsize=512)
def provider_of(model: str) -> str | None:
    """litellm's provider for `model` ('openai', 'anthropic', ...), from its prefix or, for a bare name such
    as 'gpt-4o-mini', from litellm's own routing; None when litellm cannot route it."""
    if is_local_model(model):
        return "local"
    prefix, slash, _ = model.partition("/")
    if slash:
        return prefix
    from ._litellm import import_litellm

    try:
        return str(import_litellm().get_llm_provider(model=model)[1])
    except Exception:
        return None


@dataclass(frozen=True)
class Endpoint:
    """Where a request goes: the chat completions URL, the model name the server sees, the key's env var."""

    url: Any  # a yarl.URL, parsed once
    model: str
    key_env: str | None
    proxy: str | None = None  # from HTTP(S)_PROXY / NO_PROXY, as httpx (under litellm) reads them


def openai_endpoint(model: str, params: Mapping[str, Any], *, forced: bool = False) -> Endpoint | None:
    """The OpenAI-compatible endpoint of a request, or None when the request is not one.

    A request is one when its provider speaks OpenAI's API ('openai/...', 'hosted_vllm/...', or a bare OpenAI
    model name) and a base URL is known: `api_base`, else the provider's environment variable, else (openai
    only) the OpenAI API. `forced` (transport="fast") treats any model as OpenAI-compatible.
    """
    base = params.get("api_base") or params.get("base_url")
    return _endpoint(model, str(base) if base else None, forced)


@lru_cache(maxsize=1024)
def _endpoint_with_base(model: str, base: str, forced: bool) -> Endpoint | None:
    return _endpoint_of(model, base, forced)


def _endpoint(model: str, base: str | None, forced: bool) -> Endpoint | None:
    if base is not None:
        return _endpoint_with_base(model, base, forced)
    return _endpoint_of(model, None, forced)  # the base comes from the environment, which may change


def _endpoint_of(model: str, base: str | None, forced: bool) -> Endpoint | None:
    provider = provider_of(model)
    spec = _PROVIDERS.get(provider or "")
    if spec is None and not forced:
        return None
    key_env, base_envs, default_base = spec or _PROVIDERS["openai"]
    if not base:
        if provider == "openai" and _litellm_configured():
            return None  # litellm.api_base / api_key set in this process: those calls are litellm's to route
        base = next((os.environ[name] for name in base_envs if os.environ.get(name)), None) or default_base
    if not base:
        return None
    import yarl

    url = yarl.URL(base.rstrip("/") + "/chat/completions")
    name = model.partition("/")[2] if spec is not None and "/" in model else model
    return Endpoint(url, name, key_env, _proxy_for(url))


def _litellm_configured() -> bool:
    import sys

    litellm = sys.modules.get("litellm")
    return litellm is not None and any(getattr(litellm, k, None) for k in ("api_base", "api_key", "openai_key"))


def _proxy_for(url: Any) -> str | None:
    """The proxy the environment names for `url`, None when there is none or NO_PROXY exempts its host."""
    import urllib.request

    proxy = urllib.request.getproxies().get(url.scheme) or urllib.request.getproxies().get("all")
    if not proxy or urllib.request.proxy_bypass(f"{url.host}:{url.port}"):
        return None
    return proxy


def _retry_after(headers: Mapping[str, str]) -> float | None:
    """Seconds the server asked us to wait: `retry-after-ms`, else `retry-after` (seconds)."""
    for name, scale in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is not None:
            try:
                return float(value) / scale
            except ValueError:
                continue
    return None


def _error_message(raw: bytes) -> str:
    """The `error.message` of an OpenAI error body, else the start of the body."""
    try:
        data = _loads(raw)
        error = data.get("error", data) if isinstance(data, dict) else data
        message = error.get("message") or error.get("detail") if isinstance(error, dict) else error
        if message:
            return str(message)[:_MAX_MESSAGE]
    except Exception:
        pass
    return raw[:_MAX_MESSAGE].decode(errors="replace") or "(empty body)"


def http_failure(status: int, raw: bytes, headers: Mapping[str, str]) -> CallFailure:
    """The CallFailure of an HTTP error answer, named as litellm names it."""
    name = _ERROR_NAMES.get(status, "InternalServerError" if status >= 500 else "APIError")
    return CallFailure(f"{name}: {_error_message(raw)} (HTTP {status})", status, _retry_after(headers))


def parse_completion(model: str, raw: bytes, latency: float) -> Completion:
    """A Completion from a chat completion body; a body without a readable choice is a retryable failure."""
    try:
        data = _loads(raw)
        choice = data["choices"][0]
        content = choice["message"].get("content") or ""
    except Exception as exc:
        detail = f"{type(exc).__name__}: {exc}" if raw.strip() else "empty body"
        raise CallFailure(f"InternalServerError: malformed response body ({detail})"[:2000], 500) from None
    usage = data.get("usage") or {}
    prompt_tokens = usage.get("prompt_tokens")
    completion_tokens = usage.get("completion_tokens")
    return Completion(
        content=content,
        logprobs=_logprobs_of(choice.get("logprobs")),
        prompt_tokens=prompt_tokens,
        completion_tokens=completion_tokens,
        cost_usd=cost_of(model, prompt_tokens, completion_tokens),
        latency_s=latency,
    )


def _logprobs_of(logprobs: Any) -> list[dict[str, Any]] | None:
    """Per-token logprobs in the shape the litellm path produces (token, logprob, top_logprobs)."""
    content = logprobs.get("content") if isinstance(logprobs, dict) else None
    if not content:
        return None
    return [
        {
            "token": token.get("token"),
            "logprob": token.get("logprob"),
            "top_logprobs": [
                {"token": t.get("token"), "logprob": t.get("logprob")} for t in token.get("top_logprobs") or ()
            ],
        }
        for token in content
    ]


class OpenAIHTTPTransport:
    """Sends a ChatRequest straight to an OpenAI-compatible `POST {api_base}/chat/completions` (one attempt).

    One aiohttp session per event loop, opened lazily in the running loop and closed when that loop shuts
    down (`asyncio.run` and friends) or by `aclose()`. Its pool has no connection cap of its own: the engine's
    per-model concurrency limit bounds the requests in flight, so the pool keeps exactly as many keep-alive
    connections as the concurrency uses. `forced=True` sends any model here (`transport="fast"`).
    """

    name = "openai-http"

    def __init__(self, *, forced: bool = False, keepalive_s: float = 30.0) -> None:
        self.forced = forced
        self.keepalive_s = keepalive_s
        self._lock = threading.Lock()
        # loop → (session, the async generator that closes it when the loop shuts down)
        self._sessions: dict[asyncio.AbstractEventLoop, tuple[Any, AsyncIterator[None]]] = {}
        self._current: tuple[asyncio.AbstractEventLoop | None, Any] = (None, None)  # one read is thread-safe
        self._timeouts: dict[float, Any] = {}
        weakref.finalize(self, _close_all, self._sessions)

    def __repr__(self) -> str:
        return f"OpenAIHTTPTransport(forced={self.forced})"

    def __getstate__(self) -> dict[str, Any]:
        # Sessions belong to this process's loops; a copy (a Ray worker, a subprocess) opens its own.
        return {"forced": self.forced, "keepalive_s": self.keepalive_s}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(**state)  # type: ignore[misc]

    # -- one attempt ------------------------------------------------------------------------------------------

    async def complete(self, request: ChatRequest, timeout: float) -> Completion:
        params = request.params
        endpoint = openai_endpoint(request.model, params, forced=self.forced)
        if endpoint is None:
            raise CallFailure(f"BadRequestError: no OpenAI-compatible endpoint for model {request.model!r}", 400)
        body: dict[str, Any] = {"messages": request.messages, "model": endpoint.model}
        for key in sorted(params):
            if key in BODY_KWARGS and key != "extra_body":
                body[key] = params[key]
        extra = params.get("extra_body")
        if extra:
            body.update(extra)
        headers: dict[str, str] | None = None
        api_key = params.get("api_key") or (os.environ.get(endpoint.key_env) if endpoint.key_env else None)
        if api_key:
            headers = {"Authorization": f"Bearer {api_key}"}
        extra_headers = params.get("extra_headers") or params.get("headers")
        if extra_headers:
            headers = {**(headers or {}), **extra_headers}
        current = self._current  # one read: another thread's loop may swap it
        if current[0] is asyncio.get_running_loop() and not current[1].closed:
            session = current[1]
        else:
            session = await self._session()
        started = time.perf_counter()
        try:
            response = await session.post(
                endpoint.url, data=_dumps(body), headers=headers, timeout=self._timeout(timeout), proxy=endpoint.proxy
            )
            try:
                raw = await response.read()
            finally:
                response.release()
            if response.status >= 400:
                raise http_failure(response.status, raw, response.headers)
        except (asyncio.TimeoutError, TimeoutError):
            raise CallFailure(f"Timeout: no answer within {timeout:g} s", 408) from None
        except CallFailure:
            raise
        except Exception as exc:  # aiohttp.ClientError and OSError: the connection failed or dropped
            raise CallFailure(f"APIConnectionError: {type(exc).__name__}: {exc}"[:2000], None) from None
        return parse_completion(request.model, raw, time.perf_counter() - started)

    def _timeout(self, seconds: float) -> Any:
        timeout = self._timeouts.get(seconds)
        if timeout is None:
            import aiohttp

            timeout = self._timeouts[seconds] = aiohttp.ClientTimeout(total=seconds)
        return timeout

    # -- sessions ---------------------------------------------------------------------------------------------

    async def _session(self) -> Any:
        loop = asyncio.get_running_loop()
        current = self._current
        if current[0] is loop and not current[1].closed:
            return current[1]
        with self._lock:
            for other in [other for other in self._sessions if other.is_closed()]:
                _close_now(self._sessions.pop(other)[0])
            entry = self._sessions.get(loop)
            fresh = entry is None or entry[0].closed
            if fresh:
                session = self._open()
                entry = self._sessions[loop] = (session, _close_at_shutdown(session, self._sessions, loop))
        if fresh:
            # Its first step registers the generator with this loop's asyncgen hooks, so the loop's
            # `shutdown_asyncgens()` (which `asyncio.run` calls) closes the session while the loop still runs.
            await entry[1].__anext__()
        self._current = (loop, entry[0])
        return entry[0]

    def _open(self) -> Any:
        import aiohttp

        connector = aiohttp.TCPConnector(limit=0, keepalive_timeout=self.keepalive_s, ttl_dns_cache=300)
        return aiohttp.ClientSession(
            connector=connector,
            cookie_jar=aiohttp.DummyCookieJar(),
            headers={
                "Accept": "application/json",
                "Content-Type": "application/json",
                "User-Agent": f"judgewidgets/{__version__}",
            },
        )

    async def aclose(self) -> None:
        """Close this event loop's session (a later call in this loop opens a new one)."""
        loop = asyncio.get_running_loop()
        with self._lock:
            entry = self._sessions.pop(loop, None)
        if self._current[0] is loop:
            self._current = (None, None)
        if entry is not None:
            await entry[0].close()
            await entry[1].aclose()  # type: ignore[attr-defined]


async def _close_at_shutdown(
    session: Any, sessions: dict[asyncio.AbstractEventLoop, Any], loop: asyncio.AbstractEventLoop
) -> AsyncIterator[None]:
    try:
        yield
    finally:
        sessions.pop(loop, None)
        if not session.closed:
            await session.close()


def _close_now(session: Any) -> None:
    """Close a session whose loop is gone, without a loop (its connector drops its sockets at once)."""
    with contextlib.suppress(Exception):
        if not session.closed and session.connector is not None:
            session.connector.close()


def _close_all(sessions: dict[asyncio.AbstractEventLoop, Any]) -> None:
    """When the transport goes away: close its sessions, in their own loops when those still run."""
    for loop, (session, _) in list(sessions.items()):
        if loop.is_closed() or not loop.is_running():
            _close_now(session)
        else:
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(_schedule_close, session)
    sessions.clear()


_closing: set[asyncio.Task[None]] = set()  # close tasks in flight (the loop keeps only weak references)


def _schedule_close(session: Any) -> None:
    if not session.closed:
        task = asyncio.ensure_future(session.close())
        _closing.add(task)
        task.add_done_callback(_closing.discard)
