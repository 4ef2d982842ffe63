"""Estimating what a run will cost before making it, from litellm's token counter and bundled price map."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd
from pydantic import BaseModel

from .._constants import ESTIMATED_EXPLANATION_TOKENS, ESTIMATED_SCORE_TOKENS
from ..engine import Caller
from ..engine._litellm import token_prices
from ..engine._usage import known_sum

Messages = tuple[dict[str, str], ...]


class JudgeCostEstimate(BaseModel):
    """One judge's share of a `CostEstimate`: its calls, the prompt tokens of the very requests a run would send,
    the typical completion tokens, and their price (`cost_usd` None when litellm has no price for the model)."""

    judge: str
    model: str
    calls: int
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float | None  # None: litellm has no price for this model


class CostEstimate(BaseModel):
    """Expected tokens and dollars per judge; completion lengths are typical, not measured."""

    judges: list[JudgeCostEstimate]

    @property
    def total_usd(self) -> float | None:
        return known_sum(j.cost_usd for j in self.judges)

    @property
    def calls(self) -> int:
        return sum(j.calls for j in self.judges)

    def to_df(self) -> pd.DataFrame:
        return pd.DataFrame([j.model_dump() for j in self.judges])

    def __str__(self) -> str:
        total = "unknown (no price for some model)" if self.total_usd is None else f"${self.total_usd:.4f}"
        lines = [f"estimated cost: {total}"]
        for j in self.judges:
            cost = "no price" if j.cost_usd is None else f"${j.cost_usd:.4f}"
            lines.append(
                f"  {j.judge} ({j.model}): {j.calls} calls, ~{j.prompt_tokens + j.completion_tokens} tokens, {cost}"
            )
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        total = "unknown" if self.total_usd is None else f"${self.total_usd:.4f}"
        return f"<p><b>Estimated cost: {total}</b></p>" + self.to_df()._repr_html_()


def estimate_calls(
    caller: Caller, name: str, requests: Sequence[Messages], completion_tokens: int
) -> JudgeCostEstimate:
    """Tokens and cost of sending every one of `requests` through `caller`: prompt tokens counted with litellm's
    token counter (the embedded judge's with gpt-4o-mini's tokenizer), `completion_tokens` per call typical."""
    prompt_tokens = sum(caller.count_tokens(m) for m in requests)
    completion_total = completion_tokens * len(requests)
    prices = token_prices(caller.model)
    cost = None if prices is None else prompt_tokens * prices[0] + completion_total * prices[1]
    return JudgeCostEstimate(
        judge=name,
        model=caller.model,
        calls=len(requests),
        prompt_tokens=prompt_tokens,
        completion_tokens=completion_total,
        cost_usd=cost,
    )


def typical_completion_tokens(explanations: bool) -> int:
    """The completion length an estimate assumes: a short JSON answer, plus an explanation when asked for."""
    return ESTIMATED_SCORE_TOKENS + (ESTIMATED_EXPLANATION_TOKENS if explanations else 0)


def unpriced(name: str, model: str, calls: int) -> JudgeCostEstimate:
    """The estimate of a judge that cannot price its calls (no model behind it, or one it does not name)."""
    return JudgeCostEstimate(judge=name, model=model, calls=calls, prompt_tokens=0, completion_tokens=0, cost_usd=None)
