"""Checking the guarantee without a model: judges of known accuracy and calibration, many calibration/test splits.

Each simulated item has an easiness z ~ N(0, 1) that every judge shares (hard items are hard for all, as with
real judges). Judge j is right on item i with probability p_ij = ceiling_j · sigmoid(bias_j + skill_j·z_i +
noise_j·ε_ij), and reports the confidence c_ij = 1 − (1 − p_ij)(1 − overconfidence_j): its true probability when
`overconfidence` is 0 (calibrated), always 1 when it is 1 (a judge that is sure of every verdict, right or
wrong). A `ceiling` below 1 is a judge whose accuracy levels off however easy the item, as a small judge's may
(a calibrated judge whose surest verdicts are right 85 % of the time, not 99 %). Every split draws fresh
calibration and test items, calibrates the cascade with the library's own fixed-sequence code, and measures the
agreement of the test items it decides.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np
import pandas as pd
from pydantic import BaseModel, ConfigDict, Field

from .._errors import ConfigurationError
from ._bounds import AgreementTest, _check_level
from ._calibrate import Walk, fit_with, route


class SimulatedJudge(BaseModel):
    """A judge of known accuracy and calibration (see the module docstring for the model)."""

    model_config = ConfigDict(frozen=True)

    bias: float = Field(1.0, description="Logit of being right on an average item: higher is more accurate.")
    skill: float = Field(1.5, description="How much an item's easiness moves the judge's chance of being right.")
    noise: float = Field(1.0, ge=0, description="Spread of the judge's own item-specific luck (logit scale).")
    overconfidence: float = Field(0.0, ge=0, le=1, description="0: calibrated; 1: reports 1.0 on every verdict.")
    ceiling: float = Field(1.0, gt=0, le=1, description="The most the judge's chance of being right reaches.")

    def accuracy(self, draws: int = 200_000, seed: int = 0) -> float:
        """The judge's overall accuracy, by Monte Carlo over items."""
        rng = np.random.default_rng(seed)
        return float(self._p(rng.standard_normal(draws), rng).mean())

    def _p(self, easiness: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        logit = self.bias + self.skill * easiness + self.noise * rng.standard_normal(easiness.shape)
        return self.ceiling / (1.0 + np.exp(-logit))


def simulate(
    judges: Sequence[SimulatedJudge],
    target_agreement: float = 0.9,
    delta: float = 0.1,
    *,
    n_calibration: int = 500,
    n_test: int = 2000,
    splits: int = 1000,
    seed: int | None = 0,
    walk: Literal["two starts", "paper"] = "two starts",
) -> pd.DataFrame:
    """One row per split: the thresholds, test coverage, each stage's share, the realised agreement of the
    decided test items (`agreement`, NaN when none was decided), their expected agreement (`expected`, the
    mean of the deciding judges' true probabilities: the population value without the test labels' own
    noise), and `holds` (realised agreement ≥ target, or nothing decided). The guarantee says `holds` in at
    least 1 − δ of the splits. `walk="paper"` certifies with the paper's walk (one start, at the most confident
    rows) instead of the two-start walk calibration uses, to compare the two."""
    judges = list(judges)
    if not judges:
        raise ConfigurationError("simulate needs at least one SimulatedJudge")
    target_agreement = _check_level("target_agreement", target_agreement)
    delta = _check_level("delta", delta)
    if n_calibration < 1 or n_test < 1 or splits < 1:
        raise ConfigurationError("n_calibration, n_test and splits must be positive")
    rng = np.random.default_rng(seed)
    if walk not in ("two starts", "paper"):
        raise ConfigurationError(f"walk must be 'two starts' or 'paper', got {walk!r}")
    level = delta / len(judges)
    one: Walk | AgreementTest = (
        Walk(target_agreement, level) if walk == "two starts" else AgreementTest(target_agreement, level)
    )
    walks = [one] * len(judges)
    n = n_calibration + n_test
    rows = []
    for split in range(splits):
        easiness = rng.standard_normal(n)
        p = np.column_stack([j._p(easiness, rng) for j in judges])
        correct = rng.random(p.shape) < p
        overconfidence = np.array([j.overconfidence for j in judges])
        confidence = 1.0 - (1.0 - p) * (1.0 - overconfidence)
        cal, held = slice(0, n_calibration), slice(n_calibration, n)
        fits = fit_with(confidence[cal], correct[cal], walks)
        thresholds = [f.threshold for f in fits]
        deciding = route(confidence[held], thresholds)
        decided = deciding >= 0
        rows_held = np.flatnonzero(decided)
        chosen = deciding[decided]
        realised = correct[held][rows_held, chosen]
        expected = p[held][rows_held, chosen]
        agreement = float(realised.mean()) if len(realised) else float("nan")
        row = {
            "split": split,
            "coverage": float(decided.mean()),
            "agreement": agreement,
            "expected": float(expected.mean()) if len(expected) else float("nan"),
            "holds": bool(not len(realised) or agreement >= target_agreement),
        }
        for j, threshold in enumerate(thresholds):
            row[f"threshold_{j + 1}"] = np.nan if threshold is None else threshold
            row[f"share_{j + 1}"] = float((deciding == j).mean())
        rows.append(row)
    frame = pd.DataFrame(rows)
    frame.attrs.update(
        target_agreement=target_agreement, delta=delta, n_calibration=n_calibration, n_test=n_test, walk=walk
    )
    return frame
