"""The exact binomial test behind the guarantee, against exact rational arithmetic and scipy."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

import judgewidgets as jw
from judgewidgets.cascade import AgreementTest, binomial_cdf, clopper_pearson_lower, minimum_rows


def exact_cdf(k: int, n: int, p: Fraction) -> Fraction:
    return sum((math.comb(n, j) * p**j * (1 - p) ** (n - j) for j in range(k + 1)), Fraction(0))


@pytest.mark.parametrize(("target", "delta"), [(0.9, 0.05), (0.8, 0.1), (0.95, 0.2), (0.75, 0.01)])
def test_critical_disagreements_match_exact_rational_tails(target: float, delta: float) -> None:
    test = AgreementTest(target, delta)
    alpha = Fraction(1) - Fraction(target).limit_denominator(1000)
    for n in [*range(0, 80), 150, 301]:
        expected = -1
        for k in range(n + 1):
            if exact_cdf(k, n, alpha) <= Fraction(delta).limit_denominator(1000):
                expected = k
            else:
                break
        assert test.critical(n) == expected, n


def test_binomial_cdf_against_exact_values() -> None:
    for k, n, p in [(0, 10, 0.1), (3, 50, 0.1), (12, 40, 0.3), (99, 100, 0.99), (5, 5, 0.5)]:
        assert binomial_cdf(k, n, p) == pytest.approx(float(exact_cdf(k, n, Fraction(p))), rel=1e-9)
    assert binomial_cdf(-1, 5, 0.5) == 0.0 and binomial_cdf(7, 5, 0.5) == 1.0


def test_clopper_pearson_matches_the_beta_quantile() -> None:
    stats = pytest.importorskip("scipy.stats")
    for successes, n, delta in [(5, 10, 0.05), (45, 50, 0.1), (900, 1000, 0.05), (1, 30, 0.2), (30, 30, 0.1)]:
        expected = stats.beta.ppf(delta, successes, n - successes + 1)
        assert clopper_pearson_lower(successes, n, delta) == pytest.approx(expected, abs=1e-9)
    assert clopper_pearson_lower(0, 10, 0.1) == 0.0


def test_certifying_is_the_clopper_pearson_bound_reaching_the_target() -> None:
    test = AgreementTest(0.85, 0.1)
    for n in (20, 57, 140):
        for k in range(0, n // 3):
            bound = clopper_pearson_lower(n - k, n, 0.1)
            assert bool(test.certifies(n, k)) == (bound >= 0.85 - 1e-12), (n, k, bound)


def test_certifies_is_vectorised_and_matches_the_scalar_table() -> None:
    test = AgreementTest(0.9, 0.1)
    n = np.array([22, 22, 50, 50, 400])
    k = np.array([0, 1, 1, 2, 30])
    assert test.certifies(n, k).tolist() == [bool(k_ <= test.critical(n_)) for n_, k_ in zip(n, k)]
    assert test.p_value(50, 1) == pytest.approx(float(exact_cdf(1, 50, Fraction(1, 10))))


def test_minimum_rows() -> None:
    assert minimum_rows(0.9, 0.1) == 22  # 0.9^22 = 0.098 ≤ 0.1 < 0.9^21
    assert minimum_rows(0.9, 0.05) == 29
    assert minimum_rows(0.8, 0.1) == 11
    for target, delta in [(0.9, 0.1), (0.7, 0.01), (0.99, 0.2)]:
        n = minimum_rows(target, delta)
        assert target**n <= delta < target ** (n - 1)
        assert AgreementTest(target, delta).critical(n) == 0 and AgreementTest(target, delta).critical(n - 1) == -1


@pytest.mark.parametrize("bad", [0, 1, -0.1, 1.5, float("nan"), "0.9", True])
def test_levels_outside_the_unit_interval_are_refused(bad: object) -> None:
    with pytest.raises(jw.ConfigurationError, match="strictly between 0 and 1"):
        AgreementTest(bad, 0.1)  # type: ignore[arg-type]
    with pytest.raises(jw.ConfigurationError, match="delta"):
        AgreementTest(0.9, bad)  # type: ignore[arg-type]
