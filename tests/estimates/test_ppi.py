"""The statistics: equal to ppi-python, unbiased under a biased judge, no wider than the labels alone when the judge
knows nothing, and covering at nominal 95 % at n = 50 (simulated, many draws at once)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import ppi_py  # the authors' reference implementation (the test extra)
import pytest

import judgewidgets as jw
from judgewidgets.estimates import judge_mean, labels_mean, ppi_mean


def draws(rng: np.random.Generator, shape: tuple[int, ...], rho: float, bias: float = 0.0) -> tuple[np.ndarray, ...]:
    """Labels y uniform on [0, 1 − bias] and a judge that copies y with probability ρ, else scores an independent
    item of the same distribution, plus `bias`: corr(y, f) = ρ exactly, E f = E y + bias."""
    y = rng.uniform(0, 1 - bias, shape)
    other = rng.uniform(0, 1 - bias, shape)
    f = np.where(rng.random(shape) < rho, y, other) + bias
    return y, f


def split(y: np.ndarray, f: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    return y[..., :n], f[..., :n], f[..., n:]


@pytest.mark.parametrize("seed", range(6))
def test_equal_to_ppi_python_on_the_mean(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n, N = int(rng.integers(8, 300)), int(rng.integers(20, 4000))
    y, f = draws(rng, (n + N,), rho=float(rng.uniform(0, 1)), bias=float(rng.uniform(0, 0.3)))
    confidence = float(rng.choice([0.8, 0.9, 0.95, 0.99]))
    scores, labels = pd.Series(f), pd.Series(y[:n])  # the first n items are labelled
    est = jw.estimate_quality(scores, labels, "mean", confidence, small_sample=False)
    Y, Yhat, Yhat_unlabeled = y[:n], f[:n], f[n:]
    point = float(np.squeeze(ppi_py.ppi_mean_pointestimate(Y, Yhat, Yhat_unlabeled)))
    low, high = (float(np.squeeze(v)) for v in ppi_py.ppi_mean_ci(Y, Yhat, Yhat_unlabeled, alpha=1 - confidence))
    assert est.estimate == pytest.approx(point, abs=1e-9)
    assert est.low == pytest.approx(low, abs=1e-9) and est.high == pytest.approx(high, abs=1e-9)
    classical = [float(np.squeeze(v)) for v in ppi_py.classical_mean_ci(Y, alpha=1 - confidence)]
    assert est.labels_only[1:] == pytest.approx(classical, abs=1e-9)
    assert 0.0 <= est.lam <= 1.0
    # The default interval is centred on the same estimate (same λ), only wider by its small-sample correction.
    corrected = jw.estimate_quality(scores, labels, "mean", confidence)
    assert corrected.estimate == pytest.approx(point, abs=1e-9) and corrected.lam == est.lam
    assert corrected.low < est.low and corrected.high > est.high
    assert corrected.width / est.width < 1.0 + 8.0 / n


def test_pass_rate_and_win_rate_equal_ppi_python_on_their_encodings() -> None:
    rng = np.random.default_rng(11)
    N, n = 800, 60
    truth = rng.random(N) < 0.4
    judge = np.where(rng.random(N) < 0.8, truth, rng.random(N) < 0.7)  # right 80 % of the time, else lenient
    scores = pd.Series(np.where(judge, rng.uniform(0.5, 1, N), rng.uniform(0, 0.5, N)))
    labelled = rng.choice(N, n, replace=False)
    labels = pd.Series(np.where(truth[labelled], "pass", "fail"), index=labelled)
    est = jw.estimate_quality(scores, labels, "pass_rate", pass_threshold=0.5, small_sample=False)
    unlabelled = np.setdiff1d(np.arange(N), labelled)
    Y, Yhat, Yu = truth[labelled].astype(float), judge[labelled].astype(float), judge[unlabelled].astype(float)
    low, high = (float(np.squeeze(v)) for v in ppi_py.ppi_mean_ci(Y, Yhat, Yu, alpha=0.05))
    assert est.estimate == pytest.approx(float(np.squeeze(ppi_py.ppi_mean_pointestimate(Y, Yhat, Yu))), abs=1e-9)
    assert (est.low, est.high) == pytest.approx((low, high), abs=1e-9)
    assert est.judge_only[0] == pytest.approx(judge.mean())

    codes = {"A": 1.0, "tie": 0.5, "B": 0.0}
    verdicts = rng.choice(["A", "B", "tie"], N, p=[0.5, 0.35, 0.15])
    judged = np.where(rng.random(N) < 0.7, verdicts, rng.choice(["A", "B", "tie"], N))
    wins = pd.Series(judged, index=[f"pair-{i}" for i in range(N)])
    people = pd.Series(verdicts[labelled], index=wins.index[labelled])
    est = jw.estimate_quality(wins, people, "win_rate", confidence=0.9, small_sample=False)
    Y = np.array([codes[v] for v in verdicts[labelled]])
    Yhat = np.array([codes[v] for v in judged[labelled]])
    Yu = np.array([codes[v] for v in judged[unlabelled]])
    low, high = (float(np.squeeze(v)) for v in ppi_py.ppi_mean_ci(Y, Yhat, Yu, alpha=0.1))
    assert est.estimate == pytest.approx(float(np.squeeze(ppi_py.ppi_mean_pointestimate(Y, Yhat, Yu))), abs=1e-9)
    assert (est.low, est.high) == pytest.approx((low, high), abs=1e-9)


def test_the_vectorised_statistics_equal_one_draw_at_a_time() -> None:
    rng = np.random.default_rng(5)
    y, f = draws(rng, (4, 300), rho=0.6, bias=0.1)
    batch = ppi_mean(*split(y, f, 40))
    for row in range(4):
        one = ppi_mean(*split(y[row], f[row], 40))
        assert float(one.estimate) == pytest.approx(batch.estimate[row]) and float(one.se) == pytest.approx(
            batch.se[row]
        )


def test_a_judge_that_knows_nothing_costs_no_width() -> None:
    rng = np.random.default_rng(1)
    n, N = 50, 2000
    y = rng.uniform(0, 1, (1000, n + N))
    f = rng.uniform(0, 1, (1000, n + N))  # scores unrelated to the labels
    ppi = ppi_mean(*split(y, f, n))
    labels = labels_mean(y[:, :n])
    ratio = np.diff(ppi.interval(), axis=0) / np.diff(labels.interval(), axis=0)
    assert ratio.mean() <= 1.03
    assert np.median(ppi.lam) < 0.05  # λ is clipped at 0 about half the time and small otherwise
    # the same through the public function, one draw
    one = jw.estimate_quality(pd.Series(f[0]), pd.Series(y[0, :n]))
    assert one.width <= 1.05 * (one.labels_only[2] - one.labels_only[1])


def test_a_biased_judge_does_not_bias_the_estimate() -> None:
    rng = np.random.default_rng(2)
    n, N, draws_ = 50, 1000, 500
    y = rng.uniform(0, 1, (draws_, n + N))
    f = np.clip(y + rng.normal(0, 0.1, y.shape) + 0.3, 0, 1)  # informative but lenient by about 0.25
    ppi = ppi_mean(*split(y, f, n))
    judge = judge_mean(f)
    truth = 0.5
    se_of_mean_error = ppi.estimate.std() / np.sqrt(draws_)
    assert abs(ppi.estimate.mean() - truth) < 3 * se_of_mean_error < 0.01
    assert judge.estimate.mean() - truth > 0.2  # the judge alone is off by its leniency
    low, high = judge.interval()
    assert np.mean((low <= truth) & (truth <= high)) < 0.01  # and its interval, blind to it, never covers
    assert np.mean(ppi.lam) > 0.5  # yet PPI leans on it: the judge ranks items well


def coverage(
    y: np.ndarray, f: np.ndarray, n: int, truth: float, small_sample: bool = True, corners: bool = False
) -> tuple[float, float, np.ndarray]:
    """Coverage of PPI++ and of the labels alone over the draws (rows), and PPI's widths."""
    ppi = ppi_mean(*split(y, f, n), small_sample=small_sample, corners=corners)
    labels = labels_mean(y[:, :n], small_sample=small_sample, corners=corners)
    covered = []
    for est in (ppi, labels):
        low, high = est.interval(0.95)
        covered.append(float(np.mean((low <= truth) & (truth <= high))))
    return covered[0], covered[1], np.diff(ppi.interval(0.95), axis=0)[0]


@pytest.mark.parametrize("rho", [0.0, 0.5, 0.9])
def test_coverage_at_n_50_on_scores(rho: float) -> None:
    rng = np.random.default_rng(int(rho * 10) + 20)
    y, f = draws(rng, (2000, 50 + 1000), rho=rho, bias=0.2)
    ppi, labels, _ = coverage(y, f, 50, truth=0.4)
    assert ppi >= 0.94 and labels >= 0.94


def test_coverage_at_n_50_on_pass_rates_and_win_rates() -> None:
    """The discrete metrics count two pseudo-disagreements (corners), as estimate_quality does for them."""
    rng = np.random.default_rng(7)
    shape = (2000, 50 + 1000)
    passed = (rng.random(shape) < 0.5).astype(float)
    judge = np.where(rng.random(shape) < 0.8, passed, 1.0)  # right 90 % of the time; every error a false pass
    assert coverage(passed, judge, 50, truth=0.5, corners=True)[0] >= 0.94
    wins = rng.choice([0.0, 0.5, 1.0], size=shape, p=[0.35, 0.15, 0.5])
    verdicts = np.where(rng.random(shape) < 0.7, wins, rng.choice([0.0, 0.5, 1.0], size=shape))
    assert coverage(wins, verdicts, 50, truth=0.575, corners=True)[0] >= 0.94


def test_pseudo_disagreements_keep_coverage_when_the_judge_errs_rarely_and_one_way() -> None:
    rng = np.random.default_rng(8)
    shape = (2000, 50 + 1000)
    passed = (rng.random(shape) < 0.8).astype(float)
    judge = np.where(rng.random(shape) < 0.9, passed, 1.0)  # wrong on 2 % of items, always a false pass
    with_corners, _, widths = coverage(passed, judge, 50, truth=0.8, corners=True)
    without, _, plain_widths = coverage(passed, judge, 50, truth=0.8)
    assert with_corners >= 0.94 and without < 0.85  # 50 labels show no disagreement in a third of the draws
    assert widths.mean() < 0.6 * np.diff(labels_mean(passed[:, :50], corners=True).interval(), axis=0).mean()
    assert widths.mean() > plain_widths.mean()  # what the coverage costs


def test_pseudo_disagreements_cost_no_width_against_the_labels_when_the_judge_knows_nothing() -> None:
    rng = np.random.default_rng(4)
    shape = (1000, 50 + 2000)
    passed = (rng.random(shape) < 0.6).astype(float)
    coin = (rng.random(shape) < 0.5).astype(float)
    ppi = ppi_mean(*split(passed, coin, 50), corners=True)
    labels = labels_mean(passed[:, :50], corners=True)
    assert (np.diff(ppi.interval(), axis=0) / np.diff(labels.interval(), axis=0)).mean() <= 1.03


def test_the_small_sample_correction_is_what_keeps_coverage_at_10_labels() -> None:
    rng = np.random.default_rng(9)
    y, f = draws(rng, (4000, 10 + 1000), rho=0.7, bias=0.1)
    corrected, labels, _ = coverage(y, f, 10, truth=0.45)
    clt, labels_clt, _ = coverage(y, f, 10, truth=0.45, small_sample=False)
    assert corrected >= 0.93 and labels >= 0.93
    assert clt < 0.91 and labels_clt < 0.92  # the plain CLT intervals undercover at n = 10
