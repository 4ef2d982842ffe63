"""The adaptive pairing format: each comparison where it most reduces the expected number of misordered pairs."""

from __future__ import annotations

import math

import numpy as np

from .._errors import ConfigurationError
from ._ratings import DEFAULT_PRIOR
from ._state import Proposal, TournamentState, pool_size


def normal_cdf(x: np.ndarray) -> np.ndarray:
    """Φ(x), vectorised (Abramowitz–Stegun 7.1.26 for erf; absolute error < 1e-7)."""
    z = np.abs(x) / math.sqrt(2.0)
    t = 1.0 / (1.0 + 0.3275911 * z)
    poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))))
    erf = 1.0 - poly * np.exp(-z * z)
    return 0.5 * (1.0 + np.sign(x) * erf)


# E[f(Z)] for Z ~ N(0, 1) as Σ weight·f(node): Gauss–Hermite (probabilists') nodes, exact for polynomials of
# degree < 16, which is plenty for the smooth expectation of a normal CDF the adaptive format takes.
_NODES, _NODE_WEIGHTS = np.polynomial.hermite_e.hermegauss(8)
_NODE_WEIGHTS = _NODE_WEIGHTS / _NODE_WEIGHTS.sum()
# Pairs the adaptive format still counts as possibly misordered, and its shortlists, per candidate: the value
# of a comparison is summed over at most LIVE_PER_CANDIDATE·K uncertain pairs, and only the
# SHORTLIST_PER_CANDIDATE·K least certain pairs are considered for the next comparison (far-apart pairs carry
# little information), which keeps a pick O(K²) however many candidates there are.
LIVE_BELOW = 1e-4
LIVE_PER_CANDIDATE = 4
SHORTLIST_PER_CANDIDATE = 2


class Adaptive:
    """Spend each comparison where it most reduces the expected number of misordered pairs (Kendall τ's shortfall).

    Warm start: a random perfect matching, so every candidate plays once (the odd one out meets a random
    other). Then each batch starts from the Laplace approximation of the Bradley–Terry posterior (first-slot
    term fitted, N(0, 1/`prior`) prior on the log-strengths θ, always on so early, nearly separated results
    give finite strengths and wide uncertainties; `TournamentState.posterior`). A pair (k, l) is misordered
    with probability Φ(−|m|/√v), m and v the posterior mean and variance of θk − θl. Judging candidates i and
    j once more (both orders) adds information I = Σ p(1 − p) over the orders; it shrinks v to v' and moves m
    by a normal amount of variance v − v' (the preposterior distribution). The value of that comparison is
    the expected drop Σ [Φ(−|m|/√v) − E Φ(−|m'|/√v')] over all uncertain pairs — a knowledge-gradient step
    on the expected number of discordant pairs. Unlike the plug-in drop Φ(−|m|/√v) − Φ(−|m|/√v'), it does
    not ignore pairs that are even (m ≈ 0), the ones most likely to be misordered.

    A batch picks `batch_size` comparisons greedily (default K // 2, at least 1), updating the covariance by
    each pick's information so it spreads over pairs instead of repeating one. A share `explore` of each
    batch is drawn uniformly from the open pairs instead: a purely greedy design stops comparing pairs whose
    gap happens to look large early on, which locks in that error and leaves the ratings' spread overstated
    and their intervals too narrow (in benchmarks/tournament_efficiency.py, 10 % keeps interval coverage at
    nominal for the price of a few comparisons; 0 is greedy). It stops at the budget, when no pair is left,
    or once every pair of neighbours in the ranking is misordered with probability below `settled` (0 never
    stops early).
    """

    name = "adaptive"

    def __init__(
        self,
        batch_size: int | None = None,
        settled: float = 0.05,
        explore: float = 0.1,
        prior: float = DEFAULT_PRIOR,
    ) -> None:
        if batch_size is not None and batch_size < 1:
            raise ConfigurationError(f"batch_size must be >= 1, got {batch_size}")
        if not (0.0 <= settled < 0.5):
            raise ConfigurationError(f"settled must be a probability below 0.5, got {settled}")
        if not (0.0 <= explore <= 1.0):
            raise ConfigurationError(f"explore must be a share in [0, 1], got {explore}")
        if not (prior > 0 and math.isfinite(prior)):
            raise ConfigurationError(f"prior must be a positive precision, got {prior!r}")
        self.batch_size = batch_size
        self.settled = settled
        self.explore = explore
        self.prior = prior

    def default_budget(self, n_candidates: int, n_questions: int) -> int:
        return pool_size(n_candidates, n_questions)

    def propose(self, state: TournamentState, remaining: int) -> Proposal:
        k = state.n_candidates
        if state.comparisons == 0:
            return warm_start(state)[:remaining]
        theta, gamma, cov = state.posterior(self.prior)
        if self.settled > 0 and neighbour_misorder(theta, cov).max(initial=0.0) < self.settled:
            return []
        first, second = np.triu_indices(k, 1)
        diff = theta[first] - theta[second]
        gap = np.abs(diff)
        info = order_information(diff, gamma)
        left = state.n_questions - state.used[first, second]
        size = min(remaining, self.batch_size or max(1, k // 2))
        explore = int(state.rng.binomial(size, self.explore))
        proposal: Proposal = []
        for pick in range(size):
            open_ = np.flatnonzero(left > 0)
            if not len(open_):
                break
            if pick < explore:
                best = int(state.rng.choice(open_))
            else:
                best = _most_valuable(cov, first, second, gap, info, open_, k)
            i, j = int(first[best]), int(second[best])
            repeats = sum(1 for x in proposal if x[:2] == (i, j))
            proposal.append((i, j, (state.next_question(i, j) + repeats) % state.n_questions))
            direction = cov[:, i] - cov[:, j]
            variance = direction[i] - direction[j]
            cov = cov - info[best] / (1.0 + info[best] * variance) * np.outer(direction, direction)
            left[best] -= 1
        return proposal


def warm_start(state: TournamentState) -> Proposal:
    """A random perfect matching (the odd one out meets a random other): every candidate plays once."""
    k = state.n_candidates
    order = [int(c) for c in state.rng.permutation(k)]
    pairs = [(order[c], order[c + 1]) for c in range(0, k - 1, 2)]
    if k % 2:
        pairs.append((order[-1], order[int(state.rng.integers(0, k - 1))]))
    return [(i, j, state.next_question(i, j)) for i, j in pairs]


def order_information(diff: np.ndarray, gamma: float) -> np.ndarray:
    """Fisher information on θi − θj of one comparison judged in both orders: Σ p(1 − p) over the orders."""
    shown_first = 1.0 / (1.0 + np.exp(-(diff + gamma)))
    shown_second = 1.0 / (1.0 + np.exp(-(gamma - diff)))
    return shown_first * (1.0 - shown_first) + shown_second * (1.0 - shown_second)


def neighbour_misorder(theta: np.ndarray, cov: np.ndarray) -> np.ndarray:
    """P(misordered) of each pair of neighbours in the ranking by θ, under the normal posterior."""
    order = np.argsort(-theta)
    a, b = order[:-1], order[1:]
    return normal_cdf(-np.abs(theta[a] - theta[b]) / np.sqrt(difference_variance(cov, a, b)))


def difference_variance(cov: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Var(θa − θb) per pair of candidate indices, floored above 0 so it can divide."""
    return np.maximum(cov[a, a] + cov[b, b] - 2.0 * cov[a, b], 1e-12)


def _most_valuable(cov, first, second, gap, info, open_, k) -> int:
    """The open comparison with the largest expected drop in the number of misordered pairs (see Adaptive)."""
    var = difference_variance(cov, first, second)
    wrong = normal_cdf(-gap / np.sqrt(var))
    live = np.argsort(-wrong)[: LIVE_PER_CANDIDATE * k]
    live = live[wrong[live] > LIVE_BELOW]
    shortlist = open_[np.argsort(-wrong[open_], kind="stable")[: SHORTLIST_PER_CANDIDATE * k]]
    if not len(live):
        return int(shortlist[0])
    spread = cov[:, first[shortlist]] - cov[:, second[shortlist]]  # (K, S): cov(θ, θi − θj) per comparison
    shift = spread[first[live]] - spread[second[live]]  # (L, S): cov(θk − θl, θi − θj)
    moved = shift**2 * (info[shortlist] / (1.0 + info[shortlist] * var[shortlist]))[None, :]
    after = np.maximum(var[live, None] - moved, 1e-12)
    means = gap[live, None, None] + np.sqrt(moved)[:, :, None] * _NODES  # m' at the quadrature nodes
    expected = normal_cdf(-np.abs(means) / np.sqrt(after)[:, :, None]) @ _NODE_WEIGHTS
    gain = (wrong[live, None] - expected).sum(axis=0)
    return int(shortlist[int(np.argmax(gain))])
