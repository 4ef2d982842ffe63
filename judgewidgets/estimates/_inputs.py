"""What `estimate_quality` reads: judge scores from a Series or the package's results, labels from a Series or a
labelled table, each value checked and encoded on the metric's 0–1 scale (pass 1 / fail 0, A 1 / tie ½ / B 0)."""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from typing import Any, Literal

import numpy as np
import pandas as pd

from .._errors import ConfigurationError, InputError
from ..labels._plan import Metric
from ..pairwise import PairwiseResult, PanelComparison
from ..scoring import JudgeResult, PanelResult

METRICS: tuple[str, ...] = ("mean", "pass_rate", "win_rate")
Role = Literal["judge", "label"]

_PASS = {"pass": 1.0, "fail": 0.0, "true": 1.0, "false": 0.0}
_WIN = {"a": 1.0, "b": 0.0, "tie": 0.5}
_SHOWN = 5  # items named in an error message


def check_options(metric: object, confidence: object, pass_threshold: object) -> Metric:
    """The metric, checked with `confidence` and `pass_threshold` (ConfigurationError naming what is wrong)."""
    if not isinstance(metric, str) or metric not in METRICS:
        raise ConfigurationError(f"unknown metric {metric!r}: choose one of {', '.join(METRICS)}")
    if not _number(confidence) or not 0.0 < float(confidence) < 1.0:  # type: ignore[arg-type]
        raise ConfigurationError(f"confidence must lie strictly between 0 and 1 (e.g. 0.95), got {confidence!r}")
    if not _number(pass_threshold) or not 0.0 <= float(pass_threshold) <= 1.0:  # type: ignore[arg-type]
        raise ConfigurationError(f"pass_threshold must be a number in [0, 1], got {pass_threshold!r}")
    return metric  # type: ignore[return-value]


def judge_series(judge_scores: Any) -> pd.Series:
    """The judge's verdict per item as a Series (index = item id): a Series as given; a JudgeResult's scores and a
    PanelResult's aggregate (weighted_avg when weighted, else avg) by item position; pairwise results (a list of
    PairwiseResult or PanelComparison, or a compare_many table) by their `winner`; a DataFrame by its `winner`,
    `weighted_avg`, `avg` or `score` column."""
    if isinstance(judge_scores, pd.Series):
        return judge_scores
    if isinstance(judge_scores, JudgeResult):
        return pd.Series(judge_scores.score_list, dtype=float, name=judge_scores.judge)
    if isinstance(judge_scores, PanelResult):
        table = judge_scores.to_df()
        column = "weighted_avg" if "weighted_avg" in table else "avg"
        return table[column].astype(float)
    if isinstance(judge_scores, pd.DataFrame):
        for column in ("winner", "weighted_avg", "avg", "score"):
            if column in judge_scores.columns:
                return judge_scores[column]
        raise InputError(
            "judge_scores is a DataFrame without a winner, weighted_avg, avg or score column "
            f"(columns: {', '.join(map(str, judge_scores.columns[:10]))}); pass the column itself as a Series"
        )
    if isinstance(judge_scores, (PairwiseResult, PanelComparison)):
        judge_scores = [judge_scores]
    if isinstance(judge_scores, Mapping):
        return pd.Series(dict(judge_scores))
    if isinstance(judge_scores, (Sequence, np.ndarray)) and not isinstance(judge_scores, (str, bytes)):
        values = list(judge_scores)
        if values and all(isinstance(v, (PairwiseResult, PanelComparison)) for v in values):
            return pd.Series([v.winner for v in values], dtype=object)
        return pd.Series(values)
    raise InputError(
        f"judge_scores must be a pandas Series (index = item id), a JudgeResult, PanelResult, a list of pairwise "
        f"results or a compare_many table; got {type(judge_scores).__name__}"
    )


def label_series(human_labels: Any) -> pd.Series:
    """The person's labels as a Series on item ids, missing ones (None, NaN) dropped: a Series, a dict, or a
    labelled table with a `label` column on the items' index (what `LabelQueue.labels` gives)."""
    if isinstance(human_labels, pd.DataFrame):
        if "label" not in human_labels.columns:
            raise InputError(
                "human_labels is a DataFrame without a 'label' column "
                f"(columns: {', '.join(map(str, human_labels.columns[:10]))}); pass the labels as a Series"
            )
        labels = human_labels["label"]
    elif isinstance(human_labels, pd.Series):
        labels = human_labels
    elif isinstance(human_labels, Mapping):
        labels = pd.Series(dict(human_labels), dtype=object)
    else:
        raise InputError(
            "human_labels must be a pandas Series on the judged items' ids (or a dict, or a table with a 'label' "
            f"column); got {type(human_labels).__name__}"
        )
    return labels[labels.map(lambda v: not _missing(v))]


def check_unique(series: pd.Series, name: str) -> None:
    """InputError when `series` names an item twice."""
    duplicated = series.index[series.index.duplicated()]
    if len(duplicated):
        raise InputError(f"{name} names {len(duplicated)} item(s) more than once: {few(duplicated)}")


def encode(values: pd.Series, metric: Metric, role: Role, pass_threshold: float) -> np.ndarray:
    """`values` on the metric's 0–1 scale (NaN where missing); InputError naming the items whose value does not
    fit the metric (a score outside [0, 1], a label that is not pass/fail for pass_rate, a verdict not A/B/tie)."""
    if pd.api.types.is_float_dtype(values.dtype) or pd.api.types.is_integer_dtype(values.dtype):
        out = _encode_numbers(values.to_numpy(dtype=float), metric, role, pass_threshold)
    else:
        out = np.array([_encode_one(v, metric, role, pass_threshold) for v in values], dtype=float)
    bad = np.isinf(out)  # _encode_one marks a value that does not fit with inf
    if bad.any():
        who = "judge scores" if role == "judge" else "labels"
        shown = ", ".join(f"{item!r}: {value!r}" for item, value in list(values[bad].items())[:_SHOWN])
        raise InputError(f"{int(bad.sum())} {who} do not fit metric {metric!r} ({_expected(metric, role)}): {shown}")
    return out


def few(items: Sequence[Hashable] | pd.Index) -> str:
    """The first few items, for an error message ("1, 2, 3 and 4 more")."""
    items = list(items)
    shown = ", ".join(repr(i) for i in items[:_SHOWN])
    return shown + (f" and {len(items) - _SHOWN} more" if len(items) > _SHOWN else "")


def _encode_numbers(x: np.ndarray, metric: Metric, role: Role, pass_threshold: float) -> np.ndarray:
    """`_encode_one` over an array of numbers at once (the usual case: a judge's scores on many items)."""
    missing = np.isnan(x)
    fits = np.isfinite(x) & (x >= 0.0) & (x <= 1.0)
    if role == "label" and metric in ("pass_rate", "win_rate"):
        allowed = (0.0, 1.0) if metric == "pass_rate" else (0.0, 0.5, 1.0)
        fits &= np.isin(x, allowed)
    if metric == "pass_rate" and role == "judge":
        x = np.where(x >= pass_threshold, 1.0, 0.0)
    return np.where(missing, np.nan, np.where(fits, x, np.inf))


def _encode_one(value: Any, metric: Metric, role: Role, pass_threshold: float) -> float:
    """One value on the 0–1 scale; NaN when missing, inf when it does not fit."""
    if _missing(value):
        return math.nan
    if isinstance(value, str):
        key = value.strip().lower()
        table = _PASS if metric == "pass_rate" else _WIN if metric == "win_rate" else {}
        return table.get(key, math.inf)
    if isinstance(value, (bool, np.bool_)):
        return float(value) if metric == "pass_rate" else math.inf
    if not _number(value) or not 0.0 <= float(value) <= 1.0:
        return math.inf
    number = float(value)
    if metric == "pass_rate":
        if role == "label":
            return number if number in (0.0, 1.0) else math.inf
        return 1.0 if number >= pass_threshold else 0.0
    if metric == "win_rate" and role == "label":
        return number if number in (0.0, 0.5, 1.0) else math.inf
    return number


def _expected(metric: Metric, role: Role) -> str:
    if metric == "mean":
        return "numbers in [0, 1]; normalise a 1–5 scale as (x − 1) / 4"
    if metric == "pass_rate":
        if role == "label":
            return "binary: pass/fail, 1/0 or True/False"
        return "scores in [0, 1] (compared with pass_threshold), pass/fail or True/False"
    if role == "label":
        return '"A", "B" or "tie" (or 1, 0, 0.5)'
    return '"A", "B" or "tie", or the probability that A is better in [0, 1]'


def _missing(value: Any) -> bool:
    if value is None or value is pd.NA or value is pd.NaT:
        return True
    return isinstance(value, (float, np.floating)) and math.isnan(value)


def _number(value: Any) -> bool:
    return (
        isinstance(value, (int, float, np.integer, np.floating))
        and not isinstance(value, (bool, np.bool_))
        and math.isfinite(value)
    )
