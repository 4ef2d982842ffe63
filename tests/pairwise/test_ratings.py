import math
import time

import numpy as np
import pandas as pd
import pytest

import judgewidgets as jw
from judgewidgets.pairwise import BradleyTerry, bradley_terry, elo, kendall_tau, win_rate
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
