"""Human-review flags: which items a person should look at, and why."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import pandas as pd
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from ._errors import configuration_error


class ReviewPolicy(BaseModel):
    """When an item needs a human: judges disagree beyond `max_disagreement`, any judge failed
    (`flag_failures`), or the score is below `min_score`. Each rule can be switched off (None / False)."""

    model_config = ConfigDict(frozen=True)

    max_disagreement: float | None = Field(0.25, description="Flag when the judges' disagreement exceeds this.")
    min_score: float | None = Field(None, description="Flag when the (aggregated) score is below this.")
    flag_failures: bool = Field(True, description="Flag when any judge call failed or could not be parsed.")

    def __init__(self, **fields: Any) -> None:
        try:
            super().__init__(**fields)
        except ValidationError as exc:
            raise configuration_error("ReviewPolicy", exc) from None

    @field_validator("max_disagreement", "min_score")
    @classmethod
    def _unit_interval(cls, value: float | None) -> float | None:
        if value is not None and not 0.0 <= value <= 1.0:
            raise ValueError(f"thresholds lie in [0, 1], got {value}")
        return value


# What each error kind (the prefix of a vote's error) tells the reviewer to do.
FAILURE_KINDS = {
    "infrastructure": "an outage: re-run later",
    "input": "refused as given: change the text or the model",
    "parse": "no verdict in the answer: re-run or change the model",
    "budget": "not run: the run's max_cost_usd was reached; re-run with a larger one (the cache answers the rest)",
}


def failure_kind(error: str) -> str:
    """The kind of a recorded error: the prefix before its first colon."""
    return error.split(":", 1)[0]


def review_table(
    scores: Sequence[float],
    disagreement: Sequence[float],
    failed: Sequence[int],
    policy: ReviewPolicy,
    failure_kinds: Sequence[Sequence[str]] | None = None,
) -> pd.DataFrame:
    """score, disagreement, failed_votes, needs_review and review_reasons for each item."""
    reasons: list[list[str]] = []
    for i, (score, spread, failures) in enumerate(zip(scores, disagreement, failed)):
        why = []
        if policy.flag_failures and failures:
            named = (
                [f"{k}: {FAILURE_KINDS[k]}" if k in FAILURE_KINDS else k for k in failure_kinds[i]]
                if failure_kinds
                else []
            )
            kinds = f" ({'; '.join(named)})" if named else ""
            why.append(f"{failures} judge call(s) failed{kinds}")
        if policy.max_disagreement is not None and not math.isnan(spread) and spread > policy.max_disagreement:
            why.append(f"judges disagree ({spread:.2f} > {policy.max_disagreement:.2f})")
        if policy.min_score is not None:
            if math.isnan(score):
                why.append("no score")
            elif score < policy.min_score:
                why.append(f"low score ({score:.2f} < {policy.min_score:.2f})")
        reasons.append(why)
    return pd.DataFrame(
        {
            "score": list(scores),
            "disagreement": list(disagreement),
            "failed_votes": list(failed),
            "needs_review": [bool(r) for r in reasons],
            "review_reasons": reasons,
        }
    )
