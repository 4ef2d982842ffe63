"""The precision target, its quantiles, and the seed's theory of the sample size."""

import math

import numpy as np
import pytest

import judgewidgets as jw
from judgewidgets.sequential import Precision, expected_samples, t_quantile, z_quantile


def test_expected_samples_reproduces_the_seed_readme() -> None:
    assert expected_samples(1.0, scale=(1, 10), K=9, alpha=0.10) == 25  # "Expected number of samples: 25"
    assert expected_samples(1.0) == 43  # K = 10, alpha = 0.05: (1.96 * 1 / 0.3)^2 = 42.7
    assert expected_samples(0.0) == 0


def test_expected_samples_is_the_formula() -> None:
    for sigma, K, alpha in [(0.5, 5, 0.2), (2.0, 14, 0.01), (1.3, 7, 0.05)]:
        d = 9 / (3 * K)
        assert expected_samples(sigma, K=K, alpha=alpha) == math.ceil((z_quantile(alpha) * sigma / d) ** 2)


def test_precision_target() -> None:
    target = Precision(scale=(1, 10), K=10, alpha=0.05)
    assert target.R == 9 and math.isclose(target.d, 0.3)
    assert math.isclose(target.z, 1.959964, rel_tol=1e-6)
    assert math.isclose(target.confidence, 0.95)


def test_t_quantiles_match_known_values() -> None:
    assert math.isclose(float(t_quantile(0.05, 4)), 2.776445, rel_tol=1e-5)
    assert math.isclose(float(t_quantile(0.05, 1)), 12.706205, rel_tol=1e-6)
    assert math.isclose(float(t_quantile(0.10, 24)), 1.710882, rel_tol=1e-5)
    assert float(t_quantile(0.05, 100000)) == pytest.approx(1.959964, rel=1e-4)


def test_t_quantiles_match_scipy() -> None:
    stats = pytest.importorskip("scipy.stats")
    df = np.arange(1, 400)
    for alpha in (0.01, 0.05, 0.1, 0.25):
        mine = t_quantile(alpha, df)
        np.testing.assert_allclose(mine, stats.t.ppf(1 - alpha / 2, df), rtol=2e-5)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"K": 0}, "K must be"),
        ({"K": -3}, "K must be"),
        ({"alpha": 0}, "alpha must"),
        ({"alpha": 1.0}, "alpha must"),
        ({"alpha": 1.5}, "alpha must"),
        ({"scale": (10, 1)}, "low < high"),
        ({"scale": (5, 5)}, "low < high"),
    ],
)
def test_bad_targets_raise_configuration_error(kwargs: dict, message: str) -> None:
    with pytest.raises(jw.ConfigurationError, match=message):
        Precision(**kwargs)
    with pytest.raises(jw.ConfigurationError, match=message):
        expected_samples(1.0, **kwargs)


def test_bad_sigma() -> None:
    with pytest.raises(jw.ConfigurationError, match="sigma"):
        expected_samples(-1.0)
