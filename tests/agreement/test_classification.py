"""Judge-vs-truth metrics against scikit-learn and scipy on seeded random data, with missing values."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn import metrics as skm

from judgewidgets import ConfigurationError, InputError
from judgewidgets.agreement import (
    accuracy,
    adjacent_accuracy,
    cohen_kappa,
    confusion_matrix,
    f1,
    mae,
    ordinal_metrics,
    precision,
    recall,
    rmse,
    spearman,
)
from judgewidgets.agreement._classification import labelled_table, spearman_from_tables

TOL = 1e-9
CASES = [(0, 15, 2), (1, 80, 3), (2, 400, 5), (3, 1000, 4)]


def noisy_labels(seed: int, n: int, k: int, missing: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """Truth 0..k-1 and a prediction that is right 60% of the time, each with a share of NaN."""
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, k, n).astype(float)
    pred = np.where(rng.random(n) < 0.6, truth, rng.integers(0, k, n)).astype(float)
    pred[rng.random(n) < missing] = np.nan
    truth[rng.random(n) < missing] = np.nan
    return pred, truth


def complete(pred: np.ndarray, truth: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    keep = ~(np.isnan(pred) | np.isnan(truth))
    return pred[keep], truth[keep]


@pytest.mark.parametrize(("seed", "n", "k"), CASES)
@pytest.mark.parametrize("missing", [0.0, 0.2])
def test_label_metrics_match_sklearn(seed: int, n: int, k: int, missing: float) -> None:
    pred, truth = noisy_labels(seed, n, k, missing)
    p, t = complete(pred, truth)
    assert accuracy(pred, truth) == pytest.approx(skm.accuracy_score(t, p), abs=TOL)
    positive = float(k - 1)
    ours = {"precision": precision, "recall": recall, "f1": f1}
    theirs = {"precision": skm.precision_score, "recall": skm.recall_score, "f1": skm.f1_score}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name, ours_fn in ours.items():
            binary = theirs[name](t, p, labels=[positive], average="macro")
            assert ours_fn(pred, truth, positive=positive) == pytest.approx(binary, abs=TOL), name
            assert ours_fn(pred, truth) == pytest.approx(theirs[name](t, p, average="macro"), abs=TOL), name
    expected = skm.confusion_matrix(t, p)
    assert (confusion_matrix(pred, truth).to_numpy() == expected).all()


def test_binary_with_string_positive_label() -> None:
    truth = ["yes", "no", "yes", "yes", None, "no", "no", "yes"]
    pred = ["yes", "yes", "no", "yes", "no", "no", None, "yes"]
    t = ["yes", "no", "yes", "yes", "no", "yes"]
    p = ["yes", "yes", "no", "yes", "no", "yes"]
    for ours, theirs in ((precision, skm.precision_score), (recall, skm.recall_score), (f1, skm.f1_score)):
        assert ours(pred, truth, positive="yes") == pytest.approx(theirs(t, p, pos_label="yes"), abs=TOL)
        assert ours(pred, truth, positive="no") == pytest.approx(theirs(t, p, pos_label="no"), abs=TOL)
    frame = confusion_matrix(pred, truth)
    assert list(frame.index) == ["no", "yes"] and frame.index.name == "truth" and frame.columns.name == "pred"
    assert frame.loc["yes", "no"] == 1 and frame.to_numpy().sum() == 6


@pytest.mark.parametrize("zero_division", [0.0, 1.0, np.nan])
def test_zero_division_like_sklearn(zero_division: float) -> None:
    truth = [0, 0, 1, 1, 2, 2]
    pred = [0, 0, 0, 1, 0, 1]  # label 2 is never predicted: its precision is 0/0
    for ours, theirs in ((precision, skm.precision_score), (recall, skm.recall_score), (f1, skm.f1_score)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            expected = theirs(truth, pred, average="macro", zero_division=zero_division)
        assert ours(pred, truth, zero_division=zero_division) == pytest.approx(expected, abs=TOL, nan_ok=True)


@pytest.mark.parametrize(("seed", "n", "k"), CASES)
def test_spearman_matches_scipy(seed: int, n: int, k: int) -> None:
    stats = pytest.importorskip("scipy.stats")
    pred, truth = noisy_labels(seed, n, k, 0.1)
    p, t = complete(pred, truth)
    expected = stats.spearmanr(p, t).statistic
    assert spearman(pred, truth) == pytest.approx(expected, abs=TOL)
    table, _, _, _ = labelled_table(pred, truth)
    assert float(spearman_from_tables(table)) == pytest.approx(expected, abs=TOL)
    rng = np.random.default_rng(seed)
    x, y = rng.normal(size=n), rng.normal(size=n)
    assert spearman(x, x + y) == pytest.approx(stats.spearmanr(x, x + y).statistic, abs=TOL)


def test_spearman_string_labels_and_constant() -> None:
    order = ["low", "mid", "high"]
    truth = ["low", "mid", "high", "mid", "high", "low"]
    pred = ["low", "high", "high", "mid", "mid", "mid"]
    codes = {"low": 0, "mid": 1, "high": 2}
    expected = spearman([codes[v] for v in pred], [codes[v] for v in truth])
    assert spearman(pred, truth, labels=order) == pytest.approx(expected, abs=TOL)
    assert np.isnan(spearman([1, 1, 1], [1, 2, 3]))
    with pytest.raises(ConfigurationError, match="pass labels"):
        spearman(pred, truth)


@pytest.mark.parametrize(("seed", "n", "k"), CASES)
def test_errors_and_ordinal_metrics(seed: int, n: int, k: int) -> None:
    pred, truth = noisy_labels(seed, n, k, 0.15)
    p, t = complete(pred, truth)
    assert mae(pred, truth) == pytest.approx(skm.mean_absolute_error(t, p), abs=TOL)
    assert rmse(pred, truth) == pytest.approx(np.sqrt(skm.mean_squared_error(t, p)), abs=TOL)
    assert adjacent_accuracy(pred, truth) == pytest.approx(np.mean(np.abs(p - t) <= 1), abs=TOL)
    summary = ordinal_metrics(pred, truth)
    assert summary["accuracy"] == pytest.approx(skm.accuracy_score(t, p), abs=TOL)
    assert summary["kappa_quadratic"] == pytest.approx(skm.cohen_kappa_score(t, p, weights="quadratic"), abs=TOL)
    assert summary["spearman"] == pytest.approx(spearman(p, t), abs=TOL)
    assert summary["mae"] == pytest.approx(mae(p, t), abs=TOL)
    assert summary["rmse"] == pytest.approx(rmse(p, t), abs=TOL)


def test_adjacent_accuracy_counts_steps_of_the_label_order() -> None:
    truth, pred = [1, 2, 5, 5], [2, 5, 1, 5]  # steps: 1, 1, 2, 0 in the order 1 < 2 < 5
    assert adjacent_accuracy(pred, truth) == pytest.approx(0.75)
    assert adjacent_accuracy(pred, truth, labels=[1, 2, 3, 4, 5]) == pytest.approx(0.5)
    assert adjacent_accuracy(pred, truth, tolerance=0) == pytest.approx(accuracy(pred, truth))
    summary = ordinal_metrics(["a", "b"], ["b", "b"], labels=["a", "b"])
    assert np.isnan(summary["mae"]) and summary["adjacent_accuracy"] == 1.0


def test_classification_errors() -> None:
    with pytest.raises(InputError, match="differ in length"):
        accuracy([1, 2], [1])
    with pytest.raises(InputError, match="both values present"):
        accuracy([np.nan], [1])
    with pytest.raises(InputError, match="positive label"):
        precision([0, 1], [1, 1], positive=2)
    with pytest.raises(InputError, match="numeric"):
        mae(["a", "b"], ["a", "a"])
    with pytest.raises(InputError, match="not among labels"):
        confusion_matrix([1, 2], [1, 3], labels=[1, 2])


def test_pandas_inputs_and_kappa_consistency() -> None:
    frame = pd.DataFrame({"pred": [1, 2, None, 3, 3], "truth": pd.array([1, 2, 2, None, 3], dtype="Int64")})
    assert accuracy(frame["pred"], frame["truth"]) == 1.0
    assert cohen_kappa(frame["pred"], frame["truth"]) == 1.0
    assert confusion_matrix(frame["pred"], frame["truth"]).to_numpy().trace() == 3
