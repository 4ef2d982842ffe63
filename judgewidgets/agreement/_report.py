"""Tables that summarise agreement: between raters (`agreement_report`) and of judges with ground truth
(`judge_vs_truth`, with bootstrap confidence intervals)."""

from __future__ import annotations

import html
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Any, Literal

import numpy as np
import pandas as pd

from .._errors import ConfigurationError, InputError
from ._bootstrap import check_bootstrap_options, percentile_interval, resample_indices
from ._classification import (
    accuracy_from_tables,
    errors_from_tables,
    macro,
    prf_from_tables,
    spearman_from_tables,
    within_from_tables,
)
from ._data import (
    all_numbers,
    as_vector,
    categories,
    category_counts,
    encode,
    has_order,
    pair_tables,
    ratings_matrix,
    require_order,
    to_array,
)
from ._kappa import fleiss_kappa_from_counts, kappa_from_tables
from ._krippendorff import Level, alpha_from_counts, check_level

# Cohen's kappa column by column: unweighted, then linear and quadratic weights (ordered labels only).
_WEIGHTINGS: tuple[tuple[str, Literal["linear", "quadratic"] | None], ...] = (
    ("kappa", None),
    ("kappa_linear", "linear"),
    ("kappa_quadratic", "quadratic"),
)


@dataclass(frozen=True)
class AgreementReport:
    """Agreement between raters: one row per pair in `pairs`, whole-table statistics in `overall`, and `notes`
    saying why a column is NaN."""

    pairs: pd.DataFrame
    overall: pd.DataFrame
    level: str = "nominal"
    notes: tuple[str, ...] = ()

    def _repr_html_(self) -> str:
        notes = "".join(f"<li>{html.escape(note)}</li>" for note in self.notes)
        return (
            "<h4>Pairwise agreement</h4>"
            + self.pairs.to_html(index=False)
            + (f"<ul>{notes}</ul>" if notes else "")
            + f"<h4>Overall ({html.escape(self.level)} α)</h4>"
            + self.overall.to_html()
        )


def agreement_report(
    ratings: Any,
    *,
    level: Level = "nominal",
    labels: Sequence[Hashable] | None = None,
) -> AgreementReport:
    """How much raters agree: Cohen's κ per pair of raters, Fleiss' κ and Krippendorff's α over all of them.

    `ratings` is items × raters (DataFrame or 2-D array), NaN for a missing rating. `pairs` has one row per
    pair: rater_a, rater_b, n_items (items both rated), agreement (share of identical labels), kappa,
    kappa_linear, kappa_quadratic. Label positions for the weighted κ come from the whole table (or `labels`),
    so every pair is weighed on the same scale; they are NaN for string labels without `labels`, and `notes`
    says so. A pair with
    no item in common gets NaN. `overall` is indexed by statistic (fleiss_kappa, krippendorff_alpha at
    `level`, mean_pairwise_kappa — Light's κ) with columns value and n_items (items with 2 or more ratings).
    """
    check_level(level)
    values, names = ratings_matrix(ratings)
    cats = categories(values, labels)
    if level == "ordinal":
        require_order(cats, labels, "level='ordinal'")
    codes = encode(values, cats)
    k = len(cats)
    ordered = has_order(cats, labels)
    rows = []
    for i, j in combinations(range(len(names)), 2):
        both = (codes[:, i] >= 0) & (codes[:, j] >= 0)
        table = pair_tables(codes[both, i], codes[both, j], k)
        n_items = int(both.sum())
        row: dict[str, Any] = {"rater_a": names[i], "rater_b": names[j], "n_items": n_items}
        row["agreement"] = float(accuracy_from_tables(table)) if n_items else np.nan
        for column, weights in _WEIGHTINGS:
            usable = n_items and (weights is None or ordered)
            row[column] = float(kappa_from_tables(table, weights)) if usable else np.nan
        rows.append(row)
    pairs = pd.DataFrame(rows)
    counts = category_counts(codes, k)
    overall = pd.DataFrame(
        {
            "value": [
                fleiss_kappa_from_counts(counts),
                alpha_from_counts(counts, cats, level),
                float(pairs["kappa"].mean()),
            ],
            "n_items": int((counts.sum(axis=1) >= 2).sum()),
        },
        index=pd.Index(["fleiss_kappa", "krippendorff_alpha", "mean_pairwise_kappa"], name="statistic"),
    )
    notes: tuple[str, ...] = ()
    if not ordered and len(pairs):
        notes = (
            f"kappa_linear and kappa_quadratic are NaN: the labels {cats!r} have no order, so no distance between "
            "them to weigh; pass labels=[...] in order (e.g. ['A', 'tie', 'B']) to compute them.",
        )
    return AgreementReport(pairs=pairs, overall=overall, level=level, notes=notes)


TableMetrics = Callable[[np.ndarray], dict[str, np.ndarray]]


def judge_vs_truth(
    pred_df: Any,
    truth: Any,
    *,
    judges: Sequence[Hashable] | None = None,
    labels: Sequence[Hashable] | None = None,
    positive: Hashable | None = None,
    ordinal: bool = False,
    n_boot: int = 1000,
    confidence: float = 0.95,
    seed: int | None = 0,
) -> pd.DataFrame:
    """Each judge's labels against ground truth, one row per judge, with percentile bootstrap intervals.

    `pred_df` holds one column of labels per judge; `truth` is an array matched by position, or the name of a
    column of `pred_df` (the judges are then the other columns unless `judges` says which). For each judge,
    items where the judge or the truth is missing are dropped (`n_items` counts the rest) and those items are
    resampled `n_boot` times (same seed for every judge; `n_boot=0` skips the intervals).

    Columns: judge, n_items, accuracy, kappa, macro_f1; with `positive`, precision, recall and f1 of that label;
    with `ordinal=True`, adjacent_accuracy, kappa_quadratic, spearman, and mae/rmse (NaN for string labels).
    Every metric has `<metric>_low` and `<metric>_high` columns. Labels are the sorted union over all judges and
    the truth, or `labels` in order.
    """
    if isinstance(n_boot, bool) or not isinstance(n_boot, (int, np.integer)) or n_boot < 0:
        raise ConfigurationError(f"n_boot must be a non-negative integer, got {n_boot!r}")
    check_bootstrap_options(max(int(n_boot), 1), confidence)
    frame = pred_df.to_frame() if isinstance(pred_df, pd.Series) else pred_df
    if not isinstance(frame, pd.DataFrame):
        frame = pd.DataFrame(to_array(frame, "pred_df"))
    if isinstance(truth, str) and truth in frame.columns:
        truth_values = as_vector(frame[truth], "truth")
        chosen = list(judges) if judges is not None else [c for c in frame.columns if c != truth]
    else:
        truth_values = as_vector(truth, "truth")
        chosen = list(judges) if judges is not None else list(frame.columns)
    missing = [j for j in chosen if j not in frame.columns]
    if missing:
        raise InputError(f"judges {missing!r} are not columns of pred_df (columns: {list(frame.columns)!r})")
    if not chosen:
        raise InputError("pred_df has no judge columns to compare with the truth")
    if len(truth_values) != len(frame):
        raise InputError(f"pred_df and truth differ in length ({len(frame)} vs {len(truth_values)})")
    preds = {j: as_vector(frame[j], str(j)) for j in chosen}
    everything = np.concatenate([truth_values.astype(object), *(p.astype(object) for p in preds.values())])
    cats = categories(everything, labels)
    if ordinal:
        require_order(cats, labels, "ordinal=True")
    if positive is not None and not any(c == positive for c in cats):
        raise InputError(f"positive label {positive!r} occurs in neither the judges nor the truth (labels: {cats!r})")
    metrics = _table_metrics(cats, positive, ordinal)
    truth_codes = encode(truth_values, cats)
    rows = []
    for judge, pred in preds.items():
        pred_codes = encode(pred, cats)
        keep = (truth_codes >= 0) & (pred_codes >= 0)
        row = {"judge": judge, "n_items": int(keep.sum())}
        row.update(_judge_row(truth_codes[keep], pred_codes[keep], len(cats), metrics, n_boot, confidence, seed))
        rows.append(row)
    return pd.DataFrame(rows)


def _table_metrics(cats: list[Hashable], positive: Hashable | None, ordinal: bool) -> TableMetrics:
    """The metric set of `judge_vs_truth`, each computed from (..., k, k) count tables."""
    index = next((i for i, c in enumerate(cats) if c == positive), None)
    values = np.asarray(cats, dtype=float) if all_numbers(cats) else None

    def compute(tables: np.ndarray) -> dict[str, np.ndarray]:
        precision, recall, f1 = prf_from_tables(tables)
        out = {
            "accuracy": accuracy_from_tables(tables),
            "kappa": kappa_from_tables(tables),
            "macro_f1": macro(f1),
        }
        if index is not None:
            out.update(precision=precision[..., index], recall=recall[..., index], f1=f1[..., index])
        if ordinal:
            out["adjacent_accuracy"] = within_from_tables(tables, 1)
            out["kappa_quadratic"] = kappa_from_tables(tables, "quadratic")
            out["spearman"] = spearman_from_tables(tables)
            nan = np.full(tables.shape[:-2], np.nan)
            out["mae"], out["rmse"] = errors_from_tables(tables, values) if values is not None else (nan, nan)
        return out

    return compute


def _judge_row(
    truth: np.ndarray,
    pred: np.ndarray,
    k: int,
    metrics: TableMetrics,
    n_boot: int,
    confidence: float,
    seed: int | None,
) -> dict[str, float]:
    """Point estimates and intervals of every metric for one judge's complete pairs."""
    if len(truth) == 0:  # no complete pair: every figure is undefined
        with np.errstate(divide="ignore", invalid="ignore"):
            names = list(metrics(np.zeros((k, k))))
        ends = ("", "_low", "_high") if n_boot else ("",)
        return {f"{name}{end}": np.nan for name in names for end in ends}
    with np.errstate(divide="ignore", invalid="ignore"):
        point = {name: float(v) for name, v in metrics(pair_tables(truth, pred, k)).items()}
        if not n_boot:
            return point
        draws: dict[str, list[np.ndarray]] = {name: [] for name in point}
        for idx in resample_indices(len(truth), n_boot, seed, width=k * k):
            for name, v in metrics(pair_tables(truth[idx], pred[idx], k)).items():
                draws[name].append(np.asarray(v, dtype=float))
    out: dict[str, float] = {}
    for name, value in point.items():
        low, high = percentile_interval(np.concatenate(draws[name]), confidence)
        out.update({name: value, f"{name}_low": float(low), f"{name}_high": float(high)})
    return out
