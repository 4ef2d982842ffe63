"""Rating distributions used by the simulations."""

import numpy as np
import pytest

import judgewidgets as jw
from judgewidgets.sequential import SEED_DISTRIBUTION, likert_distribution, scale_points

POINTS = np.arange(1, 11)


def _moments(probs: np.ndarray) -> tuple[float, float]:
    mean = float(POINTS @ probs)
    return mean, float(np.sqrt(((POINTS - mean) ** 2) @ probs))


def test_the_seed_distribution_has_the_seeds_moments() -> None:
    probs = np.asarray(SEED_DISTRIBUTION)
    assert probs.sum() == pytest.approx(1.0, abs=1e-6)
    mean, sd = _moments(probs)
    assert mean == pytest.approx(8.3, abs=1e-3) and sd == pytest.approx(1.0, abs=1e-3)
    # "1.7 % of runs stop at n = 5 with s = 0": the chance that a 5-judgment pilot is unanimous.
    assert float((probs**5).sum()) == pytest.approx(0.0178, abs=5e-4)


@pytest.mark.parametrize(("mean", "sd"), [(8.3, 1.0), (5.5, 2.0), (9.2, 0.8), (2.0, 1.5), (9.5, 0.5), (3.0, 0.0)])
def test_likert_distribution_matches_mean_and_sd(mean: float, sd: float) -> None:
    probs = likert_distribution(mean, sd)
    assert probs.min() >= 0 and probs.sum() == pytest.approx(1.0)
    got_mean, got_sd = _moments(probs)
    assert got_mean == pytest.approx(mean, abs=1e-6) and got_sd == pytest.approx(sd, abs=1e-6)


def test_likert_distribution_is_a_discretised_normal_shape() -> None:
    probs = likert_distribution(8.3, 1.0)
    logp = np.log(probs[probs > 0])
    points = POINTS[probs > 0]
    second_differences = np.diff(logp, 2) / np.diff(points)[:-1] ** 2
    assert np.allclose(second_differences, second_differences[0])  # log p is quadratic in the rating


def test_impossible_moments_raise() -> None:
    with pytest.raises(jw.ConfigurationError, match="sd must lie between"):
        likert_distribution(8.3, 0.1)  # 8.3 needs at least sqrt(0.3 * 0.7) = 0.46 on integer ratings
    with pytest.raises(jw.ConfigurationError, match="within the scale"):
        likert_distribution(11, 1)


def test_scale_points() -> None:
    assert scale_points((1, 10)).tolist() == list(range(1, 11))
    assert scale_points((0, 1), 0.25).tolist() == [0, 0.25, 0.5, 0.75, 1]
