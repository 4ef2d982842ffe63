"""`jw.load`: a saved run back as the result it was, its class found by the kind written in run.json."""

from __future__ import annotations

import gc
import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from types import MappingProxyType
from typing import Any

from pydantic import ValidationError

from .._errors import SavedRunError
from .._runfiles import Saveable, read
from ..alignment import AlignmentReport
from ..aspects import AspectResult
from ..cascade import CascadeResult
from ..estimates import LabelPlan, QualityEstimate
from ..meta_eval import MetaEvaluation
from ..pairwise import CorrectedRanking, PairwiseResult, PairwiseTable, PanelComparison, TournamentResult
from ..pipeline import PipelineTable
from ..rubrics import GradingResult, LeveledReport, LeveledResult, RubricReport
from ..scoring import JudgeResult, PanelResult
from ..sequential import SequentialFrame, SequentialResult

# Every kind of result a run folder can hold, and the class that rebuilds it: the one table `load` reads (each
# class writes its own kind in `_dump`; tests/runs check that the two agree).
KINDS: Mapping[str, type[Saveable]] = MappingProxyType(
    {
        "judge": JudgeResult,
        "panel": PanelResult,
        "pairwise": PairwiseResult,
        "pairwise_panel": PanelComparison,
        "pairwise_table": PairwiseTable,
        "tournament": TournamentResult,
        "corrected_ranking": CorrectedRanking,
        "rubric_report": RubricReport,
        "grading": GradingResult,
        "leveled_report": LeveledReport,
        "leveled": LeveledResult,
        "aspects": AspectResult,
        "pipeline": PipelineTable,
        "sequential": SequentialResult,
        "sequential_batch": SequentialFrame,
        "cascade": CascadeResult,
        "alignment": AlignmentReport,
        "estimate": QualityEstimate,
        "label_plan": LabelPlan,
        "meta_evaluation": MetaEvaluation,
    }
)


def load(path: str | os.PathLike[str]) -> Any:
    """The result saved at `path` (by `result.save(path)`), as the same class with every method working.

    Raises SavedRunError, saying why, for a folder that holds no saved run, a format newer than this judgewidgets
    reads, a kind it does not know, or a table that is missing or no longer fits its class."""
    with collector_paused():
        dump = read(path)
        cls = KINDS.get(dump.kind)
        if cls is None:
            raise SavedRunError(
                f"{path} holds a {dump.kind!r} result, which this judgewidgets does not know (it loads "
                f"{', '.join(sorted(KINDS))}); was it saved by a newer version?"
            )
        try:
            return cls._restore(dump)
        except (LookupError, TypeError, ValueError, AttributeError, ValidationError) as exc:
            if isinstance(exc, SavedRunError):
                raise
            raise SavedRunError(
                f"{path} could not be rebuilt as a {dump.kind} result: {type(exc).__name__}: {exc}"
            ) from exc


@contextmanager
def collector_paused() -> Iterator[None]:
    """Python's cycle collector held off while a run's records are rebuilt, and restored as it was after.

    Building 100,000 votes creates several hundred thousand objects that all stay alive, and each full
    collection they trigger walks every object in the process: with the collector on, loading 100,000 votes
    took 2.5 times the CPU time (1.35 s against 0.53 s, in a process holding 400,000 objects). Nothing the load
    builds is garbage, so pausing the collector loses nothing; reference counting frees as usual."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
