"""ScriptedTransport: a Transport that answers from a script, for tests that need no server at all."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from ..engine import ChatRequest, Completion

Reply = Callable[[ChatRequest, int], "str | Completion"]


class ScriptedTransport:
    """Answers every request with `reply(request, attempt)` instead of calling a model (as httpx's
    `MockTransport` answers with a handler): pass it as a judge's `transport=`.

    `reply` returns the answer's text or a whole Completion, or raises `jw.CallFailure` to fail that attempt
    (the engine retries it like a provider's failure). `attempt` counts the attempts at that exact request,
    from 0. A text answer is billed `prompt_tokens`, `completion_tokens` and `cost_usd`. Every attempt is kept
    in `requests` and every answer in `completions`; `max_active` is the most attempts that were in flight at
    once, and `delay` (seconds) is how long each attempt takes. `paced=True` has the engine pace its calls as
    it paces a provider's (to test pacing); by default they are let through at once.
    """

    name = "scripted"

    def __init__(
        self,
        reply: Reply,
        delay: float = 0.0,
        *,
        prompt_tokens: int = 10,
        completion_tokens: int = 3,
        cost_usd: float = 0.001,
        paced: bool = False,
    ) -> None:
        self.reply = reply
        self.paced = paced
        self.delay = delay
        self.prompt_tokens = prompt_tokens
        self.completion_tokens = completion_tokens
        self.cost_usd = cost_usd
        self.requests: list[ChatRequest] = []
        self.completions: list[Completion] = []
        self.attempts: dict[str, int] = {}
        self.active = 0
        self.max_active = 0

    async def complete(self, request: ChatRequest, timeout: float) -> Completion:
        key = request.cache_key()
        attempt = self.attempts.get(key, 0)
        self.attempts[key] = attempt + 1
        self.requests.append(request)
        self.active += 1
        self.max_active = max(self.max_active, self.active)
        try:
            if self.delay:
                await asyncio.sleep(self.delay)
            out = self.reply(request, attempt)
        finally:
            self.active -= 1
        completion = (
            out
            if isinstance(out, Completion)
            else Completion(
                content=out,
                prompt_tokens=self.prompt_tokens,
                completion_tokens=self.completion_tokens,
                cost_usd=self.cost_usd,
                latency_s=self.delay,
            )
        )
        self.completions.append(completion)
        return completion
