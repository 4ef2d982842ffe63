"""Discrete rating distributions for simulation: the seed's own, and one for any mean and sd on a scale."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from .._errors import ConfigurationError

# The seed's simulated judge ("Precision-Based Rating System", get_likert_probs(8.3, 1)): the SLSQP fit, started
# from the uniform distribution, of probabilities on 1..10 with mean 8.3 and sd 1. Rounded to 6 decimals its
# mean is 8.29998 and its sd 0.99980; 1.78 % of 5-judgment pilots are all equal. It is lumpier than a
# discretised normal (8 has 44 %), which is what makes the seed's z-stop cover only ~90 % at nominal 95 %.
SEED_DISTRIBUTION: tuple[float, ...] = (0.0, 0.0, 0.0, 0.0, 0.001584, 0.010070, 0.191567, 0.443858, 0.189402, 0.163519)


def scale_points(scale: tuple[float, float], step: float = 1.0) -> np.ndarray:
    """The ratings a judge can give on `scale`: low, low + step, ..., high."""
    low, high = float(scale[0]), float(scale[1])
    count = round((high - low) / step) + 1
    return low + step * np.arange(count)


def likert_distribution(mean: float, std: float, scale: tuple[float, float] = (1, 10), step: float = 1.0) -> np.ndarray:
    """Probabilities over the scale points with exactly this mean and sd: the maximum-entropy one.

    The maximum-entropy distribution with a given mean and variance is p_k ∝ exp(a·x_k + b·x_k²), a discretised
    (and truncated) normal; it is unique, smooth, and solved here by Newton's method on its convex dual.
    """
    points = scale_points(scale, step)
    low, high = float(points[0]), float(points[-1])
    if not (math.isfinite(mean) and low <= mean <= high):
        raise ConfigurationError(f"true_mean must lie within the scale {scale}, got {mean}")
    if not (math.isfinite(std) and std >= 0):
        raise ConfigurationError(f"true_std must be a finite number >= 0, got {std}")
    below = points[points <= mean + 1e-12].max()
    above = points[points >= mean - 1e-12].min()
    least = (mean - below) * (above - mean)  # variance of the two neighbouring points
    most = (mean - low) * (high - mean)  # variance of the two end points
    var = std * std
    if var < least - 1e-9 or var > most + 1e-9:
        raise ConfigurationError(
            f"no distribution on the points of {scale} has mean {mean} and sd {std}: "
            f"the sd must lie between {math.sqrt(max(least, 0)):.4g} and {math.sqrt(most):.4g}"
        )
    if var <= least + 1e-9:
        return _two_point(points, mean, below, above)
    if var >= most - 1e-9:
        return _two_point(points, mean, low, high)
    return _max_entropy(points, mean, var)


def _two_point(points: np.ndarray, mean: float, a: float, b: float) -> np.ndarray:
    probs = np.zeros(len(points))
    if a == b:
        probs[np.argmin(np.abs(points - a))] = 1.0
        return probs
    probs[np.argmin(np.abs(points - a))] = (b - mean) / (b - a)
    probs[np.argmin(np.abs(points - b))] = (mean - a) / (b - a)
    return probs


def _max_entropy(points: np.ndarray, mean: float, var: float) -> np.ndarray:
    spread = (points[-1] - points[0]) / 2.0
    u = (points - mean) / spread  # centred and scaled, so the target moments are (0, var/spread²)
    features = np.stack([u, u * u])
    target = np.array([0.0, var / spread**2])
    theta = np.array([0.0, -0.5 / target[1]])  # start from the untruncated normal

    def dual(th: np.ndarray) -> float:
        logits = th @ features
        top = logits.max()
        return float(top + np.log(np.exp(logits - top).sum()) - th @ target)

    for _ in range(200):
        logits = theta @ features
        probs = np.exp(logits - logits.max())
        probs /= probs.sum()
        moments = features @ probs
        gradient = moments - target
        if np.abs(gradient).max() < 1e-12:
            break
        centred = features - moments[:, None]
        hessian = (centred * probs) @ centred.T + 1e-15 * np.eye(2)
        step = np.linalg.solve(hessian, gradient)
        size, current = 1.0, dual(theta)
        while dual(theta - size * step) > current - 1e-4 * size * gradient @ step and size > 1e-10:
            size /= 2.0
        theta = theta - size * step
    logits = theta @ features
    probs = np.exp(logits - logits.max())
    return probs / probs.sum()


def check_distribution(
    probs: Sequence[float] | np.ndarray, scale: tuple[float, float], step: float = 1.0
) -> np.ndarray:
    """Validate probabilities given over the scale points; returns them as an array summing to 1."""
    points = scale_points(scale, step)
    arr = np.asarray(probs, dtype=float)
    if arr.ndim != 1 or len(arr) != len(points):
        raise ConfigurationError(
            f"a distribution on {scale} needs one probability per scale point ({len(points)}), got shape {arr.shape}"
        )
    if not np.all(np.isfinite(arr)) or np.any(arr < 0) or not math.isclose(arr.sum(), 1.0, abs_tol=1e-6):
        raise ConfigurationError("distribution probabilities must be finite, >= 0 and sum to 1")
    return arr / arr.sum()


def draw(probs: np.ndarray, points: np.ndarray, size: tuple[int, int], rng: np.random.Generator) -> np.ndarray:
    """Ratings drawn from the distribution, by inverse CDF (fast for large simulations)."""
    cdf = np.cumsum(probs)
    cdf[-1] = 1.0
    index = np.searchsorted(cdf, rng.random(size), side="right")
    return points[np.minimum(index, len(points) - 1)]
