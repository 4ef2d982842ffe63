"""The one retry policy: which failures are retried, and how long to wait before the next attempt."""

from __future__ import annotations

import random
from dataclasses import dataclass

from .._constants import (
    DEFAULT_MAX_RETRIES,
    INITIAL_RETRY_DELAY_S,
    MAX_RETRY_AFTER_S,
    MAX_RETRY_DELAY_S,
    OWN_REFUSAL_PATIENCE_S,
    RATE_LIMIT_PATIENCE_S,
    RETRY_JITTER,
    RETRYABLE_STATUS_CODES,
)
from .._errors import ConfigurationError


@dataclass(frozen=True)
class RetryPolicy:
    """Retry 408/409/5xx, timeouts and dropped connections with jittered exponential backoff, `max_retries` times.

    A `retry-after` header from the server lengthens the wait (up to `max_retry_after`), never shortens it below
    the jittered backoff: whatever it says (0, negative, unreadable), no call is retried in a tight loop. A rate
    limit (429) or an overload (529, 503) is not a failure: it does not count against `max_retries`; the call
    waits for its endpoint and is retried until the endpoint has answered nothing for `rate_limit_patience`
    seconds (10 minutes by default: a limit per minute always passes by then, a daily limit does not), or until
    this one request was refused more than a few times over `own_refusal_patience` seconds while the endpoint
    answered other calls and refused none (a request larger than a tokens-per-minute limit). A spent
    quota, a refused key or an unknown model is never retried (engine/_faults.py has the whole table).
    """

    max_retries: int = DEFAULT_MAX_RETRIES
    initial_delay: float = INITIAL_RETRY_DELAY_S
    max_delay: float = MAX_RETRY_DELAY_S
    jitter: float = RETRY_JITTER
    max_retry_after: float = MAX_RETRY_AFTER_S
    rate_limit_patience: float = RATE_LIMIT_PATIENCE_S
    own_refusal_patience: float = OWN_REFUSAL_PATIENCE_S

    def __post_init__(self) -> None:
        if self.max_retries < 0:
            raise ConfigurationError(f"max_retries must be >= 0, got {self.max_retries}")
        if self.initial_delay < 0 or self.max_delay < 0:
            raise ConfigurationError("retry delays must be >= 0")
        if not 0 <= self.jitter <= 1:
            raise ConfigurationError(f"jitter must lie in [0, 1], got {self.jitter}")
        for name in ("rate_limit_patience", "own_refusal_patience"):
            patience = getattr(self, name)
            if isinstance(patience, bool) or not isinstance(patience, (int, float)) or not patience > 0:
                raise ConfigurationError(f"{name} must be a number of seconds > 0, got {patience!r}")

    @staticmethod
    def is_retryable(status_code: int | None) -> bool:
        """Whether a failure with this HTTP status is worth another attempt (None: no response at all)."""
        if status_code is None:
            return True
        return status_code in RETRYABLE_STATUS_CODES or status_code >= 500

    def delay(self, attempt: int, retry_after: float | None = None, rng: random.Random | None = None) -> float:
        """Seconds to wait before retry number `attempt` (0-based): the jittered backoff, or the server's
        `retry-after` (capped at `max_retry_after`) when that is longer."""
        base = min(self.initial_delay * (2**attempt), self.max_delay)
        draw = (rng or random).random()
        backoff = base * (1 - self.jitter * draw)
        if retry_after is not None and retry_after > backoff:
            return min(retry_after, max(self.max_retry_after, backoff))
        return backoff
