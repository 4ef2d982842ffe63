"""The fast path: OpenAI-compatible chat completions over a keep-alive connection pool per event loop.

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
import os
import ssl
import time
from collections.abc import Hashable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Literal

from .._errors import ConfigurationError
from .._version import __version__
from ._aiohttp_client import AiohttpClient
from ._http_pool import HTTPPool
from ._limit_headers import LimitReading, read_limit_headers
from ._litellm import CallFailure, is_local_model
from ._per_loop import PerLoop
from ._prices import call_cost, list_cost
from ._request import ChatRequest, Completion, token_logprobs
from ._request import compact_json as _dumps
from ._request import loads as _loads

__all__ = [
    "BODY_KWARGS",
    "ROUTING_KWARGS",
    "HTTPClientChoice",
    "OpenAIHTTPTransport",
    "auth_headers",
    "chat_body",
    "custom_base_url",
    "openai_endpoint",
]

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
        "prompt_cache_key",
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
_HEADERS = {
    "Accept": "application/json",
    "Content-Type": "application/json",
    "User-Agent": f"judgewidgets/{__version__}",
}


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

    @property
    def direct(self) -> bool:
        """Whether judgewidgets' own HTTP/1.1 client can carry it: http(s), no proxy, no credentials in the URL."""
        return self.proxy is None and self.url.scheme in ("http", "https") and self.url.user is None


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


def custom_base_url(model: str, params: Mapping[str, Any]) -> str | None:
    """The base URL of the server a request goes to when it is not the provider's own API: `api_base` /
    `base_url`, else the provider's environment variable (`OPENAI_BASE_URL`, `OPENAI_API_BASE`,
    `HOSTED_VLLM_API_BASE`), else `litellm.api_base`; None when the request goes to the provider's default."""
    import sys

    base = params.get("api_base") or params.get("base_url")
    if base:
        return str(base)
    spec = _PROVIDERS.get(provider_of(model) or "")
    for name in spec[1] if spec is not None else ():
        if os.environ.get(name):
            return os.environ[name]
    litellm = sys.modules.get("litellm")
    configured = getattr(litellm, "api_base", None) if litellm is not None else None
    return str(configured) if configured else None


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


def _error_of(raw: bytes) -> tuple[str, str | None]:
    """The message of an error body and the provider's code or type for it (OpenAI's `{"error": {"message", "type",
    "code"}}`, Anthropic's `{"type": "error", "error": {"type", "message"}}`), else the start of the body."""
    try:
        data = _loads(raw)
        error = data.get("error", data) if isinstance(data, dict) else data
        if isinstance(error, dict):
            message = error.get("message") or error.get("detail")
            code = error.get("code") or error.get("type")
            if message:
                return str(message)[:_MAX_MESSAGE], str(code) if code else None
        elif error:
            return str(error)[:_MAX_MESSAGE], None
    except Exception:
        pass
    return raw[:_MAX_MESSAGE].decode(errors="replace") or "(empty body)", None


def http_failure(status: int, raw: bytes, headers: Mapping[str, str]) -> CallFailure:
    """The CallFailure of an HTTP error answer, named as litellm names it."""
    name = _ERROR_NAMES.get(status, "InternalServerError" if status >= 500 else "APIError")
    limits = read_limit_headers(headers)
    retry_after = limits.retry_after_s if limits is not None else None
    message, code = _error_of(raw)
    return CallFailure(f"{name}: {message} (HTTP {status})", status, retry_after, limits, code)


def parse_completion(
    model: str, raw: bytes, latency: float, limits: LimitReading | None = None, *, batch: bool = False
) -> Completion:
    """A Completion from a chat completion body; a body without a readable choice is a retryable failure.

    Its cost is priced from the usage the body reports (`prompt_tokens_details.cached_tokens` at the cache-read
    price, `completion_tokens_details.reasoning_tokens` inside the completion tokens), at the batch price when
    `batch`; a reasoning server's thinking text (`reasoning_content`, vLLM's and DeepSeek's) is kept apart."""
    try:
        data = _loads(raw)
        choice = data["choices"][0]
        message = choice["message"]
        content = message.get("content") or ""
    except Exception as exc:
        detail = f"{type(exc).__name__}: {exc}" if raw.strip() else "empty body"
        raise CallFailure(f"InternalServerError: malformed response body ({detail})"[:2000], 500) from None
    usage = data.get("usage") or {}
    prompt_tokens = usage.get("prompt_tokens")
    completion_tokens = usage.get("completion_tokens")
    prompt_details = usage.get("prompt_tokens_details") or {}
    completion_details = usage.get("completion_tokens_details") or {}
    read = prompt_details.get("cached_tokens")
    write = prompt_details.get("cache_write_tokens")
    thinking = message.get("reasoning_content") or message.get("reasoning")
    return Completion(
        content=content,
        logprobs=token_logprobs(choice.get("logprobs")),
        prompt_tokens=prompt_tokens,
        completion_tokens=completion_tokens,
        cost_usd=call_cost(
            model, prompt_tokens, completion_tokens, cache_read_tokens=read, cache_write_tokens=write, batch=batch
        ),
        latency_s=latency,
        limits=limits,
        prompt_cache_read_tokens=read,
        prompt_cache_write_tokens=write,
        reasoning_tokens=completion_details.get("reasoning_tokens"),
        list_cost_usd=list_cost(model, prompt_tokens, completion_tokens),
        finish_reason=choice.get("finish_reason"),
        reasoning=thinking if isinstance(thinking, str) and thinking else None,
    )


def chat_body(request: ChatRequest, endpoint: Endpoint) -> dict[str, Any]:
    """The chat completions body of `request` as the openai SDK sends it: messages and model, then the chat API's
    parameters in alphabetical order, `extra_body` merged in. A live call and a batch file's line send the same."""
    params = request.params
    body: dict[str, Any] = {"messages": request.messages, "model": endpoint.model}
    for key in sorted(params):
        if key in BODY_KWARGS and key != "extra_body":
            body[key] = params[key]
    extra = params.get("extra_body")
    if extra:
        body.update(extra)
    return body


def auth_headers(params: Mapping[str, Any], endpoint: Endpoint) -> dict[str, str] | None:
    """The headers that authorise a request to `endpoint`: the bearer key (`api_key`, else the provider's
    environment variable) and `extra_headers` / `headers`; None when there are none."""
    headers: dict[str, str] | None = None
    api_key = params.get("api_key") or (os.environ.get(endpoint.key_env) if endpoint.key_env else None)
    if api_key:
        headers = {"Authorization": f"Bearer {api_key}"}
    extra_headers = params.get("extra_headers") or params.get("headers")
    if extra_headers:
        headers = {**(headers or {}), **extra_headers}
    return headers


HTTPClientChoice = Literal["http11", "aiohttp"]


class OpenAIHTTPTransport:
    """Sends a ChatRequest straight to an OpenAI-compatible `POST {api_base}/chat/completions` (one attempt).

    `client="http11"` (the default) uses judgewidgets' own keep-alive HTTP/1.1 pool (`HTTPPool`), which costs a
    fraction of aiohttp's CPU per call; a request that goes through a proxy from the environment takes aiohttp
    instead. `client="aiohttp"` sends everything through one pooled aiohttp session. Either way there is one
    client per event loop, opened lazily in the running loop and closed when that loop shuts down (`asyncio.run`
    and friends) or by `aclose()`; neither caps its connections, since the engine's per-model concurrency limit
    bounds the requests in flight. `forced=True` sends any model here (`transport="fast"`).
    """

    name = "openai-http"
    paced = True

    def __init__(self, *, forced: bool = False, keepalive_s: float = 30.0, client: HTTPClientChoice = "http11") -> None:
        if client not in ("http11", "aiohttp"):
            raise ConfigurationError(f"client must be 'http11' or 'aiohttp', got {client!r}")
        self.forced = forced
        self.keepalive_s = keepalive_s
        self.client = client
        self._pools: PerLoop[HTTPPool] = PerLoop(self._open_pool)
        self._sessions: PerLoop[AiohttpClient] = PerLoop(self._open_session)

    @property
    def share_key(self) -> Hashable:
        """Transports with equal keys behave alike, so a run may send one's calls through the other's pool."""
        return (type(self), self.forced, self.keepalive_s, self.client)

    def __repr__(self) -> str:
        client = "" if self.client == "http11" else f", client={self.client!r}"
        return f"OpenAIHTTPTransport(forced={self.forced}{client})"

    def __getstate__(self) -> dict[str, Any]:
        # Connections belong to this process's loops; a copy (a Ray worker, a subprocess) opens its own.
        return {"forced": self.forced, "keepalive_s": self.keepalive_s, "client": self.client}

    def __setstate__(self, state: dict[str, Any]) -> None:
        OpenAIHTTPTransport.__init__(self, **state)

    # -- one attempt ------------------------------------------------------------------------------------------

    async def complete(self, request: ChatRequest, timeout: float) -> Completion:
        params = request.params
        endpoint = openai_endpoint(request.model, params, forced=self.forced)
        if endpoint is None:
            raise CallFailure(f"BadRequestError: no OpenAI-compatible endpoint for model {request.model!r}", 400)
        headers = auth_headers(params, endpoint)
        data = _dumps(chat_body(request, endpoint))
        started = time.perf_counter()
        try:
            if self.client == "http11" and endpoint.direct:
                pool = self._pools.current() or await self._pools.get()
                response = await pool.post(endpoint.url, data, headers, timeout=timeout)
            else:
                session = self._sessions.current() or await self._sessions.get()
                response = await session.post(endpoint.url, data, headers, timeout=timeout, proxy=endpoint.proxy)
        except (asyncio.TimeoutError, TimeoutError):
            raise CallFailure(f"Timeout: timed out after {timeout:g} s (no answer)", 408) from None
        except ssl.SSLError as exc:  # a certificate that does not verify, a failed handshake: as httpx reports it
            raise CallFailure(f"APIConnectionError: {type(exc).__name__}: {exc}"[:2000], None) from None
        except ValueError as exc:  # a header with a line break or outside latin-1
            raise CallFailure(f"BadRequestError: {exc}"[:2000], 400) from None
        except Exception as exc:  # ConnectionError, OSError, aiohttp.ClientError: the connection failed or dropped
            raise CallFailure(f"APIConnectionError: {type(exc).__name__}: {exc}"[:2000], None) from None
        if response.status >= 400:
            raise http_failure(response.status, response.body, response.headers)
        limits = read_limit_headers(response.headers) if response.mentions(b"ratelimit") else None
        return parse_completion(request.model, response.body, time.perf_counter() - started, limits)

    # -- clients ----------------------------------------------------------------------------------------------

    def _open_pool(self) -> HTTPPool:
        return HTTPPool({**_HEADERS, "Accept-Encoding": "gzip, deflate"}, keepalive_s=self.keepalive_s)

    def _open_session(self) -> AiohttpClient:
        return AiohttpClient(_HEADERS, keepalive_s=self.keepalive_s)

    def clients(self) -> list[HTTPPool | AiohttpClient]:
        """The open clients of every event loop (for inspection and tests)."""
        return [*self._pools.clients(), *self._sessions.clients()]

    async def aclose(self) -> None:
        """Close this event loop's clients (a later call in this loop opens new ones)."""
        await self._pools.aclose()
        await self._sessions.aclose()
