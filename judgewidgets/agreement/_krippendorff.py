"""Krippendorff's α through the coincidence matrix, for nominal, ordinal, interval and ratio data.

α = 1 - D_o / D_e: the disagreement observed within items over the disagreement expected from all pairable
values pooled. Missing ratings are simply absent from an item; items with fewer than 2 ratings are unpairable
and drop out. The formulas are Krippendorff's (2011, "Computing Krippendorff's Alpha-Reliability"), and the
results equal the `krippendorff` package's `alpha`.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any, Literal

import numpy as np

from .._errors import ConfigurationError, InputError
from ._data import categories, category_counts, encode, numeric_labels, ratings_matrix, require_order

Level = Literal["nominal", "ordinal", "interval", "ratio"]
LEVELS: tuple[str, ...] = ("nominal", "ordinal", "interval", "ratio")


def check_level(level: Any) -> None:
    """ConfigurationError unless `level` is one of LEVELS."""
    if level not in LEVELS:
        raise ConfigurationError(f"unknown level {level!r}; use one of {', '.join(map(repr, LEVELS))}")


def coincidences(counts: np.ndarray) -> np.ndarray:
    """The k × k coincidence matrix of an items × categories count table.

    o_ck = sum over items u of n_uc (n_uk - [c == k]) / (m_u - 1), over items with m_u >= 2 ratings.
    """
    counts = np.asarray(counts, dtype=float)
    m = counts.sum(axis=1)
    counts, m = counts[m >= 2], m[m >= 2]
    scaled = counts / (m - 1)[:, None]
    return scaled.T @ counts - np.diag(scaled.sum(axis=0))


def distances(level: Level, cats: Sequence[Hashable], marginals: np.ndarray) -> np.ndarray:
    """Squared distance δ²(c, k) between categories at `level`; `marginals` are the n_c of the coincidences."""
    k = len(cats)
    if level == "nominal":
        return 1.0 - np.eye(k)
    if level == "ordinal":
        cumulative = np.concatenate([[0.0], np.cumsum(marginals)])
        low = np.minimum.outer(np.arange(k), np.arange(k))
        high = np.maximum.outer(np.arange(k), np.arange(k))
        between = cumulative[high + 1] - cumulative[low]
        return (between - (marginals[low] + marginals[high]) / 2.0) ** 2
    values = numeric_labels(cats, f"level={level!r}")
    diff = values[:, None] - values[None, :]
    if level == "interval":
        return diff**2
    total = values[:, None] + values[None, :]
    ratio = np.divide(diff, total, out=np.zeros_like(diff), where=total != 0)
    return ratio**2


def alpha_from_counts(counts: np.ndarray, cats: Sequence[Hashable], level: Level = "nominal") -> float:
    """Krippendorff's α of an items × categories count table whose columns are `cats` in order."""
    check_level(level)
    counts = np.asarray(counts, dtype=float)
    if not (counts.sum(axis=1) >= 2).any():
        raise InputError("no item has ratings from at least 2 raters, so agreement cannot be measured")
    o = coincidences(counts)
    marginals = o.sum(axis=0)
    n = marginals.sum()
    delta = distances(level, cats, marginals)
    expected = (np.outer(marginals, marginals) - np.diag(marginals)) / (n - 1.0)
    chance = float((expected * delta).sum())
    if chance == 0.0:
        return float("nan")
    return 1.0 - float((o * delta).sum()) / chance


def krippendorff_alpha(
    ratings: Any,
    *,
    level: Level = "nominal",
    labels: Sequence[Hashable] | None = None,
) -> float:
    """Krippendorff's α of an items × raters table (DataFrame or 2-D array), NaN for a missing rating.

    `level` is "nominal", "ordinal", "interval" or "ratio". Labels are the sorted distinct values, or `labels`
    in the order given; string labels need `labels` for the ordinal level, and interval/ratio need numbers.
    Note the orientation: `krippendorff.alpha` takes raters × items, this takes items × raters like the other
    functions here.

    Pairable values are those of items with at least 2 ratings. Returns NaN when expected disagreement is 0
    (one value only among them); the `krippendorff` package raises instead. Interval α is computed from sums
    of squares, so continuous scores are cheap; the other levels build a matrix over the distinct values.
    """
    check_level(level)
    values, _ = ratings_matrix(ratings)
    cats = categories(values, labels)
    if level == "ordinal":
        require_order(cats, labels, "level='ordinal'")
    if level in ("interval", "ratio"):
        numeric_labels(cats, f"level={level!r}")
    if level == "interval":
        return interval_alpha(values)
    counts = category_counts(encode(values, cats), len(cats))
    return alpha_from_counts(counts, cats, level)


def interval_alpha(values: np.ndarray) -> float:
    """Interval α straight from the values, in O(ratings) rather than a k × k matrix of distinct values.

    With squared differences, the coincidence sums reduce to sums of squares: D_o ∝ Σ_u 2 m_u SS_u / (m_u - 1)
    over pairable items u with m_u values and within-item sum of squares SS_u, and D_e ∝ 2 n SS / (n - 1) over
    all n pairable values.
    """
    x = np.asarray(values, dtype=float)
    m = (~np.isnan(x)).sum(axis=1)
    x = x[m >= 2]
    m = m[m >= 2]
    if len(x) == 0:
        raise InputError("no item has ratings from at least 2 raters, so agreement cannot be measured")
    item_means = np.nanmean(x, axis=1)
    within = np.nansum((x - item_means[:, None]) ** 2, axis=1)
    pooled = x[~np.isnan(x)]
    n = len(pooled)
    total = float(((pooled - pooled.mean()) ** 2).sum())
    if total == 0.0:
        return float("nan")
    observed = float((m * within / (m - 1)).sum())
    return 1.0 - (n - 1) * observed / (n * total)
