"""A provider-style rate limit for the test server: a bucket of requests (and of tokens) per model, and the 429s
and headers a provider sends, so tests can check how a client paces itself without a provider."""

from __future__ import annotations

import threading
import time
from datetime import datetime, timedelta, timezone
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ._openai import word_count

__all__ = ["ProviderLimit"]

LimitHeaders = Literal["openai", "anthropic", "none"]


class ProviderLimit(BaseModel):
    """A limit per model, as OpenAI and Anthropic enforce theirs.

    Each model has a bucket of `burst` requests refilled at `rpm` / 60 a second (and, with `tpm`, a bucket of
    tokens: the request's words plus its `max_tokens`, else 16). A request that finds a bucket short is answered
    429 at once, with `retry-after: <retry_after>`. `headers` says which limit headers every answer carries:
    OpenAI's `x-ratelimit-*`, Anthropic's `anthropic-ratelimit-*`, or none (a bare 429).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    rpm: float | None = Field(None, gt=0, description="requests per minute per model")
    tpm: float | None = Field(None, gt=0, description="tokens per minute per model")
    burst: float = Field(1.0, ge=1, description="requests (and the tokens of as many seconds) a full bucket holds")
    headers: LimitHeaders = "openai"
    retry_after: float = Field(1.0, ge=0, description="seconds sent in `retry-after` with a 429")


class LimitState:
    """The buckets of a running server, one pair per model (thread-safe: stats are read from other threads)."""

    def __init__(self, limit: ProviderLimit) -> None:
        self.limit = limit
        self._lock = threading.Lock()
        self._buckets: dict[str, list[float]] = {}  # model -> [requests, tokens, last refill]

    def admit(self, body: dict[str, Any]) -> tuple[bool, dict[str, str]]:
        """Whether this request may be answered now, and the headers its answer carries."""
        limit = self.limit
        model = str(body.get("model"))
        tokens = word_count(body) + int(body.get("max_tokens") or 16)
        token_burst = (limit.tpm or 0) / 60 * limit.burst
        with self._lock:
            now = time.monotonic()
            bucket = self._buckets.setdefault(model, [limit.burst, token_burst, now])
            elapsed = now - bucket[2]
            bucket[2] = now
            if limit.rpm:
                bucket[0] = min(limit.burst, bucket[0] + elapsed * limit.rpm / 60)
            if limit.tpm:
                bucket[1] = min(token_burst, bucket[1] + elapsed * limit.tpm / 60)
                tokens = min(tokens, int(token_burst))
            admitted = (not limit.rpm or bucket[0] >= 1) and (not limit.tpm or bucket[1] >= tokens)
            if admitted:
                bucket[0] -= 1 if limit.rpm else 0
                bucket[1] -= tokens if limit.tpm else 0
            headers = self._headers(bucket[0], bucket[1])
        if not admitted:
            headers["retry-after"] = f"{limit.retry_after:g}"
        return admitted, headers

    def _headers(self, requests: float, tokens: float) -> dict[str, str]:
        limit = self.limit
        headers: dict[str, str] = {}
        for kind, left, per_minute in (("requests", requests, limit.rpm), ("tokens", tokens, limit.tpm)):
            if per_minute is None or limit.headers == "none":
                continue
            full_in = max(
                0.0, (limit.burst * (1 if kind == "requests" else per_minute / 60) - left) / (per_minute / 60)
            )
            if limit.headers == "openai":
                headers[f"x-ratelimit-limit-{kind}"] = f"{per_minute:g}"
                headers[f"x-ratelimit-remaining-{kind}"] = str(max(0, int(left)))
                headers[f"x-ratelimit-reset-{kind}"] = f"{round(full_in * 1000)}ms"
            else:
                reset = datetime.now(timezone.utc) + timedelta(seconds=full_in)
                headers[f"anthropic-ratelimit-{kind}-limit"] = f"{per_minute:g}"
                headers[f"anthropic-ratelimit-{kind}-remaining"] = str(max(0, int(left)))
                headers[f"anthropic-ratelimit-{kind}-reset"] = reset.isoformat().replace("+00:00", "Z")
        return headers
