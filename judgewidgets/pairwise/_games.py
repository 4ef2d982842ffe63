"""Tables of pairwise games as arrays: who met whom, who was shown first, and how many points each scored."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .._errors import InputError

# Winner spellings accepted in any games table, mapped to the score of model_a (ties count half).
WINNER_SCORES: dict[str, float] = {
    "model_a": 1.0,
    "a": 1.0,
    "model_b": 0.0,
    "b": 0.0,
    "tie": 0.5,
    "tie (bothbad)": 0.5,
    "draw": 0.5,
}


@dataclass(frozen=True)
class Games:
    """Decided games as parallel arrays over candidates `names`.

    `first` is the candidate shown first when `positional` (so a first-slot advantage can be estimated), else
    simply model_a. `score` is the first candidate's points: 1 win, 0.5 tie, 0 loss. `cluster` (optional)
    groups rows that are not independent — the orders (and judges) of one comparison — so that the bootstrap
    resamples comparisons rather than single verdicts.
    """

    names: list[str]
    first: np.ndarray
    second: np.ndarray
    score: np.ndarray
    weight: np.ndarray
    positional: bool
    cluster: np.ndarray | None = None

    @property
    def n_candidates(self) -> int:
        return len(self.names)

    def __len__(self) -> int:
        return len(self.score)

    def record(self) -> pd.DataFrame:
        """wins, losses, ties and games per candidate (unweighted counts of rows)."""
        k = self.n_candidates
        won_first = self.score == 1.0
        lost_first = self.score == 0.0
        tied = self.score == 0.5
        wins = np.bincount(self.first[won_first], minlength=k) + np.bincount(self.second[lost_first], minlength=k)
        losses = np.bincount(self.first[lost_first], minlength=k) + np.bincount(self.second[won_first], minlength=k)
        ties = np.bincount(self.first[tied], minlength=k) + np.bincount(self.second[tied], minlength=k)
        return pd.DataFrame({"wins": wins, "losses": losses, "ties": ties, "games": wins + losses + ties})


def games_from_frame(matches: pd.DataFrame, *, adjust_position: bool | None = None) -> Games:
    """Read a (model_a, model_b, winner) table; rows without a winner (failed comparisons) are skipped.

    Winner values: model_a / model_b / tie (Arena-Hard) or A / B / tie, any case. An optional `weight` column
    weights rows; an optional boolean `swapped` column (model_b was shown first) lets a first-slot advantage
    be estimated, which `adjust_position=None` does whenever the column is there. Rows sharing a `pair_id`
    (a tournament's matches: both orders of one comparison, every judge of a panel) form one cluster, which
    the bootstrap resamples as a whole.
    """
    if not isinstance(matches, pd.DataFrame):
        raise InputError(f"matches must be a pandas DataFrame, got {type(matches).__name__}")
    missing = [c for c in ("model_a", "model_b", "winner") if c not in matches.columns]
    if missing:
        raise InputError(
            f"matches lacks column(s) {', '.join(missing)}; expected model_a, model_b, winner "
            f"(found: {', '.join(map(str, matches.columns))})"
        )
    frame = matches[matches["winner"].notna()]
    winners = frame["winner"].astype(str).str.strip().str.lower()
    unknown = sorted(set(winners) - set(WINNER_SCORES))
    if unknown:
        shown = ", ".join(repr(u) for u in unknown[:5])
        raise InputError(f"unknown winner value(s) {shown}; use model_a / model_b / tie or A / B / tie")
    a = frame["model_a"].astype(str).to_numpy()
    b = frame["model_b"].astype(str).to_numpy()
    if (a == b).any():
        row = frame.index[int(np.flatnonzero(a == b)[0])]
        raise InputError(f"row {row!r} pits {a[a == b][0]!r} against itself")
    names = sorted(set(matches["model_a"].astype(str)) | set(matches["model_b"].astype(str)))
    if len(names) < 2:
        raise InputError(f"ratings need at least 2 candidates, got {len(names)}: {names}")
    index = {name: i for i, name in enumerate(names)}
    ia = np.array([index[x] for x in a], dtype=np.intp)
    ib = np.array([index[x] for x in b], dtype=np.intp)
    score_a = winners.map(WINNER_SCORES).to_numpy(dtype=float)
    weight = np.ones(len(frame))
    if "weight" in frame.columns:
        weight = frame["weight"].to_numpy(dtype=float)
        if not (np.isfinite(weight).all() and (weight >= 0).all()):
            raise InputError("the weight column must hold finite, non-negative numbers")
    positional = "swapped" in frame.columns if adjust_position is None else bool(adjust_position)
    if positional and "swapped" not in frame.columns:
        raise InputError("adjust_position=True needs a boolean `swapped` column (model_b was shown first)")
    cluster = None
    if "pair_id" in frame.columns:
        cluster = pd.factorize(frame["pair_id"])[0]
        alone = cluster < 0  # a row without a pair_id is a comparison of its own
        cluster[alone] = cluster.max(initial=-1) + 1 + np.arange(int(alone.sum()))
    if positional:
        swapped = frame["swapped"].astype(bool).to_numpy()
        first = np.where(swapped, ib, ia)
        second = np.where(swapped, ia, ib)
        score = np.where(swapped, 1.0 - score_a, score_a)
        return Games(names, first, second, score, weight, True, cluster)
    return Games(names, ia, ib, score_a, weight, False, cluster)


def kendall_tau(x: np.ndarray, y: np.ndarray) -> float:
    """Kendall's τ-b between two score vectors (ties in either handled), vectorised over all pairs."""
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    i, j = np.triu_indices(len(x), 1)
    sx = np.sign(x[i] - x[j])
    sy = np.sign(y[i] - y[j])
    denom = math.sqrt(float(np.count_nonzero(sx)) * float(np.count_nonzero(sy)))
    return float((sx * sy).sum() / denom) if denom else float("nan")
