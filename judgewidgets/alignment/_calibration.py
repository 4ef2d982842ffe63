"""Monotone maps from a judge's output to what a person would say: isotonic regression, read piecewise-linearly.
`ScoreCalibration` maps a score onto the labels' scale; `AgreementCalibration` a pairwise verdict's confidence onto
the chance that the person agrees with it."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from .._errors import ConfigurationError, configuration_error
from ..labels._store import content_key, item_key

ITEMS = (
    "Keys of the labelled items it was fitted on (`jw.labels.item_key`; for an item judged from a conversation, "
    "the conversation and its judged turn count too): a cascade will not certify the judge on them, since the map "
    "was shaped by their labels."
)


def calibration_key(item: Any) -> str:
    """How a calibration names an item it was fitted on: `jw.labels.item_key` for texts; for an item judged from a
    conversation (or a pair of them) the messages and the judged turn count too, so two conversations that end in
    the same exchange are two items."""
    views = [getattr(item, name, None) for name in ("conversation", "conversation_a", "conversation_b")]
    if all(view is None for view in views):
        return item_key(item)
    judged = [None if v is None else [v.conversation.to_json(), v.judged] for v in views]
    return content_key(item=item_key(item), conversations=json.dumps(judged))


class ScoreCalibration(BaseModel):
    """Maps a judge's score in [0, 1] onto the people's scale: P(pass) for pass/fail labels, the expected
    normalised label for scores. Fitted by isotonic regression (pool adjacent violators), so a higher judge score
    never maps lower; between its knots the map is linear, outside them flat.

    Knots are plain numbers, so an aligned judge serialises with its map (`model_dump()`).
    """

    model_config = ConfigDict(frozen=True)

    x: tuple[float, ...] = Field(description="Judge scores at the knots, increasing.")
    y: tuple[float, ...] = Field(description="Calibrated values at the knots, non-decreasing, in [0, 1].")
    items: tuple[str, ...] = Field((), description=ITEMS)

    def __init__(self, **fields: Any) -> None:
        try:
            super().__init__(**fields)
        except ValidationError as exc:
            raise configuration_error("ScoreCalibration", exc) from None

    @model_validator(mode="after")
    def _check(self) -> ScoreCalibration:
        if len(self.x) != len(self.y) or not self.x:
            raise ValueError("a calibration needs as many y as x knots, at least one")
        if any(b <= a for a, b in zip(self.x, self.x[1:])):
            raise ValueError("calibration knots x must increase")
        if any(b < a - 1e-12 for a, b in zip(self.y, self.y[1:])):
            raise ValueError("calibration values y must not decrease")
        return self

    @classmethod
    def fit(
        cls, scores: Sequence[float] | np.ndarray, targets: Sequence[float] | np.ndarray, prior: float = 1.0
    ) -> ScoreCalibration:
        """The least-squares non-decreasing fit of `targets` on `scores` (NaN scores dropped), each pooled block's
        value drawn towards 0.5 by `prior` pseudo-observations (the Laplace rule: a block of 3 passes maps to 0.8,
        not to a certain 1.0 that three labels cannot show); `prior=0` is plain isotonic regression."""
        s = np.asarray(scores, dtype=float)
        t = np.asarray(targets, dtype=float)
        keep = ~np.isnan(s) & ~np.isnan(t)
        s, t = s[keep], t[keep]
        if len(s) == 0:
            raise ConfigurationError("no scored, labelled items to calibrate on")
        x, y = isotonic_fit(s, t, prior)
        return cls(x=tuple(float(v) for v in x), y=tuple(float(v) for v in y))

    def __call__(self, score: float) -> float:
        """The calibrated value of one score (NaN stays NaN)."""
        if score != score:  # NaN
            return score
        return float(np.interp(score, self.x, self.y))

    def apply(self, scores: Sequence[float] | np.ndarray) -> np.ndarray:
        """The calibrated values of many scores (NaN stays NaN)."""
        s = np.asarray(scores, dtype=float)
        out = np.interp(s, self.x, self.y)
        out[np.isnan(s)] = np.nan
        return out


def isotonic_fit(x: np.ndarray, y: np.ndarray, prior: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """Knots of the isotonic (non-decreasing) least-squares fit of y on x: equal x values pooled first, then
    adjacent violators pooled (the PAV algorithm); with `prior`, each block then takes `prior` pseudo-observations
    of 0.5 and is pooled again where that made neighbours cross. With prior 0 it agrees with scikit-learn's
    IsotonicRegression (tests)."""
    order = np.argsort(x, kind="mergesort")
    x, y = x[order], y[order]
    xs, starts = np.unique(x, return_index=True)
    sums = np.add.reduceat(y, starts)
    counts = np.diff(np.append(starts, len(y))).astype(float)
    means, weights, sizes = _pool(sums / counts, counts, np.ones(len(counts), dtype=int), merge_equal=prior > 0)
    if prior > 0:  # each block of equal fitted values is one estimate: draw it towards 0.5, then re-pool
        shrunk = (means * weights + 0.5 * prior) / (weights + prior)
        means, weights, sizes = _pool(shrunk, weights + prior, sizes)
    fitted = np.repeat(means, sizes)
    return xs, np.clip(fitted, 0.0, 1.0)


def _pool(
    values: np.ndarray, weights: np.ndarray, sizes: np.ndarray, merge_equal: bool = False
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Pool adjacent violators: blocks (mean, weight, how many knots) that no longer decrease (nor stay level,
    with `merge_equal`)."""
    means: list[float] = []
    pooled: list[float] = []
    counts: list[int] = []
    for value, weight, size in zip(values, weights, sizes):
        means.append(float(value))
        pooled.append(float(weight))
        counts.append(int(size))
        while len(means) > 1 and (means[-2] > means[-1] or (merge_equal and means[-2] == means[-1])):
            w = pooled[-2] + pooled[-1]
            m = (means[-2] * pooled[-2] + means[-1] * pooled[-1]) / w
            c = counts[-2] + counts[-1]
            del means[-1], pooled[-1], counts[-1]
            means[-1], pooled[-1], counts[-1] = m, w, c
    return np.array(means), np.array(pooled), np.array(counts)


class AgreementCalibration(BaseModel):
    """P(the person agrees with a pairwise verdict), from the judge's own probability that its verdict is right.

    A pairwise judge's confidence is P(the winner is better) for A and B, and 1 − |P(a better) − P(b better)| for
    a tie: numbers on the judge's scale, not the chance that a person would give the same verdict (a tie the judge
    is sure of is rarely a person's tie). Fitted on labelled pairs, one monotone map per kind of verdict — decisive
    (A or B: both sides share it, the lean having taken out the judge's side preference) and tie — turns the
    confidence into that chance, which is what a cascade certifies. A kind of verdict the labels never saw maps to
    0.5. It never changes a verdict.
    """

    model_config = ConfigDict(frozen=True)

    decisive: ScoreCalibration | None = Field(None, description="P(agree | an A or B verdict at this confidence).")
    tie: ScoreCalibration | None = Field(None, description="P(agree | a tie verdict at this confidence).")
    items: tuple[str, ...] = Field((), description=ITEMS)

    def __init__(self, **fields: Any) -> None:
        try:
            super().__init__(**fields)
        except ValidationError as exc:
            raise configuration_error("AgreementCalibration", exc) from None

    @classmethod
    def fit(
        cls,
        ties: Sequence[bool] | np.ndarray,
        confidences: Sequence[float] | np.ndarray,
        agrees: Sequence[bool] | np.ndarray,
        prior: float = 1.0,
    ) -> AgreementCalibration:
        """Fit on labelled verdicts: whether each was a tie, the judge's confidence in it, and whether the person
        agreed (NaN confidences dropped); each map as `ScoreCalibration.fit` with `prior`."""
        tie = np.asarray(ties, dtype=bool)
        confidence = np.asarray(confidences, dtype=float)
        agreed = np.asarray(agrees, dtype=float)
        known = ~np.isnan(confidence)
        maps: dict[str, ScoreCalibration | None] = {}
        for name, rows in (("decisive", known & ~tie), ("tie", known & tie)):
            maps[name] = ScoreCalibration.fit(confidence[rows], agreed[rows], prior) if rows.any() else None
        return cls(**maps)

    def __call__(self, tie: bool, confidence: float) -> float:
        """The calibrated probability that the person agrees with a verdict (NaN stays NaN)."""
        mapping = self.tie if tie else self.decisive
        if mapping is None:
            return float("nan") if confidence != confidence else 0.5
        return mapping(confidence)
