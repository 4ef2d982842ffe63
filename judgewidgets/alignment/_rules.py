"""Decision rules: how a judge's score (or P(a better)) becomes a person's label, before and after fitting."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np

from ._calibration import AgreementCalibration, ScoreCalibration
from ._labels import Labels

MISSING = -1  # the predicted class of an item the judge failed on


class FittedRule(Protocol):
    """A rule ready to label items from their signals: `predict` gives class indices (MISSING where the judge
    failed), `values` what a panel combines (a calibrated score, or the class for pairs)."""

    def predict(self, signals: np.ndarray) -> np.ndarray: ...

    def values(self, signals: np.ndarray) -> np.ndarray: ...


class Rule(Protocol):
    """A family of decision rules, fitted on labelled signals (no model call)."""

    @property
    def name(self) -> str: ...

    def fit(self, signals: np.ndarray, labels: Labels, rows: np.ndarray) -> FittedRule: ...


def nearest_level(values: np.ndarray, levels: np.ndarray) -> np.ndarray:
    """Index of the level nearest each value (MISSING for NaN); a value half-way goes up."""
    out = np.full(len(values), MISSING)
    ok = ~np.isnan(values)
    distance = np.abs(values[ok, None] - levels[None, :]) - 1e-9 * np.arange(len(levels))[None, :]
    out[ok] = np.argmin(distance, axis=1)
    return out


@dataclass(frozen=True)
class LevelRule:
    """Pass/fail and scores: the (calibrated) score read as the nearest level — pass at 0.5 and above."""

    levels: np.ndarray
    calibration: ScoreCalibration | None = None

    def values(self, signals: np.ndarray) -> np.ndarray:
        return signals if self.calibration is None else self.calibration.apply(signals)

    def predict(self, signals: np.ndarray) -> np.ndarray:
        return nearest_level(self.values(signals), self.levels)


@dataclass(frozen=True)
class AsJudged:
    """The judge's own decision rule (the 'before' of an alignment): scores at 0.5, pairs at the judge's tie
    margin."""

    name: str = "as judged"
    tie_margin: float = 0.0

    def fit(self, signals: np.ndarray, labels: Labels, rows: np.ndarray) -> FittedRule:
        if labels.kind == "pairwise":
            return PairRule(0.0, self.tie_margin).with_agreement(signals, labels, rows)
        return LevelRule(labels.level_values())


@dataclass(frozen=True)
class Calibrated:
    """Isotonic calibration of the score onto the labels (pass/fail and scores)."""

    name: str = "calibrated"

    def fit(self, signals: np.ndarray, labels: Labels, rows: np.ndarray) -> FittedRule:
        if np.isnan(signals[rows]).all():  # the judge failed on every training item: nothing to map
            return LevelRule(labels.level_values())
        return LevelRule(labels.level_values(), ScoreCalibration.fit(signals[rows], labels.targets[rows]))


@dataclass(frozen=True)
class PairRule:
    """Pairs: A when P(a better) − `lean` leads P(b better) by more than `tie_margin`, B when it trails by more,
    else a tie. `lean` corrects a judge that favours one side; the margin matches how often people call ties.
    `agreement` (fitted with the rule, on the same rows) turns the judge's confidence in each verdict into the
    chance that the person agrees; it changes no verdict."""

    lean: float
    tie_margin: float
    agreement: AgreementCalibration | None = None

    def predict(self, signals: np.ndarray) -> np.ndarray:
        out = np.full(len(signals), MISSING)
        ok = ~np.isnan(signals)
        lead = 2 * (signals[ok] - self.lean) - 1
        out[ok] = np.where(lead > self.tie_margin, 0, np.where(lead < -self.tie_margin, 1, 2))
        return out

    def confidence(self, signals: np.ndarray) -> np.ndarray:
        """The judge's own confidence in each verdict, as its results report it: P(the winner is better) after the
        lean (clipped to [0, 1]), or 1 − |P(a better) − P(b better)| for a tie; NaN where it failed."""
        p = np.clip(signals - self.lean, 0.0, 1.0)
        lead = 2 * p - 1
        return np.where(np.abs(lead) <= self.tie_margin, 1 - np.abs(lead), np.where(lead > 0, p, 1 - p))

    def with_agreement(self, signals: np.ndarray, labels: Labels, rows: np.ndarray) -> PairRule:
        """This rule with its agreement calibration fitted on `rows`."""
        s = signals[rows]
        predicted = self.predict(s)
        agreement = AgreementCalibration.fit(predicted == 2, self.confidence(s), predicted == labels.codes[rows])
        return PairRule(self.lean, self.tie_margin, agreement)

    def values(self, signals: np.ndarray) -> np.ndarray:
        predicted = self.predict(signals).astype(float)
        predicted[predicted == MISSING] = np.nan
        return predicted


LEANS = np.round(np.arange(-0.3, 0.3001, 0.01), 4)
MARGINS = np.round(np.arange(0.0, 0.6001, 0.02), 4)


@dataclass(frozen=True)
class FittedPairRule:
    """A lean and a tie margin chosen on labelled pairs for accuracy; among equals the smallest change."""

    name: str = "lean and tie margin"

    def fit(self, signals: np.ndarray, labels: Labels, rows: np.ndarray) -> FittedRule:
        s, truth = signals[rows], labels.codes[rows]
        ok = ~np.isnan(s)
        s, truth = s[ok], truth[ok]
        if len(s) == 0:
            return PairRule(0.0, 0.0)
        lead = 2 * (s[None, :, None] - LEANS[:, None, None]) - 1  # leans × items × 1
        predicted = np.where(lead > MARGINS, 0, np.where(lead < -MARGINS, 1, 2))  # leans × items × margins
        hits = (predicted == truth[None, :, None]).sum(axis=1)  # leans × margins
        cost = np.abs(LEANS)[:, None] + MARGINS[None, :]
        best = np.flatnonzero((hits == hits.max()).ravel())
        choice = best[np.argmin(cost.ravel()[best])]
        i, j = np.unravel_index(choice, hits.shape)
        return PairRule(float(LEANS[i]), float(MARGINS[j])).with_agreement(signals, labels, rows)


def member_weights(values: np.ndarray, labels: Labels, rows: np.ndarray, pairwise: bool) -> np.ndarray:
    """Each panel member's weight from its agreement on `rows`: its accuracy above the most frequent class's
    share (what always answering that class would score), never below a small floor."""
    truth = labels.codes[rows]
    base = np.bincount(truth, minlength=len(labels.classes)).max() / max(len(truth), 1)
    weights = []
    for j in range(values.shape[1]):
        v = values[rows, j]
        predicted = v if pairwise else nearest_level(v, labels.level_values())
        ok = ~np.isnan(v)
        rate = float((predicted[ok].astype(int) == truth[ok]).mean()) if ok.any() else 0.0
        weights.append(max(rate - base, 0.0) + 0.01)
    w = np.asarray(weights)
    return w / w.sum()


@dataclass(frozen=True)
class Combined:
    """A panel's rule: members' values combined with `weights` — a weighted mean read as the nearest level
    (scores), or a weighted vote (pairs, a tie when the top classes are level)."""

    weights: np.ndarray
    levels: np.ndarray | None

    def values(self, signals: np.ndarray) -> np.ndarray:
        ok = ~np.isnan(signals)
        w = np.where(ok, self.weights[None, :], 0.0)
        total = w.sum(axis=1)
        if self.levels is not None:
            mean = np.where(total > 0, (np.nan_to_num(signals) * w).sum(axis=1) / np.where(total > 0, total, 1), np.nan)
            return mean
        votes = np.stack([(np.where(ok, signals, -1) == c) * w for c in range(3)], axis=-1).sum(axis=1)
        top = votes.max(axis=1)
        leaders = (votes == top[:, None]).sum(axis=1)
        winner = np.where(leaders == 1, votes.argmax(axis=1), 2).astype(float)
        winner[total == 0] = np.nan
        return winner

    def predict(self, signals: np.ndarray) -> np.ndarray:
        values = self.values(signals)
        if self.levels is not None:
            return nearest_level(values, self.levels)
        out = np.where(np.isnan(values), MISSING, np.nan_to_num(values)).astype(int)
        return out


@dataclass(frozen=True)
class PanelWeights:
    """Panel members combined with equal weights (`fitted=False`) or weights from their agreement on the
    training labels."""

    fitted: bool
    pairwise: bool

    @property
    def name(self) -> str:
        return "weights from agreement" if self.fitted else "equal weights"

    def fit(self, signals: np.ndarray, labels: Labels, rows: np.ndarray) -> FittedRule:
        n = signals.shape[1]
        weights = member_weights(signals, labels, rows, self.pairwise) if self.fitted else np.full(n, 1.0 / n)
        return Combined(weights, None if self.pairwise else labels.level_values())
