"""`jw.estimate_quality`: a quality number (mean score, pass rate, win rate) from the judge's verdicts on every item
and a person's labels on a few, by PPI++, beside what the judge alone and the labels alone would say."""

from __future__ import annotations

import html
import warnings
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from pydantic import BaseModel, ConfigDict, Field

from .._errors import InputError
from .._ppi import MeanEstimate, critical_value, judge_mean, labels_mean, ppi_mean, weighted_ppi_mean
from .._saved import Dump, Keepable, plain
from ..labels._plan import LabelPlan, check_plan_labels
from ._inputs import Metric, check_options, check_unique, encode, few, judge_series, label_series

if TYPE_CHECKING:
    import altair as alt

Interval = tuple[float, float, float]
METHODS: tuple[str, ...] = ("ppi", "labels only", "judge only")
PPI = "PPI++"
ACTIVE = "active PPI++ (each label weighted by 1 / the probability it was drawn with)"


class QualityEstimate(BaseModel, Keepable):
    """A PPI++ estimate of a quality metric with its interval, beside the labels-only and judge-only ones.

    `effective_labels` is what the judge was worth: n × (labels-only variance / PPI variance), the variances being
    the squared standard errors behind the two intervals shown, so it is the number of labels the labels alone
    would need for the PPI interval's precision (fewer than n when the judge knows nothing: tuning λ costs one
    degree of freedom).
    """

    model_config = ConfigDict(frozen=True)

    metric: Metric
    confidence: float
    estimate: float = Field(description="PPI++ estimate of the metric.")
    low: float
    high: float
    judge_only: Interval = Field(description="(estimate, low, high) from the judge's verdicts alone (blind to bias).")
    labels_only: Interval = Field(description="(estimate, low, high) from the labels alone.")
    n_items: int = Field(description="Items the judge scored and the estimate covers (labelled ones included).")
    n_labelled: int
    effective_labels: float
    lam: float = Field(description="PPI++'s power-tuned weight of the judge, in [0, 1] (0: the labels alone).")
    small_sample: bool = Field(description="t quantiles and unbiased variances (True) or the plain CLT interval.")
    pass_threshold: float | None = None
    notes: tuple[str, ...] = Field((), description="What the numbers rest on when it is not the usual.")
    estimator: str = Field(PPI, description="Which estimator made `estimate`: PPI++, or active PPI++ on a plan.")
    plan: str | None = Field(None, description="The id of the label plan the labels were drawn by (active PPI++).")
    n_by_hand: int = Field(0, description="Labels given outside the plan's draw: kept apart, not in the estimate.")
    se: float = Field(float("nan"), description="The estimate's standard error.")
    se_fixed: float = Field(
        float("nan"), description="The part of se² more labels do not shrink (the judge's own variance over N)."
    )
    df: float | None = Field(None, description="Degrees of freedom of the t quantile (None: normal).")

    @property
    def width(self) -> float:
        return self.high - self.low

    def labels_needed(self, target_width: float) -> int | None:
        """About how many more labels (drawn the same way) bring the interval's width down to `target_width`: 0
        when it is there already, None when no number of labels can (the judge's own variance over its N items
        is wider) or it would take more labels than there are items. The part of se² that falls with labels is
        taken to fall as 1/n."""
        if not isinstance(target_width, (int, float)) or isinstance(target_width, bool) or not target_width > 0:
            raise InputError(f"target_width must be a positive number, got {target_width!r}")
        if self.width <= target_width:
            return 0
        if not (np.isfinite(self.se) and np.isfinite(self.se_fixed)):
            return None
        per_label = self.n_labelled * max(self.se**2 - self.se_fixed, 0.0)
        lost = 0 if self.df is None else self.n_labelled - int(self.df)
        total = self.n_labelled
        for _ in range(3):  # the quantile of the projected number of labels (t with its df, or normal)
            q = float(critical_value(self.confidence, None if self.df is None else max(total - lost, 1)))
            room = (target_width / (2 * q)) ** 2 - self.se_fixed
            if room <= 0:
                return None
            total = max(int(np.ceil(per_label / room)), self.n_labelled + 1)
        return None if total > self.n_items else total - self.n_labelled

    def _dump(self) -> Dump:
        """The estimate as one record; the headline is the estimate, its interval and the labels it was worth."""
        return Dump(
            kind="estimate",
            records={"estimate": [plain(self.model_dump())]},
            metrics={
                "estimate": self.estimate,
                "low": self.low,
                "high": self.high,
                "effective_labels": self.effective_labels,
                "n_labelled": self.n_labelled,
            },
        )

    @classmethod
    def _restore(cls, dump: Dump) -> QualityEstimate:
        return cls.model_validate(dump.rows("estimate")[0])

    def to_df(self) -> pd.DataFrame:
        """One row per method (ppi, labels only, judge only): estimate, low, high, width, n (items whose data it
        used) and labels (how many of them a person labelled)."""
        rows = [
            (self.estimate, self.low, self.high, self.n_items, self.n_labelled),
            (*self.labels_only, self.n_labelled, self.n_labelled),
            (*self.judge_only, self.n_items, 0),
        ]
        frame = pd.DataFrame(rows, columns=["estimate", "low", "high", "n", "labels"])
        frame.insert(0, "method", list(METHODS))
        frame.insert(4, "width", frame["high"] - frame["low"])
        return frame

    def chart(self) -> alt.LayerChart:
        """The three intervals side by side, with tooltips."""
        from ._chart import quality_chart

        return quality_chart(self)

    def summary(self) -> str:
        """One sentence: the estimate with its interval, the two others, and what the judge was worth."""
        labels, judge = self.labels_only, self.judge_only
        how = PPI if self.estimator == PPI else f"active PPI++ (plan {self.plan})"
        return (
            f"{self.metric} {self.estimate:.3f} [{self.low:.3f}, {self.high:.3f}] ({self.confidence:.0%}, {how} on "
            f"{self.n_labelled} labels and {self.n_items} judged items, λ = {self.lam:.2f}); labels only "
            f"{labels[0]:.3f} [{labels[1]:.3f}, {labels[2]:.3f}], judge only {judge[0]:.3f} "
            f"[{judge[1]:.3f}, {judge[2]:.3f}]; the judge was worth {self.effective_labels:.1f} labels"
        )

    def __repr__(self) -> str:
        return f"QualityEstimate({self.summary()})"

    def __str__(self) -> str:
        return self.summary()

    def _repr_html_(self) -> str:
        notes = "".join(f"<li>{html.escape(note)}</li>" for note in self.notes)
        table = self.to_df().round(4).to_html(index=False)
        return f"<p>{html.escape(self.summary())}</p>{table}" + (f"<ul>{notes}</ul>" if notes else "")


def estimate_quality(
    judge_scores: Any,
    human_labels: Any,
    metric: Metric = "mean",
    confidence: float = 0.95,
    *,
    pass_threshold: float = 0.5,
    small_sample: bool = True,
    plan: LabelPlan | None = None,
) -> QualityEstimate:
    """Estimate a quality metric from the judge's verdicts on every item and a person's labels on a few.

    The estimate is PPI++ (Angelopoulos, Duchi & Zrnic 2023): the judge's mean on the unlabelled items (PPI's N
    sample, independent of the n labelled ones), weighted by a tuned λ in [0, 1], corrected by the judge's error on
    the labelled ones; the judge-only estimate is its mean on every item. It stays unbiased however biased the
    judge is, and its interval is narrower than the labels' alone by about sqrt(1 − ρ²) when the judge's verdicts
    correlate ρ with the labels (about as wide when the judge knows nothing).

    - `judge_scores`: a Series over all items (index = item id), a JudgeResult or PanelResult (per-item aggregate,
      indexed by position), a list of pairwise results or a compare_many table (its `winner`).
    - `human_labels`: a Series (or dict, or a table with a `label` column such as `LabelQueue.labels`) on a subset
      of the same ids; None / NaN labels count as unlabelled.
    - `metric`: "mean" (scores and labels in [0, 1]), "pass_rate" (score ≥ `pass_threshold`; labels pass/fail,
      1/0 or True/False) or "win_rate" ("A" / "B" / "tie", A's win counting 1 and a tie ½).
    - `small_sample=True`: Student-t intervals with the degrees of freedom the labels leave (n − 2 for PPI++
      when its fitted λ lets the judge in; n − 1 for the labels alone), and for pass_rate / win_rate (and a mean
      of labels that are all 0 or 1) two pseudo-disagreements in the variance (a judge may agree on all n
      labelled items and still err on a few percent of the rest). In simulation they covered 94–99 % at
      nominal 95 % with 10–50 labels, where the normal intervals fell to 77–95 %. False gives the asymptotic
      CLT intervals, equal to `ppi-python`'s `ppi_mean_ci`.

    - `plan`: the `jw.label_plan` the labels were drawn by. The estimate is then active PPI++ (`estimator` says
      so): each label weighted by 1 / the probability its item was drawn with (a Hájek mean of the judge's
      errors, λ tuned on the weighted terms), which keeps it unbiased however the plan favoured uncertain items.
      Labels on items the plan did not draw were not a random choice: they are kept apart (`n_by_hand`) and left
      out. Stopping before the plan's last item is fine (the first k drawn items are a sample of their own); drawn
      items skipped before the last labelled one are taken as missing at random. A uniform plan gives PPI++ on
      its labels, as without a plan.

    What it needs: the labelled items must be a random sample of the items (not the ones the judge failed, not the
    first rows of a sorted table), or drawn by `plan`. A judge that failed on a labelled item is an error;
    unlabelled items it failed on are left out with a warning, so the estimate covers the items the judge could
    score (unbiased for all of them only if its failures are unrelated to quality).
    """
    metric = check_options(metric, confidence, pass_threshold)
    threshold = float(pass_threshold)
    scores = judge_series(judge_scores)
    if plan is not None and not isinstance(plan, LabelPlan):
        raise InputError(
            f"plan must be the LabelPlan the labels were drawn by (jw.label_plan), got {type(plan).__name__}"
        )
    check_plan_labels(human_labels, plan)
    labels = label_series(human_labels)
    check_unique(scores, "judge_scores")
    check_unique(labels, "human_labels")
    if len(labels) == 0:
        raise InputError("no labels: human_labels holds no label for any item (None and NaN count as unlabelled)")
    unknown = labels.index[~labels.index.isin(scores.index)]
    if len(unknown):
        raise InputError(
            f"{len(unknown)} labelled item(s) were not scored by the judge (not in judge_scores' index): "
            f"{few(unknown)}; labels must be on a subset of the judged items' ids"
        )
    notes: list[str] = []
    by_hand = 0
    if plan is not None:
        labels, by_hand = _drawn_labels(labels, plan, scores, notes)
    if len(labels) < 2:
        raise InputError(f"one label is not enough for an interval: label at least 2 items (got {len(labels)})")
    f_all = pd.Series(encode(scores, metric, "judge", threshold), index=scores.index)
    y = encode(labels, metric, "label", threshold)
    f_labelled = f_all.loc[labels.index].to_numpy()
    failed = np.isnan(f_labelled)
    if failed.any():
        raise InputError(
            f"the judge has no score for {int(failed.sum())} labelled item(s) ({few(labels.index[failed])}); "
            "rerun the judge on them or leave their labels out"
        )
    unlabelled = f_all[~f_all.index.isin(labels.index)]
    dropped = int(unlabelled.isna().sum())
    if dropped:
        message = (
            f"the judge has no score for {dropped} of {len(unlabelled)} unlabelled items; they are left out, so the "
            "estimate covers the items it scored (valid for all only if its failures are unrelated to quality)"
        )
        warnings.warn(message, RuntimeWarning, stacklevel=2)
        notes.append(message)
    f_unlabelled = unlabelled.dropna().to_numpy()
    if plan is None or plan.design == "uniform":
        if plan is not None:
            notes.append(f"plan {plan.id} draws uniformly: PPI++ on its {len(y)} labels, as on any random sample")
        estimate = _estimate(metric, float(confidence), y, f_labelled, f_unlabelled, small_sample, threshold, notes)
        return estimate.model_copy(update={"plan": None if plan is None else plan.id, "n_by_hand": by_hand})
    weights = 1.0 / _drawn_probabilities(plan, labels.index)
    return _active_estimate(
        metric, float(confidence), y, f_labelled, weights, f_unlabelled, small_sample, threshold, notes, plan, by_hand
    )


def _drawn_labels(labels: pd.Series, plan: LabelPlan, scores: pd.Series, notes: list[str]) -> tuple[pd.Series, int]:
    """The labels on items `plan` drew (the others are counted and left out); InputError when the plan is not of
    these items."""
    planned = plan.table[plan.table["order"].notna()]
    missing = pd.Index(planned["item"])[~pd.Index(planned["item"]).isin(scores.index)]
    if len(missing):
        raise InputError(
            f"plan {plan.id} was made for other items: {len(missing)} of its items are not in judge_scores "
            f"({few(list(missing))}); pass the judge's scores the plan was made from"
        )
    scored = scores.index[scores.notna()]
    extra = scored[~scored.isin(planned["item"])]
    if len(extra):
        raise InputError(
            f"judge_scores has {len(extra)} scored item(s) plan {plan.id} does not cover ({few(list(extra))}): the "
            "plan could never draw them; pass the scores the plan was made from"
        )
    drawn = planned[planned["drawn"]]
    inside = labels.index.isin(drawn["item"])
    by_hand = int((~inside).sum())
    if by_hand:
        notes.append(
            f"{by_hand} label(s) on items plan {plan.id} did not draw ({few(list(labels.index[~inside]))}) are kept "
            "apart: not a random draw, they are not in the estimate"
        )
    labelled = drawn[drawn["item"].isin(labels.index)]
    if len(labelled):
        last = int(labelled["order"].max())
        skipped = int((~drawn["item"].isin(labels.index) & (drawn["order"] < last)).sum())
        if skipped:
            notes.append(
                f"{skipped} drawn item(s) before the last one labelled have no label: taken as missing at random"
            )
    return labels[inside], by_hand


def _drawn_probabilities(plan: LabelPlan, items: pd.Index) -> np.ndarray:
    """The probability each labelled item was drawn with, for the first k of the plan's order actually reached:
    items certain to be drawn keep 1; the others' probabilities scale by the share of the rest reached (which a
    weighted mean does not see, except beside the certain ones)."""
    table = plan.table.set_index("item")
    probabilities = table.loc[list(items), "probability"].to_numpy(dtype=float)
    drawn = plan.table[plan.table["drawn"]]
    certain = drawn["probability"] >= 1.0 - 1e-12
    reached = int(drawn.loc[drawn["item"].isin(items), "order"].max())
    rest = int((~certain).sum())
    if rest:
        reached_rest = max(reached - int(certain.sum()), 1)
        scale = min(reached_rest / rest, 1.0)
        probabilities = np.where(probabilities >= 1.0 - 1e-12, 1.0, probabilities * scale)
    return probabilities


def _active_estimate(
    metric: Metric,
    confidence: float,
    y: np.ndarray,
    f_labelled: np.ndarray,
    weights: np.ndarray,
    f_unlabelled: np.ndarray,
    small_sample: bool,
    threshold: float,
    notes: list[str],
    plan: LabelPlan,
    by_hand: int,
) -> QualityEstimate:
    """Active PPI++ on labels drawn with known probabilities, beside the weighted labels alone and the judge."""
    n = len(y)
    corners = small_sample and (metric != "mean" or _binary(y))
    f = np.concatenate([f_labelled, f_unlabelled])
    y_all = np.concatenate([y, np.full(len(f_unlabelled), np.nan)])
    w = np.concatenate([weights, np.zeros(len(f_unlabelled))])
    lam = None if not (small_sample and n < 3) else 0.0
    if lam == 0.0:
        notes.append("2 labels leave no degree of freedom to tune λ: the estimate is the labels'")
    active = weighted_ppi_mean(y_all, f, w, lam, small_sample=small_sample, corners=corners)
    labels = weighted_ppi_mean(y_all, f, w, 0.0, small_sample=small_sample, corners=corners)
    judge = judge_mean(f, small_sample=small_sample)
    return _assemble(
        metric,
        confidence,
        active,
        labels,
        judge,
        y,
        len(f),
        small_sample,
        threshold,
        notes,
        estimator=ACTIVE,
        plan=plan.id,
        n_by_hand=by_hand,
    )


def _estimate(
    metric: Metric,
    confidence: float,
    y: np.ndarray,
    f_labelled: np.ndarray,
    f_unlabelled: np.ndarray,
    small_sample: bool,
    threshold: float,
    notes: list[str],
) -> QualityEstimate:
    n = len(y)
    corners = small_sample and (metric != "mean" or _binary(y))
    labels = labels_mean(y, small_sample=small_sample, corners=corners)
    judge = judge_mean(np.concatenate([f_labelled, f_unlabelled]), small_sample=small_sample)
    ppi: MeanEstimate
    if len(f_unlabelled) == 0:
        notes.append("every judged item is labelled: the judge adds nothing, the estimate is the labels'")
        ppi = labels
    elif small_sample and n < 3:
        notes.append("2 labels leave no degree of freedom to tune λ: the estimate is the labels'")
        ppi = ppi_mean(y, f_labelled, f_unlabelled, lam=0.0, small_sample=small_sample, corners=corners)
    else:
        ppi = ppi_mean(y, f_labelled, f_unlabelled, small_sample=small_sample, corners=corners)
    if not corners and n and np.allclose(y, f_labelled):
        notes.append(
            f"the judge's score equals the label on all {n} labelled items: the interval cannot see errors rarer "
            f"than about 3/{n} of items; label more to rule them out"
        )
    return _assemble(metric, confidence, ppi, labels, judge, y, n + len(f_unlabelled), small_sample, threshold, notes)


def _assemble(
    metric: Metric,
    confidence: float,
    chosen: MeanEstimate,
    labels: MeanEstimate,
    judge: MeanEstimate,
    y: np.ndarray,
    n_items: int,
    small_sample: bool,
    threshold: float,
    notes: list[str],
    **fields: Any,
) -> QualityEstimate:
    """The estimate `chosen` (PPI++ or active PPI++) beside the labels' and the judge's, with what it was worth."""
    n = len(y)
    if np.ptp(y) == 0 and not (small_sample and metric != "mean"):
        notes.append(
            f"all {n} labels are {y[0]:g}: an interval from a normal approximation cannot see a rate it has not "
            "observed and is too narrow; label more items"
        )
    chosen_var, labels_var = float(chosen.se) ** 2, float(labels.se) ** 2
    effective = n * labels_var / chosen_var if chosen_var > 0 else float(n if labels_var == 0 else np.inf)
    low, high = chosen.interval(confidence)
    return QualityEstimate(
        metric=metric,
        confidence=confidence,
        estimate=float(chosen.estimate),
        low=float(low),
        high=float(high),
        judge_only=_triple(judge, confidence),
        labels_only=_triple(labels, confidence),
        n_items=n_items,
        n_labelled=n,
        effective_labels=effective,
        lam=float(chosen.lam),
        small_sample=small_sample,
        pass_threshold=threshold if metric == "pass_rate" else None,
        notes=tuple(notes),
        se=float(chosen.se),
        se_fixed=float(chosen.fixed),
        df=None if chosen.df is None else float(np.asarray(chosen.df)),
        **fields,
    )


def _triple(estimate: MeanEstimate, confidence: float) -> Interval:
    low, high = estimate.interval(confidence)
    return float(estimate.estimate), float(low), float(high)


def _binary(y: np.ndarray) -> bool:
    """Labels that are all 0 or 1 (pass / fail scored as a mean): disagreements are rare events there too, so the
    small-sample interval counts the pseudo-disagreements as for a pass rate."""
    values = np.asarray(y, dtype=float)
    return bool(len(values)) and bool(np.all((values == 0.0) | (values == 1.0)))
