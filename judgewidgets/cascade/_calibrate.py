"""Choosing each stage's confidence threshold by fixed-sequence testing (Jung, Brahman & Choi, ICLR 2025).

Pure numpy over a calibration table (rows × stages of confidence and agreement with the human label), so the
validity simulation runs the very code a real calibration runs.

For one stage, over the labelled rows that reach it, at level δ' = δ / K (K stages, Bonferroni):

1. The candidate thresholds are the confidences seen among those rows, from the highest down. Trusting the
   stage at threshold λ means trusting every row whose confidence is ≥ λ.
2. Each candidate is tested with the exact binomial test, "the agreement of the verdicts trusted at λ is ≥
   target"; candidates trusting fewer rows than the test's `minimum` can certify nothing whatever the labels say.
3. The walk (`Walk`) has two starts. One is the most confident rows, as in the paper: the highest candidate
   that trusts enough rows. The other is where the stage's own confidences, read as probabilities, predict the
   test is likeliest to certify the most rows (`predicted_start`: labels play no part in it). δ' is split
   between the starts (`TOP_SHARE` to the first) and carried forward along a run of certified candidates
   (Wiens' fallback procedure): from each start the walk goes down while candidates are certified, and a walk
   from the top that reaches the second start goes on at the full δ'. The threshold is the lowest candidate
   certified. When the prediction is the top itself, or leaves no second start, the walk is the paper's, one
   start at the full δ'.

Why it is valid: each start's chain is a fixed sequence, whose first untrue hypothesis must be rejected for any
to be; the fallback procedure is a Bonferroni-based closed test, so the chance that any untrue "agreement ≥
target" is certified is at most δ' under any dependence, and the starts depend on the confidences only, like the
candidates themselves. Why two starts: a judge whose accuracy levels off below 1 among its surest verdicts (as a
calibrated small judge does) meets a disagreement in its first few rows, which ends a walk from the top at once,
while a test on more rows would certify; in simulation (`benchmarks/cascade.py --simulate`) the two starts decided
more in 10 of 13 settings (up to 26 points) and at most 1 point less in the others, the guarantee holding in all.
Rows the earlier stages trusted are left out of a later stage's table; rows where a stage gave no verdict (a
failed call, no confidence) are never trusted by it and go on to the next.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ._bounds import AgreementTest

FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]
IntArray = npt.NDArray[np.int64]


@dataclass(frozen=True)
class StageFit:
    """One stage's calibration: its threshold (None: it trusts nothing), and what the labelled rows showed."""

    threshold: float | None
    reached: int  # labelled rows that reached the stage
    trusted: int  # of those, rows at or above the threshold
    agreed: int  # of the trusted rows, those whose verdict matched the human label
    tested: int  # candidate thresholds tested before the walk stopped (certified ones + the failing one)

    @property
    def agreement(self) -> float:
        """Agreement of the trusted labelled rows (NaN when none): in-sample, not the guarantee."""
        return self.agreed / self.trusted if self.trusted else float("nan")


TOP_SHARE = 0.6  # of a stage's δ', spent on the walk from the most confident rows; the rest on the second start


class Walk:
    """The two-start walk of one stage at level δ' (see the module docstring): its tests at the top start's
    level, the second start's, and the full level a walk reaching the second start goes on at. Kept and reused
    across calibrations, like `AgreementTest` (the simulation runs thousands)."""

    def __init__(self, target: float, level: float, top_share: float = TOP_SHARE) -> None:
        self.full = AgreementTest(target, level)
        self.top = AgreementTest(target, level * top_share)
        self.second = AgreementTest(target, level * (1.0 - top_share))

    @property
    def minimum(self) -> int:
        """The fewest trusted rows that can certify anything (every one agreeing, the full level)."""
        return self.full.minimum


def predicted_start(ranked: FloatArray, trusted: IntArray, test: AgreementTest) -> int:
    """The number of trusted rows at which `test` is likeliest to certify the most rows, were the confidences
    (`ranked`, highest first) the chances of agreeing: rows × P(disagreements ≤ the critical number), the
    disagreements' count approximated as normal with its Poisson-binomial mean and variance. No label is read."""
    misses = np.cumsum(1.0 - ranked)[trusted - 1]
    spread = np.cumsum(ranked * (1.0 - ranked))[trusted - 1]
    test.critical(int(trusted[-1]))  # grows the table of critical values up to the largest candidate
    critical = test._critical[trusted]
    z = (critical + 0.5 - misses) / np.sqrt(np.maximum(spread, 1e-12))
    chance = np.array([0.5 * math.erfc(-v / math.sqrt(2.0)) for v in z.tolist()])
    score = np.where(critical >= 0, trusted * chance, 0.0)
    return int(trusted[int(np.argmax(score))])


def fit_stage(confidence: FloatArray, agrees: BoolArray, walk: Walk | AgreementTest) -> StageFit:
    """Fixed-sequence testing over one stage's rows: NaN confidence is never trusted. `walk` is the two-start
    `Walk`, or an `AgreementTest` for the paper's walk (one start, at the test's level)."""
    valid = ~np.isnan(confidence)
    values = confidence[valid]
    correct = agrees[valid]
    reached = len(confidence)
    if not len(values):
        return StageFit(None, reached, 0, 0, 0)
    order = np.argsort(-values, kind="stable")
    ranked = values[order]
    disagreements = np.cumsum(~correct[order])
    # The candidates: each distinct confidence, trusting every row at or above it.
    last_of_run = np.append(ranked[:-1] != ranked[1:], True)
    trusted = np.flatnonzero(last_of_run) + 1
    errors = disagreements[last_of_run]
    candidates = ranked[last_of_run]
    count = len(trusted)

    def start(test: AgreementTest, rows: int = 0) -> int:
        return int(np.searchsorted(trusted, max(test.minimum, rows), side="left"))  # `trusted` grows down the walk

    def chain(test: AgreementTest, first: int, end: int) -> tuple[int, int]:
        """(index past the last certified candidate, candidates tested) of a walk over [first, end)."""
        if first >= end:
            return first, 0
        passed = test.certifies(trusted[first:end], errors[first:end])
        stop = int(np.argmin(passed)) if not passed.all() else len(passed)
        return first + stop, min(stop + 1, len(passed))

    if isinstance(walk, AgreementTest):
        first = start(walk)
        reach, tested = chain(walk, first, count)
        lowest = reach - 1 if reach > first else -1
    else:
        first = start(walk.full)
        second = start(walk.second, predicted_start(ranked, trusted, walk.second)) if first < count else count
        if second <= first or second >= count:  # the prediction is the top, or there is no second start
            reach, tested = chain(walk.full, first, count)
            lowest = reach - 1 if reach > first else -1
        else:
            first = start(walk.top)
            reach, tested = chain(walk.top, first, second)
            lowest = reach - 1 if reach > first else -1
            # A walk from the top that got through goes on at the full level; else the second start's own.
            reach, more = chain(walk.full if reach == second else walk.second, second, count)
            tested += more
            lowest = reach - 1 if reach > second else lowest
    if lowest < 0:
        return StageFit(None, reached, 0, 0, tested)
    n_trusted = int(trusted[lowest])
    return StageFit(float(candidates[lowest]), reached, n_trusted, n_trusted - int(errors[lowest]), tested)


def fit_cascade(confidence: FloatArray, agrees: BoolArray, target: float, delta: float) -> list[StageFit]:
    """Every stage's threshold, in order, each on the rows the earlier stages escalated; δ is split evenly.

    `confidence` and `agrees` are rows × stages (NaN confidence: the stage gave no verdict on that row).
    """
    stages = confidence.shape[1]
    walk = Walk(target, delta / stages)
    return fit_with(confidence, agrees, [walk] * stages)


def fit_with(confidence: FloatArray, agrees: BoolArray, walks: Sequence[Walk | AgreementTest]) -> list[StageFit]:
    """`fit_cascade` with the walks given (reused across calibrations, e.g. by the simulation; an AgreementTest
    walks as the paper does)."""
    open_rows = np.ones(confidence.shape[0], dtype=bool)
    fits = []
    for stage, walk in enumerate(walks):
        fit = fit_stage(confidence[open_rows, stage], agrees[open_rows, stage], walk)
        fits.append(fit)
        if fit.threshold is not None:
            open_rows &= ~(confidence[:, stage] >= fit.threshold)
    return fits


def route(confidence: FloatArray, thresholds: list[float | None]) -> IntArray:
    """The stage that decides each row (0-based), or −1 when every stage escalated it (abstained)."""
    deciding = np.full(confidence.shape[0], -1, dtype=np.int64)
    for stage, threshold in enumerate(thresholds):
        if threshold is None:
            continue
        take = (deciding < 0) & (confidence[:, stage] >= threshold)  # NaN compares False: escalated
        deciding[take] = stage
    return deciding
