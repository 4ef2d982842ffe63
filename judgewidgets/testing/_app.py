"""The aiohttp application behind `OpenAITestServer`: routes, the chat handler, faults and latency.

The handler is kept lean (no per-request logging, one JSON parse, one JSON dump) so one process sustains
thousands of requests per second on loopback; waiting is `asyncio.sleep`, so thousands of requests can be
slow or hang at once without blocking the server.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import random
import time
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from ._anthropic import messages_handler
from ._chat_billing import ChatMeter, chat_refusal
from ._faults import FaultKind, FaultPlan, parse_directives
from ._limits import LimitState, ProviderLimit
from ._openai import MALFORMED_BODY, LogprobsCache, error_body, models_body
from ._responders import Responder, last_user_text
from ._stats import StatsRecorder

__all__ = ["STATS_PATH", "ChatService", "ServerConfig", "start_site"]

STATS_PATH = "/_judgewidgets/stats"
RESET_PATH = "/_judgewidgets/reset"
_JSON = "application/json"

# Status code, error type and error code sent for each fault that is an HTTP error.
_ERRORS: dict[str, tuple[int, str, str]] = {
    "rate_limit": (429, "rate_limit_error", "rate_limit_exceeded"),
    "server_error": (500, "server_error", "internal_error"),
    "overloaded": (503, "server_error", "overloaded"),
    "timeout": (504, "timeout", "timeout"),
    "responder_error": (500, "server_error", "responder_error"),
    "context_exceeded": (400, "exceed_context_size_error", "context_length_exceeded"),
    "content_policy": (400, "invalid_request_error", "content_policy_violation"),
    "invalid_request": (422, "invalid_request_error", "invalid_value"),
    "overloaded_529": (529, "overloaded_error", "overloaded_error"),
    "bad_gateway": (502, "", ""),
    "quota_spent": (429, "insufficient_quota", "insufficient_quota"),
    "unauthorized": (401, "invalid_request_error", "invalid_api_key"),
    "model_not_found": (404, "invalid_request_error", "model_not_found"),
    "request_too_large": (429, "tokens", "rate_limit_exceeded"),
}
# What real servers say for the faults the request itself causes (llama.cpp's server, OpenAI).
_MESSAGES = {
    "context_exceeded": "request (1383 tokens) exceeds the available context size (512 tokens), try increasing it",
    "content_policy": "Your request was rejected as a result of our safety system (content_policy_violation).",
    "invalid_request": "Invalid value for 'messages': the request could not be processed.",
    # The providers' own words (OpenAI's error codes page, Anthropic's errors page).
    "overloaded_529": "Overloaded",
    "quota_spent": "You exceeded your current quota, please check your plan and billing details. For more "
    "information on this error, read the docs: https://platform.openai.com/docs/guides/error-codes/api-errors.",
    "unauthorized": "Incorrect API key provided. You can find your API key at https://platform.openai.com/account/"
    "api-keys.",
    "model_not_found": "The model `{model}` does not exist or you do not have access to it.",
    "request_too_large": "Request too large for {model} in organization org-test on tokens per min (TPM): Limit "
    "30000, Requested 48213. The input or output tokens must be reduced in order to run successfully. Visit "
    "https://platform.openai.com/account/rate-limits to learn more.",
}
_BAD_GATEWAY = (
    b"<html><head><title>502 Bad Gateway</title></head><body><center><h1>502 Bad Gateway</h1></center></body></html>"
)


@dataclass(frozen=True)
class ServerConfig:
    """Everything that decides what the server answers; picklable, to start it in another process."""

    responder: Responder
    latency: float = 0.0
    jitter: float = 0.0
    faults: FaultPlan = field(default_factory=FaultPlan)
    record: int = 100
    models: tuple[str, ...] = ("test",)
    api_key: str | None = None
    limit: ProviderLimit | None = None


def presented_key(request: web.Request) -> str:
    """The key a request carries: the bearer token of `Authorization`, else an `api-key` / `x-api-key` header."""
    scheme, _, token = request.headers.get("Authorization", "").partition(" ")
    if scheme.lower() == "bearer" and token:
        return token.strip()
    return request.headers.get("api-key") or request.headers.get("x-api-key") or ""


class ChatService:
    """The state of one running server (counters, requests seen) and its request handlers."""

    def __init__(self, config: ServerConfig) -> None:
        self.config = config
        self.stats = StatsRecorder(config.record)
        self._seen: dict[bytes, int] = {}
        self._rng = random.Random(config.faults.seed)
        self._next_id = 0
        self._logprobs = LogprobsCache()
        self._needs_seen = config.faults.total_rate > 0
        self._first_seen: float | None = None  # when the first request arrived (monotonic)
        self._received = 0
        self._limit = LimitState(config.limit) if config.limit is not None else None

    def app(self) -> web.Application:
        """An aiohttp application serving the OpenAI routes and the stats routes."""
        app = web.Application(client_max_size=64 * 1024**2)
        app.router.add_post("/v1/chat/completions", self.chat)
        app.router.add_post("/chat/completions", self.chat)
        app.router.add_post("/v1/messages", messages_handler(self))  # Anthropic's Messages API
        app.router.add_get("/v1/models", self.models)
        app.router.add_get("/models", self.models)
        app.router.add_get(STATS_PATH, self.get_stats)
        app.router.add_post(RESET_PATH, self.reset_stats)
        return app

    async def models(self, request: web.Request) -> web.Response:
        return web.Response(body=models_body(self.config.models), content_type=_JSON)

    async def get_stats(self, request: web.Request) -> web.Response:
        return web.Response(text=self.stats.snapshot().model_dump_json(), content_type=_JSON)

    async def reset_stats(self, request: web.Request) -> web.Response:
        self.stats.reset()
        return web.Response(status=204)

    def _occurrence(self, raw: bytes) -> int:
        """How many times this exact body was seen before, counting this sighting."""
        key = hashlib.blake2b(raw, digest_size=16).digest()
        n = self._seen.get(key, 0)
        self._seen[key] = n + 1
        return n

    def _bad_request(self, request: web.Request, body: Any, message: str) -> web.Response:
        recorded = body if isinstance(body, dict) else None
        self.stats.record(request.path, recorded, "Authorization" in request.headers, 400, None)
        return web.Response(status=400, body=error_body(message, "invalid_request_error"), content_type=_JSON)

    async def chat(self, request: web.Request) -> web.Response:
        """Answer one chat completion request, or fail it as the fault plan or a directive says."""
        raw = await request.read()
        try:
            body = json.loads(raw)
        except ValueError:
            return self._bad_request(request, None, "the request body is not valid JSON")
        if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
            return self._bad_request(request, body, "the request needs a `messages` list")
        if body.get("stream"):
            return self._bad_request(request, body, "OpenAITestServer does not stream; send stream=false")
        if self.config.api_key is not None:
            key = presented_key(request)
            if key != self.config.api_key:
                # As careless servers do: the key that was sent, in full, in the error message.
                self.stats.record(request.path, body, bool(key), 401, None)
                message = f"Incorrect API key provided: {key or '(none)'}."
                body_401 = error_body(message, "invalid_request_error", "invalid_api_key")
                return web.Response(status=401, body=body_401, content_type=_JSON)

        refusal = chat_refusal(body)  # a parameter the model refuses (reasoning models), in OpenAI's words
        if refusal is not None:
            self.stats.record(request.path, body, "Authorization" in request.headers, 400, None)
            return web.Response(status=400, body=refusal, content_type=_JSON)
        meter = ChatMeter.arrive(self.stats.billing, body)  # the prompt cache as it is when the request arrives

        limit_headers: dict[str, str] | None = None
        if self._limit is not None:
            admitted, limit_headers = self._limit.admit(body)
            if not admitted:
                self.stats.record(request.path, body, "Authorization" in request.headers, 429, "provider_limit")
                error = error_body("Rate limit reached for requests.", "requests", "rate_limit_exceeded")
                return web.Response(status=429, body=error, headers=limit_headers, content_type=_JSON)

        reply: str | None = None
        sticky: FaultKind | None = None
        once: FaultKind | None = None
        text = last_user_text(body)
        if "[[" in text:
            try:
                reply, sticky, once = parse_directives(text)
            except ValueError as exc:
                return self._bad_request(request, body, str(exc))
        fault = self.fault_for(raw, sticky, once)

        content = ""
        if fault is None:
            if reply is not None:
                content = reply
            else:
                try:
                    content = self.config.responder(body)
                except Exception as exc:
                    fault, content = "responder_error", f"the test server's responder raised {exc!r}"

        status = _ERRORS[fault][0] if fault in _ERRORS else 200
        self.stats.record(request.path, body, "Authorization" in request.headers, status, fault)
        self.stats.enter()
        try:
            await self._wait(fault)
            response = self._response(body, fault, content, meter)
            if limit_headers:
                response.headers.update(limit_headers)
            return response
        finally:
            self.stats.leave()

    def fault_for(self, raw: bytes, sticky: FaultKind | None = None, once: FaultKind | None = None) -> str | None:
        """The fault this request gets: a directive's, else a first request held to hang (`hang_first`), else the
        plan's draw (within `faults_for_s` of the first request), else None. Shared by every route."""
        plan = self.config.faults
        now = time.monotonic()
        if self._first_seen is None:
            self._first_seen = now
        self._received += 1
        if sticky is not None:
            return sticky
        if self._received <= plan.hang_first:
            return "timeout"
        if once is None and not self._needs_seen:
            return None
        n = self._occurrence(raw)
        if once is not None and n == 0:
            return once
        if self._needs_seen and (plan.faults_for_s is None or now - self._first_seen < plan.faults_for_s):
            return plan.draw(raw, n)
        return None

    async def _wait(self, fault: str | None) -> None:
        """Sleep the configured latency, or hang for a timeout fault."""
        config = self.config
        if fault == "timeout":
            await asyncio.sleep(config.faults.hang_seconds)
            return
        delay = config.latency + (config.jitter * self._rng.random() if config.jitter else 0.0)
        if delay > 0:
            await asyncio.sleep(delay)

    def _response(
        self, body: dict[str, Any], fault: str | None, content: str, meter: ChatMeter | None = None
    ) -> web.Response:
        if fault is None or fault == "empty":
            self._next_id += 1
            meter = meter or ChatMeter.arrive(self.stats.billing, body)  # billed and cached when answered
            payload = meter.answer(content, f"chatcmpl-test-{self._next_id}", self._logprobs)
            return web.Response(body=payload, content_type=_JSON)
        if fault == "malformed":
            return web.Response(body=MALFORMED_BODY, content_type=_JSON)
        status, type_, code = _ERRORS[fault]
        if fault == "bad_gateway":
            return web.Response(status=status, body=_BAD_GATEWAY, content_type="text/html")
        headers = None
        if fault == "rate_limit":
            plan = self.config.faults
            if plan.retry_after_header is not None:
                headers = {"retry-after": plan.retry_after_header} if plan.retry_after_header else None
            else:
                after = plan.retry_after
                headers = {"retry-after": f"{after:g}", "retry-after-ms": str(round(after * 1000))}
        message = content or _MESSAGES.get(fault, "").format(model=body.get("model")) or f"injected {fault} fault"
        if fault == "overloaded_529":  # Anthropic's body, as a gateway in front of it passes it on
            error = {"type": "error", "error": {"type": "overloaded_error", "message": message}}
            return web.Response(status=status, body=json.dumps(error).encode(), content_type=_JSON)
        return web.Response(status=status, body=error_body(message, type_, code), headers=headers, content_type=_JSON)


async def start_site(service: ChatService, host: str, port: int) -> tuple[web.AppRunner, int]:
    """Start serving `service` on host:port (0: the OS picks); the runner to clean up and the bound port."""
    # handler_cancellation: a client that gives up (a timeout fault) frees its handler at once.
    runner = web.AppRunner(
        service.app(), access_log=None, handle_signals=False, shutdown_timeout=0.2, handler_cancellation=True
    )
    await runner.setup()
    site = web.TCPSite(runner, host, port, backlog=2048)
    await site.start()
    return runner, runner.addresses[0][1]
