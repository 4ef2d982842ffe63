"""Estimating what a run will cost before making it, from litellm's token counter and bundled price map."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd
from pydantic import BaseModel

from ._constants import ESTIMATED_EXPLANATION_TOKENS, ESTIMATED_SCORE_TOKENS
from ._records import Item
from .engine._litellm import import_litellm, routed_model, token_prices


class JudgeCostEstimate(BaseModel):
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
        costs = [j.cost_usd for j in self.judges]
        return None if any(c is None for c in costs) else float(sum(costs))  # type: ignore[arg-type]

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
        return f"<p><b>Estimated cost: {total}</b></p>" + self.to_df()._repr_html_()  # type: ignore[operator]


def estimate_judge(judge: object, name: str, items: Sequence[Item]) -> JudgeCostEstimate:
    """Tokens and cost of one LLMJudge over `items` (prompt tokens counted, completion tokens typical)."""
    from ._judge import LLMJudge

    if not isinstance(judge, LLMJudge):
        return JudgeCostEstimate(
            judge=name,
            model=type(judge).__name__,
            calls=len(items),
            prompt_tokens=0,
            completion_tokens=0,
            cost_usd=None,
        )
    litellm = import_litellm()
    counted_model = routed_model(judge.model) if not judge.model.startswith("local") else "gpt-4o-mini"
    prompt_tokens = 0
    for item in items:
        messages = judge.template.messages(item.prompt, item.response, item.reference, judge.explanations, item.context)
        prompt_tokens += litellm.token_counter(model=counted_model, messages=list(messages))
    per_call = ESTIMATED_SCORE_TOKENS + (ESTIMATED_EXPLANATION_TOKENS if judge.explanations else 0)
    completion_tokens = per_call * len(items)
    prices = token_prices(judge.model)
    cost = None if prices is None else prompt_tokens * prices[0] + completion_tokens * prices[1]
    return JudgeCostEstimate(
        judge=name,
        model=judge.model,
        calls=len(items),
        prompt_tokens=prompt_tokens,
        completion_tokens=completion_tokens,
        cost_usd=cost,
    )
