"""What the test server saw: counts by status and fault, and the last request bodies, for tests to assert on.

Only whether an Authorization header was present is kept, never its value.
"""

from __future__ import annotations

import threading
from collections import deque
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ._billing import Bill, Billing

__all__ = ["RecordedRequest", "ServerStats", "StatsRecorder"]


class RecordedRequest(BaseModel):
    """One request the server answered (or is still answering)."""

    model_config = ConfigDict(frozen=True)

    path: str
    body: dict[str, Any] | None = Field(description="the parsed JSON body; None when it was not JSON")
    authorization: bool = Field(description="an Authorization header was sent (its value is never kept)")
    status: int = Field(description="the status the server chose; 504 for a timeout fault")
    fault: str | None = Field(description="the fault injected, if any")


class ServerStats(BaseModel):
    """A snapshot of the server's counters; taking it does not reset them."""

    model_config = ConfigDict(frozen=True)

    total: int = 0
    by_status: dict[int, int] = Field(default_factory=dict)
    by_fault: dict[str, int] = Field(default_factory=dict)
    in_flight: int = Field(0, description="requests being answered now")
    max_in_flight: int = Field(0, description="the most requests answered at once")
    requests: list[RecordedRequest] = Field(default_factory=list, description="the last ones, oldest first")
    bill: Bill = Field(default_factory=Bill, description="what the answered requests were billed, per model")

    @property
    def bodies(self) -> list[dict[str, Any] | None]:
        """The recorded request bodies, oldest first."""
        return [r.body for r in self.requests]


class StatsRecorder:
    """The live counters, written by the server's event loop and read from any thread."""

    def __init__(self, keep: int) -> None:
        self._lock = threading.Lock()
        self._keep = keep
        self.billing = Billing()  # the prompt cache and the bill, as the providers keep them
        self._reset()

    def _reset(self) -> None:
        self.total = 0
        self.by_status: dict[int, int] = {}
        self.by_fault: dict[str, int] = {}
        self.in_flight = 0
        self.max_in_flight = 0
        self.recent: deque[tuple[str, dict[str, Any] | None, bool, int, str | None]] = deque(maxlen=self._keep)

    def record(
        self, path: str, body: dict[str, Any] | None, authorization: bool, status: int, fault: str | None
    ) -> None:
        """Count one request."""
        with self._lock:
            self.total += 1
            self.by_status[status] = self.by_status.get(status, 0) + 1
            if fault is not None:
                self.by_fault[fault] = self.by_fault.get(fault, 0) + 1
            if self._keep:
                self.recent.append((path, body, authorization, status, fault))

    def enter(self) -> None:
        """A request started being answered."""
        with self._lock:
            self.in_flight += 1
            if self.in_flight > self.max_in_flight:
                self.max_in_flight = self.in_flight

    def leave(self) -> None:
        """A request finished being answered."""
        with self._lock:
            self.in_flight -= 1

    def snapshot(self) -> ServerStats:
        """The counters as they are now."""
        with self._lock:
            recent = list(self.recent)
            counts = (
                self.total,
                dict(self.by_status),
                dict(self.by_fault),
                self.in_flight,
                self.max_in_flight,
            )
        return ServerStats(
            total=counts[0],
            by_status=counts[1],
            by_fault=counts[2],
            in_flight=counts[3],
            max_in_flight=counts[4],
            requests=[RecordedRequest(path=p, body=b, authorization=a, status=s, fault=f) for p, b, a, s, f in recent],
            bill=self.billing.snapshot(),
        )

    def reset(self) -> None:
        """Zero the counters, the bill and the prompt cache, and forget the recorded requests (requests in flight
        stay counted)."""
        with self._lock:
            in_flight = self.in_flight
            self._reset()
            self.in_flight = in_flight
            self.max_in_flight = in_flight
        self.billing.reset()
