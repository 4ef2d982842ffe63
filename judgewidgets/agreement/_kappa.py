"""Cohen's κ for two raters (unweighted, linear, quadratic) and Fleiss' κ for many.

Both are chance-corrected agreement, 1 - observed disagreement / disagreement expected by chance. Cohen's κ
takes chance from each rater's own label distribution; Fleiss' κ from the pooled distribution of all ratings.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any, Literal

import numpy as np

from .._errors import ConfigurationError, InputError
from ._data import categories, category_counts, encode, pair_tables, paired, ratings_matrix, require_order

Weights = Literal["linear", "quadratic"] | None
WEIGHTS: tuple[str | None, ...] = (None, "linear", "quadratic")


def check_weights(weights: Any) -> None:
    """ConfigurationError unless `weights` is None, "linear" or "quadratic"."""
    if weights not in WEIGHTS:
        raise ConfigurationError(f"unknown weights {weights!r}; use None, 'linear' or 'quadratic'")


def weight_matrix(k: int, weights: Weights) -> np.ndarray:
    """Disagreement weights between label positions: 0/1, |i - j| or (i - j)², as scikit-learn uses them."""
    check_weights(weights)
    positions = np.arange(k, dtype=float)
    diff = positions[:, None] - positions[None, :]
    if weights is None:
        return (diff != 0).astype(float)
    return np.abs(diff) if weights == "linear" else diff**2


def kappa_from_tables(tables: np.ndarray, weights: Weights = None) -> np.ndarray:
    """Cohen's κ of joint count tables of shape (..., k, k); NaN where chance disagreement is 0."""
    tables = np.asarray(tables, dtype=float)
    k = tables.shape[-1]
    w = weight_matrix(k, weights)
    total = tables.sum(axis=(-2, -1))
    with np.errstate(divide="ignore", invalid="ignore"):
        observed = tables / total[..., None, None]
        expected = observed.sum(axis=-1)[..., :, None] * observed.sum(axis=-2)[..., None, :]
        chance = (w * expected).sum(axis=(-2, -1))
        kappa = 1.0 - (w * observed).sum(axis=(-2, -1)) / chance
    return np.where(chance > 0, kappa, np.nan)


def cohen_kappa(
    a: Any,
    b: Any,
    *,
    weights: Weights = None,
    labels: Sequence[Hashable] | None = None,
) -> float:
    """Cohen's κ between two raters' labels for the same items, matched by position.

    Pairs where either value is missing (NaN/None) are dropped. The labels are the sorted union of both
    raters' labels, or `labels` in the order given (needed for weighted κ on string labels such as
    ["bad", "ok", "good"]). `weights="linear"` or `"quadratic"` counts disagreement by the distance between
    label positions, as in `sklearn.metrics.cohen_kappa_score`.

    Returns NaN when κ is undefined, as scikit-learn does: chance disagreement is 0, e.g. both raters used one
    and the same label for every item.
    """
    check_weights(weights)
    x, y = paired(a, b)
    cats = categories(np.concatenate([x.astype(object), y.astype(object)]), labels)
    if weights is not None:
        require_order(cats, labels, f"weights={weights!r}")
    table = pair_tables(encode(x, cats), encode(y, cats), len(cats))
    return float(kappa_from_tables(table, weights))


def fleiss_kappa(ratings: Any, *, labels: Sequence[Hashable] | None = None) -> float:
    """Fleiss' κ of an items × raters table of labels (DataFrame or 2-D array), NaN for a missing rating.

    Items may have different numbers of ratings: each item's agreement is the share of agreeing pairs among
    its own n_i ratings, sum_j n_ij (n_ij - 1) / (n_i (n_i - 1)), averaged over items, and chance agreement
    comes from the pooled label shares of those items. Items with fewer than 2 ratings carry no agreement
    information and are left out. With complete data this is exactly Fleiss (1971), as in statsmodels'
    `fleiss_kappa(aggregate_raters(data)[0])`.

    Returns NaN when chance agreement is 1 (every rating is the same label).
    """
    values, _ = ratings_matrix(ratings)
    cats = categories(values, labels)
    counts = category_counts(encode(values, cats), len(cats)).astype(float)
    return float(fleiss_kappa_from_counts(counts))


def fleiss_kappa_from_counts(counts: np.ndarray) -> float:
    """Fleiss' κ of an items × categories count table (statsmodels' `aggregate_raters` output)."""
    counts = np.asarray(counts, dtype=float)
    n_i = counts.sum(axis=1)
    counts, n_i = counts[n_i >= 2], n_i[n_i >= 2]
    if len(counts) == 0:
        raise InputError("no item has ratings from at least 2 raters, so agreement cannot be measured")
    per_item = (counts * (counts - 1)).sum(axis=1) / (n_i * (n_i - 1))
    shares = counts.sum(axis=0) / counts.sum()
    chance = float((shares**2).sum())
    if chance >= 1.0:
        return float("nan")
    return (float(per_item.mean()) - chance) / (1.0 - chance)
