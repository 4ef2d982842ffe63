"""Monte Carlo checks of stopping rules: coverage and cost over thousands of simulated sequential ratings.

All trials run at once: ratings are drawn up front as a (trials × max_samples) array, and the rule is asked
about every path that has reached the smallest current n, so one numpy call serves many paths.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from .._errors import ConfigurationError
from ._distribution import SEED_DISTRIBUTION, check_distribution, draw, likert_distribution, scale_points
from ._methods import make_rule, method_name
from ._precision import Precision
from ._rules import SEED_PILOT, AnytimeRule, StoppingRule, check_int

SIMULATION_COLUMNS = ["trial", "mean", "low", "high", "half_width", "n", "stopped", "covered"]


def run_paths(rule: StoppingRule, ratings: np.ndarray, max_samples: int) -> dict[str, np.ndarray]:
    """Run `rule` on every row of `ratings` (the judgments each trial would get, in order), up to max_samples."""
    trials, available = ratings.shape
    cap = min(max_samples, available)
    n = np.full(trials, min(rule.pilot, cap))
    active = np.ones(trials, dtype=bool)
    out = {
        "mean": np.full(trials, np.nan),
        "low": np.full(trials, np.nan),
        "high": np.full(trials, np.nan),
        "n": np.zeros(trials, dtype=int),
        "stopped": np.zeros(trials, dtype=bool),
    }
    anytime = rule if isinstance(rule, AnytimeRule) else None
    running = anytime.bounds(ratings[:, :cap]) if anytime is not None else None
    while active.any():
        current = int(n[active].min())
        rows = np.flatnonzero(active & (n == current))
        paths = ratings[rows, :current]
        if anytime is not None and running is not None:
            low_now, high_now = running[0][rows, current - 1], running[1][rows, current - 1]
            stop = np.asarray(anytime.stop_from_bounds(low_now, high_now), dtype=np.bool_)
        else:
            stop = np.asarray(rule.should_stop(paths), dtype=bool)
        done = stop | (current >= cap)
        if done.any():
            finished = rows[done]
            if running is not None:
                low, high = low_now[done], high_now[done]
            else:
                low, high = rule.interval(paths[done])
            out["low"][finished] = low
            out["high"][finished] = high
            out["mean"][finished] = paths[done].mean(axis=1)
            out["n"][finished] = current
            out["stopped"][finished] = stop[done]
            active[finished] = False
        if not done.all():
            if anytime is not None and running is not None:
                more = anytime.batch_from_bounds(current, low_now[~done], high_now[~done])
            else:
                more = np.asarray(rule.next_batch(paths[~done]), dtype=int)
            n[rows[~done]] = np.minimum(current + np.maximum(more, 1), cap)
    return out


def simulate(
    true_mean: float | Sequence[float] | np.ndarray | None = None,
    true_std: float | None = None,
    trials: int = 1000,
    scale: tuple[float, float] = (1, 10),
    K: float = 10,
    alpha: float = 0.05,
    method: str | StoppingRule | None = None,
    seed: int | None = None,
    *,
    pilot: int = SEED_PILOT,
    max_samples: int = 200,
    step: float = 1.0,
) -> pd.DataFrame:
    """Simulate `trials` sequential ratings of one item; one row per trial: mean, half_width, n, covered, ...

    The judge's ratings follow a discrete distribution on the scale points: give probabilities as `true_mean`
    (a sequence, one per point; `true_std` unused), or a mean and sd (the maximum-entropy distribution with
    those moments, see `likert_distribution`). With neither, the seed's own distribution (mean 8.3, sd 1).
    `covered` says whether the final interval holds the distribution's true mean; `stopped` is False for trials
    that hit `max_samples` first. The frame's `attrs` record the true mean, sd, method and target.
    """
    precision = Precision(scale=scale, K=K, alpha=alpha)
    trials = check_int("trials", trials, 1)
    max_samples = check_int("max_samples", max_samples, 2)
    rule = make_rule(method, precision, check_int("pilot", pilot, 2))
    if max_samples < rule.pilot:
        raise ConfigurationError(f"max_samples ({max_samples}) must be >= pilot ({rule.pilot})")
    points = scale_points(precision.scale, step)
    probs = _distribution(true_mean, true_std, precision, points, step)
    mu = float(points @ probs)
    sigma = float(math.sqrt(max(((points - mu) ** 2) @ probs, 0.0)))
    ratings = draw(probs, points, (trials, max_samples), np.random.default_rng(seed))
    out = run_paths(rule, ratings, max_samples)
    frame = pd.DataFrame(
        {
            "trial": np.arange(trials),
            "mean": out["mean"],
            "low": out["low"],
            "high": out["high"],
            "half_width": (out["high"] - out["low"]) / 2.0,
            "n": out["n"],
            "stopped": out["stopped"],
            "covered": (out["low"] <= mu + 1e-12) & (mu - 1e-12 <= out["high"]),
        },
        columns=SIMULATION_COLUMNS,
    )
    frame.attrs.update(
        true_mean=mu, true_std=sigma, method=method_name(rule), K=precision.K, alpha=precision.alpha, d=precision.d
    )
    return frame


def _distribution(
    true_mean: Any, true_std: float | None, precision: Precision, points: np.ndarray, step: float
) -> np.ndarray:
    if true_mean is None:
        if true_std is not None:
            raise ConfigurationError("give true_mean with true_std")
        if len(points) != len(SEED_DISTRIBUTION):
            raise ConfigurationError(f"give true_mean and true_std (or probabilities) for the scale {precision.scale}")
        return np.asarray(SEED_DISTRIBUTION) / sum(SEED_DISTRIBUTION)
    if isinstance(true_mean, (Sequence, np.ndarray)) and not isinstance(true_mean, str):
        return check_distribution(true_mean, precision.scale, step)
    if true_std is None:
        raise ConfigurationError("give true_std with a numeric true_mean (or probabilities as true_mean)")
    return likert_distribution(float(true_mean), float(true_std), precision.scale, step)


def summarise(frame: pd.DataFrame) -> dict[str, float]:
    """Coverage, mean and 95th-percentile n, and the share of trials that met the target, of a simulation."""
    return {
        "coverage": float(frame["covered"].mean()),
        "mean_n": float(frame["n"].mean()),
        "p95_n": float(np.percentile(frame["n"], 95)),
        "stopped": float(frame["stopped"].mean()),
    }


def compare_methods(
    methods: Sequence[str | StoppingRule] | None = None,
    distribution: Sequence[float] | None = None,
    trials: int = 5000,
    scale: tuple[float, float] = (1, 10),
    K: float = 10,
    alpha: float = 0.05,
    seed: int | None = 0,
    **simulate_kwargs: Any,
) -> pd.DataFrame:
    """One row per method: coverage, mean n, p95 n, and mean n relative to the seed's, on one distribution."""
    from ._methods import METHODS

    chosen = list(methods) if methods is not None else list(METHODS)
    rows = []
    for method in chosen:
        frame = simulate(distribution, None, trials, scale, K, alpha, method, seed, **simulate_kwargs)
        rows.append({"method": frame.attrs["method"], **summarise(frame)})
    table = pd.DataFrame(rows)
    if "seed" in set(table["method"]):
        seed_n = float(table.loc[table["method"] == "seed", "mean_n"].iloc[0])
    else:
        seed_frame = simulate(distribution, None, trials, scale, K, alpha, "seed", seed, **simulate_kwargs)
        seed_n = float(seed_frame["n"].mean())
    table["n_vs_seed"] = table["mean_n"] / seed_n
    table["nominal"] = 1.0 - alpha
    return table
