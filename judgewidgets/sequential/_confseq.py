"""An anytime-valid confidence sequence for bounded ratings, by betting (hedged capital).

Waudby-Smith and Ramdas (2024, "Estimating means of bounded random variables by betting", JRSS B, §4). Rescale
ratings to x ∈ [0, 1]. For a candidate mean m, a gambler betting λ_i·(x_i − m) each round, with bets chosen from
past ratings only, holds wealth K_n(m) = Π (1 + λ_i·(x_i − m)); if m is the true mean this is a nonnegative
martingale, so by Ville's inequality it ever reaches 1/α with probability ≤ α. Betting both ways (half the
capital on "above m", half on "below m") and keeping every m whose wealth has never reached 1/α gives an
interval that covers the mean at every n simultaneously, whatever the ratings' distribution on the scale: the
rule may stop whenever it likes. Empirical-Bernstein sequences (same paper, Theorem 2) are valid too, but cap the
bets below 1, which for ratings with sd ≈ R/9 leaves them wider than d even after 200 judgments.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._errors import ConfigurationError
from ._precision import Precision
from ._rules import SEED_PILOT, as_paths, check_int, unwrap

_BETS = ("tuned", "log")
_CHUNK_CELLS = 2_000_000  # paths × judgments × candidate means evaluated at once
_BLOCK = 16  # judgments per block


class ConfidenceSequenceRule:
    """Stop when the betting confidence sequence is at most 2d wide; its coverage survives any stopping.

    Bets are the predictable plug-in λ̃_i = √(2·log(2/α) / (σ̂²_{i−1}·h_i)), capped at `max_bet`/m (betting up)
    and `max_bet`/(1 − m) (betting down) so wealth can never hit zero. `bets="tuned"` aims at the n where the
    target width should be reached, h_i = max(i, 2·log(2/α)·σ̂²_{i−1}/d²) (d in [0, 1] units), estimated from
    past ratings only; `bets="log"` is the paper's all-purpose h_i = i·log(1 + i). The candidate means are a
    grid of spacing d/`resolution`; the reported bounds are widened by one grid step, so they stay valid.
    Expect about 2.5–3 × the judgments of a normal-theory rule: the price of assuming nothing but the scale.
    """

    name = "confidence_sequence"

    def __init__(
        self,
        precision: Precision | None = None,
        pilot: int = SEED_PILOT,
        bets: str = "tuned",
        max_bet: float = 0.75,
        resolution: int = 16,
        max_batch: int | None = None,
    ) -> None:
        self.precision = precision or Precision()
        self.pilot = check_int("pilot", pilot, 2)
        if bets not in _BETS:
            raise ConfigurationError(f"bets must be one of {', '.join(_BETS)}, got {bets!r}")
        self.bets = bets
        if not (0.0 < max_bet < 1.0):
            raise ConfigurationError(f"max_bet must lie strictly between 0 and 1, got {max_bet}")
        self.max_bet = float(max_bet)
        self.resolution = check_int("resolution", resolution, 2)
        self.max_batch = self.pilot if max_batch is None else check_int("max_batch", max_batch, 1)
        d_unit = self.precision.d / self.precision.R
        size = min(max(math.ceil(self.resolution / d_unit), 50), 4000)
        self.grid = (np.arange(size) + 0.5) / size

    def __repr__(self) -> str:
        return (
            f"ConfidenceSequenceRule(K={self.precision.K:g}, alpha={self.precision.alpha:g}, bets={self.bets!r}, "
            f"max_bet={self.max_bet:g})"
        )

    def _bets(self, x: np.ndarray) -> np.ndarray:
        """The uncapped predictable bets λ̃_i, shape (paths, n)."""
        count, n = x.shape
        i = np.arange(1, n + 1, dtype=float)
        mu = (0.5 + np.cumsum(x, axis=1)) / (i + 1)
        var = (0.25 + np.cumsum((x - mu) ** 2, axis=1)) / (i + 1)
        var_prev = np.concatenate([np.full((count, 1), 0.25), var[:, :-1]], axis=1)
        log_term = math.log(2.0 / self.precision.alpha)
        if self.bets == "tuned":
            d_unit = self.precision.d / self.precision.R
            horizon = np.maximum(i, 2.0 * log_term * var_prev / d_unit**2)
        else:
            horizon = i * np.log1p(i)
        return np.sqrt(2.0 * log_term / (var_prev * horizon))

    def bounds(self, samples: Any) -> tuple[np.ndarray, np.ndarray]:
        """The sequence on the rating scale after each judgment: (low, high), each of shape (paths, n)."""
        paths, _ = as_paths(samples)
        target = self.precision
        x = np.clip((paths - target.low) / target.R, 0.0, 1.0)
        count, n = x.shape
        low = np.zeros((count, n))
        high = np.ones((count, n))
        if n == 0:
            return low, high
        lam = self._bets(x)
        mean = np.cumsum(x, axis=1) / np.arange(1, n + 1)
        threshold = math.log(1.0 / target.alpha) + math.log(2.0)  # half the capital on each side
        rows = max(1, _CHUNK_CELLS // (_BLOCK * len(self.grid)))
        for start in range(0, count, rows):
            part = slice(start, start + rows)
            low[part], high[part] = self._chunk(x[part], lam[part], mean[part], threshold)
        return target.low + target.R * low, target.low + target.R * high

    def _chunk(
        self, x: np.ndarray, lam: np.ndarray, mean: np.ndarray, threshold: float
    ) -> tuple[np.ndarray, np.ndarray]:
        """Bounds in [0, 1] for a few paths, a block of judgments at a time; candidates rejected by every path
        are dropped between blocks (a rejected mean stays rejected), which keeps the grid small."""
        grid = self.grid.astype(np.float32)
        step = 1.0 / len(self.grid)
        index = np.arange(len(grid))
        count, n = x.shape
        up = np.zeros((count, len(grid)), dtype=np.float32)
        down = np.zeros((count, len(grid)), dtype=np.float32)
        rejected = np.zeros((count, len(grid)), dtype=bool)
        low = np.empty((count, n))
        high = np.empty((count, n))
        for begin in range(0, n, _BLOCK):
            cols = slice(begin, min(begin + _BLOCK, n))
            g = grid[index]
            gap = x[:, cols, None].astype(np.float32) - g
            bet = lam[:, cols, None].astype(np.float32)
            up_path = up[:, None, :] + np.cumsum(np.log1p(np.minimum(bet, self.max_bet / g) * gap), axis=1)
            down_path = down[:, None, :] + np.cumsum(np.log1p(-np.minimum(bet, self.max_bet / (1 - g)) * gap), axis=1)
            hit = np.logical_or.accumulate(np.logaddexp(up_path, down_path) >= threshold, axis=1)
            hit |= rejected[:, None, :]
            kept = ~hit
            some = kept.any(axis=2)
            first = index[np.argmax(kept, axis=2)]
            last = index[len(index) - 1 - np.argmax(kept[:, :, ::-1], axis=2)]
            low[:, cols] = np.where(some, np.clip(self.grid[first] - step, 0.0, 1.0), mean[:, cols])
            high[:, cols] = np.where(some, np.clip(self.grid[last] + step, 0.0, 1.0), mean[:, cols])
            up, down, rejected = up_path[:, -1], down_path[:, -1], hit[:, -1]
            alive = np.flatnonzero(~rejected.all(axis=0))
            if len(alive) == 0:
                low[:, cols.stop :] = mean[:, cols.stop :]
                high[:, cols.stop :] = mean[:, cols.stop :]
                break
            keep = slice(alive[0], alive[-1] + 1)  # the kept means form an interval; keep its hull
            index, up, down, rejected = index[keep], up[:, keep], down[:, keep], rejected[:, keep]
        return low, high

    def _last(self, samples: Any) -> tuple[np.ndarray, np.ndarray, int, bool]:
        paths, single = as_paths(samples)
        n = paths.shape[1]
        if n == 0:
            return np.full(paths.shape[0], self.precision.low), np.full(paths.shape[0], self.precision.high), 0, single
        low, high = self.bounds(paths)
        return low[:, -1], high[:, -1], n, single

    def should_stop(self, samples: Any) -> Any:
        low, high, _, single = self._last(samples)
        return unwrap(self.stop_from_bounds(low, high), single)

    def interval(self, samples: Any) -> tuple[Any, Any]:
        low, high, _, single = self._last(samples)
        return unwrap(low, single), unwrap(high, single)

    def next_batch(self, samples: Any) -> Any:
        low, high, n, single = self._last(samples)
        return unwrap(self.batch_from_bounds(n, low, high), single)

    # The simulator computes `bounds` once for whole paths and decides from them with these two.
    def stop_from_bounds(self, low: np.ndarray, high: np.ndarray) -> np.ndarray:
        return (high - low) / 2.0 <= self.precision.d * (1 + 1e-9)

    def batch_from_bounds(self, n: int, low: np.ndarray, high: np.ndarray) -> np.ndarray:
        """More judgments from the width's 1/√n decay, between 1 and `max_batch`."""
        half = (high - low) / 2.0
        needed = np.ceil(n * (half / self.precision.d) ** 2)
        return np.clip(needed - n, 1, self.max_batch).astype(int)
