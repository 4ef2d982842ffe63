"""What a tournament has played so far: game counts, debiased points, used questions, and fits from them."""

from __future__ import annotations

import numpy as np

from ._bradley_terry import covariance, fit, mle_exists
from ._games import Games
from ._ratings import DEFAULT_PRIOR

Proposal = list[tuple[int, int, int]]  # (candidate, candidate, question)


class TournamentState:
    """What has been played: per-order game counts (for ratings), debiased points, and which triples were used."""

    def __init__(self, names: list[str], n_questions: int, rng: np.random.Generator) -> None:
        k = len(names)
        self.names = names
        self.n_questions = n_questions
        self.rng = rng
        self.used = np.zeros((k, k), dtype=np.int64)  # comparisons per pair (symmetric)
        self.offset = rng.integers(0, n_questions, size=(k, k))  # each pair walks the questions from here
        self.n = np.zeros((k, k))  # per-order games, row shown first
        self.w = np.zeros((k, k))  # the first-shown's points in them
        self.points = np.zeros(k)  # debiased points: win 1, tie (or inconsistent orders) 0.5
        self.comparisons = 0
        self.batches = 0
        self._orders: list[np.ndarray] = []  # rows (first, second, first's score, comparison) per batch
        self._last: tuple[np.ndarray, np.ndarray] | None = None  # the previous fit, to start the next from
        self._cached: tuple[int, np.ndarray, np.ndarray] | None = None
        self._posterior: tuple[tuple[int, float], tuple[np.ndarray, float, np.ndarray], tuple] | None = None

    @property
    def n_candidates(self) -> int:
        return len(self.names)

    def available(self) -> np.ndarray:
        """(K, K) bool: pairs (i < j) that still have an unused question."""
        return np.triu(self.used < self.n_questions, 1)

    def next_question(self, i: int, j: int) -> int:
        return int((self.offset[min(i, j), max(i, j)] + self.used[i, j]) % self.n_questions)

    def record(
        self,
        a: np.ndarray,
        b: np.ndarray,
        scores: np.ndarray,
        swapped: np.ndarray | None = None,
        outcome: np.ndarray | None = None,
    ) -> None:
        """Record a batch of comparisons of a[i] with b[i].

        `scores` (n, m) holds a's points in each verdict (1 win, 0.5 tie, 0 loss; NaN when not asked or
        failed); column c was shown swapped (b first) when `swapped[c]` — by default the columns are the
        original and the swapped order. `outcome` (n,) is a's debiased points per comparison (NaN: failed);
        by default agreeing orders keep their result, disagreeing ones count as a tie, and a comparison with a
        failed order does not count.
        """
        a = np.asarray(a, dtype=np.intp)
        b = np.asarray(b, dtype=np.intp)
        scores = np.asarray(scores, dtype=float).reshape(len(a), -1)
        flags = np.asarray([False, True][: scores.shape[1]] if swapped is None else swapped, dtype=bool)
        np.add.at(self.used, (a, b), 1)
        np.add.at(self.used, (b, a), 1)
        rows = []
        for column, flipped in enumerate(flags):
            ok = ~np.isnan(scores[:, column])
            first, second = (b, a) if flipped else (a, b)
            first_score = 1.0 - scores[ok, column] if flipped else scores[ok, column]
            np.add.at(self.n, (first[ok], second[ok]), 1.0)
            np.add.at(self.w, (first[ok], second[ok]), first_score)
            comparison = self.comparisons + np.flatnonzero(ok)
            rows.append(np.stack([first[ok], second[ok], first_score, comparison], axis=1))
        self._orders.append(np.concatenate(rows))
        if outcome is None:
            one, two = scores[:, 0], scores[:, 1] if scores.shape[1] > 1 else np.full(len(a), np.nan)
            asked_once = scores.shape[1] == 1
            outcome = one if asked_once else np.where(one == two, one, np.where(np.isnan(one + two), np.nan, 0.5))
        done = ~np.isnan(outcome)
        np.add.at(self.points, a[done], outcome[done])
        np.add.at(self.points, b[done], 1.0 - outcome[done])
        self.comparisons += len(a)
        self.batches += 1

    def games(self) -> Games:
        """Every order's verdict so far, as positional games (first-shown, second, first's points), clustered
        by comparison (its orders are resampled together, as `jw.bradley_terry` does with a pair_id)."""
        rows = np.concatenate(self._orders) if self._orders else np.zeros((0, 4))
        first, second = rows[:, 0].astype(np.intp), rows[:, 1].astype(np.intp)
        return Games(self.names, first, second, rows[:, 2], np.ones(len(rows)), True, rows[:, 3].astype(np.intp))

    def estimate(self, prior: float = DEFAULT_PRIOR) -> tuple[np.ndarray, np.ndarray]:
        """Bradley–Terry log-strengths (mean 0, first-slot term fitted) and their covariance, from the counts.

        Maximum likelihood when it exists; otherwise the fit under a N(0, 1/prior) prior on θ (and γ).
        """
        if self._cached is not None and self._cached[0] == self.comparisons:
            return self._cached[1], self._cached[2]
        n, w = self.n[None], self.w[None]
        lam = np.where(mle_exists(n, w, True), 0.0, prior)
        theta, gamma, hessian = fit(n, w, True, lam, tol=1e-8, start=self._last)
        self._last = (theta, gamma)
        result = theta[0], covariance(hessian, self.n_candidates)[0]
        self._cached = (self.comparisons, *result)
        return result

    def posterior(self, prior: float = DEFAULT_PRIOR) -> tuple[np.ndarray, float, np.ndarray]:
        """Laplace approximation of the posterior under a N(0, 1/prior) prior on θ and γ, always applied.

        Returns the posterior mode θ (mean 0), γ, and the covariance of θ. Unlike `estimate`, the prior is on
        even when the maximum-likelihood estimate exists, so early, nearly separated data give finite strengths
        and honest (wide) uncertainties — what a pairing format needs to decide where to look next.
        """
        if self._posterior is not None and self._posterior[0] == (self.comparisons, prior):
            return self._posterior[1]
        start = None if self._posterior is None else self._posterior[2]
        theta, gamma, hessian = fit(self.n[None], self.w[None], True, np.array([prior]), tol=1e-8, start=start)
        result = theta[0], float(gamma[0]), covariance(hessian, self.n_candidates)[0]
        self._posterior = ((self.comparisons, prior), result, (theta, gamma))
        return result


def pool_size(n_candidates: int, n_questions: int) -> int:
    """Every distinct comparison: each pair of candidates on each question."""
    return n_candidates * (n_candidates - 1) // 2 * n_questions
