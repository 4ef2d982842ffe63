"""The guarantee by simulation: judges of known accuracy and calibration, 1,000+ calibration/test splits each."""

from __future__ import annotations

import numpy as np
import pytest

import judgewidgets as jw
from judgewidgets.cascade import SimulatedJudge, simulate

WEAK = SimulatedJudge(bias=0.8, skill=1.5)  # ~63 % accurate, calibrated
STRONG = SimulatedJudge(bias=2.0, skill=1.5)  # ~79 % accurate, calibrated
SURE_COIN = SimulatedJudge(bias=0.0, skill=0.0, noise=0.0, overconfidence=1.0)  # right half the time, always sure


def check(frame, target: float, delta: float) -> None:  # type: ignore[no-untyped-def]
    assert len(frame) >= 1000
    assert frame["holds"].mean() >= 1 - delta, frame["holds"].mean()
    decided = frame.dropna(subset=["expected"])
    assert (decided["expected"] >= target).mean() >= 1 - delta


@pytest.mark.parametrize(("target", "delta"), [(0.9, 0.1), (0.8, 0.05)])
def test_guarantee_holds_for_calibrated_judges_sharing_hard_items(target: float, delta: float) -> None:
    frame = simulate([WEAK, STRONG], target, delta, n_calibration=400, n_test=2000, splits=1000, seed=1)
    check(frame, target, delta)
    assert frame["coverage"].mean() > 0.3  # and the cascade does decide items
    assert (frame["share_1"] > 0).mean() > 0.5  # the cheap judge takes its share


def test_guarantee_holds_with_overconfident_judges() -> None:
    judges = [SimulatedJudge(bias=0.5, overconfidence=0.6), SimulatedJudge(bias=1.5, overconfidence=0.3)]
    check(simulate(judges, 0.85, 0.1, n_calibration=300, n_test=1500, splits=1000, seed=2), 0.85, 0.1)


def test_guarantee_holds_when_the_second_judge_is_good_exactly_where_the_first_is_bad() -> None:
    # Negatively associated mistakes: the case where treating the escalated rows as a fresh sample could bite.
    judges = [SimulatedJudge(bias=0.8, skill=2.5, noise=0.3), SimulatedJudge(bias=1.5, skill=-2.5, noise=0.3)]
    check(simulate(judges, 0.9, 0.1, n_calibration=150, n_test=2000, splits=1000, seed=5), 0.9, 0.1)


def test_a_perfectly_confident_wrong_judge_is_escalated_past() -> None:
    frame = simulate([SURE_COIN, STRONG], 0.9, 0.1, n_calibration=400, n_test=2000, splits=1000, seed=3)
    check(frame, 0.9, 0.1)
    assert frame["threshold_1"].isna().all() and (frame["share_1"] == 0).all()
    assert frame["coverage"].mean() > 0.2


def test_alone_a_perfectly_confident_wrong_judge_abstains_on_everything() -> None:
    frame = simulate([SURE_COIN], 0.9, 0.1, n_calibration=200, n_test=500, splits=1000, seed=4)
    assert (frame["coverage"] == 0).all() and frame["holds"].all()


def test_judges_are_what_they_say() -> None:
    assert WEAK.accuracy() == pytest.approx(0.63, abs=0.02) and STRONG.accuracy() == pytest.approx(0.79, abs=0.02)
    assert SURE_COIN.accuracy() == pytest.approx(0.5)
    rng = np.random.default_rng(0)
    p = STRONG._p(rng.standard_normal(100_000), rng)
    confident = p > 0.9
    assert (rng.random(confident.sum()) < p[confident]).mean() == pytest.approx(p[confident].mean(), abs=0.01)


def test_simulate_refuses_bad_settings() -> None:
    with pytest.raises(jw.ConfigurationError):
        simulate([], 0.9, 0.1)
    with pytest.raises(jw.ConfigurationError):
        simulate([STRONG], 1.2, 0.1)
    with pytest.raises(jw.ConfigurationError):
        simulate([STRONG], 0.9, 0.1, splits=0)


def test_two_starts_decide_more_where_accuracy_levels_off() -> None:
    judges = [SimulatedJudge(bias=0.8, ceiling=0.88), SimulatedJudge(bias=1.0, ceiling=0.88)]
    two = simulate(judges, 0.7, 0.1, n_calibration=200, n_test=1500, splits=1000, seed=6)
    paper = simulate(judges, 0.7, 0.1, n_calibration=200, n_test=1500, splits=1000, seed=6, walk="paper")
    check(two, 0.7, 0.1)
    check(paper, 0.7, 0.1)
    assert two["coverage"].mean() > paper["coverage"].mean() + 0.15
    with pytest.raises(jw.ConfigurationError, match="walk"):
        simulate(judges, 0.7, 0.1, splits=1, walk="sideways")  # type: ignore[arg-type]


def test_a_ceiling_caps_the_judges_accuracy() -> None:
    assert SimulatedJudge(bias=8.0, skill=0.0, noise=0.0, ceiling=0.85).accuracy() == pytest.approx(0.85, abs=1e-3)
