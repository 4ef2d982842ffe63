"""Cohen's and Fleiss' κ against scikit-learn and statsmodels on seeded random data, plus edge cases."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.inter_rater import aggregate_raters
from statsmodels.stats.inter_rater import fleiss_kappa as sm_fleiss_kappa

from judgewidgets import ConfigurationError, InputError
from judgewidgets.agreement import cohen_kappa, fleiss_kappa

TOL = 1e-9


def correlated(rng: np.random.Generator, n_items: int, n_raters: int, k: int, copy: float = 0.6) -> np.ndarray:
    """Items × raters labels 0..k-1 that agree more than chance: each rater copies a hidden label or guesses."""
    hidden = rng.integers(0, k, n_items)
    guesses = rng.integers(0, k, (n_items, n_raters))
    return np.where(rng.random((n_items, n_raters)) < copy, hidden[:, None], guesses)


@pytest.mark.parametrize("weights", [None, "linear", "quadratic"])
@pytest.mark.parametrize(("seed", "n_items", "k"), [(0, 20, 2), (1, 57, 3), (2, 300, 5), (3, 1000, 7)])
def test_cohen_kappa_matches_sklearn(seed: int, n_items: int, k: int, weights: str | None) -> None:
    rng = np.random.default_rng(seed)
    data = correlated(rng, n_items, 2, k)
    expected = cohen_kappa_score(data[:, 0], data[:, 1], weights=weights)
    assert cohen_kappa(data[:, 0], data[:, 1], weights=weights) == pytest.approx(expected, abs=TOL)


@pytest.mark.parametrize("weights", [None, "linear", "quadratic"])
@pytest.mark.parametrize("seed", [4, 5, 6])
def test_cohen_kappa_drops_missing_pairs(seed: int, weights: str | None) -> None:
    rng = np.random.default_rng(seed)
    data = correlated(rng, 200, 2, 4).astype(float)
    data[rng.random(data.shape) < 0.15] = np.nan
    complete = ~np.isnan(data).any(axis=1)
    expected = cohen_kappa_score(data[complete, 0], data[complete, 1], weights=weights)
    frame = pd.DataFrame(data, columns=["a", "b"])
    assert cohen_kappa(frame["a"], frame["b"], weights=weights) == pytest.approx(expected, abs=TOL)


@pytest.mark.parametrize("weights", [None, "linear", "quadratic"])
def test_cohen_kappa_string_labels_follow_given_order(weights: str | None) -> None:
    order = ["bad", "ok", "good", "great"]
    rng = np.random.default_rng(7)
    codes = correlated(rng, 150, 2, 4)
    a = [order[i] for i in codes[:, 0]]
    b = [order[i] for i in codes[:, 1]]
    expected = cohen_kappa_score(a, b, labels=order, weights=weights)
    assert cohen_kappa(a, b, weights=weights, labels=order) == pytest.approx(expected, abs=TOL)
    # and equals κ of the positions, because only the order matters
    assert cohen_kappa(codes[:, 0], codes[:, 1], weights=weights) == pytest.approx(expected, abs=TOL)


def test_cohen_kappa_with_labels_absent_from_data() -> None:
    a, b = [1, 2, 2, 3, 1], [1, 2, 3, 3, 2]
    for weights in (None, "linear", "quadratic"):
        expected = cohen_kappa_score(a, b, labels=[0, 1, 2, 3, 4], weights=weights)
        assert cohen_kappa(a, b, weights=weights, labels=[0, 1, 2, 3, 4]) == pytest.approx(expected, abs=TOL)


def test_cohen_kappa_missing_strings_and_none() -> None:
    a = ["x", "y", None, "x", "y", "x"]
    b = ["x", "y", "x", np.nan, "x", "x"]
    assert cohen_kappa(a, b) == pytest.approx(cohen_kappa_score(["x", "y", "y", "x"], ["x", "y", "x", "x"]), abs=TOL)


def test_cohen_kappa_degenerate_is_nan_like_sklearn() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert np.isnan(cohen_kappa_score([1, 1, 1], [1, 1, 1]))
    assert np.isnan(cohen_kappa([1, 1, 1], [1, 1, 1]))
    assert np.isnan(cohen_kappa(["a", "a"], ["a", "a"], weights="linear", labels=["a", "b"]))
    # different constant labels: chance disagreement is 1, κ is 0 (as sklearn)
    assert cohen_kappa([0, 0], [1, 1]) == pytest.approx(cohen_kappa_score([0, 0], [1, 1]))


def test_cohen_kappa_errors() -> None:
    with pytest.raises(InputError, match="differ in length"):
        cohen_kappa([1, 2, 3], [1, 2])
    with pytest.raises(InputError, match="both values present"):
        cohen_kappa([1, np.nan], [np.nan, 2])
    with pytest.raises(InputError, match="empty"):
        cohen_kappa([], [])
    with pytest.raises(ConfigurationError, match="unknown weights"):
        cohen_kappa([1, 2], [1, 2], weights="cubic")  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match="pass labels"):
        cohen_kappa(["lo", "hi"], ["hi", "hi"], weights="linear")
    with pytest.raises(InputError, match="not among labels"):
        cohen_kappa([1, 2], [1, 5], labels=[1, 2, 3])
    with pytest.raises(InputError, match="cannot be ordered"):
        cohen_kappa([1, "2"], [1, "2"])
    with pytest.raises(ConfigurationError, match="duplicates"):
        cohen_kappa([1, 2], [1, 2], labels=[1, 2, 2])
    with pytest.raises(InputError, match="one-dimensional"):
        cohen_kappa(np.zeros((3, 2)), np.zeros(3))
    with pytest.raises(ValueError):  # both error kinds are ValueErrors
        cohen_kappa([1], [1, 2])


@pytest.mark.parametrize(
    ("seed", "n_items", "n_raters", "k"), [(0, 10, 2, 2), (1, 80, 3, 3), (2, 250, 5, 4), (3, 999, 3, 3), (4, 40, 8, 6)]
)
def test_fleiss_kappa_matches_statsmodels(seed: int, n_items: int, n_raters: int, k: int) -> None:
    rng = np.random.default_rng(seed)
    data = correlated(rng, n_items, n_raters, k)
    expected = sm_fleiss_kappa(aggregate_raters(data)[0], method="fleiss")
    assert fleiss_kappa(data) == pytest.approx(expected, abs=TOL)
    assert fleiss_kappa(pd.DataFrame(data).astype(str)) == pytest.approx(expected, abs=TOL)


def test_fleiss_kappa_unequal_raters_by_hand() -> None:
    ratings = np.array(
        [
            [0, 0, np.nan],  # 2 ratings, 1 agreeing pair of 1
            [0, 1, 1],  # 3 ratings, 1 agreeing pair of 3
            [1, 1, 1],  # 3 of 3
            [np.nan, 2, np.nan],  # 1 rating: left out
        ]
    )
    p_bar = (1 + 1 / 3 + 1) / 3
    shares = np.array([3, 5]) / 8
    chance = (shares**2).sum()
    assert fleiss_kappa(ratings) == pytest.approx((p_bar - chance) / (1 - chance), abs=TOL)


def test_fleiss_kappa_edge_cases() -> None:
    assert np.isnan(fleiss_kappa(np.ones((4, 3))))
    with pytest.raises(InputError, match="at least 2 raters"):
        fleiss_kappa(np.ones((4, 1)))
    with pytest.raises(InputError, match="2-D"):
        fleiss_kappa([1, 2, 3])
    with pytest.raises(InputError, match="no item has ratings from at least 2"):
        fleiss_kappa([[1, np.nan], [np.nan, 2]])
    with pytest.raises(InputError, match="no items"):
        fleiss_kappa(np.empty((0, 3)))
