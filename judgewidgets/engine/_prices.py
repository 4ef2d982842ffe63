"""What one call costs, each kind of token at its own published price.

Prices come from litellm's bundled price map (`input_cost_per_token`, `output_cost_per_token`,
`cache_read_input_token_cost`, `cache_creation_input_token_cost`, `cache_creation_input_token_cost_above_1hr`),
corrected where that map is wrong or silent (`CORRECTIONS`; a cache price the map lacks is the provider's own
multiple of the input price). A call is priced from the usage its provider reported: `prompt_tokens` counts every
prompt token the model read; of them, cache reads and cache writes are billed at their own prices and the rest at
the input price; completion tokens (reasoning included) at the output price. A batch call costs half of all that,
as both OpenAI's and Anthropic's batch APIs bill, stacked on the cache prices.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from functools import lru_cache
from types import MappingProxyType

__all__ = ["BATCH_DISCOUNT", "CORRECTIONS", "TokenPrices", "call_cost", "list_cost", "prices_of"]

BATCH_DISCOUNT = 0.5  # both providers' batch APIs bill every kind of token at half its live price
_M = 1e-6  # a price per million tokens, per token


@dataclass(frozen=True)
class TokenPrices:
    """USD per token of each kind, for one model."""

    input: float
    output: float
    cache_read: float
    cache_write: float  # a 5-minute write (Anthropic); the input price where writes cost nothing extra (OpenAI)
    cache_write_1h: float


# Where litellm 1.106.2's bundled map is wrong (measured: 'claude-opus-4-1' and 'claude-sonnet-4-20250514' priced
# at $0, as is 'claude-opus-4-20250514', and Haiku 3.5 missing) — the providers' published prices.
CORRECTIONS: Mapping[str, TokenPrices] = MappingProxyType(
    {
        "claude-opus-4-1": TokenPrices(15 * _M, 75 * _M, 1.5 * _M, 18.75 * _M, 30 * _M),
        "claude-opus-4": TokenPrices(15 * _M, 75 * _M, 1.5 * _M, 18.75 * _M, 30 * _M),
        "claude-sonnet-4": TokenPrices(3 * _M, 15 * _M, 0.3 * _M, 3.75 * _M, 6 * _M),
        "claude-3-7-sonnet": TokenPrices(3 * _M, 15 * _M, 0.3 * _M, 3.75 * _M, 6 * _M),
        "claude-3-5-haiku": TokenPrices(0.8 * _M, 4 * _M, 0.08 * _M, 1 * _M, 1.6 * _M),
    }
)
# What a provider's cache costs as a multiple of the input price when the map does not say: read, write, 1h write.
_CACHE_MULTIPLES: Mapping[str, tuple[float, float, float]] = MappingProxyType(
    {"anthropic": (0.1, 1.25, 2.0), "openai": (0.5, 1.0, 1.0)}
)


def _corrected(model: str) -> TokenPrices | None:
    """The correction for `model`: its name, or its name with a date or '-latest' ('claude-opus-4-1-20250805')."""
    name = _DATED.sub("", model.rpartition("/")[2])
    return CORRECTIONS.get(name)


_DATED = re.compile(r"-(?:\d{8}|latest)$")


def prices_of(model: str) -> TokenPrices | None:
    """The per-token prices of `model` (None when neither litellm's map nor the corrections know it; the embedded
    judge costs nothing). A price registered with `litellm.register_model` counts from then on."""
    from ._litellm import import_litellm, is_local_model

    if is_local_model(model):
        return TokenPrices(0.0, 0.0, 0.0, 0.0, 0.0)
    corrected = _corrected(model)
    if corrected is not None:
        return corrected
    return _map_prices(model, len(import_litellm().model_cost))


@lru_cache(maxsize=256)
def _map_prices(model: str, map_size: int) -> TokenPrices | None:
    from ._litellm import import_litellm

    litellm = import_litellm()
    try:
        info = litellm.get_model_info(model)
    except Exception:
        return None
    prompt, completion = info.get("input_cost_per_token"), info.get("output_cost_per_token")
    if prompt is None or completion is None:
        return None
    prompt = float(prompt)
    provider = str(info.get("litellm_provider") or model.partition("/")[0])
    read, write, write_1h = _CACHE_MULTIPLES.get(provider, (1.0, 1.0, 1.0))
    prices = TokenPrices(float(prompt), float(completion), prompt * read, prompt * write, prompt * write_1h)
    given = {
        "cache_read": info.get("cache_read_input_token_cost"),
        "cache_write": info.get("cache_creation_input_token_cost"),
        "cache_write_1h": info.get("cache_creation_input_token_cost_above_1hr"),
    }
    return replace(prices, **{k: float(v) for k, v in given.items() if v is not None})


def call_cost(
    model: str,
    prompt_tokens: int | None,
    completion_tokens: int | None,
    *,
    cache_read_tokens: int | None = None,
    cache_write_tokens: int | None = None,
    cache_write_1h_tokens: int | None = None,
    batch: bool = False,
) -> float | None:
    """Dollars for one call's usage (None without a price or token counts).

    `cache_write_tokens` counts every write; `cache_write_1h_tokens` those of them kept for an hour (Anthropic's
    `ttl: "1h"`, priced higher). `batch` prices the call at the batch discount.
    """
    prices = prices_of(model)
    if prices is None or prompt_tokens is None or completion_tokens is None:
        return None
    read = cache_read_tokens or 0
    write = cache_write_tokens or 0
    write_1h = min(cache_write_1h_tokens or 0, write)
    plain = max(prompt_tokens - read - write, 0)
    dollars = (
        plain * prices.input
        + read * prices.cache_read
        + (write - write_1h) * prices.cache_write
        + write_1h * prices.cache_write_1h
        + completion_tokens * prices.output
    )
    return dollars * BATCH_DISCOUNT if batch else dollars


def list_cost(model: str, prompt_tokens: int | None, completion_tokens: int | None) -> float | None:
    """Dollars for the same tokens at list price, live, with no prompt cache: what a cache and a batch saved."""
    return call_cost(model, prompt_tokens, completion_tokens)
