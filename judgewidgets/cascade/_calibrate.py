"""Choosing each stage's confidence threshold by fixed-sequence testing (Jung, Brahman & Choi, ICLR 2025).

Pure numpy over a calibration table (rows × stages of confidence and agreement with the human label), so the
validity simulation runs the very code a real calibration runs.

For one stage, over the labelled rows that reach it:

1. The candidate thresholds are the confidences seen among those rows, from the highest down. Trusting the
   stage at threshold λ means trusting every row whose confidence is ≥ λ.
2. Candidates trusting fewer rows than `AgreementTest.minimum` can certify nothing whatever the labels say,
   so testing starts at the highest candidate that trusts enough rows (as the paper's code does).
3. Each candidate is tested with the exact binomial test at level δ / K (K stages, Bonferroni): "the
   agreement of the verdicts trusted at λ is ≥ target". Walking down, the threshold is the last candidate
   certified before the first that is not; if the first is not, the stage trusts nothing.

Fixed-sequence testing spends no multiplicity correction on the walk: the first untrue hypothesis in the fixed
order must be rejected for any untrue one to be, which happens with probability ≤ δ/K. Rows the earlier stages
trusted are left out of a later stage's table; rows where a stage gave no verdict (a failed call, no
confidence) are never trusted by it and go on to the next.
"""

from __future__ import annotations

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


def fit_stage(confidence: FloatArray, agrees: BoolArray, test: AgreementTest) -> StageFit:
    """Fixed-sequence testing over one stage's rows: NaN confidence is never trusted."""
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
    start = int(np.searchsorted(trusted, test.minimum, side="left"))  # `trusted` increases down the walk
    if start == len(trusted):
        return StageFit(None, reached, 0, 0, 0)
    passed = test.certifies(trusted[start:], errors[start:])
    stop = int(np.argmin(passed)) if not passed.all() else len(passed)
    tested = min(stop + 1, len(passed))
    if stop == 0:
        return StageFit(None, reached, 0, 0, tested)
    chosen = start + stop - 1
    n_trusted = int(trusted[chosen])
    return StageFit(float(candidates[chosen]), reached, n_trusted, n_trusted - int(errors[chosen]), tested)


def fit_cascade(confidence: FloatArray, agrees: BoolArray, target: float, delta: float) -> list[StageFit]:
    """Every stage's threshold, in order, each on the rows the earlier stages escalated; δ is split evenly.

    `confidence` and `agrees` are rows × stages (NaN confidence: the stage gave no verdict on that row).
    """
    stages = confidence.shape[1]
    test = AgreementTest(target, delta / stages)
    return fit_with(confidence, agrees, [test] * stages)


def fit_with(confidence: FloatArray, agrees: BoolArray, tests: list[AgreementTest]) -> list[StageFit]:
    """`fit_cascade` with the tests given (reused across calibrations, e.g. by the simulation)."""
    open_rows = np.ones(confidence.shape[0], dtype=bool)
    fits = []
    for stage, test in enumerate(tests):
        fit = fit_stage(confidence[open_rows, stage], agrees[open_rows, stage], test)
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
