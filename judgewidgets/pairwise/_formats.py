"""Pairing formats: which candidates meet next. Round robin, Swiss, and adaptive (least certain pairs first).

A comparison is one (candidate, candidate, question) triple, judged in both orders when the judge swaps; no
triple is judged twice. Formats only read the `TournamentState`, so they run the same on a language-model judge
and on a simulated one (see benchmarks/tournament_efficiency.py).
"""

from __future__ import annotations

import math
from typing import Protocol, runtime_checkable

import numpy as np

from .._errors import ConfigurationError
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
        self._orders: list[np.ndarray] = []  # rows (first, second, first's score) per batch
        self._last: tuple[np.ndarray, np.ndarray] | None = None  # the previous fit, to start the next from
        self._cached: tuple[int, np.ndarray, np.ndarray] | None = None

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
            rows.append(np.stack([first[ok], second[ok], first_score], axis=1))
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
        """Every order's verdict so far, as positional games (first-shown, second, first's points)."""
        rows = np.concatenate(self._orders) if self._orders else np.zeros((0, 3))
        first, second = rows[:, 0].astype(np.intp), rows[:, 1].astype(np.intp)
        return Games(self.names, first, second, rows[:, 2], np.ones(len(rows)), True)

    def estimate(self, prior: float = DEFAULT_PRIOR) -> tuple[np.ndarray, np.ndarray]:
        """Bradley–Terry log-strengths (mean 0, first-slot term fitted) and their covariance, from the counts."""
        if self._cached is not None and self._cached[0] == self.comparisons:
            return self._cached[1], self._cached[2]
        n, w = self.n[None], self.w[None]
        lam = np.where(mle_exists(n, w, True), 0.0, prior)
        theta, gamma, hessian = fit(n, w, True, lam, tol=1e-8, start=self._last)
        self._last = (theta, gamma)
        result = theta[0], covariance(hessian, self.n_candidates)[0]
        self._cached = (self.comparisons, *result)
        return result


@runtime_checkable
class PairingFormat(Protocol):
    """The pairing role: given the state, the next comparisons to judge (an empty list ends the tournament)."""

    name: str

    def default_budget(self, n_candidates: int, n_questions: int) -> int: ...

    def propose(self, state: TournamentState, remaining: int) -> Proposal: ...


def pool_size(n_candidates: int, n_questions: int) -> int:
    """Every distinct comparison: each pair of candidates on each question."""
    return n_candidates * (n_candidates - 1) // 2 * n_questions


class RoundRobin:
    """Every pair on every question, round by round (round r asks question r), all in one concurrent batch.
    A budget cuts the schedule after its first `budget` comparisons, so complete rounds come first."""

    name = "round_robin"

    def default_budget(self, n_candidates: int, n_questions: int) -> int:
        return pool_size(n_candidates, n_questions)

    def propose(self, state: TournamentState, remaining: int) -> Proposal:
        if state.comparisons:
            return []
        k = state.n_candidates
        i, j = np.triu_indices(k, 1)
        schedule: Proposal = []
        for q in range(state.n_questions):
            order = state.rng.permutation(len(i))
            schedule.extend((int(i[p]), int(j[p]), q) for p in order)
            if len(schedule) >= remaining:
                break
        return schedule[:remaining]


class Swiss:
    """Rounds in which candidates with similar points meet, preferring pairs that met least; odd one out sits.

    Without a budget it plays ⌈log2 K⌉ rounds per question.
    """

    name = "swiss"

    def default_budget(self, n_candidates: int, n_questions: int) -> int:
        rounds = max(1, math.ceil(math.log2(n_candidates))) * n_questions
        return min(rounds * (n_candidates // 2), pool_size(n_candidates, n_questions))

    def propose(self, state: TournamentState, remaining: int) -> Proposal:
        k = state.n_candidates
        standing = np.lexsort((state.rng.random(k), -state.points))  # best first, random among equals
        place = np.empty(k, dtype=np.intp)
        place[standing] = np.arange(k)
        open_ = np.maximum(state.available(), state.available().T)
        unpaired = list(standing)
        proposal: Proposal = []
        while len(unpaired) > 1 and len(proposal) < remaining:
            top = unpaired.pop(0)
            options = [c for c in unpaired if open_[top, c]]
            if not options:
                continue
            rival = min(options, key=lambda c: (state.used[top, c], abs(place[c] - place[top])))
            unpaired.remove(rival)
            proposal.append((int(top), int(rival), state.next_question(top, rival)))
        return proposal


def normal_cdf(x: np.ndarray) -> np.ndarray:
    """Φ(x), vectorised (Abramowitz–Stegun 7.1.26 for erf; absolute error < 1e-7)."""
    z = np.abs(x) / math.sqrt(2.0)
    t = 1.0 / (1.0 + 0.3275911 * z)
    poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))))
    erf = 1.0 - poly * np.exp(-z * z)
    return 0.5 * (1.0 + np.sign(x) * erf)


class Adaptive:
    """Spend comparisons where they most reduce the expected number of misordered pairs.

    After a warm-up cycle (each candidate meets two others), each batch refits Bradley–Terry and greedily picks
    the comparisons with the largest expected drop in Σ P(misordered) over all pairs, where P(misordered) =
    Φ(−|θi − θj| / sd(θi − θj)) (the expected number of discordant pairs, i.e. Kendall τ's shortfall). After
    each pick the covariance is updated by the information that comparison adds (2·p(1−p), both orders), so a
    batch spreads over pairs instead of repeating one. It stops at the budget, when no pair is left, or once
    every pair of neighbours in the ranking is ordered with P(misordered) < `settled` (0 never stops early).
    """

    name = "adaptive"

    def __init__(self, batch_size: int | None = None, settled: float = 0.05, explore: float = 0.25) -> None:
        if batch_size is not None and batch_size < 1:
            raise ConfigurationError(f"batch_size must be >= 1, got {batch_size}")
        if not (0.0 <= settled < 0.5):
            raise ConfigurationError(f"settled must be a probability below 0.5, got {settled}")
        if not (0.0 <= explore <= 1.0):
            raise ConfigurationError(f"explore must be a share in [0, 1], got {explore}")
        self.batch_size = batch_size
        self.settled = settled
        self.explore = explore

    def default_budget(self, n_candidates: int, n_questions: int) -> int:
        return pool_size(n_candidates, n_questions)

    def propose(self, state: TournamentState, remaining: int) -> Proposal:
        k = state.n_candidates
        size = min(remaining, self.batch_size or max(1, k // 2))
        if state.comparisons == 0:
            cycle = state.rng.permutation(k)
            pairs = [(int(cycle[c]), int(cycle[(c + 1) % k])) for c in range(k if k > 2 else 1)]
            return [(i, j, state.next_question(i, j)) for i, j in pairs][:remaining]
        theta, cov = state.estimate()
        first, second = np.triu_indices(k, 1)
        gap = np.abs(theta[first] - theta[second])
        if self.settled > 0:
            order = np.argsort(-theta)
            var = np.diag(cov)
            a, b = order[:-1], order[1:]
            sd = np.sqrt(np.maximum(var[a] + var[b] - 2.0 * cov[a, b], 1e-12))
            if normal_cdf(-np.abs(theta[a] - theta[b]) / sd).max() < self.settled:
                return []
        p = 1.0 / (1.0 + np.exp(-gap))
        info = 2.0 * p * (1.0 - p)  # both orders of one comparison
        open_ = state.used[first, second] < state.n_questions
        left = state.n_questions - state.used[first, second]
        proposal: Proposal = []
        explore = int(state.rng.binomial(size, self.explore))
        for pick in range(size):
            if not open_.any():
                break
            var = np.maximum(np.diag(cov)[first] + np.diag(cov)[second] - 2.0 * cov[first, second], 1e-12)
            wrong = normal_cdf(-gap / np.sqrt(var))
            spread = cov[:, first] - cov[:, second]  # (K, M): Σ x for each candidate comparison x
            shrink = info / (1.0 + info * var)
            live = wrong > 1e-6  # pairs already surely ordered cannot gain
            shift = spread[first[live]] - spread[second[live]]  # (live pairs, M comparisons)
            after = np.maximum(var[live, None] - shift**2 * shrink[None, :], 1e-12)
            gain = (wrong[live, None] - normal_cdf(-gap[live, None] / np.sqrt(after))).sum(axis=0)
            if pick < explore:  # a random open pair: keeps pairs that look settled from never being re-checked
                best = int(state.rng.choice(np.flatnonzero(open_)))
            else:
                best = int(np.argmax(np.where(open_, gain, -np.inf)))
            i, j = int(first[best]), int(second[best])
            proposal.append((i, j, state.next_question(i, j) + len([1 for x in proposal if x[:2] == (i, j)])))
            cov = cov - shrink[best] * np.outer(spread[:, best], spread[:, best])
            left[best] -= 1
            open_[best] = left[best] > 0
        return [(i, j, q % state.n_questions) for i, j, q in proposal]


FORMATS: dict[str, type] = {"round_robin": RoundRobin, "swiss": Swiss, "adaptive": Adaptive}


def get_format(format: str | PairingFormat) -> PairingFormat:
    """A pairing format from its name ("round_robin", "swiss", "adaptive") or an object with `propose`."""
    if isinstance(format, str):
        if format not in FORMATS:
            raise ConfigurationError(f"unknown tournament format {format!r}; use one of {', '.join(FORMATS)}")
        return FORMATS[format]()
    if isinstance(format, PairingFormat):
        return format
    raise ConfigurationError(f"format must be a name ({', '.join(FORMATS)}) or a PairingFormat, got {format!r}")
