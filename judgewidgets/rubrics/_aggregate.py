"""Ensemble aggregation of judges' votes on one criterion, with AutoRubric's tie rules.

Ties always go to the outcome that scores worst for the criterion's weight sign: UNMET (or the lowest-valued
option) when the weight is ≥ 0, MET (or the highest-valued option) when it is negative.
"""

from __future__ import annotations

import math
import warnings
from collections import Counter
from collections.abc import Mapping, Sequence

from ._criterion import Criterion, CriterionVerdict
from ._records import CriterionVote

_SNAP_TOLERANCE = 1e-9


def worst_binary(weight: float) -> CriterionVerdict:
    return CriterionVerdict.MET if weight < 0 else CriterionVerdict.UNMET


def aggregate_binary(votes: Sequence[CriterionVote], strategy: str, weight: float) -> CriterionVerdict:
    """majority (head count), weighted (summed judge weights), unanimous (MET only if nobody says UNMET),
    any (MET if anybody says MET). CANNOT_ASSESS votes are dropped; all CANNOT_ASSESS → CANNOT_ASSESS."""
    assessable = [v for v in votes if v.verdict not in (None, CriterionVerdict.CANNOT_ASSESS)]
    if not assessable:
        return CriterionVerdict.CANNOT_ASSESS
    met = [v for v in assessable if v.verdict == CriterionVerdict.MET]
    unmet = [v for v in assessable if v.verdict == CriterionVerdict.UNMET]
    if strategy == "majority":
        return _decide(len(met), len(unmet), weight)
    if strategy == "weighted":
        return _decide(sum(v.weight for v in met), sum(v.weight for v in unmet), weight)
    if strategy == "unanimous":
        return CriterionVerdict.MET if not unmet else CriterionVerdict.UNMET
    if strategy == "any":
        return CriterionVerdict.MET if met else CriterionVerdict.UNMET
    raise ValueError(f"unknown binary aggregation {strategy!r}")


def _decide(met: float, unmet: float, weight: float) -> CriterionVerdict:
    if met > unmet:
        return CriterionVerdict.MET
    if unmet > met:
        return CriterionVerdict.UNMET
    return worst_binary(weight)


def aggregate_choice(
    votes: Sequence[CriterionVote], criterion: Criterion, strategy: str
) -> tuple[int | None, float | None]:
    """(selected option index, aggregated value before snapping) for a multi-choice criterion.

    NA votes are dropped; all NA → the NA option (None when the criterion has none); no votes at all → the NA
    option if any, else the worst option.
    """
    options = criterion.options
    assert options is not None
    if not votes:
        na = criterion.na_option_index
        index = na if na is not None else criterion.worst_scored_option()
        return index, options[index].value
    assessable = [v for v in votes if not v.na and v.selected_index is not None]
    if not assessable:
        na = criterion.na_option_index
        return na, (options[na].value if na is not None else None)
    if criterion.scale_type == "ordinal":
        return _ordinal(assessable, criterion, strategy)
    return _nominal(assessable, criterion, strategy)


def _top(scores: Mapping[int, float]) -> list[int]:
    best = max(scores.values())
    return [i for i, s in scores.items() if s == best]


def _ordinal(votes: Sequence[CriterionVote], criterion: Criterion, strategy: str) -> tuple[int, float]:
    options = criterion.options
    assert options is not None
    indices = [v.selected_index for v in votes if v.selected_index is not None]  # every vote is assessable
    values = [options[i].value for i in indices]
    if strategy == "mode":
        index = criterion.worst_option_among(_top(Counter(indices)))
        return index, options[index].value
    if strategy in ("min", "max"):
        ranked = sorted(zip(values, indices), key=lambda t: (t[0], t[1]))
        if strategy == "min":
            index = ranked[0][1]
        else:
            top_value = ranked[-1][0]
            index = min(i for v, i in ranked if v == top_value)
        return index, options[index].value
    if strategy == "mean":
        aggregated = sum(values) / len(values)
    elif strategy == "median":
        ordered = sorted(values)
        n = len(ordered)
        aggregated = ordered[n // 2] if n % 2 else (ordered[n // 2 - 1] + ordered[n // 2]) / 2
    elif strategy == "weighted_mean":
        total = sum(v.weight for v in votes)
        aggregated = sum(options[i].value * v.weight for v, i in zip(votes, indices)) / total
    else:
        raise ValueError(f"unknown ordinal aggregation {strategy!r}")
    return snap(criterion, aggregated), aggregated


def snap(criterion: Criterion, value: float) -> int:
    """The non-NA option nearest to `value`; equidistant options resolve to the worst by weight sign."""
    options = criterion.options
    assert options is not None
    distances = [(abs(o.value - value), i) for i, o in enumerate(options) if not o.na]
    nearest = min(d for d, _ in distances)
    tied = [i for d, i in distances if math.isclose(d, nearest, abs_tol=_SNAP_TOLERANCE)]
    return criterion.worst_option_among(tied)


def _nominal(votes: Sequence[CriterionVote], criterion: Criterion, strategy: str) -> tuple[int, float]:
    options = criterion.options
    assert options is not None
    indices = [v.selected_index for v in votes if v.selected_index is not None]  # every vote is assessable
    if strategy == "mode":
        index = criterion.worst_option_among(_top(Counter(indices)))
    elif strategy == "weighted_mode":
        totals: dict[int, float] = {}
        for v in votes:
            if v.selected_index is not None:
                totals[v.selected_index] = totals.get(v.selected_index, 0.0) + v.weight
        index = criterion.worst_option_among(_top(totals))
    elif strategy == "unanimous":
        if len(set(indices)) == 1:
            index = indices[0]
        elif criterion.na_option_index is not None:
            index = criterion.na_option_index
        else:
            warnings.warn(
                f"criterion {criterion.label!r}: judges disagree under 'unanimous' and there is no NA option; "
                "falling back to mode",
                RuntimeWarning,
                stacklevel=4,
            )
            index = criterion.worst_option_among(_top(Counter(indices)))
    else:
        raise ValueError(f"unknown nominal aggregation {strategy!r}")
    return index, options[index].value
