"""Generating the responses to judge (uqlm's generate_and_score), through the same call path as judging."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from ._errors import JudgeCallError
from ._progress import Progress, counted
from .engine import CallSession, CallSettings, ChatRequest
from .engine._request import argument_secrets


class Generator:
    """Answers prompts with one model; failures come back as (None, error) instead of raising."""

    def __init__(
        self,
        model: str = "local",
        system_prompt: str | None = None,
        temperature: float = 0.7,
        settings: CallSettings | None = None,
        **litellm_kwargs: Any,
    ) -> None:
        self.model = model
        self.system_prompt = system_prompt
        self.temperature = temperature
        self.settings = settings or CallSettings()
        self.litellm_kwargs = litellm_kwargs

    def __repr__(self) -> str:
        return f"Generator(model={self.model!r}, temperature={self.temperature})"

    async def agenerate(
        self, prompts: Sequence[str], session: CallSession, progress: Progress
    ) -> list[tuple[str | None, str | None]]:
        secrets = argument_secrets(self.litellm_kwargs)
        params = {"temperature": self.temperature, **self.litellm_kwargs}

        async def one(prompt: str) -> tuple[str | None, str | None]:
            messages: tuple[dict[str, str], ...] = ({"role": "user", "content": prompt},)
            if self.system_prompt:
                messages = ({"role": "system", "content": self.system_prompt}, *messages)
            try:
                completion = await session.complete(ChatRequest(self.model, messages, params), self.settings, secrets)
            except JudgeCallError as exc:
                return None, exc.recorded
            if not completion.content.strip():
                return None, "generation: the model returned an empty answer"
            return completion.content, None

        return list(await asyncio.gather(*(counted(progress, one(p)) for p in prompts)))
