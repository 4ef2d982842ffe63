"""Cross-fitting: every item is predicted by a rule, and a choice among candidates, fitted without its fold.

An item's fold never sees itself: its prompt's examples come from the other folds (`train_rows`), the rule that
labels it is fitted on the other folds, and which candidate labels it is chosen by cross-validation inside the
other folds (nested), so the agreement measured on it is agreement on labels the alignment never used.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ._labels import Labels
from ._rules import MISSING, Rule


def make_folds(labels: Labels, k: int, seed: int) -> np.ndarray:
    """Each item's fold in 0..k-1, stratified by class (each class dealt round the folds in a seeded order)."""
    rng = np.random.default_rng(seed)
    folds = np.empty(len(labels), dtype=int)
    start = 0
    for code in np.unique(labels.codes):
        rows = np.flatnonzero(labels.codes == code)
        rng.shuffle(rows)
        folds[rows] = (start + np.arange(len(rows))) % k
        start += len(rows)
    return folds


def train_rows(folds: np.ndarray, fold: int, within: np.ndarray | None = None) -> np.ndarray:
    """The rows outside `fold` (and inside `within`, when given): all an item in `fold` may learn from."""
    mask = folds != fold
    if within is not None:
        mask &= within
    return np.flatnonzero(mask)


@dataclass(frozen=True)
class Candidate:
    """One way of judging: the prompt's signals on every item (held-out where the prompt uses labels) and the
    rule family that turns them into labels."""

    name: str
    signals: np.ndarray
    rule: Rule


def crossfit(candidate: Candidate, labels: Labels, folds: np.ndarray, within: np.ndarray | None = None) -> np.ndarray:
    """Predictions for the rows in `within` (all by default), each by the rule fitted outside its fold."""
    within = np.ones(len(labels), dtype=bool) if within is None else within
    out = np.full(len(labels), MISSING)
    for fold in np.unique(folds[within]):
        test = np.flatnonzero((folds == fold) & within)
        train = train_rows(folds, fold, within)
        if len(train) == 0:
            continue
        out[test] = candidate.rule.fit(candidate.signals, labels, train).predict(candidate.signals[test])
    return out


def hit_rate(predicted: np.ndarray, truth: np.ndarray) -> float:
    """Share of the predicted items (not MISSING) predicted right; NaN when none was."""
    ok = predicted != MISSING
    return float((predicted[ok] == truth[ok]).mean()) if ok.any() else float("nan")


# A candidate displaces the judge as given only when, on the items where the two disagree, it is right more often
# than a coin would be at this one-sided level (an exact sign test): with 25 labels a gain of two items is noise.
KEEP_LEVEL = 0.1


def sign_test(wins: int, losses: int) -> float:
    """One-sided exact p-value of `wins` or more among `wins + losses` fair coin flips."""
    n = wins + losses
    return sum(math.comb(n, k) for k in range(wins, n + 1)) / 2**n if n else 1.0


def choose(candidates: Sequence[Candidate], labels: Labels, folds: np.ndarray, within: np.ndarray | None = None) -> int:
    """Index of the candidate kept inside `within`: the one with the best cross-validated accuracy among those
    that beat the first (the judge as given) by an exact sign test at KEEP_LEVEL on the items where they differ,
    else the first. Candidates come simplest first and the first among equals wins, so a lever is kept only
    when it earns its place."""
    within = np.ones(len(labels), dtype=bool) if within is None else within
    truth = labels.codes[within]
    right = []
    for candidate in candidates:
        predicted = crossfit(candidate, labels, folds, within)[within]
        right.append((predicted != MISSING) & (predicted == truth))
    scores = [float(r.mean()) if len(r) else -1.0 for r in right]
    best = 0
    for i in range(1, len(candidates)):
        wins = int((right[i] & ~right[0]).sum())
        losses = int((right[0] & ~right[i]).sum())
        if sign_test(wins, losses) <= KEEP_LEVEL and round(scores[i], 12) > round(scores[best], 12):
            best = i
    return best


def nested_predictions(
    candidates: Sequence[Candidate], labels: Labels, folds: np.ndarray
) -> tuple[np.ndarray, list[int]]:
    """(held-out predictions of the whole alignment, the candidate chosen for each fold): for every fold, the
    candidate is chosen by cross-validation on the other folds, fitted on them and applied to the fold."""
    out = np.full(len(labels), MISSING)
    chosen = []
    for fold in np.unique(folds):
        outside = folds != fold
        best = choose(candidates, labels, folds, outside)
        chosen.append(best)
        test = np.flatnonzero(~outside)
        candidate = candidates[best]
        rule = candidate.rule.fit(candidate.signals, labels, np.flatnonzero(outside))
        out[test] = rule.predict(candidate.signals[test])
    return out, chosen
