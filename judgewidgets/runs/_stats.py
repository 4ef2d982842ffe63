"""The statistics of a paired comparison: a seeded paired bootstrap for intervals, the exact sign test for
p-values (McNemar's exact test, when the scores are pass / fail)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from statistics import NormalDist

import numpy as np

from ..sequential import t_quantile

# Resamples are drawn in blocks of at most this many values, so 10,000 items × 2,000 resamples stay small.
_BLOCK = 2_000_000


def paired_bootstrap(
    differences: np.ndarray, n_boot: int = 2000, confidence: float = 0.95, seed: int = 0
) -> tuple[float, float, float]:
    """(mean, low, high) of the per-item differences after − before: the percentile interval of the mean over
    `n_boot` resamples of the items (each item keeps its own pair, so what the runs share cancels out), expanded
    for small samples as Hesterberg (2015) proposes: the percentiles taken at the level whose normal quantile is
    √(n/(n−1))·t_{n−1} (the plain percentile interval is too narrow with few items: over three sets of 2,000
    simulated runs of 60 items it covered 93.4–94.8 % at nominal 95 %, this one 94.3–95.5 %; 94 % with 10 items).
    NaN bounds for fewer than 2 items; a zero-width interval when every difference is the same."""
    return paired_bootstraps([differences], n_boot, confidence, seed)[0]


def paired_bootstraps(
    differences: Sequence[np.ndarray], n_boot: int = 2000, confidence: float = 0.95, seed: int = 0
) -> list[tuple[float, float, float]]:
    """`paired_bootstrap` of each array, the same numbers as one call each: arrays of one length share their
    resamples (with one seed they would draw the same ones), so the draws are made once for all of them (a
    comparison's judges and metrics over the same items)."""
    arrays = [np.asarray(d, dtype=float) for d in differences]
    out: list[tuple[float, float, float]] = [(math.nan, math.nan, math.nan)] * len(arrays)
    by_length: dict[int, list[int]] = {}
    for i, d in enumerate(arrays):
        if len(d) == 1:
            out[i] = (float(d[0]), math.nan, math.nan)
        elif len(d) > 1:
            by_length.setdefault(len(d), []).append(i)
    for n, which in by_length.items():
        means = _resampled_means([arrays[i] for i in which], n_boot, seed)
        alpha = expanded_alpha(1.0 - confidence, n)
        for i, resampled in zip(which, means, strict=True):
            low, high = np.quantile(resampled, [alpha / 2, 1 - alpha / 2])
            out[i] = (float(arrays[i].mean()), float(low), float(high))
    return out


def _resampled_means(arrays: Sequence[np.ndarray], n_boot: int, seed: int) -> list[np.ndarray]:
    """The mean of each array (all of one length n) over the same `n_boot` resamples of its positions."""
    n = len(arrays[0])
    rng = np.random.default_rng(seed)
    means = [np.empty(n_boot) for _ in arrays]
    step = max(1, _BLOCK // n)
    for start in range(0, n_boot, step):
        stop = min(n_boot, start + step)
        drawn = rng.integers(0, n, size=(stop - start, n))
        for d, m in zip(arrays, means, strict=True):
            m[start:stop] = d[drawn].mean(axis=1)
    return means


def expanded_alpha(alpha: float, n: int) -> float:
    """The two-sided level α′ with Φ⁻¹(1 − α′/2) = √(n/(n−1))·t_{n−1, 1−α/2}: the tails the expanded percentile
    interval takes (α′ < α; it tends to α as n grows)."""
    z = math.sqrt(n / (n - 1)) * float(t_quantile(alpha, n - 1))
    return 2.0 * (1.0 - NormalDist().cdf(z))


def sign_test(differences: np.ndarray) -> float:
    """Two-sided exact sign test of "an item is as likely to get better as worse" on the items that changed
    (ties left out; 1.0 when none changed). On pass / fail scores it is McNemar's exact test."""
    d = np.asarray(differences, dtype=float)
    up, down = int((d > 0).sum()), int((d < 0).sum())
    changed = up + down
    if changed == 0:
        return 1.0
    return min(1.0, 2.0 * binomial_cdf(min(up, down), changed))


def binomial_cdf(k: int, n: int) -> float:
    """P(X ≤ k) for X ~ Binomial(n, ½), summed in log space (exact enough for n in the tens of thousands)."""
    if k < 0:
        return 0.0
    if k >= n:
        return 1.0
    logs = [math.lgamma(n + 1) - math.lgamma(i + 1) - math.lgamma(n - i + 1) - n * math.log(2) for i in range(k + 1)]
    top = max(logs)
    return min(1.0, math.exp(top) * sum(math.exp(v - top) for v in logs))
