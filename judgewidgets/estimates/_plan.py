"""`jw.label_plan`: a LabelPlan (judgewidgets.labels) made from a judge's, panel's or pairwise result, or a
Series of scores: the uncertainty read from the judge's own probabilities (p(1 − p)), a panel's mean score or
both orders of a pairwise verdict. The design and its guards are described in `judgewidgets.labels._plan`."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from .._errors import ConfigurationError, InputError
from ..labels._plan import DESIGNS, MIN_SAVING, MIN_UNCERTAINTY, LabelPlan, check_budget_options, make_plan
from ..pairwise import PairwiseResult, PanelComparison
from ..pairwise._records import WIN_POINTS
from ..scoring import JudgeResult, PanelResult
from ._inputs import Metric, check_options, check_unique, encode, few, judge_series

__all__ = ["DESIGNS", "MIN_SAVING", "MIN_UNCERTAINTY", "LabelPlan", "label_plan"]


def label_plan(
    result_or_scores: Any,
    budget: int = 100,
    seed: int = 0,
    uncertainty: Any = None,
    *,
    metric: Metric | None = None,
    pass_threshold: float = 0.5,
    floor: float = 0.2,
    max_cost: float = 0.03,
) -> LabelPlan:
    """Choose `budget` items for a person to label, each with a probability that grows with the judge's
    uncertainty about it, so `estimate_quality(..., plan=plan)` is as narrow as `budget` labels allow.

    - `result_or_scores`: a JudgeResult, PanelResult, pairwise results (a list, or a compare_many table) or a
      Series of scores in [0, 1] (or "A" / "B" / "tie" verdicts) indexed by item id.
    - `uncertainty`: a Series on the same index (the expected squared error of each verdict), or None to read it
      from the scores as p(1 − p): the judge's probabilities (calibrated after `align`), a panel's mean score
      (its judges' disagreement included), a pairwise verdict's P(a better) or the mean of its two orders.
    - `metric`: what the estimate will measure ("mean", "pass_rate", "win_rate"; default "win_rate" for pairwise
      verdicts, else "mean"), with `pass_threshold`; the plan keeps the judge's verdicts on that scale.
    - `floor`: the least share of the budget spread evenly over all items; `max_cost`: the most the interval may
      widen, against a uniform draw of as many labels, should the uncertainty turn out to mean nothing (the plan
      spreads more of the budget evenly until that holds).

    Seeded and reproducible: the same scores, budget and seed give the same plan (`plan.id`). Items the judge has
    no score for are left out of the plan (an estimate cannot use their labels)."""
    pairwise = _is_pairwise(result_or_scores)
    chosen: Metric = metric if metric is not None else ("win_rate" if pairwise else "mean")
    check_options(chosen, 0.95, pass_threshold)
    check_budget_options(budget, seed, floor, max_cost)
    scores = judge_series(result_or_scores)
    check_unique(scores, "result_or_scores")
    soft = _soft_scores(result_or_scores, scores)
    encoded = pd.Series(encode(scores, chosen, "judge", float(pass_threshold)), index=scores.index)
    u = soft * (1.0 - soft) if uncertainty is None else _uncertainty_series(uncertainty, scores.index)
    missing = encoded.isna() | u.isna()
    notes = []
    if missing.any():
        notes.append(
            f"the judge has no score for {int(missing.sum())} item(s) ({few(list(scores.index[missing]))}): they "
            "are left out of the plan (an estimate covers the items the judge scored)"
        )
    kept = ~missing
    if int(kept.sum()) < 2:
        raise InputError(f"a plan needs at least 2 items the judge scored, got {int(kept.sum())}")
    if budget > int(kept.sum()):
        raise ConfigurationError(
            f"budget {budget} is more than the {int(kept.sum())} items the judge scored: label them all, or "
            "lower the budget"
        )
    return make_plan(
        list(scores.index[kept]),
        encoded[kept].to_numpy(dtype=float),
        u[kept].to_numpy(dtype=float),
        list(scores.index[missing]),
        metric=chosen,
        pass_threshold=float(pass_threshold),
        budget=int(budget),
        seed=int(seed),
        floor=float(floor),
        max_cost=float(max_cost),
        notes=notes,
    )


def _is_pairwise(value: Any) -> bool:
    if isinstance(value, (PairwiseResult, PanelComparison)):
        return True
    if isinstance(value, pd.DataFrame):
        return "winner" in value.columns
    if isinstance(value, pd.Series):
        strings = value.dropna()
        return len(strings) > 0 and all(isinstance(v, str) and v.strip().lower() in ("a", "b", "tie") for v in strings)
    if isinstance(value, Sequence) and not isinstance(value, str):
        return len(value) > 0 and all(isinstance(v, (PairwiseResult, PanelComparison)) for v in value)
    return False


def _soft_scores(value: Any, scores: pd.Series) -> pd.Series:
    """Each item's probability-like score in [0, 1] (NaN when unknown), the plan's reading of the judge's
    uncertainty: a pairwise verdict's P(a better), or the mean of its orders' points (A 1, tie ½, B 0); a
    panel's and a judge's score as judged; "A" / "B" / "tie" and pass / fail verdicts as their points."""
    if isinstance(value, (PairwiseResult, PanelComparison)):
        value = [value]
    if (
        isinstance(value, Sequence)
        and not isinstance(value, str)
        and value
        and all(isinstance(v, (PairwiseResult, PanelComparison)) for v in value)
    ):
        return pd.Series([_pair_soft(v) for v in value], index=scores.index, dtype=float)
    if isinstance(value, pd.DataFrame) and "winner" in value.columns:
        soft = value["p_a_better"] if "p_a_better" in value.columns else pd.Series(np.nan, index=value.index)
        orders = [value[c].map(_points) for c in ("winner_ab", "winner_ba") if c in value.columns]
        from_orders = pd.concat(orders, axis=1).mean(axis=1) if orders else value["winner"].map(_points)
        return pd.to_numeric(soft, errors="coerce").fillna(from_orders).astype(float)
    if isinstance(value, (JudgeResult, PanelResult)):
        return scores.astype(float)
    numeric = pd.to_numeric(scores, errors="coerce")
    text = scores.map(lambda v: _points(v) if isinstance(v, str) else np.nan)
    soft = numeric.fillna(text).astype(float)
    bad = soft.notna() & ((soft < 0) | (soft > 1))
    if bad.any():
        raise InputError(
            f"{int(bad.sum())} score(s) are outside [0, 1] ({few(list(soft.index[bad]))}): a plan reads scores on "
            "0–1 (normalise a 1–5 scale as (x − 1) / 4), or give uncertainty= yourself"
        )
    return soft


def _pair_soft(result: PairwiseResult | PanelComparison) -> float:
    if isinstance(result, PanelComparison):
        values = [_pair_soft(v) for v in result.vote_list]
        known = [v for v in values if not math.isnan(v)]
        return float(np.mean(known)) if known else _points(result.winner)
    if result.p_a_better is not None:
        return float(result.p_a_better)
    points = [_points(v.winner) for v in result.verdicts]
    known = [p for p in points if not math.isnan(p)]
    return float(np.mean(known)) if known else math.nan


def _points(winner: Any) -> float:
    if not isinstance(winner, str):
        return math.nan
    key = winner.strip().lower()
    named = {"a": "A", "b": "B", "tie": "tie"}.get(key)
    if named is not None:
        return WIN_POINTS[named]
    return {"pass": 1.0, "fail": 0.0}.get(key, math.nan)


def _uncertainty_series(uncertainty: Any, index: pd.Index) -> pd.Series:
    if isinstance(uncertainty, Mapping):
        uncertainty = pd.Series(dict(uncertainty))
    if not isinstance(uncertainty, pd.Series):
        raise InputError(
            f"uncertainty must be a pandas Series on the items' ids (or a dict), got {type(uncertainty).__name__}"
        )
    check_unique(uncertainty, "uncertainty")
    unknown = uncertainty.index[~uncertainty.index.isin(index)]
    if len(unknown):
        raise InputError(f"uncertainty names {len(unknown)} item(s) the judge did not score: {few(list(unknown))}")
    values = pd.to_numeric(uncertainty, errors="coerce").reindex(index)
    bad = values.notna() & (~np.isfinite(values) | (values < 0))
    not_numbers = uncertainty.notna() & pd.to_numeric(uncertainty, errors="coerce").isna()
    if bad.any() or not_numbers.any():
        shown = list(values.index[bad]) + list(uncertainty.index[not_numbers])
        raise InputError(f"uncertainty must be numbers ≥ 0 (expected squared errors); not so for {few(shown)}")
    return values.astype(float)
