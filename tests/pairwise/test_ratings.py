import math
import time

import numpy as np
import pandas as pd
import pytest

import judgewidgets as jw
from judgewidgets.pairwise import BradleyTerry, bradley_terry, elo, kendall_tau, win_rate
from judgewidgets.pairwise._bradley_terry import fit, game_matrices, mle_exists, resample
from judgewidgets.pairwise._games import Games, games_from_frame
from tests.datasets import arena_hard_battles

BASELINE = "claude-3-haiku-20240307"


@pytest.fixture(scope="module")
def battles() -> pd.DataFrame:
    return arena_hard_battles()


def logistic_regression_strengths(battles: pd.DataFrame) -> dict[str, float]:
    """The same model as a logistic regression: x = e_a − e_b (baseline column dropped), no intercept, each
    tie entered twice as half a win and half a loss (the convention bradley_terry documents)."""
    import statsmodels.api as sm

    names = sorted(set(battles["model_a"]) | set(battles["model_b"]))
    others = [n for n in names if n != BASELINE]
    score = battles["winner"].map({"model_a": 1.0, "model_b": 0.0, "tie": 0.5}).to_numpy()
    x = np.zeros((len(battles), len(others)))
    for column, name in enumerate(others):
        x[:, column] = (battles["model_a"] == name).to_numpy() * 1.0 - (battles["model_b"] == name).to_numpy()
    design = np.vstack([x, x])
    outcome = np.concatenate([np.ones(len(x)), np.zeros(len(x))])
    weight = np.concatenate([score, 1.0 - score])
    keep = weight > 0
    model = sm.GLM(outcome[keep], design[keep], family=sm.families.Binomial(), freq_weights=weight[keep])
    fitted = model.fit(tol=1e-14, maxiter=200)
    return {BASELINE: 0.0, **dict(zip(others, fitted.params))}


def test_arena_hard_strengths_equal_a_logistic_regression_fit(battles: pd.DataFrame) -> None:
    assert len(battles) == 1348
    ranking = bradley_terry(battles, bootstrap=200, seed=0, anchor=BASELINE)
    ours = dict(zip(ranking["candidate"], ranking["strength"]))
    reference = logistic_regression_strengths(battles)
    assert set(ours) == set(reference)
    assert max(abs(ours[n] - reference[n]) for n in ours) < 1e-6
    assert ranking["candidate"].tolist()[-1] == BASELINE and ranking.loc[3, "rating"] == pytest.approx(1000.0)
    assert (ranking["ci_low"] <= ranking["rating"]).all() and (ranking["rating"] <= ranking["ci_high"]).all()
    assert ranking.attrs["penalised"] is False  # ample data: every fit is the plain MLE, no prior involved
    counts = ranking.set_index("candidate")[["wins", "losses", "ties"]].sum()
    assert counts["ties"] == 2 * 23 and counts["wins"] == counts["losses"] == 1348 - 23


def test_arena_hard_also_matches_scikit_learn(battles: pd.DataFrame) -> None:
    from sklearn.linear_model import LogisticRegression

    names = sorted(set(battles["model_a"]) | set(battles["model_b"]))
    x = np.zeros((len(battles), len(names)))
    for column, name in enumerate(names):
        x[:, column] = (battles["model_a"] == name).to_numpy() * 1.0 - (battles["model_b"] == name).to_numpy()
    score = battles["winner"].map({"model_a": 1.0, "model_b": 0.0, "tie": 0.5}).to_numpy()
    model = LogisticRegression(C=1e12, fit_intercept=False, tol=1e-12, max_iter=10_000)
    model.fit(np.vstack([x, x]), np.r_[np.ones(len(x)), np.zeros(len(x))], sample_weight=np.r_[score, 1 - score])
    theirs = model.coef_[0] - model.coef_[0].mean()  # mean-zero, like our default anchoring
    ours = bradley_terry(battles, bootstrap=0).set_index("candidate").loc[names, "strength"].to_numpy()
    assert np.abs(ours - theirs).max() < 1e-4  # lbfgs stops short of Newton's precision


def test_a_b_tie_spelling_gives_the_same_fit(battles: pd.DataFrame) -> None:
    spelled = battles.assign(winner=battles["winner"].map({"model_a": "A", "model_b": "B", "tie": "tie"}))
    first = bradley_terry(battles, bootstrap=50, seed=3)
    second = bradley_terry(spelled, bootstrap=50, seed=3)
    pd.testing.assert_frame_equal(first, second)


def simulated(k: int, n: int, seed: int, bias: float = 0.0) -> tuple[pd.DataFrame, np.ndarray]:
    rng = np.random.default_rng(seed)
    strengths = np.linspace(-1.5, 1.5, k)
    a = rng.integers(0, k, n)
    b = (a + rng.integers(1, k, n)) % k
    swapped = rng.random(n) < 0.5
    first, second = np.where(swapped, b, a), np.where(swapped, a, b)
    first_wins = rng.random(n) < 1 / (1 + np.exp(-(strengths[first] - strengths[second] + bias)))
    a_wins = first_wins != swapped
    frame = pd.DataFrame(
        {
            "model_a": [f"m{i:02d}" for i in a],
            "model_b": [f"m{i:02d}" for i in b],
            "winner": np.where(a_wins, "model_a", "model_b"),
            "swapped": swapped,
        }
    )
    return frame, strengths


def test_a_first_slot_term_absorbs_position_bias() -> None:
    frame, strengths = simulated(6, 6000, seed=1, bias=1.0)
    adjusted = bradley_terry(frame, bootstrap=0).sort_values("candidate")
    assert adjusted.attrs["first_slot_advantage"] == pytest.approx(1.0, abs=0.1)
    assert np.abs(adjusted["strength"].to_numpy() - strengths).max() < 0.12
    ignored = bradley_terry(frame, bootstrap=0, adjust_position=False).sort_values("candidate")
    spread = np.ptp(ignored["strength"].to_numpy())
    assert spread < np.ptp(adjusted["strength"].to_numpy())  # unmodelled position bias shrinks strengths


def test_bootstrap_for_20_candidates_and_1000_comparisons_runs_quickly_and_reproducibly() -> None:
    frame, strengths = simulated(20, 1000, seed=2)
    start = time.perf_counter()
    first = bradley_terry(frame.drop(columns="swapped"), bootstrap=1000, seed=7)
    elapsed = time.perf_counter() - start
    print(f"bootstrap of 1000 resamples: {elapsed:.2f}s")  # a sanity print, not a timed assertion
    second = bradley_terry(frame.drop(columns="swapped"), bootstrap=1000, seed=7)
    pd.testing.assert_frame_equal(first, second)
    assert first["ci_high"].sub(first["ci_low"]).gt(0).all()
    ranked = first.sort_values("candidate")["strength"].to_numpy()
    assert kendall_tau(ranked, strengths) > 0.8


def test_candidates_that_never_lose_get_finite_strengths() -> None:
    frame = pd.DataFrame({"model_a": ["x", "x", "y"], "model_b": ["y", "z", "z"], "winner": ["A", "A", "A"]})
    ranking = bradley_terry(frame, bootstrap=100)
    assert ranking["candidate"].tolist() == ["x", "y", "z"]
    assert np.isfinite(ranking[["rating", "ci_low", "ci_high"]].to_numpy()).all()


def test_elo_and_win_rate() -> None:
    frame, strengths = simulated(5, 800, seed=4)
    frame = frame.drop(columns="swapped")
    by_elo = elo(frame, bootstrap=200).sort_values("candidate")
    assert kendall_tau(by_elo["rating"].to_numpy(), strengths) >= 0.8
    assert by_elo["rating"].mean() == pytest.approx(1000.0)
    rates = win_rate(frame, bootstrap=200)
    assert rates["candidate"].iloc[0] == "m04" and ((rates["rating"] >= 0) & (rates["rating"] <= 1)).all()
    ties = pd.DataFrame({"model_a": ["p"], "model_b": ["q"], "winner": ["tie"]})
    assert win_rate(ties, bootstrap=0)["rating"].tolist() == [0.5, 0.5]


def test_ranking_columns() -> None:
    frame, _ = simulated(4, 200, seed=5)
    for ranking in (bradley_terry(frame, bootstrap=20), elo(frame, bootstrap=20), win_rate(frame, bootstrap=20)):
        assert list(ranking.columns[:8]) == [
            "candidate",
            "rating",
            "ci_low",
            "ci_high",
            "wins",
            "losses",
            "ties",
            "rank",
        ]
        assert ranking["rank"].tolist() == [1, 2, 3, 4]


def test_bad_game_tables_raise_clear_errors() -> None:
    with pytest.raises(jw.InputError, match="model_b"):
        bradley_terry(pd.DataFrame({"model_a": ["x"], "winner": ["A"]}))
    with pytest.raises(jw.InputError, match="unknown winner"):
        bradley_terry(pd.DataFrame({"model_a": ["x"], "model_b": ["y"], "winner": ["left"]}))
    with pytest.raises(jw.InputError, match="against itself"):
        bradley_terry(pd.DataFrame({"model_a": ["x"], "model_b": ["x"], "winner": ["A"]}))
    with pytest.raises(jw.InputError, match="anchor"):
        bradley_terry(pd.DataFrame({"model_a": ["x"], "model_b": ["y"], "winner": ["A"]}), anchor="nobody")
    with pytest.raises(jw.ConfigurationError, match="bootstrap"):
        BradleyTerry(bootstrap=-1)
    with pytest.raises(jw.ConfigurationError, match="interval"):
        BradleyTerry(interval="bca")  # type: ignore[arg-type]
    assert math.isnan(
        bradley_terry(pd.DataFrame({"model_a": ["x"], "model_b": ["y"], "winner": ["A"]}), 0)["ci_low"][0]
    )


def lp_separable(n: np.ndarray, w: np.ndarray, positional: bool) -> bool:
    """Whether a direction (θ, γ) fits every verdict at least as well as a tie and some strictly better: the
    textbook (quasi-)separation test for a logistic regression, as a linear programme."""
    from scipy.optimize import linprog

    k = n.shape[0]
    rows = []
    for f, s in zip(*np.nonzero(n)):
        x = np.zeros(k + 1)
        x[f], x[s], x[k] = 1.0, -1.0, float(positional)
        if w[f, s] > 0:
            rows.append(x)
        if n[f, s] - w[f, s] > 0:
            rows.append(-x)
    a = np.array(rows)
    gauge = np.r_[np.ones(k), 0.0][None]
    result = linprog(-a.sum(axis=0), A_ub=-a, b_ub=np.zeros(len(a)), A_eq=gauge, b_eq=[0.0], bounds=[(-1, 1)] * (k + 1))
    return -result.fun > 1e-9


def test_mle_existence_matches_a_linear_programme_and_catches_first_slot_separation() -> None:
    pytest.importorskip("scipy")
    rng = np.random.default_rng(0)
    checked = 0
    for _ in range(400):
        k = int(rng.integers(2, 6))
        n, w = np.zeros((k, k)), np.zeros((k, k))
        for _ in range(int(rng.integers(1, 12))):
            f, s = rng.choice(k, 2, replace=False)
            n[f, s] += 1
            w[f, s] += rng.choice([0.0, 0.5, 1.0], p=[0.45, 0.1, 0.45])
        for positional in (True, False):
            f, s = np.nonzero(n)
            design = np.zeros((len(f), k + 1))
            design[np.arange(len(f)), f], design[np.arange(len(f)), s], design[:, k] = 1.0, -1.0, float(positional)
            identified = np.linalg.matrix_rank(design) == k - 1 + positional
            expected = identified and not lp_separable(n, w, positional)
            assert mle_exists(n[None], w[None], positional)[0] == expected, (n, w, positional)
            checked += expected
    assert checked > 100
    # Every candidate won and lost and the first slot won and lost, yet "the first slot wins unless a stronger
    # candidate sits second" explains every verdict: an unpenalised fit runs off to θ ≈ ±40 (the bug behind the
    # absurd intervals of small tournaments); it must be detected and the prior used instead.
    n = np.array([[0, 0, 3, 3, 3], [0, 0, 3, 0, 3], [3, 3, 0, 3, 3], [3, 0, 3, 0, 3], [3, 3, 3, 3, 0]], float)
    w = np.array([[0, 0, 3, 2, 3], [0, 0, 0, 0, 1], [1, 3, 0, 0, 3], [3, 0, 3, 0, 3], [0, 3, 1, 0, 0]], float)
    assert mle_exists(n[None], w[None], False)[0] and 0 < w.sum() < n.sum()  # the old test: strongly connected
    assert not mle_exists(n[None], w[None], True)[0]
    theta, gamma, _ = fit(n[None], w[None], True, np.array([0.1]))
    assert np.abs(theta).max() < 5 and abs(gamma[0]) < 3


def small_tournament(seed: int, strengths: np.ndarray, comparisons: int = 24) -> pd.DataFrame:
    """A tournament-shaped matches table (pair_id, both orders, swapped) from a position-biased judge."""
    rng = np.random.default_rng(seed)
    k = len(strengths)
    pairs = [(i, j) for i in range(k) for j in range(i + 1, k)]
    rows = []
    for pair_id in range(comparisons):
        a, b = pairs[pair_id % len(pairs)]
        for swapped in (False, True):
            first, second = (b, a) if swapped else (a, b)
            first_wins = rng.random() < 1 / (1 + np.exp(-(strengths[first] - strengths[second] + 0.5)))
            winner = "A" if first_wins != swapped else "B"
            rows.append(
                {"pair_id": pair_id, "model_a": f"m{a}", "model_b": f"m{b}", "swapped": swapped, "winner": winner}
            )
    return pd.DataFrame(rows)


def test_small_tournaments_get_finite_sensible_intervals_from_one_estimator() -> None:
    strengths = np.array([2.0, 1.5, 0.5, -1.5, -2.5])  # the notebook's five prompt variants, roughly
    penalised = 0
    for seed in range(20):
        ranking = bradley_terry(small_tournament(seed, strengths), bootstrap=300, seed=seed)
        values = ranking[["strength", "strength_ci_low", "strength_ci_high"]].to_numpy()
        assert np.isfinite(values).all()
        width = ranking["strength_ci_high"] - ranking["strength_ci_low"]
        assert (width > 0).all() and width.max() < 6.0, ranking  # a few logits, not ±40 or ±80
        assert (ranking["strength_ci_low"] <= ranking["strength"]).all()
        assert (ranking["strength"] <= ranking["strength_ci_high"]).all()
        assert ranking["strength"].abs().max() < 5.0
        penalised += ranking.attrs["penalised"]
    assert penalised > 10  # 24 comparisons of 5 candidates: some resample is nearly always separated


def test_penalised_regime_uses_the_prior_for_the_point_fit_and_every_resample() -> None:
    frame = small_tournament(3, np.array([3.0, 1.0, -1.0, -3.0]), comparisons=12)
    games = games_from_frame(frame)
    method = BradleyTerry(bootstrap=200)
    fitted = method.estimate(games, seed=0)
    assert fitted.penalised
    n, w = game_matrices(games)
    theta, _, _ = fit(n, w, True, np.array([method.prior]))
    np.testing.assert_allclose(fitted.theta, theta[0], atol=1e-8)  # the point fit is the prior's mode
    cells, _, counts = resample(games, 200, np.random.default_rng(0))
    n_star, w_star = game_matrices(cells, counts)
    samples, _, _ = fit(n_star, w_star, True, np.full(200, method.prior))
    np.testing.assert_allclose(fitted.samples, samples, atol=1e-8)  # and so is every resample's, separated or not


def test_both_orders_of_a_comparison_are_resampled_together() -> None:
    # A judge that agrees with itself in both orders: the two verdicts are one piece of evidence, not two.
    rng = np.random.default_rng(1)
    rows = []
    for pair_id in range(400):
        a, b = rng.choice(4, 2, replace=False)
        a_wins = rng.random() < 1 / (1 + np.exp(-(a - b) * 0.5))
        for swapped in (False, True):
            rows.append({"pair_id": pair_id, "model_a": f"m{a}", "model_b": f"m{b}", "swapped": swapped,
                         "winner": "A" if a_wins else "B"})  # fmt: skip
    frame = pd.DataFrame(rows)
    clustered = bradley_terry(frame, bootstrap=400, seed=0)
    independent = bradley_terry(frame.drop(columns="pair_id"), bootstrap=400, seed=0)
    width = (clustered["strength_ci_high"] - clustered["strength_ci_low"]).mean()
    naive = (independent["strength_ci_high"] - independent["strength_ci_low"]).mean()
    assert width / naive == pytest.approx(np.sqrt(2), rel=0.15)
    games = games_from_frame(frame)
    _, _, counts = resample(games, 50, np.random.default_rng(0))
    assert counts.sum(axis=1).tolist() == [800.0] * 50  # whole comparisons: two verdicts each


def test_cluster_resampling_draws_whole_clusters() -> None:
    games = Games(
        ["a", "b", "c"],
        np.array([0, 1, 0, 2, 1]),
        np.array([1, 0, 2, 0, 2]),
        np.array([1.0, 0.0, 1.0, 0.5, 1.0]),
        np.ones(5),
        True,
        np.array([7, 7, 3, 3, 9]),
    )
    cells, sizes, counts = resample(games, 300, np.random.default_rng(0))
    assert sizes.tolist() == [1.0] * 5 and counts.shape == (300, 5)
    index = {(int(f), int(s)): c for c, (f, s) in enumerate(zip(cells.first, cells.second))}
    together = [(index[0, 1], index[1, 0]), (index[0, 2], index[2, 0])]
    for one, other in together:  # the two rows of a cluster always come in equal numbers
        np.testing.assert_array_equal(counts[:, one], counts[:, other])
    assert set(counts.sum(axis=1)) <= {2.0 * x + y for x in range(4) for y in range(4) if x + y == 3}
