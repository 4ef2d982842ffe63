"""Faults the test server injects: a seeded random plan, and per-item directives planted in a prompt.

A fault is drawn from a hash of the seed, the raw request body and how many times that exact body has been
seen, so the same batch sent twice fails on the same rows, whatever order the requests arrive in, and a
retried request gets a fresh draw (a rate-limited row can recover on retry).
"""

from __future__ import annotations

import hashlib
import re
from typing import Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, model_validator

__all__ = ["FAULT_KINDS", "FaultKind", "FaultPlan", "parse_directives"]

FaultKind = Literal[
    "rate_limit",
    "server_error",
    "timeout",
    "malformed",
    "empty",
    "overloaded",
    "context_exceeded",
    "content_policy",
    "invalid_request",
    "overloaded_529",
    "bad_gateway",
    "quota_spent",
    "unauthorized",
    "model_not_found",
    "request_too_large",
]

#: Every fault kind, in the order the plan's rates are laid end to end on [0, 1).
FAULT_KINDS: tuple[FaultKind, ...] = get_args(FaultKind)

# What a directive may say after `fault:` / `fault-once:`: a status code or a kind's name.
_DIRECTIVE_FAULTS: dict[str, FaultKind] = {
    "429": "rate_limit",
    "500": "server_error",
    "503": "overloaded",
    "400": "invalid_request",
    "422": "invalid_request",
    "529": "overloaded_529",
    "502": "bad_gateway",
    "401": "unauthorized",
    "404": "model_not_found",
    "413": "request_too_large",
    **{kind: kind for kind in FAULT_KINDS},
}
_DIRECTIVE = re.compile(r"\[\[(reply|fault|fault-once):(.*?)\]\]", re.DOTALL)


class FaultPlan(BaseModel):
    """How often the server fails, by kind; each rate is a probability per request and they add up to ≤ 1."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    rate_limit: float = Field(0.0, ge=0, le=1, description="429 with a `retry-after` header")
    server_error: float = Field(0.0, ge=0, le=1, description="500 Internal Server Error")
    timeout: float = Field(0.0, ge=0, le=1, description="no answer for `hang_seconds`, then 504")
    malformed: float = Field(0.0, ge=0, le=1, description="200 whose body is not valid JSON")
    empty: float = Field(0.0, ge=0, le=1, description="200 with an empty content string")
    overloaded: float = Field(0.0, ge=0, le=1, description="503 Service Unavailable")
    context_exceeded: float = Field(0.0, ge=0, le=1, description="400: the prompt exceeds the context size")
    content_policy: float = Field(0.0, ge=0, le=1, description="400: refused under the content policy")
    invalid_request: float = Field(0.0, ge=0, le=1, description="422: the request is invalid")
    overloaded_529: float = Field(0.0, ge=0, le=1, description="529 `overloaded_error`, as Anthropic answers")
    bad_gateway: float = Field(0.0, ge=0, le=1, description="502 Bad Gateway, an HTML page from a proxy")
    quota_spent: float = Field(0.0, ge=0, le=1, description="429 `insufficient_quota`, no `retry-after`")
    unauthorized: float = Field(0.0, ge=0, le=1, description="401 `invalid_api_key`")
    model_not_found: float = Field(0.0, ge=0, le=1, description="404 `model_not_found`")
    request_too_large: float = Field(
        0.0, ge=0, le=1, description="429 'Request too large ... on tokens per min', as OpenAI answers it"
    )
    seed: int = Field(0, description="the same seed fails the same requests")
    retry_after: float = Field(0.05, ge=0, description="seconds sent in `retry-after` on a 429")
    retry_after_header: str | None = Field(
        None,
        description="sent as a 429's `retry-after` instead of `retry_after`, verbatim ('0', '-1', 'soon'); an "
        "empty string sends no `retry-after` at all",
    )
    hang_seconds: float = Field(30.0, ge=0, description="how long a timeout fault keeps the client waiting")
    hang_first: int = Field(
        0, ge=0, description="the first this many requests the server receives hang for `hang_seconds`, then 504"
    )
    faults_for_s: float | None = Field(
        None,
        gt=0,
        description="draw the plan's faults only during the first this many seconds after the first request "
        "(an outage that passes); None: always",
    )

    @model_validator(mode="after")
    def _rates_fit(self) -> FaultPlan:
        if self.total_rate > 1 + 1e-9:
            raise ValueError(f"fault rates add up to {self.total_rate:g}, more than 1")
        return self

    @property
    def total_rate(self) -> float:
        """The probability that a request fails in any way."""
        return sum(getattr(self, kind) for kind in FAULT_KINDS)

    def draw(self, body: bytes, occurrence: int) -> FaultKind | None:
        """The fault for the `occurrence`-th sighting (from 0) of this exact request body, or None."""
        if self.total_rate == 0:
            return None
        digest = hashlib.blake2b(body, digest_size=8, key=f"{self.seed}:{occurrence}".encode()).digest()
        u = int.from_bytes(digest, "big") / 2**64
        edge = 0.0
        for kind in FAULT_KINDS:
            edge += getattr(self, kind)
            if u < edge:
                return kind
        return None


def parse_directives(text: str) -> tuple[str | None, FaultKind | None, FaultKind | None]:
    """The `[[reply:...]]` text, `[[fault:...]]` kind and `[[fault-once:...]]` kind found in `text`.

    Raises ValueError for a fault directive naming no known fault, so a typo fails the test loudly.
    """
    reply: str | None = None
    sticky: FaultKind | None = None
    once: FaultKind | None = None
    for name, value in _DIRECTIVE.findall(text):
        if name == "reply":
            reply = value
            continue
        kind = _DIRECTIVE_FAULTS.get(value.strip().lower())
        if kind is None:
            known = ", ".join(_DIRECTIVE_FAULTS)
            raise ValueError(f"unknown fault in [[{name}:{value}]]; use one of {known}")
        if name == "fault":
            sticky = kind
        else:
            once = kind
    return reply, sticky, once
