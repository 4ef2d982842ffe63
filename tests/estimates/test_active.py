"""Active PPI++: the weighting against a direct computation on a small case and against ppi-python, equal weights
against PPI++, coverage on a small seeded simulation, and `estimate_quality(plan=)` as a user meets it."""

from __future__ import annotations

import numpy as np
import pandas as pd
import ppi_py  # the authors' reference implementation (the test extra)
import pytest

import judgewidgets as jw
from judgewidgets.estimates import ppi_mean, weighted_ppi_mean
from judgewidgets.labels._plan import draw_order, plan_probabilities

SMALL_Y = np.array([1.0, 0.0, 1.0, 1.0, 0.0, 1.0, 0.0, 1.0])
SMALL_F = np.array([0.9, 0.2, 0.7, 0.95, 0.4, 0.6, 0.1, 0.8, 0.3, 0.85, 0.5, 0.65])  # 12 items, the first 8 labelled
SMALL_PI = np.array([0.2, 0.5, 0.8, 0.1, 0.9, 0.7, 0.3, 0.6])


def direct(y: np.ndarray, f: np.ndarray, pi: np.ndarray, lam: float) -> tuple[float, float]:
    """(estimate, se) written out item by item: θ = λ·mean(f) + Σ w (y − λf) / Σ w, and se² = Σ_i z_i² / N²
    with z_i = λ (f_i − mean f) + ŵ_i (r_i − r̄) for labelled i, λ (f_i − mean f) for the others; the CLT form
    (ddof 0, no corrections)."""
    N, n = len(f), len(y)
    w = 1.0 / pi
    r = [y[i] - lam * f[i] for i in range(n)]
    r_bar = sum(w[i] * r[i] for i in range(n)) / sum(w)
    theta = lam * sum(f) / N + r_bar
    f_bar = sum(f) / N
    total = 0.0
    for i in range(N):
        z = lam * (f[i] - f_bar)
        if i < n:
            z += w[i] * N / sum(w) * (r[i] - r_bar)
        total += z * z
    return theta, float(np.sqrt(total)) / N


def small_case(lam: float | None) -> jw.estimates.MeanEstimate:
    weights = np.r_[1.0 / SMALL_PI, np.zeros(len(SMALL_F) - len(SMALL_Y))]
    y = np.r_[SMALL_Y, np.full(len(SMALL_F) - len(SMALL_Y), np.nan)]
    return weighted_ppi_mean(y, SMALL_F, weights, lam, small_sample=False)


@pytest.mark.parametrize("lam", [0.0, 0.4, 1.0])
def test_the_weighting_equals_a_direct_computation_on_a_small_case(lam: float) -> None:
    est = small_case(lam)
    theta, se = direct(SMALL_Y, SMALL_F, SMALL_PI, lam)
    assert float(est.estimate) == pytest.approx(theta, abs=1e-12)
    assert float(est.se) == pytest.approx(se, abs=1e-12)
    # ppi-python's weighted point estimate (weights normalised to mean 1 over the labelled items) is the same.
    point = ppi_py.ppi_mean_pointestimate(SMALL_Y, SMALL_F[:8], SMALL_F, lam=lam, w=1.0 / SMALL_PI)
    assert float(np.squeeze(point)) == pytest.approx(theta, abs=1e-12)


def test_the_tuned_lambda_minimises_the_direct_variance() -> None:
    tuned = small_case(None)
    grid = np.linspace(0.0, 1.0, 2001)
    ses = [direct(SMALL_Y, SMALL_F, SMALL_PI, lam)[1] for lam in grid]
    assert float(tuned.lam) == pytest.approx(grid[int(np.argmin(ses))], abs=1e-3)
    assert float(tuned.se) <= min(ses) + 1e-12


def test_equal_weights_are_ppi_plus_plus_on_a_random_sample() -> None:
    rng = np.random.default_rng(3)
    N, n = 4000, 200
    y = rng.uniform(0, 0.8, N)
    f = np.where(rng.random(N) < 0.7, y, rng.uniform(0, 0.8, N)) + 0.2  # biased by +0.2
    weights = np.r_[np.full(n, N / n), np.zeros(N - n)]
    active = weighted_ppi_mean(np.r_[y[:n], np.full(N - n, np.nan)], f, weights)
    plain = ppi_mean(y[:n], f[:n], f[n:])
    assert float(active.estimate) == pytest.approx(float(plain.estimate), abs=2e-3)
    assert float(active.se) == pytest.approx(float(plain.se), rel=0.03)  # a biased judge does not widen it


def confident_population(rng: np.random.Generator, shape: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
    """A calibrated pass/fail judge: 75 % of items at confidence 0.95–1, the rest 0.5–0.95; labels ~ Bernoulli."""
    confidence = np.where(rng.random(shape) < 0.75, rng.uniform(0.95, 1, shape), rng.uniform(0.5, 0.95, shape))
    p = np.where(rng.random(shape) < 0.6, confidence, 1 - confidence)
    return (rng.random(shape) < p).astype(float), p


def test_coverage_and_narrowing_on_a_small_seeded_simulation() -> None:
    rng = np.random.default_rng(20)
    draws, N, n = 600, 1000, 80
    y, p = confident_population(rng, (draws, N))
    truth = 0.6 * (0.75 * 0.975 + 0.25 * 0.725) + 0.4 * (0.75 * 0.025 + 0.25 * 0.275)
    f = (p >= 0.5).astype(float)
    weights = np.zeros_like(p)
    for d in range(draws):
        probabilities, _, _, design = plan_probabilities(p[d] * (1 - p[d]), n, 0.2, 0.03)
        assert design == "active"
        drawn = draw_order(probabilities, d) < n
        weights[d, drawn] = 1 / probabilities[drawn]
    active = weighted_ppi_mean(np.where(weights > 0, y, np.nan), f, weights, corners=True)
    low, high = active.interval(0.95)
    covered = float(np.mean((low <= truth) & (truth <= high)))
    assert covered >= 0.93
    assert abs(float(np.mean(active.estimate)) - truth) < 0.004  # unbiased (the draws' mean, SE ~ 0.002)
    uniform = ppi_mean(y[:, :n], f[:, :n], f[:, n:], corners=True)  # the first n of a random population
    u_low, u_high = uniform.interval(0.95)
    assert np.mean(high - low) < 0.95 * np.mean(u_high - u_low)


@pytest.fixture
def judged() -> tuple[pd.Series, pd.Series]:
    """A calibrated judge's scores on 400 items (ids q0..q399) and the person's labels on all of them."""
    rng = np.random.default_rng(7)
    y, p = confident_population(rng, (1, 400))
    index = [f"q{i}" for i in range(400)]
    return pd.Series(p[0], index=index), pd.Series(np.where(y[0] > 0, "pass", "fail"), index=index)


def test_estimate_quality_with_a_plan_says_so_and_weights_the_draw(judged: tuple[pd.Series, pd.Series]) -> None:
    scores, truth = judged
    plan = jw.label_plan(scores, budget=60, seed=1, metric="pass_rate")
    labels = truth[plan.items]
    est = jw.estimate_quality(scores, labels, "pass_rate", plan=plan)
    assert est.estimator.startswith("active PPI++") and est.plan == plan.id and est.n_labelled == 60
    assert "active PPI++" in est.summary() and est.low < est.estimate < est.high
    # The same numbers as the vectorised estimator on the draw.
    weights = np.array([1 / plan.probability(i) if i in set(plan.items) else 0.0 for i in scores.index])
    y = np.array([{"pass": 1.0, "fail": 0.0}[v] if i in set(plan.items) else np.nan for i, v in truth.items()])
    direct_est = weighted_ppi_mean(y, (scores >= 0.5).to_numpy(float), weights, corners=True)
    assert est.estimate == pytest.approx(float(direct_est.estimate), abs=1e-12)
    assert est.width == pytest.approx(float(np.subtract(*direct_est.interval(0.95)[::-1])), abs=1e-12)
    # Without the plan the same labels are taken as a random sample: PPI++, named so.
    plain = jw.estimate_quality(scores, labels, "pass_rate")
    assert plain.estimator == "PPI++" and plain.plan is None and plain.estimate != est.estimate


def test_labels_by_hand_are_kept_apart_and_another_plans_labels_refused(
    judged: tuple[pd.Series, pd.Series],
) -> None:
    scores, truth = judged
    plan = jw.label_plan(scores, budget=40, seed=2, metric="pass_rate")
    by_hand = [i for i in scores.index if i not in set(plan.items)][:3]
    with_hand = truth[plan.items + by_hand]
    est = jw.estimate_quality(scores, with_hand, "pass_rate", plan=plan)
    same = jw.estimate_quality(scores, truth[plan.items], "pass_rate", plan=plan)
    assert est.n_by_hand == 3 and est.n_labelled == 40 and est.estimate == same.estimate
    assert any("kept apart" in note for note in est.notes)
    other = jw.label_plan(scores, budget=40, seed=3, metric="pass_rate")
    table = pd.DataFrame({"label": truth[plan.items], "plan": plan.id})
    with pytest.raises(jw.InputError, match=f"drawn by plan {plan.id}, not by plan {other.id}"):
        jw.estimate_quality(scores, table, "pass_rate", plan=other)
    with pytest.raises(jw.InputError, match="made for other items"):
        jw.estimate_quality(scores.iloc[:200], truth[[i for i in plan.items if i in scores.index[:200]]], plan=plan)
    with pytest.raises(jw.InputError, match="plan must be the LabelPlan"):
        jw.estimate_quality(scores, truth[plan.items], "pass_rate", plan="abc")  # type: ignore[arg-type]


def test_stopping_early_is_a_sample_of_its_own_and_gaps_are_noted(judged: tuple[pd.Series, pd.Series]) -> None:
    scores, truth = judged
    plan = jw.label_plan(scores, budget=80, seed=4, metric="pass_rate")
    first = jw.estimate_quality(scores, truth[plan.items[:30]], "pass_rate", plan=plan)
    assert first.n_labelled == 30 and not any("missing at random" in n for n in first.notes)
    gap = jw.estimate_quality(scores, truth[plan.items[:10] + plan.items[11:30]], "pass_rate", plan=plan)
    assert gap.n_labelled == 29 and any("1 drawn item(s) before the last one labelled" in n for n in gap.notes)


def test_a_uniform_plan_gives_todays_estimate(judged: tuple[pd.Series, pd.Series]) -> None:
    scores, truth = judged
    flat = pd.Series(0.6, index=scores.index)
    plan = jw.label_plan(scores, budget=50, seed=5, uncertainty=flat, metric="pass_rate")
    assert plan.design == "uniform"
    est = jw.estimate_quality(scores, truth[plan.items], "pass_rate", plan=plan)
    plain = jw.estimate_quality(scores, truth[plan.items], "pass_rate")
    assert est.estimator == "PPI++" and (est.estimate, est.low, est.high) == (plain.estimate, plain.low, plain.high)


def test_labels_needed_brings_the_width_to_the_target() -> None:
    rng = np.random.default_rng(11)
    y, p = confident_population(rng, (1, 6000))
    scores = pd.Series(p[0])
    labels_all = pd.Series(y[0])
    plan = jw.label_plan(scores, budget=1500, seed=0, metric="pass_rate")
    early = jw.estimate_quality(scores, labels_all[plan.items[:60]], "pass_rate", plan=plan)
    target = early.width * 0.6
    more = early.labels_needed(target)
    assert more is not None and more > 60  # (1/0.6)² ≈ 2.8 times the labels, and the judge's own share on top
    later = jw.estimate_quality(scores, labels_all[plan.items[: 60 + more]], "pass_rate", plan=plan)
    assert later.width == pytest.approx(target, rel=0.15)
    assert later.labels_needed(later.width * 1.01) == 0
    assert early.labels_needed((early.judge_only[2] - early.judge_only[1]) / 2) is None  # below the judge's own
    assert early.labels_needed(early.width / 20) is None  # more labels than items
    with pytest.raises(jw.InputError, match="target_width"):
        early.labels_needed(0)
