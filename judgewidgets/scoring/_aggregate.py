"""Aggregating judges' scores per item: avg, median, min, max and weighted mean, NaN-aware."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Literal

import numpy as np
import pandas as pd

from .._errors import ConfigurationError

Aggregation = Literal["avg", "median", "min", "max", "weighted_avg"]
AGGREGATIONS: tuple[str, ...] = ("avg", "median", "min", "max", "weighted_avg")


def check_judge_weight(weight: object) -> float:
    """One judge's weight, checked: a positive finite number."""
    if isinstance(weight, bool) or not (isinstance(weight, (int, float)) and np.isfinite(weight) and weight > 0):
        raise ConfigurationError(f"judge weight must be a positive finite number, got {weight!r}")
    return float(weight)


def check_weights(weights: Sequence[float], n_judges: int) -> list[float]:
    """Validated judge weights: one per judge, finite and positive."""
    weights = list(weights)
    if len(weights) != n_judges:
        raise ConfigurationError(f"{len(weights)} weights given for {n_judges} judges")
    for i, w in enumerate(weights):
        if not isinstance(w, (int, float)) or not np.isfinite(w) or w <= 0:
            raise ConfigurationError(f"weight {i} is {w!r}; judge weights must be positive finite numbers")
    return [float(w) for w in weights]


def aggregate(scores: pd.DataFrame, weights: Sequence[float] | None = None) -> pd.DataFrame:
    """Per-row aggregates of a judges' score table (rows items, columns judges), skipping missing votes.

    Rows where some judge is missing are aggregated over the judges that answered, with one warning naming
    them; rows where every judge is missing stay NaN. `disagreement` is the standard deviation (ddof 0) of the
    judges' scores, 0 when one judge answered.
    """
    values = scores.to_numpy(dtype=float)
    missing = np.isnan(values)
    partly = np.flatnonzero(missing.any(axis=1) & ~missing.all(axis=1))
    fully = np.flatnonzero(missing.all(axis=1))
    if len(partly) or len(fully):
        parts = []
        if len(partly):
            parts.append(f"rows {_rows(partly)} miss some judges' scores (aggregated over the rest)")
        if len(fully):
            parts.append(f"rows {_rows(fully)} have no score from any judge (aggregates are NaN)")
        warnings.warn("; ".join(parts), RuntimeWarning, stacklevel=3)
    out = pd.DataFrame(index=scores.index)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        out["avg"] = np.nanmean(values, axis=1)
        out["median"] = np.nanmedian(values, axis=1)
        out["min"] = np.nanmin(values, axis=1)
        out["max"] = np.nanmax(values, axis=1)
        if weights is not None:
            w = np.asarray(weights, dtype=float)
            present = ~missing
            total = (present * w).sum(axis=1)
            weighted = np.where(present, values, 0.0) @ w
            out["weighted_avg"] = np.where(total > 0, weighted / np.where(total > 0, total, 1), np.nan)
        out["disagreement"] = np.nanstd(values, axis=1)
    return out


def _rows(indices: np.ndarray) -> str:
    shown = ", ".join(str(int(i)) for i in indices[:10])
    return f"[{shown}{', ...' if len(indices) > 10 else ''}]"
