"""The Transport role: something that turns a ChatRequest into a Completion (one attempt, no retries)."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from ._request import ChatRequest, Completion


@runtime_checkable
class Transport(Protocol):
    """Performs one attempt of a call. Raises `CallFailure` (with the HTTP status) when the attempt fails."""

    name: str

    async def complete(self, request: ChatRequest, timeout: float) -> Completion: ...
