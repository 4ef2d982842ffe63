"""What a provider says about its rate limits: the headers of an answer (a 429 or a success), read into one record.

OpenAI sends `x-ratelimit-limit-requests`, `-remaining-requests`, `-reset-requests` (a duration such as `120ms`,
`1s`, `6m0s`) and the same for tokens, on every answer; Anthropic sends `anthropic-ratelimit-requests-limit`,
`-remaining`, `-reset` (an RFC 3339 time) and the same for tokens (`-tokens-*`, else `-input-tokens-*`). Both may
send `retry-after` (seconds, or an HTTP date) and OpenAI `retry-after-ms`. Other servers send none of it.
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from email.utils import parsedate_to_datetime

__all__ = ["LimitReading", "parse_duration", "read_limit_headers", "retry_after_of"]

_DURATION_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ms|h|m|s)")
_PREFIXES = ("x-ratelimit-", "anthropic-ratelimit-")


@dataclass(frozen=True)
class LimitReading:
    """The limits one answer stated; None where it said nothing. Limits are per minute (as OpenAI's and
    Anthropic's headers give them), resets and waits in seconds from the moment the answer was read."""

    requests_limit: float | None = None
    requests_remaining: float | None = None
    requests_reset_s: float | None = None
    tokens_limit: float | None = None
    tokens_remaining: float | None = None
    tokens_reset_s: float | None = None
    retry_after_s: float | None = None

    @property
    def states_limits(self) -> bool:
        """Whether the answer named a request or token limit (not only a wait)."""
        return self.requests_limit is not None or self.tokens_limit is not None


def parse_duration(text: str) -> float | None:
    """Seconds in an OpenAI reset value (`120ms`, `1s`, `6m0s`, `1h2m3.5s`) or a bare number of seconds."""
    text = text.strip().lower()
    if not text:
        return None
    try:
        value = float(text)
        return value if math.isfinite(value) and value >= 0 else None
    except ValueError:
        pass
    total, at = 0.0, 0
    for match in _DURATION_PART.finditer(text):
        if match.start() != at:
            return None
        number, unit = float(match.group(1)), match.group(2)
        total += number * {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 0.001}[unit]
        at = match.end()
    return total if at == len(text) and at else None


def _seconds_until(text: str, now: float) -> float | None:
    """Seconds from `now` (epoch seconds) to an RFC 3339 time or an HTTP date; a duration is read as one."""
    text = text.strip()
    duration = parse_duration(text)
    if duration is not None:
        return duration
    try:
        when = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        try:
            when = parsedate_to_datetime(text)
        except (TypeError, ValueError, IndexError):
            return None
    if when.tzinfo is None:
        return None
    return max(0.0, when.timestamp() - now)


def _number(text: str | None) -> float | None:
    if text is None:
        return None
    try:
        value = float(text.strip())
    except ValueError:
        return None
    return value if math.isfinite(value) and value >= 0 else None


def retry_after_of(headers: Mapping[str, str], now: float | None = None) -> float | None:
    """Seconds the server asked a client to wait: `retry-after-ms`, else `retry-after` (seconds or a date)."""
    millis = _number(headers.get("retry-after-ms"))
    if millis is not None:
        return millis / 1000
    after = headers.get("retry-after")
    if after is None:
        return None
    seconds = _number(after)
    return seconds if seconds is not None else _seconds_until(after, time.time() if now is None else now)


def read_limit_headers(headers: Mapping[str, str], now: float | None = None) -> LimitReading | None:
    """The rate limits an answer's headers state (OpenAI's or Anthropic's names), or None when they state none.

    `headers` must look names up without regard to case (HTTP headers), or have lower-case names. `now` is the
    wall clock (epoch seconds) Anthropic's reset times are measured from.
    """
    wall = time.time() if now is None else now
    get = headers.get
    if get("x-ratelimit-limit-requests") is not None or get("x-ratelimit-limit-tokens") is not None:
        requests_reset = get("x-ratelimit-reset-requests")
        tokens_reset = get("x-ratelimit-reset-tokens")
        reading = LimitReading(
            requests_limit=_number(get("x-ratelimit-limit-requests")),
            requests_remaining=_number(get("x-ratelimit-remaining-requests")),
            requests_reset_s=parse_duration(requests_reset) if requests_reset else None,
            tokens_limit=_number(get("x-ratelimit-limit-tokens")),
            tokens_remaining=_number(get("x-ratelimit-remaining-tokens")),
            tokens_reset_s=parse_duration(tokens_reset) if tokens_reset else None,
            retry_after_s=retry_after_of(headers, wall),
        )
    elif get("anthropic-ratelimit-requests-limit") is not None or get("anthropic-ratelimit-tokens-limit") is not None:
        tokens = "tokens" if get("anthropic-ratelimit-tokens-limit") is not None else "input-tokens"
        requests_reset = get("anthropic-ratelimit-requests-reset")
        tokens_reset = get(f"anthropic-ratelimit-{tokens}-reset")
        reading = LimitReading(
            requests_limit=_number(get("anthropic-ratelimit-requests-limit")),
            requests_remaining=_number(get("anthropic-ratelimit-requests-remaining")),
            requests_reset_s=_seconds_until(requests_reset, wall) if requests_reset else None,
            tokens_limit=_number(get(f"anthropic-ratelimit-{tokens}-limit")),
            tokens_remaining=_number(get(f"anthropic-ratelimit-{tokens}-remaining")),
            tokens_reset_s=_seconds_until(tokens_reset, wall) if tokens_reset else None,
            retry_after_s=retry_after_of(headers, wall),
        )
    else:
        after = retry_after_of(headers, wall)
        return None if after is None else LimitReading(retry_after_s=after)
    if not reading.states_limits and reading.retry_after_s is None:
        return None
    return reading


def provider_headers(headers: Mapping[str, str]) -> dict[str, str]:
    """The rate-limit headers among litellm's `additional_headers` (which prefixes the provider's own with
    `llm_provider-`), under their own lower-case names."""
    found: dict[str, str] = {}
    for name, value in headers.items():
        key = str(name).lower().removeprefix("llm_provider-")
        if key.startswith(_PREFIXES) or key.startswith("retry-after"):
            found.setdefault(key, str(value))
    return found
