"""What a cascade will cost before it runs: tokens, calls and dollars per stage, at its expected reach."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd
from pydantic import BaseModel, Field

from ..engine._usage import known_sum
from ..scoring._cost import CostEstimate, JudgeCostEstimate, readable_duration


class StageCostEstimate(BaseModel):
    """One stage's expected spend: `reach` is the share of the items expected to get to it."""

    stage: str
    reach: float = Field(description="Share of the items expected to reach this stage (1.0 before calibration).")
    calls_all: int = Field(description="Calls if every item reached the stage.")
    prompt_tokens_all: int
    completion_tokens_all: int
    cost_usd_all: float | None = Field(description="Dollars if every item reached the stage (None: no price).")
    judges_all: list[JudgeCostEstimate] = Field(
        default_factory=list, description="The stage's judges' own estimates if every item reached it."
    )

    @property
    def calls(self) -> float:
        return self.reach * self.calls_all

    @property
    def cost_usd(self) -> float | None:
        return None if self.cost_usd_all is None else self.reach * self.cost_usd_all


class CascadeCostEstimate(BaseModel):
    """Expected tokens, calls and dollars of a cascade over a batch, beside its last stage alone on every item.

    Prompt tokens are counted with litellm's tokenizer for each model; completion lengths are typical, not
    measured. Before calibration every item is assumed to reach every stage.
    """

    items: int
    calibrated: bool
    stages: list[StageCostEstimate]

    @property
    def total_calls(self) -> float:
        return float(sum(s.calls for s in self.stages))

    @property
    def total_usd(self) -> float | None:
        return known_sum(s.cost_usd for s in self.stages)

    @property
    def duration_s(self) -> float | None:
        """Seconds the cascade takes under the known rate limits, at each stage's reach (stages on one endpoint
        share its limits); None when some stage's endpoint has no known limit. See `CostEstimate.duration_s`."""
        judges = [
            j.model_copy(
                update={
                    "calls": round(j.calls * s.reach),
                    "prompt_tokens": round(j.prompt_tokens * s.reach),
                    "completion_tokens": round(j.completion_tokens * s.reach),
                }
            )
            for s in self.stages
            for j in s.judges_all
        ]
        return CostEstimate(judges=judges).duration_s if judges else None

    @property
    def last_stage_alone_calls(self) -> int:
        return self.stages[-1].calls_all

    @property
    def last_stage_alone_usd(self) -> float | None:
        return self.stages[-1].cost_usd_all

    def to_df(self) -> pd.DataFrame:
        rows = []
        for s in self.stages:
            rows.append({**s.model_dump(exclude={"judges_all"}), "calls": s.calls, "cost_usd": s.cost_usd})
        return pd.DataFrame(rows)

    def __str__(self) -> str:
        basis = "at the calibrated reach" if self.calibrated else "if every item reached every stage"
        seconds = self.duration_s
        duration = "" if seconds is None else f", about {readable_duration(seconds)} at the known rate limits"
        lines = [
            f"estimated cost of the cascade on {self.items} items, {basis}: {_usd(self.total_usd)}, "
            f"{self.total_calls:.0f} calls{duration}"
        ]
        for s in self.stages:
            lines.append(f"  {s.stage}: reach {s.reach:.0%}, {s.calls:.0f} calls, {_usd(s.cost_usd)}")
        lines.append(
            f"  the last stage alone on every item: {self.last_stage_alone_calls} calls, "
            f"{_usd(self.last_stage_alone_usd)}"
        )
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        head = "<br>".join(str(self).split("\n")[:1] + str(self).split("\n")[-1:])
        return f"<p><b>{head}</b></p>" + self.to_df()._repr_html_()


def _usd(value: float | None) -> str:
    return "unknown (no price for some model)" if value is None else f"${value:.4f}"


def estimate_cascade(stages: Sequence[Any], items: Sequence[Any], reach: Sequence[float] | None) -> CascadeCostEstimate:
    """Every stage's estimate over all `items`, scaled by its reach (all 1.0 when `reach` is None)."""
    out = []
    for position, stage in enumerate(stages):
        judges = _stage_judges(stage, items)
        out.append(
            StageCostEstimate(
                stage=stage.name,
                reach=1.0 if reach is None else float(reach[position]),
                calls_all=sum(j.calls for j in judges),
                prompt_tokens_all=sum(j.prompt_tokens for j in judges),
                completion_tokens_all=sum(j.completion_tokens for j in judges),
                cost_usd_all=known_sum(j.cost_usd for j in judges),
                judges_all=judges,
            )
        )
    return CascadeCostEstimate(items=len(items), calibrated=reach is not None, stages=out)


def _stage_judges(stage: Any, items: Sequence[Any]) -> list[JudgeCostEstimate]:
    """One stage's judges' own estimates over every item (they count the very requests a run sends)."""
    estimated = stage.judge.estimate_items(list(items))  # a judge's estimate, or a panel's list of them
    return estimated if isinstance(estimated, list) else [estimated]
