"""Anthropic's Messages API as the test server speaks it: `POST /v1/messages`, billed as Anthropic bills.

The request body is Anthropic's (`system` as a string or text blocks, `messages` whose content is a string or
blocks, `cache_control` breakpoints, `thinking`, `tools` and `tool_choice`), and so is the answer (content blocks,
`stop_reason`, `usage` with `input_tokens`, `output_tokens`, `cache_creation_input_tokens`,
`cache_read_input_tokens` and `cache_creation` by lifetime) and every error (`{"type": "error", "error": {"type",
"message"}}`). With `thinking` enabled the model thinks for its whole `budget_tokens` (a `thinking` block, billed
as output) before it answers; an answer longer than what `max_tokens` leaves is cut there (`stop_reason:
"max_tokens"`). `anthropic_message_body` answers one request body without a server, for a batch to reuse.
"""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from aiohttp import web

from ._billing import Billing, Charge, prefix_digests, price_of, schema_salt
from ._faults import parse_directives
from ._responders import content_text, last_user_text

if TYPE_CHECKING:
    from ._app import ChatService

__all__ = [
    "ANTHROPIC_ERROR_TYPES",
    "MessagesMeter",
    "anthropic_error_body",
    "anthropic_message_body",
    "messages_handler",
    "messages_request_problem",
]

# Anthropic's error type for each HTTP status.
ANTHROPIC_ERROR_TYPES: Mapping[int, str] = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    504: "api_error",
    529: "overloaded_error",
}
# What a `[[fault:KIND]]` directive answers on this route: status and message.
_FAULTS: Mapping[str, tuple[int, str]] = {
    "rate_limit": (429, "Number of request tokens has exceeded your per-minute rate limit"),
    "server_error": (500, "Internal server error"),
    "overloaded": (529, "Overloaded"),
    "overloaded_529": (529, "Overloaded"),
    "responder_error": (500, "Internal server error"),
    "context_exceeded": (400, "prompt is too long: 210000 tokens > 200000 maximum"),
    "content_policy": (400, "Output blocked by content filtering policy"),
    "invalid_request": (400, "messages: text content blocks must be non-empty"),
    "quota_spent": (
        400,
        "Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or "
        "purchase credits.",
    ),
    "unauthorized": (401, "invalid x-api-key"),
    "model_not_found": (404, "model: {model}"),
    "request_too_large": (413, "Request exceeds the maximum allowed number of bytes."),
}
_DOCS = "https://docs.claude.com/en/docs/build-with-claude/extended-thinking"
_SEE = f" Please consult our documentation at {_DOCS}#feature-compatibility"
_MAX_BREAKPOINTS = 4
_TTL_SECONDS = {"5m": 300.0, "1h": 3600.0}
_THINKING_WORDS = ("Weigh", "the", "response", "against", "the", "criteria", "step", "by", "step.")


def anthropic_error_body(status: int, message: str) -> bytes:
    """The JSON bytes of Anthropic's error answer for `status`."""
    error = {"type": ANTHROPIC_ERROR_TYPES.get(status, "api_error"), "message": message}
    return json.dumps({"type": "error", "error": error}).encode()


def _blocks(content: Any) -> list[dict[str, Any]]:
    """A system prompt or message content as a list of blocks (a string is one text block)."""
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def _block_text(block: Mapping[str, Any]) -> str:
    kind = block.get("type")
    if kind == "text":
        return str(block.get("text", ""))
    if kind == "tool_use":
        return json.dumps(block.get("input", {}))
    if kind == "tool_result":
        return content_text(block.get("content"))
    if kind == "thinking":
        return ""  # earlier turns' thinking is not part of the prompt
    return json.dumps(block)


def _thinking(body: Mapping[str, Any]) -> dict[str, Any] | None:
    thinking = body.get("thinking")
    return thinking if isinstance(thinking, dict) and thinking.get("type") == "enabled" else None


def messages_request_problem(body: Any) -> str | None:
    """Why Anthropic would refuse this request body with a 400 (its own message), else None."""
    if not isinstance(body, dict):
        return "request body: Input should be a valid dictionary"
    for name in ("model", "max_tokens", "messages"):
        if name not in body:
            return f"{name}: Field required"
    if not isinstance(body["max_tokens"], int) or body["max_tokens"] < 1:
        return "max_tokens: Input should be greater than or equal to 1"
    messages = body["messages"]
    if not isinstance(messages, list) or not messages:
        return "messages: at least one message is required"
    for i, message in enumerate(messages):
        if not isinstance(message, dict) or message.get("role") not in ("user", "assistant"):
            return f"messages.{i}.role: Input should be 'user' or 'assistant'"
    temperature = body.get("temperature")
    if temperature is not None and not 0 <= temperature <= 1:
        return "temperature: Input should be less than or equal to 1"
    marked = sum(1 for _, mark in _all_blocks(body) if mark is not None)
    if marked > _MAX_BREAKPOINTS:
        return f"A maximum of {_MAX_BREAKPOINTS} blocks with cache_control may be provided. Found {marked}."
    thinking = _thinking(body)
    if thinking is not None:
        budget = thinking.get("budget_tokens")
        if not isinstance(budget, int) or budget < 1024:
            return "thinking.enabled.budget_tokens: Input should be greater than or equal to 1024"
        if body["max_tokens"] <= budget:
            return (
                "`max_tokens` must be greater than `thinking.budget_tokens`. Please consult our documentation at "
                f"{_DOCS}#max-tokens-and-context-window-size"
            )
        if temperature is not None and temperature != 1:
            return "`temperature` may only be set to 1 when thinking is enabled." + _SEE
        top_p = body.get("top_p")
        if top_p is not None and top_p < 0.95:
            return "`top_p` must be greater than or equal to 0.95 or unset when thinking is enabled." + _SEE
        if body.get("top_k") is not None:
            return "`top_k` may only be set when thinking is disabled." + _SEE
    return None


def _all_blocks(body: Mapping[str, Any]) -> list[tuple[Mapping[str, Any], Any]]:
    """Every block of the prompt in Anthropic's order (tools, system, messages), with its `cache_control`."""
    out: list[tuple[Mapping[str, Any], Any]] = []
    for tool in body.get("tools") or ():
        if isinstance(tool, dict):
            out.append(({"type": "tool", **tool}, tool.get("cache_control")))
    for block in _blocks(body.get("system")):
        out.append((block, block.get("cache_control")))
    for message in body.get("messages") or ():
        if isinstance(message, dict):
            for block in _blocks(message.get("content")):
                out.append((block, block.get("cache_control")))
    return out


@dataclass
class MessagesMeter:
    """One Messages request's billing: the cache read and writes, found when it arrives; stored and charged when
    it is answered."""

    billing: Billing
    model: str
    input_tokens: int
    read: int
    write_5m: int
    write_1h: int
    stores: list[tuple[tuple[int, bytes], float]]

    @classmethod
    def arrive(cls, billing: Billing, body: Mapping[str, Any]) -> MessagesMeter:
        model = str(body.get("model", ""))
        price = price_of(model)
        minimum = price.min_cacheable if price is not None else 1024
        units: list[str] = []
        breakpoints: list[tuple[int, str]] = []
        for block, mark in _all_blocks(body):
            if block.get("type") == "tool":
                continue  # tools are in the salt
            words = _block_text(block).split()
            if words:
                words[0] = f"{block.get('type')}\x1e{words[0]}"
            units.extend(words)
            if isinstance(mark, dict) and len(units) >= minimum:
                breakpoints.append((len(units), str(mark.get("ttl") or "5m")))
        salt = schema_salt(body, ("tools",))
        digests = prefix_digests(units, [at for at, _ in breakpoints], salt)
        ttls = {at: _TTL_SECONDS.get(ttl, 300.0) for at, ttl in breakpoints}
        read = billing.cache.hit(model, digests, ttl=max(ttls.values(), default=300.0)) if digests else 0
        write_5m = write_1h = 0
        done = read
        for at, ttl in sorted(breakpoints):
            if at > done:
                if ttl == "1h":
                    write_1h += at - done
                else:
                    write_5m += at - done
                done = at
        stores = [(digest, ttls[digest[0]]) for digest in digests]
        return cls(billing, model, len(units) - read - write_5m - write_1h, read, write_5m, write_1h, stores)

    def answer(self, *, output_tokens: int, batch: bool = False) -> dict[str, Any]:
        """Cache what this request wrote, bill it, and return its `usage`."""
        for digest, ttl in self.stores:
            self.billing.cache.store(self.model, [digest], ttl)
        charge = Charge(
            input_tokens=self.input_tokens,
            output_tokens=output_tokens,
            cache_read_tokens=self.read,
            cache_write_tokens=self.write_5m,
            cache_write_1h_tokens=self.write_1h,
        )
        self.billing.charge(self.model, charge, batch=batch)
        return {
            "input_tokens": self.input_tokens,
            "cache_creation_input_tokens": self.write_5m + self.write_1h,
            "cache_read_input_tokens": self.read,
            "cache_creation": {"ephemeral_5m_input_tokens": self.write_5m, "ephemeral_1h_input_tokens": self.write_1h},
            "output_tokens": output_tokens,
            "service_tier": "batch" if batch else "standard",
        }


def _continuation(body: Mapping[str, Any], reply: str) -> str:
    """What the model writes after a prefilled assistant message: the reply less the prefill it starts with."""
    messages = body.get("messages") or []
    last = messages[-1] if messages else {}
    if not isinstance(last, dict) or last.get("role") != "assistant":
        return reply
    prefill = content_text(last.get("content"))
    for start in (prefill, prefill.rstrip()):
        if start and reply.startswith(start):
            return reply[len(start) :]
    return reply


def _content(body: Mapping[str, Any], reply: str, message_id: str) -> tuple[list[dict[str, Any]], str, int]:
    """The answer's content blocks, its stop reason and its output tokens."""
    thinking = _thinking(body)
    thought = int(thinking["budget_tokens"]) if thinking is not None else 0
    room = int(body.get("max_tokens", 4096)) - thought
    blocks: list[dict[str, Any]] = []
    if thinking is not None:
        text = " ".join(_THINKING_WORDS[i % len(_THINKING_WORDS)] for i in range(thought))
        blocks.append({"type": "thinking", "thinking": text, "signature": f"sig-{message_id}"})
    choice = body.get("tool_choice")
    if isinstance(choice, dict) and choice.get("type") == "tool" and choice.get("name"):
        try:
            arguments = json.loads(reply)
        except ValueError:
            arguments = None
        if isinstance(arguments, dict):
            used = len(reply.split())
            if used <= room:
                call = {"type": "tool_use", "id": f"toolu_{message_id}", "name": choice["name"], "input": arguments}
                blocks.append(call)
                return blocks, "tool_use", thought + used
    words = reply.split()
    if len(words) > room:
        reply, stop = " ".join(words[: max(room, 0)]), "max_tokens"
    else:
        stop = "end_turn"
    blocks.append({"type": "text", "text": reply})
    return blocks, stop, thought + len(reply.split())


def anthropic_message_body(
    request_body: Mapping[str, Any],
    reply: str,
    *,
    message_id: str = "msg_test",
    billing: Billing | None = None,
    meter: MessagesMeter | None = None,
    batch: bool = False,
) -> dict[str, Any]:
    """The Messages API answer (a dict) to `request_body`, the model having written `reply`.

    With `billing` (or a `meter` made when the request arrived) the prompt cache is read and written and the
    request is billed, at half price when `batch`; without, nothing is cached. A prefilled assistant message is
    continued (`reply` may repeat it); a forced tool is answered with a `tool_use` block when `reply` is a JSON object.
    """
    if meter is None:
        meter = MessagesMeter.arrive(billing if billing is not None else Billing(), request_body)
    blocks, stop, output_tokens = _content(request_body, _continuation(request_body, reply), message_id)
    return {
        "id": message_id,
        "type": "message",
        "role": "assistant",
        "model": request_body.get("model"),
        "content": blocks,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": meter.answer(output_tokens=output_tokens, batch=batch),
    }


def _error(
    service: ChatService,
    request: web.Request,
    body: Any,
    status: int,
    message: str,
    fault: str | None = None,
    headers: dict[str, str] | None = None,
) -> web.Response:
    recorded = body if isinstance(body, dict) else None
    service.stats.record(request.path, recorded, _authorized(request), status, fault)
    payload = anthropic_error_body(status, message)
    return web.Response(status=status, body=payload, headers=headers, content_type="application/json")


def _authorized(request: web.Request) -> bool:
    return "x-api-key" in request.headers or "Authorization" in request.headers


def messages_handler(service: ChatService) -> Any:
    """The aiohttp handler of `POST /v1/messages` for a running test server (its responder, key, latency, stats
    and bill)."""
    rng = random.Random(service.config.faults.seed)
    count = [0]

    async def messages(request: web.Request) -> web.Response:
        from ._app import presented_key

        raw = await request.read()
        try:
            body = json.loads(raw)
        except ValueError:
            return _error(service, request, None, 400, "There was an error parsing the body of your request.")
        config = service.config
        if config.api_key is not None and presented_key(request) != config.api_key:
            return _error(service, request, body, 401, "invalid x-api-key")
        if not request.headers.get("anthropic-version"):
            return _error(service, request, body, 400, "anthropic-version: header is required")
        problem = messages_request_problem(body)
        if problem is not None:
            return _error(service, request, body, 400, problem)
        text = last_user_text(body)
        reply: str | None = None
        sticky = once = None
        if "[[" in text:
            try:
                reply, sticky, once = parse_directives(text)
            except ValueError as exc:
                return _error(service, request, body, 400, str(exc))
        fault = service.fault_for(raw, sticky, once)  # the same plan, directives and hangs as the chat route
        if fault == "timeout":
            service.stats.record(request.path, body, _authorized(request), 504, fault)
            await asyncio.sleep(config.faults.hang_seconds)
            payload = anthropic_error_body(504, "Gateway timeout")
            return web.Response(status=504, body=payload, content_type="application/json")
        if fault in _FAULTS:
            status, message = _FAULTS[str(fault)]
            headers = None
            if fault == "rate_limit":
                plan = config.faults
                after = plan.retry_after_header if plan.retry_after_header is not None else f"{plan.retry_after:g}"
                headers = {"retry-after": after} if after else None
            message = message.format(model=body.get("model"))
            return _error(service, request, body, status, message, fault, headers)
        if reply is None:
            try:
                reply = config.responder(body)
            except Exception as exc:
                message = f"the test server's responder raised {exc!r}"
                return _error(service, request, body, 500, message, "responder_error")
        meter = MessagesMeter.arrive(service.stats.billing, body)
        service.stats.record(request.path, body, _authorized(request), 200, None)
        service.stats.enter()
        try:
            delay = config.latency + (config.jitter * rng.random() if config.jitter else 0.0)
            if delay > 0:
                await asyncio.sleep(delay)
            count[0] += 1
            answer = anthropic_message_body(body, reply, message_id=f"msg_test_{count[0]:06d}", meter=meter)
            return web.Response(text=json.dumps(answer), content_type="application/json")
        finally:
            service.stats.leave()

    return messages
