"""Stopping rules: the seed's algorithm exactly, and the protocol every rule implements."""

import math
from statistics import NormalDist

import numpy as np
import pytest

import judgewidgets as jw
from judgewidgets.sequential import (
    SEED_DISTRIBUTION,
    ConfidenceSequenceRule,
    Precision,
    SeedRule,
    SteinRule,
    StoppingRule,
    TQuantileRule,
    make_rule,
    scale_points,
    t_quantile,
)
from judgewidgets.sequential._simulate import run_paths

RULES = [SeedRule, TQuantileRule, SteinRule, ConfidenceSequenceRule]


def _seed_confidence_eval(stream: list[float], alpha: float, K: float, R: float, n0: int = 5) -> dict:
    """The seed's confidence_eval, transcribed line by line (ratings come from `stream` in order)."""
    z = NormalDist().inv_cdf(1 - alpha / 2)
    x = list(stream[:n0])
    used = n0
    d = R / (3 * K)
    while True:
        n = len(x)
        std = np.std(x, ddof=1)
        h = z * std / np.sqrt(n)
        if h <= d:
            break
        delta = std / R
        n_req = math.ceil((3 * z * K * delta) ** 2)
        n_additional = max(1, min(n_req - n, n0))
        x.extend(stream[used : used + n_additional])
        used += n_additional
    return {"mean": np.mean(x), "h": h, "n": len(x)}


@pytest.mark.parametrize(("K", "alpha"), [(10, 0.05), (9, 0.10), (5, 0.2)])
def test_seed_rule_is_the_seeds_algorithm(K: float, alpha: float) -> None:
    rng = np.random.default_rng(7)
    points = scale_points((1, 10))
    ratings = rng.choice(points, size=(300, 400), p=SEED_DISTRIBUTION)
    rule = SeedRule(Precision(K=K, alpha=alpha))
    out = run_paths(rule, ratings, max_samples=400)
    for i in range(300):
        expected = _seed_confidence_eval(list(ratings[i]), alpha, K, 9)
        assert out["n"][i] == expected["n"]
        assert out["mean"][i] == pytest.approx(expected["mean"])
        assert (out["high"][i] - out["low"][i]) / 2 == pytest.approx(expected["h"])


def test_seed_rule_stops_on_a_unanimous_pilot() -> None:
    rule = SeedRule()
    assert rule.should_stop([8, 8, 8, 8, 8]) is True  # the flaw the issue measured: s = 0, h = 0
    assert rule.interval([8, 8, 8, 8, 8]) == (8.0, 8.0)
    assert rule.next_batch([6, 9, 8, 10, 7]) == 5


def test_t_rule_needs_min_n_and_floors_the_variance() -> None:
    rule = TQuantileRule(min_n=20)
    assert rule.should_stop([8] * 19) is False
    assert rule.should_stop([8] * 20) is True
    low, high = rule.interval([8] * 20)
    assert (low, high) == pytest.approx((7.7, 8.3))  # fixed width: max(h, d) with h from the 1/12 floor < d
    assert rule.next_batch([8, 9, 7, 8, 8]) == 15  # straight to min_n


def test_t_rule_interval_is_t_based_before_the_target() -> None:
    rule = TQuantileRule(inflation=0.0, floor=0.0)
    sample = np.array([5, 9, 7, 10, 6, 8, 7, 9, 4, 8], dtype=float)
    low, high = rule.interval(sample)
    h = float(t_quantile(0.05, 9)) * sample.std(ddof=1) / math.sqrt(10)
    assert (low, high) == pytest.approx((sample.mean() - h, sample.mean() + h))


def test_stein_fixes_the_total_after_the_first_stage() -> None:
    rule = SteinRule(first_stage=10)
    first = np.array([7, 9, 8, 8, 10, 6, 8, 9, 7, 8], dtype=float)
    t = float(t_quantile(0.05, 9))
    total = math.ceil((t * first.std(ddof=1) / 0.3) ** 2)
    assert rule.next_batch(first[:4]) == 6
    assert rule.next_batch(first) == total - 10
    longer = np.concatenate([first, np.full(total - 10, 8.0)])
    assert rule.should_stop(longer[:-1]) is False and rule.should_stop(longer) is True
    low, high = rule.interval(longer)
    assert (high - low) / 2 == pytest.approx(t * first.std(ddof=1) / math.sqrt(total))
    assert (high - low) / 2 <= 0.3


def test_confidence_sequence_shrinks_and_is_nested() -> None:
    rng = np.random.default_rng(3)
    ratings = rng.choice(scale_points((1, 10)), size=(4, 150), p=SEED_DISTRIBUTION)
    low, high = ConfidenceSequenceRule().bounds(ratings)
    assert low.shape == high.shape == (4, 150)
    assert np.all(np.diff(low, axis=1) >= -1e-12) and np.all(np.diff(high, axis=1) <= 1e-12)  # running intersection
    assert np.all(low >= 1) and np.all(high <= 10) and np.all(low <= high)
    assert np.all(high[:, -1] - low[:, -1] < 1.0)


@pytest.mark.parametrize("rule_class", RULES)
def test_every_rule_implements_the_protocol(rule_class: type) -> None:
    rule = rule_class()
    assert isinstance(rule, StoppingRule)
    sample = np.array([8, 9, 7, 8, 10, 8, 6, 9], dtype=float)
    stop = rule.should_stop(sample)
    low, high = rule.interval(sample)
    more = rule.next_batch(sample)
    assert isinstance(stop, bool) and isinstance(low, float) and isinstance(more, int) and more >= 1
    assert low <= sample.mean() <= high
    paths = np.stack([sample, sample[::-1], np.full(8, 8.0)])
    stops = rule.should_stop(paths)
    lows, highs = rule.interval(paths)
    assert stops.shape == lows.shape == highs.shape == (3,)
    assert bool(stops[0]) == stop and lows[0] == pytest.approx(low)


def test_make_rule() -> None:
    target = Precision(K=5)
    assert isinstance(make_rule(None, target, 5), TQuantileRule)
    assert make_rule("stein", target, 5).precision == target
    rule = SeedRule(target)
    assert make_rule(rule, target, 5) is rule
    with pytest.raises(jw.ConfigurationError, match="unknown method"):
        make_rule("bayes", target, 5)
    with pytest.raises(jw.ConfigurationError, match="aims at"):
        make_rule(SeedRule(Precision(K=10)), target, 5)
    with pytest.raises(jw.ConfigurationError, match="StoppingRule"):
        make_rule(42, target, 5)  # type: ignore[arg-type]


def test_bad_rule_settings() -> None:
    with pytest.raises(jw.ConfigurationError, match="pilot"):
        SeedRule(pilot=1)
    with pytest.raises(jw.ConfigurationError, match="min_n"):
        TQuantileRule(min_n=1)
    with pytest.raises(jw.ConfigurationError, match="inflation"):
        TQuantileRule(inflation=-1)
    with pytest.raises(jw.ConfigurationError, match="max_bet"):
        ConfidenceSequenceRule(max_bet=1.0)
    with pytest.raises(jw.ConfigurationError, match="quantile"):
        SeedRule(quantile="x")
