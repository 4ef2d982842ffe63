"""Folds, and the rule that keeps a lever only when it earns its place."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import binomtest

from judgewidgets.alignment._crossfit import Candidate, choose, make_folds, sign_test
from judgewidgets.alignment._labels import read_labels
from judgewidgets.alignment._rules import AsJudged


@pytest.mark.parametrize(("wins", "losses"), [(0, 0), (2, 0), (3, 1), (7, 1), (10, 4)])
def test_the_sign_test_is_scipys_exact_binomial_test(wins: int, losses: int) -> None:
    expected = 1.0 if wins + losses == 0 else binomtest(wins, wins + losses, 0.5, alternative="greater").pvalue
    assert sign_test(wins, losses) == pytest.approx(expected)


def test_folds_are_stratified_and_seeded() -> None:
    labels = read_labels(["pass"] * 30 + ["fail"] * 10, "pass_fail")
    folds = make_folds(labels, 5, seed=1)
    for fold in range(5):
        assert (labels.codes[folds == fold] == 1).sum() == 6 and (labels.codes[folds == fold] == 0).sum() == 2
    assert np.array_equal(folds, make_folds(labels, 5, seed=1))
    assert not np.array_equal(folds, make_folds(labels, 5, seed=2))


def _candidate(name: str, right: np.ndarray, labels: object) -> Candidate:
    """A candidate whose pass/fail verdicts are right exactly on `right` (signal 1 = pass)."""
    codes = labels.codes  # type: ignore[attr-defined]
    verdict = np.where(right, codes, 1 - codes).astype(float)
    return Candidate(name, verdict, AsJudged())


def test_a_small_gain_is_noise_and_a_clear_one_is_kept() -> None:
    labels = read_labels(["pass", "fail"] * 15, "pass_fail")
    folds = make_folds(labels, 5, seed=0)
    base = np.zeros(30, dtype=bool)
    base[:20] = True  # right on 20 of 30
    small = base.copy()
    small[20:22] = True  # two more right: p = 0.25
    clear = base.copy()
    clear[20:27] = True  # seven more right: p < 0.01
    assert choose([_candidate("given", base, labels), _candidate("small", small, labels)], labels, folds) == 0
    picked = choose(
        [_candidate("given", base, labels), _candidate("small", small, labels), _candidate("clear", clear, labels)],
        labels,
        folds,
    )
    assert picked == 2
