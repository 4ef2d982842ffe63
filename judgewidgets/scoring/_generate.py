"""Generating the responses to judge (uqlm's generate_and_score), through the same call path as judging."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from .._errors import JudgeCallError
from .._progress import Progress, counted
from ..engine import Caller, CallSession, CallSettings


class Generator:
    """Answers prompts with one model; failures come back as (None, error) instead of raising.

    Calls go through a `Caller` (the embedded judge's call defaults included); `settings` replaces its call
    settings."""

    def __init__(
        self,
        model: str = "local",
        system_prompt: str | None = None,
        temperature: float = 0.7,
        settings: CallSettings | None = None,
        **litellm_kwargs: Any,
    ) -> None:
        self.caller = Caller(model, temperature=temperature, cache=False, **litellm_kwargs)
        if settings is not None:
            self.caller.settings = settings
        self.system_prompt = system_prompt

    @property
    def model(self) -> str:
        return self.caller.model

    @property
    def temperature(self) -> float:
        return self.caller.temperature

    @property
    def settings(self) -> CallSettings:
        return self.caller.settings

    def __repr__(self) -> str:
        return f"Generator(model={self.model!r}, temperature={self.temperature})"

    async def agenerate(
        self, prompts: Sequence[str], session: CallSession, progress: Progress
    ) -> list[tuple[str | None, str | None]]:
        params = self.caller.request_params(probabilities=False)  # no schema, no logprobs: plain text

        async def one(prompt: str) -> tuple[str | None, str | None]:
            messages: tuple[dict[str, str], ...] = ({"role": "user", "content": prompt},)
            if self.system_prompt:
                messages = ({"role": "system", "content": self.system_prompt}, *messages)
            try:
                completion = await self.caller.complete(session, messages, params)
            except JudgeCallError as exc:
                return None, exc.recorded
            if not completion.content.strip():
                return None, "generation: the model returned an empty answer"
            return completion.content, None

        return list(await asyncio.gather(*(counted(progress, one(p)) for p in prompts)))
