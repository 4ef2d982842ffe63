"""A monotone map from a judge's score to what a person would say: isotonic regression, read piecewise-linearly."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from .._errors import ConfigurationError, configuration_error


class ScoreCalibration(BaseModel):
    """Maps a judge's score in [0, 1] onto the people's scale: P(pass) for pass/fail labels, the expected
    normalised label for scores. Fitted by isotonic regression (pool adjacent violators), so a higher judge score
    never maps lower; between its knots the map is linear, outside them flat.

    Knots are plain numbers, so an aligned judge serialises with its map (`model_dump()`).
    """

    model_config = ConfigDict(frozen=True)

    x: tuple[float, ...] = Field(description="Judge scores at the knots, increasing.")
    y: tuple[float, ...] = Field(description="Calibrated values at the knots, non-decreasing, in [0, 1].")

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
    def fit(cls, scores: Sequence[float] | np.ndarray, targets: Sequence[float] | np.ndarray) -> ScoreCalibration:
        """The least-squares non-decreasing fit of `targets` on `scores` (NaN scores dropped)."""
        s = np.asarray(scores, dtype=float)
        t = np.asarray(targets, dtype=float)
        keep = ~np.isnan(s) & ~np.isnan(t)
        s, t = s[keep], t[keep]
        if len(s) == 0:
            raise ConfigurationError("no scored, labelled items to calibrate on")
        x, y = isotonic_fit(s, t)
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


def isotonic_fit(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Knots of the isotonic (non-decreasing) least-squares fit of y on x: equal x values pooled first, then
    adjacent violators pooled (the PAV algorithm). Agrees with scikit-learn's IsotonicRegression (tests)."""
    order = np.argsort(x, kind="mergesort")
    x, y = x[order], y[order]
    xs, starts = np.unique(x, return_index=True)
    sums = np.add.reduceat(y, starts)
    counts = np.diff(np.append(starts, len(y))).astype(float)
    means: list[float] = []
    weights: list[float] = []
    sizes: list[int] = []
    for total, count in zip(sums, counts):
        means.append(total / count)
        weights.append(count)
        sizes.append(1)
        while len(means) > 1 and means[-2] > means[-1]:
            w = weights[-2] + weights[-1]
            m = (means[-2] * weights[-2] + means[-1] * weights[-1]) / w
            size = sizes[-2] + sizes[-1]
            del means[-1], weights[-1], sizes[-1]
            means[-1], weights[-1], sizes[-1] = m, w, size
    fitted = np.repeat(means, sizes)
    return xs, np.clip(fitted, 0.0, 1.0)
