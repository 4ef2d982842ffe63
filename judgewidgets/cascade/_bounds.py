"""Exact binomial bounds for certifying agreement: the binomial tail, Clopper–Pearson, and the test they make.

A set of n trusted verdicts with k disagreements certifies "agreement ≥ 1 − α" at level δ when the binomial
p-value P(Bin(n, α) ≤ k) is at most δ: were the true disagreement rate above α, so few disagreements would
happen with probability at most δ. This is the same statement as "the one-sided Clopper–Pearson lower bound on
agreement at confidence 1 − δ is at least 1 − α", and both are exact at every sample size (no normal
approximation). The tails are computed here, exactly in floating point, so the package needs no scipy.
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

from .._errors import ConfigurationError

IntArray = npt.NDArray[np.int64]


def _check_level(name: str, value: float) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not (0.0 < float(value) < 1.0):
        raise ConfigurationError(f"{name} must lie strictly between 0 and 1, got {value!r}")
    return float(value)


def binomial_cdf(k: int, n: int, p: float) -> float:
    """P(Bin(n, p) ≤ k), summed exactly over the probability mass function (log-space terms)."""
    if k < 0:
        return 0.0
    if k >= n:
        return 1.0
    if p <= 0.0:
        return 1.0
    if p >= 1.0:
        return 0.0
    j = np.arange(k + 1, dtype=float)
    log_choose = math.lgamma(n + 1) - _lgamma(j + 1) - _lgamma(n - j + 1)
    log_terms = log_choose + j * math.log(p) + (n - j) * math.log1p(-p)
    top = float(log_terms.max())
    return float(min(1.0, math.exp(top) * np.exp(log_terms - top).sum()))


def _lgamma(values: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    return np.array([math.lgamma(v) for v in values.tolist()], dtype=float)


def clopper_pearson_lower(successes: int, n: int, delta: float) -> float:
    """The one-sided Clopper–Pearson lower bound at confidence 1 − δ on a success rate, from `successes` of `n`.

    The smallest p for which seeing this many successes or more has probability at least δ (0 when none were
    seen, or n is 0). Found by bisection on the exact binomial tail, to 1e-12.
    """
    delta = _check_level("delta", delta)
    if n < 0 or not 0 <= successes <= n:
        raise ConfigurationError(f"need 0 <= successes <= n, got {successes} of {n}")
    if successes == 0:
        return 0.0
    if successes == n:
        return float(delta ** (1.0 / n))  # P(all n succeed) = p^n = δ

    def upper_tail(p: float) -> float:  # P(X ≥ successes), increasing in p
        return 1.0 - binomial_cdf(successes - 1, n, p)

    low, high = 0.0, 1.0
    while high - low > 1e-12:
        middle = (low + high) / 2
        if upper_tail(middle) < delta:
            low = middle
        else:
            high = middle
    return low


def minimum_rows(target: float, delta: float) -> int:
    """The fewest verdicts that can certify agreement ≥ `target` at level `delta`: all of them must agree, and
    target^n ≤ delta. Fewer labelled rows can certify nothing, whatever the judges do."""
    target = _check_level("target_agreement", target)
    delta = _check_level("delta", delta)
    n = max(1, math.ceil(math.log(delta) / math.log(target)))
    while target**n > delta:  # guard the float rounding of the logarithms
        n += 1
    while n > 1 and target ** (n - 1) <= delta:
        n -= 1
    return n


class AgreementTest:
    """The exact binomial test of "agreement ≥ target" at level δ, for any number of trusted verdicts.

    `critical(n)` is the largest number of disagreements among n verdicts that still certifies the target (−1
    when none does); `certifies(n, k)` applies it to arrays. The table of critical values grows as larger n are
    asked for and is kept, so one test object serves many calibrations (the validity simulation runs thousands).
    The cumulative probabilities are built row by row with P_n(k) = (1 − α)·P_{n−1}(k) + α·P_{n−1}(k − 1), a
    convex combination, so every value stays in [0, 1] without cancellation.
    """

    def __init__(self, target: float, delta: float) -> None:
        self.target = _check_level("target_agreement", target)
        self.delta = _check_level("delta", delta)
        self.alpha = 1.0 - self.target
        self.minimum = minimum_rows(self.target, self.delta)
        self._critical: IntArray = np.array([-1], dtype=np.int64)  # n = 0: nothing to certify with
        self._row = np.array([1.0])  # P(Bin(0, α) ≤ k) for k = 0

    def _extend(self, n_max: int) -> None:
        have = len(self._critical) - 1
        if n_max <= have:
            return
        critical = np.empty(n_max - have, dtype=np.int64)
        row = self._row
        alpha = self.alpha
        for n in range(have + 1, n_max + 1):
            shifted = np.concatenate(([0.0], row))  # P_{n−1}(k − 1)
            row = (1.0 - alpha) * np.append(row, 1.0) + alpha * shifted
            # P_n(k) is increasing in k: the certifying k are a prefix.
            critical[n - have - 1] = int(np.searchsorted(row, self.delta, side="right")) - 1
        self._row = row
        self._critical = np.concatenate((self._critical, critical))

    def critical(self, n: int) -> int:
        """The most disagreements among `n` verdicts that certify the target (−1: none certifies)."""
        self._extend(int(n))
        return int(self._critical[int(n)])

    def certifies(self, n: npt.ArrayLike, k: npt.ArrayLike) -> npt.NDArray[np.bool_]:
        """Elementwise: do `k` disagreements among `n` trusted verdicts certify agreement ≥ target?"""
        n_arr = np.asarray(n, dtype=np.int64)
        k_arr = np.asarray(k, dtype=np.int64)
        if n_arr.size:
            self._extend(int(n_arr.max()))
        return k_arr <= self._critical[n_arr]

    def p_value(self, n: int, k: int) -> float:
        """P(Bin(n, 1 − target) ≤ k): how surprising so few disagreements would be at the target's edge."""
        return binomial_cdf(k, n, self.alpha)
