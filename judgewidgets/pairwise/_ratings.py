"""Rating methods for pairwise games: Bradley–Terry (ML), Elo and win rate, each with bootstrap intervals.

Every method reads a games table (model_a, model_b, winner; see `games_from_frame`) and returns a ranking
DataFrame with columns candidate, rating, ci_low, ci_high, wins, losses, ties, rank (1 is best), games, sorted
by rank. Intervals come from a seeded bootstrap over rows resampled with replacement (Bradley–Terry and win
rate resample whole comparisons when a pair_id groups rows: both orders, every judge); basic intervals for
Bradley–Terry, percentile for the others.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal, Protocol, runtime_checkable

import numpy as np
import pandas as pd

from .._errors import ConfigurationError, InputError
from ._bradley_terry import fit, game_matrices, mle_exists, resample
from ._games import Games, games_from_frame

# Bradley–Terry log-strengths are also shown on the familiar Elo scale: rating = 1000 + 400·θ/ln 10, so a
# 400-point gap means 10:1 odds. With no anchor the mean log-strength is 0, i.e. the mean rating is 1000.
ELO_BASE = 1000.0
ELO_SCALE = 400.0
ELO_PER_LOG_STRENGTH = ELO_SCALE / math.log(10.0)
DEFAULT_PRIOR = 0.1
DEFAULT_ELO_K = 16.0

RANKING_COLUMNS = ["candidate", "rating", "ci_low", "ci_high", "wins", "losses", "ties", "rank", "games"]


@runtime_checkable
class RatingMethod(Protocol):
    """The rating role: turns a games table into a ranking with intervals. Built-ins: BradleyTerry, Elo, WinRate."""

    name: str

    def rate(self, matches: pd.DataFrame, seed: int = 0) -> pd.DataFrame: ...


def _check_common(bootstrap: int, ci: float) -> None:
    if not (isinstance(bootstrap, (int, np.integer)) and bootstrap >= 0):
        raise ConfigurationError(f"bootstrap must be a whole number >= 0, got {bootstrap!r}")
    if not (0.0 < ci < 1.0):
        raise ConfigurationError(f"ci must be a level strictly between 0 and 1, got {ci!r}")


def _interval(
    samples: np.ndarray | None, ci: float, k: int, estimate: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Percentile bootstrap interval, or the basic (reverse-percentile) one when `estimate` is given:
    [2·est − q_high, 2·est − q_low], which corrects the estimator's first-order bias instead of doubling it."""
    if samples is None or len(samples) == 0:
        return np.full(k, np.nan), np.full(k, np.nan)
    tail = (1.0 - ci) / 2.0
    low, high = np.quantile(samples, [tail, 1.0 - tail], axis=0)
    if estimate is not None:
        return 2.0 * estimate - high, 2.0 * estimate - low
    return low, high


def ranking_frame(
    games: Games, rating: np.ndarray, low: np.ndarray, high: np.ndarray, **extra: np.ndarray
) -> pd.DataFrame:
    """The ranking table, best first; equal ratings share a rank."""
    frame = pd.DataFrame({"candidate": games.names, "rating": rating, "ci_low": low, "ci_high": high})
    record = games.record()
    for column in ("wins", "losses", "ties"):
        frame[column] = record[column].to_numpy()
    frame["rank"] = frame["rating"].rank(ascending=False, method="min").astype(int)
    frame["games"] = record["games"].to_numpy()
    for name, values in extra.items():
        frame[name] = values
    return frame.sort_values(["rank", "candidate"], kind="stable").reset_index(drop=True)


@dataclass(frozen=True)
class StrengthFit:
    """Bradley–Terry log-strengths with their bootstrap interval (see `BradleyTerry.estimate`).

    `theta` (K,) and `low`/`high` are anchored log-strengths; `gamma` the first-slot advantage (0 when position
    is not modelled); `samples` (B, K) the bootstrap fits (None without a bootstrap); `penalised` whether the
    fits used the prior because the maximum-likelihood estimate does not exist in the data or a resample.
    """

    theta: np.ndarray
    gamma: float
    low: np.ndarray
    high: np.ndarray
    samples: np.ndarray | None
    penalised: bool


class BradleyTerry:
    """Bradley–Terry strengths by maximum likelihood, ties counting half, with bootstrap intervals.

    `rating` is on the Elo scale (1000 + 400·θ/ln 10) and `strength` is the natural-log strength θ; both are
    centred so the mean strength is 0 (rating 1000), or so `anchor`'s strength is 0 when named. With a
    boolean `swapped` column (and `adjust_position` not False) a first-slot advantage γ is fitted alongside,
    so a judge's position bias does not shrink the strengths; it is reported in `attrs["first_slot_advantage"]`.

    Small or lopsided tables: the maximum-likelihood estimate does not exist when some group of candidates
    never lost to the rest (or, with a first slot, when "the first slot won unless a stronger candidate sat
    second" explains every verdict) — small tournaments often do that, and so do some bootstrap resamples of
    tables that don't. Then every fit, the point estimate and each resample alike, is the posterior mode under
    a N(0, 1/`prior`) prior on θ (and γ), so the interval describes one estimator rather than a mixture of
    finite and near-infinite ones; `attrs["penalised"]` says when. With ample data every fit is the plain MLE.

    Intervals are basic bootstrap intervals by default (`interval="basic"`, bias-correcting: maximum likelihood
    overstates spreads in small or adaptively chosen samples, and the percentile interval would double that);
    `interval="percentile"` gives Arena-Hard's percentile intervals. Rows sharing a `pair_id` (both orders of a
    tournament's comparison) are resampled together, as they are not independent verdicts.
    """

    name = "bradley_terry"

    def __init__(
        self,
        bootstrap: int = 1000,
        ci: float = 0.95,
        anchor: str | None = None,
        adjust_position: bool | None = None,
        prior: float = DEFAULT_PRIOR,
        interval: Literal["basic", "percentile"] = "basic",
    ) -> None:
        _check_common(bootstrap, ci)
        if not (prior > 0 and math.isfinite(prior)):
            raise ConfigurationError(f"prior must be a positive precision, got {prior!r}")
        if interval not in ("basic", "percentile"):
            raise ConfigurationError(f"interval must be 'basic' or 'percentile', got {interval!r}")
        self.interval = interval
        self.bootstrap = int(bootstrap)
        self.ci = float(ci)
        self.anchor = anchor
        self.adjust_position = adjust_position
        self.prior = float(prior)

    def _anchored(self, games: Games, theta: np.ndarray) -> np.ndarray:
        if self.anchor is None:
            return theta
        return theta - theta[:, [games.names.index(self.anchor)]]

    def estimate(self, games: Games, seed: int = 0) -> StrengthFit:
        """Point fit and bootstrap interval of `games`, all fits with one estimator (see the class docstring)."""
        rng = np.random.default_rng(seed)
        cells, sizes, counts = resample(games, self.bootstrap, rng)
        n, w = game_matrices(cells, sizes[None, :])
        exists = bool(mle_exists(n, w, games.positional)[0])
        if self.bootstrap:
            n_star, w_star = game_matrices(cells, counts)
            exists = exists and bool(mle_exists(n_star, w_star, games.positional).all())
        lam = 0.0 if exists else self.prior
        theta, gamma, _ = fit(n, w, games.positional, np.array([lam]))
        theta = self._anchored(games, theta)
        samples = None
        if self.bootstrap:
            samples, _, _ = fit(n_star, w_star, games.positional, np.full(self.bootstrap, lam))
            samples = self._anchored(games, samples)
        estimate = theta[0] if self.interval == "basic" else None
        low, high = _interval(samples, self.ci, games.n_candidates, estimate)
        return StrengthFit(theta[0], float(gamma[0]), low, high, samples, not exists)

    def rate(self, matches: pd.DataFrame, seed: int = 0) -> pd.DataFrame:
        games = games_from_frame(matches, adjust_position=self.adjust_position)
        if self.anchor is not None and self.anchor not in games.names:
            raise InputError(f"anchor {self.anchor!r} is not among the candidates: {games.names}")
        if len(games) == 0:
            raise InputError("no decided games to rate (every row lacks a winner)")
        result = self.estimate(games, seed)
        frame = ranking_frame(
            games,
            ELO_BASE + ELO_PER_LOG_STRENGTH * result.theta,
            ELO_BASE + ELO_PER_LOG_STRENGTH * result.low,
            ELO_BASE + ELO_PER_LOG_STRENGTH * result.high,
            strength=result.theta,
            strength_ci_low=result.low,
            strength_ci_high=result.high,
        )
        if games.positional:
            frame.attrs["first_slot_advantage"] = result.gamma
        frame.attrs["penalised"] = result.penalised
        return frame


class Elo:
    """Online Elo over the rows in order (initial 1000, 400-point scale, step `k`), bootstrap intervals.

    Elo depends on the order of games; the point rating follows the table's order, and each bootstrap resample
    is a fresh random sequence of rows drawn with replacement (as Chatbot Arena does). A tie scores half.
    """

    name = "elo"

    def __init__(self, bootstrap: int = 1000, ci: float = 0.95, k: float = DEFAULT_ELO_K, initial: float = ELO_BASE):
        _check_common(bootstrap, ci)
        if not (k > 0 and math.isfinite(k)):
            raise ConfigurationError(f"Elo k must be a positive number, got {k!r}")
        self.bootstrap = int(bootstrap)
        self.ci = float(ci)
        self.k = float(k)
        self.initial = float(initial)

    def _run(self, games: Games, order: np.ndarray) -> np.ndarray:
        rows = np.arange(order.shape[0])
        ratings = np.full((order.shape[0], games.n_candidates), self.initial)
        for t in range(order.shape[1]):
            pick = order[:, t]
            first, second = games.first[pick], games.second[pick]
            expected = 1.0 / (1.0 + 10.0 ** ((ratings[rows, second] - ratings[rows, first]) / ELO_SCALE))
            delta = self.k * games.weight[pick] * (games.score[pick] - expected)
            ratings[rows, first] += delta
            ratings[rows, second] -= delta
        return ratings

    def rate(self, matches: pd.DataFrame, seed: int = 0) -> pd.DataFrame:
        games = games_from_frame(matches, adjust_position=False)
        n = len(games)
        if n == 0:
            raise InputError("no decided games to rate (every row lacks a winner)")
        rating = self._run(games, np.arange(n)[None, :])[0]
        samples = None
        if self.bootstrap:
            rng = np.random.default_rng(seed)
            chunk = max(1, 2_000_000 // n)
            parts = []
            for start in range(0, self.bootstrap, chunk):
                size = min(chunk, self.bootstrap - start)
                parts.append(self._run(games, rng.integers(0, n, size=(size, n))))
            samples = np.concatenate(parts)
        low, high = _interval(samples, self.ci, games.n_candidates)
        return ranking_frame(games, rating, low, high)


class WinRate:
    """Share of points won (ties half), weighted by the `weight` column if any; bootstrap intervals."""

    name = "wins"

    def __init__(self, bootstrap: int = 1000, ci: float = 0.95) -> None:
        _check_common(bootstrap, ci)
        self.bootstrap = int(bootstrap)
        self.ci = float(ci)

    @staticmethod
    def _rates(cells: Games, counts: np.ndarray) -> np.ndarray:
        n, w = game_matrices(cells, counts)
        points = w.sum(axis=2) + (n - w).sum(axis=1)
        played = n.sum(axis=2) + n.sum(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            return points / played

    def rate(self, matches: pd.DataFrame, seed: int = 0) -> pd.DataFrame:
        games = games_from_frame(matches, adjust_position=False)
        if len(games) == 0:
            raise InputError("no decided games to rate (every row lacks a winner)")
        cells, sizes, counts = resample(games, self.bootstrap, np.random.default_rng(seed))
        rating = self._rates(cells, sizes[None, :])[0]
        samples = self._rates(cells, counts) if self.bootstrap else None
        low, high = _interval(samples, self.ci, games.n_candidates)
        return ranking_frame(games, rating, low, high)


RATINGS: dict[str, type] = {"bradley_terry": BradleyTerry, "elo": Elo, "wins": WinRate}


def get_rating(rating: str | RatingMethod, bootstrap: int = 1000) -> RatingMethod:
    """A rating method from its name ("bradley_terry", "elo", "wins") or an object with `rate`."""
    if isinstance(rating, str):
        if rating not in RATINGS:
            raise ConfigurationError(f"unknown rating {rating!r}; use one of {', '.join(RATINGS)}")
        return RATINGS[rating](bootstrap=bootstrap)
    if isinstance(rating, RatingMethod):
        return rating
    raise ConfigurationError(f"rating must be a name ({', '.join(RATINGS)}) or a RatingMethod, got {rating!r}")


def bradley_terry(
    matches: pd.DataFrame,
    bootstrap: int = 1000,
    seed: int = 0,
    *,
    ci: float = 0.95,
    anchor: str | None = None,
    adjust_position: bool | None = None,
    prior: float = DEFAULT_PRIOR,
    interval: Literal["basic", "percentile"] = "basic",
) -> pd.DataFrame:
    """Bradley–Terry ranking of any (model_a, model_b, winner) table; see `BradleyTerry` for the conventions."""
    method = BradleyTerry(bootstrap, ci, anchor=anchor, adjust_position=adjust_position, prior=prior, interval=interval)
    return method.rate(matches, seed)


def elo(
    matches: pd.DataFrame, bootstrap: int = 1000, seed: int = 0, *, ci: float = 0.95, k: float = DEFAULT_ELO_K
) -> pd.DataFrame:
    """Elo ranking of any (model_a, model_b, winner) table, rows taken in order; see `Elo`."""
    return Elo(bootstrap, ci, k=k).rate(matches, seed)


def win_rate(matches: pd.DataFrame, bootstrap: int = 1000, seed: int = 0, *, ci: float = 0.95) -> pd.DataFrame:
    """Ranking by share of points won (ties half) in any (model_a, model_b, winner) table."""
    return WinRate(bootstrap, ci).rate(matches, seed)
