"""What the test server bills, as the providers do: published prices, prompt caches, reasoning tokens, a bill.

A prompt's tokens are its words (as everywhere in the test server). A prefix becomes readable from a provider's
prompt cache only once a request carrying it has been answered: requests that arrive before that answer all miss
(`PromptCache.hit` is read when a request arrives, `PromptCache.store` when its answer is sent).

- OpenAI (chat completions): any prompt of at least 1,024 tokens is cached automatically, in steps of 128 tokens
  (1,024, 1,152, ...); reads are billed at the model's cached-input price and reported as
  `usage.prompt_tokens_details.cached_tokens`, inside `prompt_tokens`. Writes cost nothing extra.
- Anthropic (Messages): only prefixes ending at a `cache_control` breakpoint (at most 4), of at least the model's
  minimum length, are cached; `input_tokens` is what was neither read nor written, writes are billed at 1.25x the
  input price (2x for `"ttl": "1h"`), reads at 0.1x.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "OPENAI_CACHE_MIN",
    "OPENAI_CACHE_STEP",
    "PRICES",
    "Bill",
    "Billing",
    "Charge",
    "ModelBill",
    "ModelPrice",
    "PromptCache",
    "openai_cached_lengths",
    "prefix_digests",
    "price_of",
    "schema_salt",
]

OPENAI_CACHE_MIN = 1024
OPENAI_CACHE_STEP = 128
_MILLION = 1_000_000


@dataclass(frozen=True)
class ModelPrice:
    """A model's published prices in USD per million tokens, and its provider's prompt-cache rules."""

    provider: str  # "openai" or "anthropic"
    input: float
    output: float
    cache_read: float
    cache_write: float = 0.0  # Anthropic's 5-minute write; OpenAI's writes are billed as input
    cache_write_1h: float = 0.0
    min_cacheable: int = OPENAI_CACHE_MIN  # the shortest prefix the provider caches
    reasoning: bool = False  # an OpenAI reasoning model (o-series, gpt-5): refuses sampling parameters


def _openai(input: float, output: float, cached: float, *, reasoning: bool = False) -> ModelPrice:
    return ModelPrice("openai", input, output, cached, reasoning=reasoning)


def _anthropic(input: float, output: float, minimum: int) -> ModelPrice:
    # Anthropic's multipliers: reads 0.1x, 5-minute writes 1.25x, 1-hour writes 2x the input price.
    return ModelPrice("anthropic", input, output, input * 0.1, input * 1.25, input * 2, min_cacheable=minimum)


# Published list prices (OpenAI's and Anthropic's pricing pages) and Anthropic's minimum cacheable lengths (its
# prompt-caching guide: 4,096 for Opus 4.5 and Haiku 4.5, 2,048 for Haiku 3 and 3.5, 1,024 for the others).
# A model name matches its longest key that it starts with ("claude-sonnet-4-5-20250929" is "claude-sonnet-4-5").
PRICES: Mapping[str, ModelPrice] = MappingProxyType(
    {
        "gpt-4o-mini": _openai(0.15, 0.60, 0.075),
        "gpt-4o": _openai(2.50, 10.00, 1.25),
        "gpt-4.1": _openai(2.00, 8.00, 0.50),
        "gpt-4.1-mini": _openai(0.40, 1.60, 0.10),
        "gpt-4.1-nano": _openai(0.10, 0.40, 0.025),
        "o1": _openai(15.00, 60.00, 7.50, reasoning=True),
        "o3": _openai(2.00, 8.00, 0.50, reasoning=True),
        "o3-mini": _openai(1.10, 4.40, 0.55, reasoning=True),
        "o4-mini": _openai(1.10, 4.40, 0.275, reasoning=True),
        "gpt-5": _openai(1.25, 10.00, 0.125, reasoning=True),
        "gpt-5-mini": _openai(0.25, 2.00, 0.025, reasoning=True),
        "gpt-5-nano": _openai(0.05, 0.40, 0.005, reasoning=True),
        "claude-opus-4-5": _anthropic(5.00, 25.00, 4096),
        "claude-opus-4-1": _anthropic(15.00, 75.00, 1024),
        "claude-opus-4": _anthropic(15.00, 75.00, 1024),
        "claude-sonnet-4-5": _anthropic(3.00, 15.00, 1024),
        "claude-sonnet-4": _anthropic(3.00, 15.00, 1024),
        "claude-3-7-sonnet": _anthropic(3.00, 15.00, 1024),
        "claude-haiku-4-5": _anthropic(1.00, 5.00, 4096),
        "claude-3-5-haiku": _anthropic(0.80, 4.00, 2048),
        "claude-3-haiku": _anthropic(0.25, 1.25, 2048),
    }
)


def price_of(model: str) -> ModelPrice | None:
    """The prices of `model` (a provider prefix such as 'openai/' is ignored), None for a model not listed."""
    name = model.rpartition("/")[2]
    matches = [key for key in PRICES if name == key or name.startswith(key + "-")]
    return PRICES[max(matches, key=len)] if matches else None


def prefix_digests(units: Sequence[str], lengths: Iterable[int], salt: bytes = b"") -> list[tuple[int, bytes]]:
    """(length, digest of the first `length` units) for each length, shortest first: what a prefix cache keys on."""
    digest = hashlib.blake2b(salt, digest_size=16)
    out: list[tuple[int, bytes]] = []
    done = 0
    for length in sorted(set(lengths)):
        for unit in units[done:length]:
            digest.update(unit.encode("utf-8", "surrogatepass"))
            digest.update(b"\x1f")
        done = length
        out.append((length, digest.copy().digest()))
    return out


def openai_cached_lengths(n: int) -> range:
    """The prefix lengths OpenAI's cache can serve for a prompt of `n` tokens: 1,024, then every 128 more."""
    return range(OPENAI_CACHE_MIN, n + 1, OPENAI_CACHE_STEP)


class PromptCache:
    """The prefixes a provider holds, per model, each until its lifetime runs out (refreshed by every read)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._until: dict[tuple[str, bytes], float] = {}

    def hit(self, model: str, digests: Sequence[tuple[int, bytes]], ttl: float = 300.0) -> int:
        """The length of the longest of these prefixes the cache holds now (0: none); a read refreshes it."""
        now = self._clock()
        for length, digest in sorted(digests, reverse=True):
            until = self._until.get((model, digest))
            if until is not None and until > now:
                self._until[(model, digest)] = max(until, now + ttl)
                return length
        return 0

    def store(self, model: str, digests: Iterable[tuple[int, bytes]], ttl: float = 300.0) -> None:
        """Hold these prefixes for `ttl` seconds from now (a request carrying them was answered)."""
        until = self._clock() + ttl
        for _, digest in digests:
            key = (model, digest)
            self._until[key] = max(self._until.get(key, 0.0), until)

    def clear(self) -> None:
        self._until.clear()


class ModelBill(BaseModel):
    """What one model's requests were billed: tokens of each kind and dollars."""

    model_config = ConfigDict(frozen=True)

    requests: int = 0
    input_tokens: int = Field(0, description="prompt tokens billed at the input price (neither read nor written)")
    cache_read_tokens: int = 0
    cache_write_tokens: int = Field(0, description="prompt tokens written to the cache (5-minute lifetime)")
    cache_write_1h_tokens: int = Field(0, description="prompt tokens written to the cache for an hour")
    output_tokens: int = Field(0, description="completion tokens, reasoning included")
    reasoning_tokens: int = 0
    cost_usd: float = Field(0.0, description="the bill: each kind of token at its own price, batch at half")
    list_cost_usd: float = Field(0.0, description="the same tokens at list price, live, without a prompt cache")


class Bill(BaseModel):
    """The server's bill per model (unpriced models count tokens at $0)."""

    model_config = ConfigDict(frozen=True)

    models: dict[str, ModelBill] = Field(default_factory=dict)

    @property
    def cost_usd(self) -> float:
        return sum(b.cost_usd for b in self.models.values())

    @property
    def list_cost_usd(self) -> float:
        return sum(b.list_cost_usd for b in self.models.values())


@dataclass(frozen=True)
class Charge:
    """The tokens of one answered request, by kind (prompt tokens = input + reads + writes)."""

    input_tokens: int
    output_tokens: int
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    cache_write_1h_tokens: int = 0
    reasoning_tokens: int = 0

    @property
    def prompt_tokens(self) -> int:
        return self.input_tokens + self.cache_read_tokens + self.cache_write_tokens + self.cache_write_1h_tokens

    def cost(self, price: ModelPrice | None, *, batch: bool = False) -> float:
        """Dollars at `price`'s per-kind prices (half for a batch request), 0 for an unpriced model."""
        if price is None:
            return 0.0
        write = self.cache_write_tokens * (price.cache_write or price.input)
        write_1h = self.cache_write_1h_tokens * (price.cache_write_1h or price.input)
        dollars = (
            self.input_tokens * price.input
            + self.cache_read_tokens * price.cache_read
            + write
            + write_1h
            + self.output_tokens * price.output
        ) / _MILLION
        return dollars / 2 if batch else dollars

    def list_cost(self, price: ModelPrice | None) -> float:
        """Dollars for the same tokens at list price, live, with no prompt cache."""
        if price is None:
            return 0.0
        return (self.prompt_tokens * price.input + self.output_tokens * price.output) / _MILLION


class Billing:
    """The test server's prompt cache and its bill (shared by its OpenAI and Anthropic routes; thread-safe to read)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.cache = PromptCache(clock)
        self._lock = threading.Lock()
        self._bills: dict[str, dict[str, float]] = {}

    def charge(self, model: str, charge: Charge, *, batch: bool = False) -> None:
        """Add one answered request to the bill of `model` (its name as the request gave it)."""
        price = price_of(model)
        with self._lock:
            bill = self._bills.setdefault(model, dict.fromkeys(ModelBill.model_fields, 0))
            bill["requests"] += 1
            bill["input_tokens"] += charge.input_tokens
            bill["cache_read_tokens"] += charge.cache_read_tokens
            bill["cache_write_tokens"] += charge.cache_write_tokens
            bill["cache_write_1h_tokens"] += charge.cache_write_1h_tokens
            bill["output_tokens"] += charge.output_tokens
            bill["reasoning_tokens"] += charge.reasoning_tokens
            bill["cost_usd"] += charge.cost(price, batch=batch)
            bill["list_cost_usd"] += charge.list_cost(price)

    def snapshot(self) -> Bill:
        with self._lock:
            return Bill(models={model: ModelBill(**bill) for model, bill in self._bills.items()})

    def reset(self) -> None:
        """Forget the bill and everything cached."""
        with self._lock:
            self._bills.clear()
            self.cache.clear()


def schema_salt(body: Mapping[str, Any], keys: Iterable[str]) -> bytes:
    """The parts of a request that come before its messages in the prompt (tools, a response schema), as bytes."""
    return json.dumps({k: body.get(k) for k in keys}, sort_keys=True, default=str).encode()
