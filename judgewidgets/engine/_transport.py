"""The Transport role: something that turns a ChatRequest into a Completion (one attempt, no retries)."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from ._request import ChatRequest, Completion


@runtime_checkable
class Transport(Protocol):
    """Performs one attempt of a call. Raises `CallFailure` (with the HTTP status) when the attempt fails.

    A transport may set `paced = False` when its attempts reach no provider (a script, a fake): the engine then
    lets its calls through at once instead of probing and pacing their endpoint (a 429 it raises still pauses
    the endpoint). Without the attribute a transport is paced. A Completion or CallFailure may carry `limits`,
    what the provider's headers said about its rate limits, for the pacing to learn from.
    """

    name: str

    async def complete(self, request: ChatRequest, timeout: float) -> Completion: ...
