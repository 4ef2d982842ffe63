"""A judge's labels against ground truth: accuracy, precision/recall/F1, confusion matrix, ordinal metrics.

Every function takes `(pred, truth)` matched by position and drops pairs where either is missing. Label
metrics work from the joint count table (rows truth, columns pred), so the same code serves single calls and
vectorised bootstrap resamples (tables with a leading resample axis).
"""

from __future__ import annotations

import warnings
from collections.abc import Hashable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from .._errors import InputError
from ._data import (
    all_numbers,
    categories,
    encode,
    is_numeric,
    numeric_labels,
    pair_tables,
    paired,
    require_order,
)
from ._kappa import kappa_from_tables

_NAMES = ("pred", "truth")


def labelled_table(
    pred: Any, truth: Any, labels: Sequence[Hashable] | None = None
) -> tuple[np.ndarray, list[Hashable], np.ndarray, np.ndarray]:
    """Confusion counts (rows truth, columns pred), the label order, and the complete pairs themselves."""
    p, t = paired(pred, truth, _NAMES)
    cats = categories(np.concatenate([t.astype(object), p.astype(object)]), labels)
    return pair_tables(encode(t, cats), encode(p, cats), len(cats)), cats, p, t


# ---- metrics of count tables of shape (..., k, k), rows truth, columns pred ----


def accuracy_from_tables(tables: np.ndarray) -> np.ndarray:
    """Share of items on the diagonal."""
    return np.trace(tables, axis1=-2, axis2=-1) / tables.sum(axis=(-2, -1))


def within_from_tables(tables: np.ndarray, tolerance: int) -> np.ndarray:
    """Share of items whose predicted label is at most `tolerance` positions from the true one."""
    k = tables.shape[-1]
    near = np.abs(np.subtract.outer(np.arange(k), np.arange(k))) <= tolerance
    return (tables * near).sum(axis=(-2, -1)) / tables.sum(axis=(-2, -1))


def prf_from_tables(tables: np.ndarray, zero_division: float = 0.0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per-label precision, recall and F1, shape (..., k); `zero_division` where a ratio is 0/0."""
    tables = np.asarray(tables, dtype=float)
    tp = np.diagonal(tables, axis1=-2, axis2=-1)
    predicted = tables.sum(axis=-2)
    actual = tables.sum(axis=-1)

    def ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(den > 0, num / den, zero_division)

    return ratio(tp, predicted), ratio(tp, actual), ratio(2 * tp, predicted + actual)


def macro(values: np.ndarray) -> np.ndarray:
    """Mean over labels (last axis), skipping NaN (from zero_division=NaN) as scikit-learn does."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.nanmean(values, axis=-1)


def spearman_from_tables(tables: np.ndarray) -> np.ndarray:
    """Spearman ρ between truth and pred label positions, average ranks for ties; NaN when either is constant."""
    tables = np.asarray(tables, dtype=float)
    rows, cols = tables.sum(axis=-1), tables.sum(axis=-2)
    n = rows.sum(axis=-1, keepdims=True)

    def ranks(margin: np.ndarray) -> np.ndarray:
        before = np.cumsum(margin, axis=-1) - margin
        return before + (margin + 1.0) / 2.0 - (n + 1.0) / 2.0  # centred average ranks

    r, c = ranks(rows), ranks(cols)
    cov = np.einsum("...i,...ij,...j->...", r, tables, c)
    var_r = (rows * r**2).sum(axis=-1)
    var_c = (cols * c**2).sum(axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        rho = cov / np.sqrt(var_r * var_c)
    return np.where((var_r > 0) & (var_c > 0), np.clip(rho, -1.0, 1.0), np.nan)


def errors_from_tables(tables: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """MAE and RMSE when the labels have numeric `values`."""
    diff = np.subtract.outer(values, values)  # truth row minus pred column
    total = tables.sum(axis=(-2, -1))
    mae = (tables * np.abs(diff)).sum(axis=(-2, -1)) / total
    rmse = np.sqrt((tables * diff**2).sum(axis=(-2, -1)) / total)
    return mae, rmse


# ---- public functions ----


def accuracy(pred: Any, truth: Any) -> float:
    """Share of items where `pred` equals `truth` (exact match); pairs with a missing value are dropped."""
    p, t = paired(pred, truth, _NAMES)
    return float(np.mean(p.astype(object) == t.astype(object)))


def confusion_matrix(pred: Any, truth: Any, *, labels: Sequence[Hashable] | None = None) -> pd.DataFrame:
    """Counts with true labels as rows and predicted labels as columns (scikit-learn's orientation).

    Labels are the sorted union of both, or `labels` in the order given. Pairs with a missing value are dropped.
    """
    table, cats, _, _ = labelled_table(pred, truth, labels)
    index = pd.Index(cats, name="truth")
    return pd.DataFrame(table, index=index, columns=pd.Index(cats, name="pred"))


def _prf(
    pred: Any,
    truth: Any,
    positive: Hashable | None,
    labels: Sequence[Hashable] | None,
    zero_division: float,
    which: int,
) -> float:
    table, cats, _, _ = labelled_table(pred, truth, labels)
    scores = prf_from_tables(table, zero_division)[which]
    if positive is None:
        return float(macro(scores))
    matches = [i for i, c in enumerate(cats) if c == positive]
    if not matches:
        raise InputError(f"positive label {positive!r} occurs in neither pred nor truth (labels: {cats!r})")
    return float(scores[matches[0]])


def precision(
    pred: Any,
    truth: Any,
    *,
    positive: Hashable | None = None,
    labels: Sequence[Hashable] | None = None,
    zero_division: float = 0.0,
) -> float:
    """Precision of label `positive` (one-vs-rest), or the macro average over all labels when it is None.

    Macro averaging uses the union of labels in pred and truth (or `labels`). A 0/0 ratio (nothing predicted
    as a label) counts as `zero_division`: 0.0 by default, as in scikit-learn; with NaN such labels are left
    out of the macro average. Pairs with a missing value are dropped.
    """
    return _prf(pred, truth, positive, labels, zero_division, 0)


def recall(
    pred: Any,
    truth: Any,
    *,
    positive: Hashable | None = None,
    labels: Sequence[Hashable] | None = None,
    zero_division: float = 0.0,
) -> float:
    """Recall of label `positive`, or the macro average; see `precision` for labels and 0/0 handling."""
    return _prf(pred, truth, positive, labels, zero_division, 1)


def f1(
    pred: Any,
    truth: Any,
    *,
    positive: Hashable | None = None,
    labels: Sequence[Hashable] | None = None,
    zero_division: float = 0.0,
) -> float:
    """F1 = 2TP / (2TP + FP + FN) of label `positive`, or the macro average; see `precision`."""
    return _prf(pred, truth, positive, labels, zero_division, 2)


def adjacent_accuracy(pred: Any, truth: Any, *, labels: Sequence[Hashable] | None = None, tolerance: int = 1) -> float:
    """Share of items whose predicted label is within `tolerance` steps of the true one in the label order.

    Steps are positions in the sorted labels (or `labels`), not differences of values: with labels 1, 2, 5 the
    pair (2, 5) is one step apart. Pairs with a missing value are dropped.
    """
    table, cats, _, _ = labelled_table(pred, truth, labels)
    require_order(cats, labels, "adjacent_accuracy")
    return float(within_from_tables(table, tolerance))


def spearman(pred: Any, truth: Any, *, labels: Sequence[Hashable] | None = None) -> float:
    """Spearman's ρ with average ranks for ties (scipy's `spearmanr`); NaN when either side is constant.

    Numbers are ranked by value; string labels by their position in `labels`. Pairs with a missing value are
    dropped.
    """
    p, t = paired(pred, truth, _NAMES)
    if labels is None and is_numeric(p) and is_numeric(t):
        x, y = p.astype(float), t.astype(float)
    else:
        cats = categories(np.concatenate([t.astype(object), p.astype(object)]), labels)
        require_order(cats, labels, "spearman")
        x, y = encode(p, cats).astype(float), encode(t, cats).astype(float)
    rx, ry = average_ranks(x), average_ranks(y)
    rx, ry = rx - rx.mean(), ry - ry.mean()
    spread = float(np.sqrt((rx**2).sum() * (ry**2).sum()))
    if spread == 0.0:
        return float("nan")
    return float(np.clip((rx * ry).sum() / spread, -1.0, 1.0))


def average_ranks(x: np.ndarray) -> np.ndarray:
    """1-based ranks of `x`, tied values sharing the mean of their ranks."""
    _, inverse, counts = np.unique(x, return_inverse=True, return_counts=True)
    ends = np.cumsum(counts)
    return ((ends - counts + 1 + ends) / 2.0)[inverse.ravel()]


def mae(pred: Any, truth: Any) -> float:
    """Mean absolute error of numeric predictions; pairs with a missing value are dropped."""
    p, t = _numeric_pairs(pred, truth, "mae")
    return float(np.mean(np.abs(p - t)))


def rmse(pred: Any, truth: Any) -> float:
    """Root mean squared error of numeric predictions; pairs with a missing value are dropped."""
    p, t = _numeric_pairs(pred, truth, "rmse")
    return float(np.sqrt(np.mean((p - t) ** 2)))


def ordinal_metrics(pred: Any, truth: Any, *, labels: Sequence[Hashable] | None = None) -> pd.Series:
    """Ordinal-scale summary: exact and adjacent accuracy, quadratic-weighted κ, Spearman ρ, MAE, RMSE.

    Label order as in `adjacent_accuracy`. MAE and RMSE use the label values, so they are NaN for string labels.
    Pairs with a missing value are dropped.
    """
    table, cats, _, _ = labelled_table(pred, truth, labels)
    require_order(cats, labels, "ordinal_metrics")
    mae_, rmse_ = errors_from_tables(table, numeric_labels(cats, "mae")) if all_numbers(cats) else (np.nan, np.nan)
    return pd.Series(
        {
            "accuracy": float(accuracy_from_tables(table)),
            "adjacent_accuracy": float(within_from_tables(table, 1)),
            "kappa_quadratic": float(kappa_from_tables(table, "quadratic")),
            "spearman": float(spearman_from_tables(table)),
            "mae": float(mae_),
            "rmse": float(rmse_),
        },
        dtype=float,
    )


def _numeric_pairs(pred: Any, truth: Any, what: str) -> tuple[np.ndarray, np.ndarray]:
    p, t = paired(pred, truth, _NAMES)
    if not (is_numeric(p) and is_numeric(t)):
        raise InputError(f"{what} needs numeric pred and truth, got {p.dtype} and {t.dtype} values")
    return p.astype(float), t.astype(float)
