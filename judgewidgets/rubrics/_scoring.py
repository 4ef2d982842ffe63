"""Turning criterion outcomes into one score, with the grader's policy for abstentions."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from ._records import CriterionResult

CannotAssess = Literal["skip", "zero", "partial", "fail"]
CANNOT_ASSESS_MODES = ("skip", "zero", "partial", "fail")


def _abstention(result: CriterionResult, mode: CannotAssess, partial_credit: float, worst_value: float) -> float | None:
    """Weighted contribution of an abstained criterion, or None to leave it out entirely (skip)."""
    weight = result.weight
    if mode == "skip":
        return None
    if mode == "zero":
        return 0.0
    if mode == "partial":
        return partial_credit * weight if weight > 0 else 0.0
    # fail: the worst realisable outcome for the weight sign
    if result.scale_type == "binary":
        return weight if weight < 0 else 0.0
    return worst_value * weight


def score(
    results: Sequence[CriterionResult],
    worst_values: Sequence[float],
    cannot_assess: CannotAssess = "skip",
    partial_credit: float = 0.5,
    normalize: bool = True,
) -> float | None:
    """Σ value × weight over scored criteria, normalised by the total positive weight and clamped to [0, 1]
    (with only negative weights: 1 + Σ / |total negative weight|). None when nothing was scored."""
    total = positive = negative = 0.0
    scored = 0
    for result, worst in zip(results, worst_values):
        if result.abstained:
            contribution = _abstention(result, cannot_assess, partial_credit, worst)
            if contribution is None:
                continue
            total += contribution
        else:
            total += result.score_value * result.weight
        scored += 1
        if result.weight > 0:
            positive += result.weight
        else:
            negative += abs(result.weight)
    if scored == 0:
        return None
    if not normalize:
        return total
    if positive > 0:
        return min(1.0, max(0.0, total / positive))
    if negative > 0:
        return min(1.0, max(0.0, 1.0 + total / negative))
    return 0.0
