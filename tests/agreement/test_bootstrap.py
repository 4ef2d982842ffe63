"""Percentile bootstrap: joint row resampling, reproducible, identical whether vectorised or not."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from judgewidgets import ConfigurationError, InputError
from judgewidgets.agreement import BootstrapCI, accuracy, bootstrap_ci, cohen_kappa, fleiss_kappa
from judgewidgets.agreement._bootstrap import resample_indices


def labels(seed: int, n: int = 200) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, 3, n)
    pred = np.where(rng.random(n) < 0.7, truth, rng.integers(0, 3, n))
    return pred, truth


def test_percentile_interval_by_hand() -> None:
    pred, truth = labels(0)
    ci = bootstrap_ci(accuracy, pred, truth, n=400, confidence=0.9, seed=5)
    idx = np.concatenate(list(resample_indices(len(pred), 400, 5)))
    stats = (pred[idx] == truth[idx]).mean(axis=1)
    assert isinstance(ci, BootstrapCI)
    assert ci.estimate == accuracy(pred, truth)
    assert (ci.low, ci.high) == pytest.approx(tuple(np.quantile(stats, [0.05, 0.95])), abs=1e-12)
    assert ci.low <= ci.estimate <= ci.high


def test_vectorized_gives_the_same_interval() -> None:
    pred, truth = labels(1)
    looped = bootstrap_ci(accuracy, pred, truth, n=300, seed=2)
    fast = bootstrap_ci(lambda p, t: (p == t).mean(axis=-1), pred, truth, n=300, seed=2, vectorized=True)
    assert fast.low == pytest.approx(looped.low, abs=1e-12)
    assert fast.high == pytest.approx(looped.high, abs=1e-12)


def test_chunked_resampling_is_exhaustive_and_reproducible() -> None:
    chunks = list(resample_indices(10, 25, seed=0, width=200_000))  # 10 resamples per chunk
    assert [len(c) for c in chunks] == [10, 10, 5]
    again = np.concatenate(list(resample_indices(10, 25, seed=0, width=200_000)))
    assert (np.concatenate(chunks) == again).all()
    assert bootstrap_ci(accuracy, *labels(3), n=50, seed=1) == bootstrap_ci(accuracy, *labels(3), n=50, seed=1)
    assert bootstrap_ci(accuracy, *labels(3), n=50, seed=1) != bootstrap_ci(accuracy, *labels(3), n=50, seed=2)


def test_width_matches_normal_approximation() -> None:
    pred, truth = labels(4, n=400)
    ci = bootstrap_ci(lambda p, t: (p == t).mean(axis=-1), pred, truth, n=2000, seed=0, vectorized=True)
    p = ci.estimate
    normal_width = 2 * 1.959964 * np.sqrt(p * (1 - p) / len(pred))
    assert ci.high - ci.low == pytest.approx(normal_width, rel=0.15)


def test_pandas_objects_are_resampled_as_pandas() -> None:
    rng = np.random.default_rng(6)
    ratings = pd.DataFrame(rng.integers(0, 2, (60, 3)), columns=["a", "b", "c"])
    seen: list[type] = []

    def metric(frame: pd.DataFrame) -> float:
        seen.append(type(frame))
        return fleiss_kappa(frame)

    ci = bootstrap_ci(metric, ratings, n=20, seed=0)
    assert set(seen) == {pd.DataFrame}
    assert ci.estimate == pytest.approx(fleiss_kappa(ratings))
    assert ci.low <= ci.high


def test_nan_resamples_are_skipped() -> None:
    a = [1, 1, 1, 1, 1, 2]
    ci = bootstrap_ci(cohen_kappa, a, a, n=200, seed=0)  # resamples without the 2 give NaN
    assert ci.estimate == 1.0 and ci.low == 1.0 and ci.high == 1.0
    nothing = bootstrap_ci(lambda x: np.nan, [1, 2], n=10)
    assert np.isnan(nothing.low) and np.isnan(nothing.high)


def test_bootstrap_errors() -> None:
    with pytest.raises(ConfigurationError, match="positive integer"):
        bootstrap_ci(accuracy, [1], [1], n=0)
    with pytest.raises(ConfigurationError, match="confidence"):
        bootstrap_ci(accuracy, [1], [1], confidence=95)
    with pytest.raises(InputError, match="differ in length"):
        bootstrap_ci(accuracy, [1, 2], [1])
    with pytest.raises(InputError, match="at least one array"):
        bootstrap_ci(accuracy)
    with pytest.raises(InputError, match="empty"):
        bootstrap_ci(accuracy, [], [])
    with pytest.raises(ConfigurationError, match="one value per resample"):
        bootstrap_ci(lambda p: p.mean(), [1, 2, 3], n=10, vectorized=True)
