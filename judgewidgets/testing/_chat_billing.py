"""The OpenAI chat completions route as OpenAI bills it: the automatic prompt cache, and reasoning models.

A reasoning model (o-series, gpt-5) refuses what a chat model takes by habit, with OpenAI's own 400 bodies
(`temperature` other than 1, `top_p`, `logprobs`, `top_logprobs`, `max_tokens`), spends reasoning tokens that are
billed as output (`usage.completion_tokens_details.reasoning_tokens`), and when `max_completion_tokens` runs out
answers `finish_reason: "length"` with what it had written (nothing, when reasoning took it all).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from ._billing import Billing, Charge, openai_cached_lengths, prefix_digests, price_of, schema_salt
from ._openai import LogprobsCache, completion_body, error_body
from ._responders import content_text

__all__ = ["REASONING_EFFORT_TOKENS", "ChatMeter", "chat_refusal", "message_units"]

# Reasoning tokens the test server's reasoning models spend per `reasoning_effort` (OpenAI's default: medium).
REASONING_EFFORT_TOKENS: Mapping[str, int] = MappingProxyType(
    {"none": 0, "minimal": 0, "low": 96, "medium": 384, "high": 1536}
)


def _unsupported(param: str, extra: str = "") -> bytes:
    message = f"Unsupported parameter: '{param}' is not supported with this model.{extra}"
    return error_body(message, "invalid_request_error", "unsupported_parameter", param)


def chat_refusal(body: Mapping[str, Any]) -> bytes | None:
    """OpenAI's 400 body for a parameter the requested model refuses, else None (models not priced: none)."""
    price = price_of(str(body.get("model", "")))
    if price is None or price.provider != "openai":
        return None
    if not price.reasoning:
        return _unsupported("reasoning_effort") if body.get("reasoning_effort") is not None else None
    temperature = body.get("temperature")
    if temperature is not None and temperature != 1:
        message = (
            f"Unsupported value: 'temperature' does not support {float(temperature)!r} with this model. Only the "
            "default (1) value is supported."
        )
        return error_body(message, "invalid_request_error", "unsupported_value", "temperature")
    for param in ("top_p", "logprobs", "top_logprobs"):
        if body.get(param) not in (None, False):
            return _unsupported(param)
    if body.get("max_tokens") is not None:
        return _unsupported("max_tokens", " Use 'max_completion_tokens' instead.")
    effort = body.get("reasoning_effort")
    if effort is not None and effort not in REASONING_EFFORT_TOKENS:
        message = f"Invalid value: '{effort}'. Supported values are: 'minimal', 'low', 'medium', and 'high'."
        return error_body(message, "invalid_request_error", "invalid_value", "reasoning_effort")
    return None


def message_units(messages: Any) -> list[str]:
    """A chat prompt's tokens as the test server counts them (words), each message's first marked by its role, so
    the same words under another role make another prefix."""
    units: list[str] = []
    for message in messages if isinstance(messages, list) else ():
        if not isinstance(message, dict):
            continue
        words = content_text(message.get("content")).split()
        if words:
            words[0] = f"{message.get('role')}\x1e{words[0]}"
        units.extend(words)
    return units


@dataclass
class ChatMeter:
    """One chat request's billing: its cache read, looked up when it arrives; stored and charged when answered."""

    billing: Billing
    body: Mapping[str, Any]
    prompt_tokens: int
    cached_tokens: int
    digests: list[tuple[int, bytes]]

    @classmethod
    def arrive(cls, billing: Billing, body: Mapping[str, Any]) -> ChatMeter:
        model = str(body.get("model", ""))
        units = message_units(body.get("messages"))
        salt = schema_salt(body, ("tools", "response_format"))
        digests = prefix_digests(units, openai_cached_lengths(len(units)), salt)
        cached = billing.cache.hit(model, digests) if digests else 0
        return cls(billing, body, len(units), cached, digests)

    def answer(
        self, content: str, completion_id: str, logprobs: LogprobsCache | None = None, *, batch: bool = False
    ) -> bytes:
        """The completion body for `content`, after the model's reasoning; the prefix is cached and billed (at the
        batch price when `batch`: a line of a batch file)."""
        body = self.body
        model = str(body.get("model", ""))
        price = price_of(model)
        reasoning = 0
        finish = "stop"
        if price is not None and price.reasoning:
            reasoning = REASONING_EFFORT_TOKENS.get(str(body.get("reasoning_effort") or "medium"), 0)
            limit = body.get("max_completion_tokens")
            words = content.split()
            if isinstance(limit, int) and reasoning + len(words) > limit:
                finish = "length"
                reasoning = min(reasoning, limit)
                content = " ".join(words[: limit - reasoning])
        completion_tokens = reasoning + len(content.split())
        self.billing.cache.store(model, self.digests)
        charge = Charge(
            input_tokens=self.prompt_tokens - self.cached_tokens,
            output_tokens=completion_tokens,
            cache_read_tokens=self.cached_tokens,
            reasoning_tokens=reasoning,
        )
        self.billing.charge(model, charge, batch=batch)
        details = {
            "prompt_tokens_details": {"cached_tokens": self.cached_tokens, "audio_tokens": 0},
            "completion_tokens_details": {
                "reasoning_tokens": reasoning,
                "audio_tokens": 0,
                "accepted_prediction_tokens": 0,
                "rejected_prediction_tokens": 0,
            },
        }
        return completion_body(
            dict(body),
            content,
            completion_id,
            self.prompt_tokens,
            logprobs,
            completion_tokens=completion_tokens,
            usage_details=details,
            finish_reason=finish,
        )
