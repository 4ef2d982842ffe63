"""A judge's requests laid out for the providers' prompt caches.

Every judge kind sends its fixed part (instructions, template, criteria, few-shot examples, anchors, the schema)
as the system message and the item after it, so the fixed part is the same prefix, byte for byte, across items.
What the providers need besides (`prompt_cache="auto"`, the default):
- Anthropic caches only up to a `cache_control` breakpoint: the system message is marked when it is at least the
  model's minimum cacheable length (`ANTHROPIC_MINIMUM`), with the default lifetime (5 minutes) or an hour
  (`prompt_cache="1h"`). Not for a model litellm does not know behind `api_base` (llama.cpp's Messages route).
- OpenAI caches prefixes of 1,024 tokens and more by itself; `prompt_cache_key` (one per judge: a digest of its
  fixed part) sends a judge's requests to the same cache.
- A prefix is cached once a first request carrying it has been answered: `PrefixWarmer` lets one request per
  prefix go first and holds the others until it is answered (256 concurrent first requests would all miss).
`prompt_cache=False` sends the requests as they are.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import re
from collections.abc import Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Literal

from .._errors import ConfigurationError
from ._request import ChatRequest

if TYPE_CHECKING:
    from ._caller import Caller

__all__ = [
    "ANTHROPIC_MINIMUM",
    "OPENAI_MINIMUM",
    "PrefixWarmer",
    "PromptCacheChoice",
    "check_prompt_cache",
    "estimated_cost",
    "laid_out",
    "minimum_cacheable",
    "served_by",
]

PromptCacheChoice = Literal["auto", "1h"] | bool
OPENAI_MINIMUM = 1024
# The longest the rest of a run waits for a prefix's first answer: a judge's short answer comes within a second or
# two, and a first request that hangs must not hold the others back (issue 42): past this they go, and only the
# calls sent before the first answer miss the cache.
WARM_WAIT_S = 3.0
# Anthropic's minimum cacheable prompt lengths (its prompt-caching guide), first match wins; 1,024 otherwise.
ANTHROPIC_MINIMUM: tuple[tuple[re.Pattern[str], int], ...] = (
    (re.compile(r"haiku-4|opus-4-[5-9]"), 4096),
    (re.compile(r"haiku|sonnet-4-[6-9]"), 2048),
)


def check_prompt_cache(value: Any) -> PromptCacheChoice:
    """The choice as given, or ConfigurationError for anything but "auto", "1h", True (= "auto") or False."""
    if value is True:
        return "auto"
    if value is False or value in ("auto", "1h"):
        return value
    raise ConfigurationError(f"prompt_cache must be 'auto', '1h' or False, got {value!r}")


def minimum_cacheable(provider: str, model: str) -> int:
    """The fewest prompt tokens `provider` caches for `model`."""
    if provider == "anthropic":
        name = model.rpartition("/")[2]
        return next((tokens for pattern, tokens in ANTHROPIC_MINIMUM if pattern.search(name)), 1024)
    return OPENAI_MINIMUM


@lru_cache(maxsize=256)
def _fixed_tokens(model: str, text: str) -> int:
    from ._litellm import count_tokens

    return count_tokens(model, [{"role": "system", "content": text}])


@lru_cache(maxsize=256)
def served_by(model: str) -> str | None:
    """The provider litellm's map says serves `model` ('openai', 'anthropic', ...), None for a name it does not
    know: a known model gets its provider's prompt cache even at another address (a gateway, a proxy), an unknown
    name behind `api_base` (vLLM, llama.cpp's Messages route) does not."""
    from ._litellm import import_litellm

    try:
        provider = import_litellm().get_model_info(model).get("litellm_provider")
    except Exception:
        return None
    return str(provider) if provider else None


def fixed_part(request: ChatRequest) -> str | None:
    """The fixed part of a judge's request: its system message's text (None when it has none)."""
    first = request.messages[0] if request.messages else None
    if first is None or first.get("role") != "system" or not isinstance(first.get("content"), str):
        return None
    return str(first["content"])


def prefix_key(model: str, fixed: str) -> str:
    """One judge's `prompt_cache_key`, and the prefix a warm-up waits on: a digest of model and fixed part."""
    return "jw-" + hashlib.sha256(f"{model}\x00{fixed}".encode("utf-8", "surrogatepass")).hexdigest()[:24]


def laid_out(request: ChatRequest, provider: str | None, choice: PromptCacheChoice) -> tuple[ChatRequest, str | None]:
    """`request` as it goes to `provider`'s prompt cache, and the prefix key to warm (None: nothing to cache).

    `provider` is "anthropic" (its own API), "openai" (a model OpenAI serves) or None (no cache to lay out for)."""
    if choice is False or provider is None:
        return request, None
    fixed = fixed_part(request)
    if fixed is None or _fixed_tokens(request.model, fixed) < minimum_cacheable(provider, request.model):
        return request, None
    key = prefix_key(request.model, fixed)
    if provider == "openai":
        if "prompt_cache_key" in request.params:
            return request, key
        params = {**request.params, "prompt_cache_key": key}
        return ChatRequest(request.model, request.messages, params, request.sample), key
    mark: dict[str, str] = {"type": "ephemeral"}
    if choice == "1h":
        mark["ttl"] = "1h"
    system: dict[str, Any] = {"role": "system", "content": [{"type": "text", "text": fixed, "cache_control": mark}]}
    return request.with_messages((system, *request.messages[1:])), key


class PrefixWarmer:
    """Lets the first request with each prefix go alone and holds the rest until it is answered (or has failed),
    so every later request finds the prefix cached. One per run (a run's `CallSession`)."""

    def __init__(self) -> None:
        self._answered: dict[str, asyncio.Event] = {}

    async def enter(self, key: str) -> bool:
        """Wait until a request with this prefix was answered (at most `WARM_WAIT_S`: a first request that hangs
        must not hold the run; the others then only miss the cache); True when this one is the first, to go now (it
        must call `answered` when done)."""
        event = self._answered.get(key)
        if event is None:
            self._answered[key] = asyncio.Event()
            return True
        with contextlib.suppress(asyncio.TimeoutError, TimeoutError):
            await asyncio.wait_for(event.wait(), WARM_WAIT_S)
        return False

    def answered(self, key: str) -> None:
        self._answered[key].set()


def estimated_cost(
    caller: Caller, requests: Sequence[tuple[dict[str, str], ...]], prompt_tokens: Sequence[int], completion_tokens: int
) -> float | None:
    """What sending `requests` through `caller` should cost with the provider's prompt cache as the run will use it
    (None without a price): each judge's first request with a fixed part writes it (Anthropic bills the write),
    every later one reads it (OpenAI: in 128-token steps from 1,024). `prompt_tokens` are each request's own,
    `completion_tokens` the typical answer's."""
    from ._prices import call_cost, prices_of

    if prices_of(caller.model) is None:
        return None
    provider, choice = caller.cache_provider(), caller.prompt_cache
    seen: set[str] = set()
    total = 0.0
    for messages, tokens in zip(requests, prompt_tokens, strict=True):
        request = ChatRequest(caller.model, messages, {})
        _, key = laid_out(request, provider, choice)
        read = write = 0
        if key is not None:
            fixed = min(_fixed_tokens(caller.model, fixed_part(request) or ""), tokens)
            if key not in seen:
                write = fixed if provider == "anthropic" else 0
            elif provider == "anthropic":
                read = fixed
            else:
                read = OPENAI_MINIMUM + (fixed - OPENAI_MINIMUM) // 128 * 128
            seen.add(key)
        one_hour = write if choice == "1h" else 0
        cost = call_cost(
            caller.model,
            tokens,
            completion_tokens,
            cache_read_tokens=read,
            cache_write_tokens=write,
            cache_write_1h_tokens=one_hour,
        )
        total += cost or 0.0
    return total
