"""Aligning a panel: every member aligned on the same folds, then the panel's weights as one more lever."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from .._progress import Progress
from .._run import run_scope
from ._align import LEVERS, Outcome, build_report, plan_alignment
from ._crossfit import Candidate, choose, crossfit, nested_predictions
from ._labels import Labels
from ._report import AlignmentReport
from ._rules import Combined, PanelWeights
from ._subject import Reflector, Subject


async def aalign_members(
    members: Sequence[Any],
    names: Sequence[str],
    labelled: pd.DataFrame,
    label: str,
    make_subject: Callable[[Any, pd.DataFrame, Labels], Subject],
    *,
    pairwise: bool,
    scale_of_judge: tuple[float, float] | None = None,
    reflector: Reflector | None = None,
    levers: Sequence[str] = LEVERS,
    confidence: float = 0.95,
    progress: bool | Progress = True,
    **options: Any,
) -> tuple[list[Any], list[float], AlignmentReport]:
    """(the members, each aligned; the panel's weights; the panel's report, with each member's own in
    `members`). Members as given with equal weights are the panel's "before"; with `"weights"` among the levers,
    weights from each member's held-out agreement compete with equal ones."""
    plans = [
        plan_alignment(
            member,
            labelled,
            label,
            functools.partial(make_subject, member),
            pairwise=pairwise,
            scale_of_judge=scale_of_judge,
            reflector=reflector,
            levers=[lever for lever in levers if lever != "weights"],
            **options,
        )
        for member in members
    ]
    judgments = sum(p.judgments for p in plans)
    calls = sum(p.calls for p in plans)
    async with run_scope(progress, judgments, f"aligning a panel of {len(members)}: {calls} calls") as run:
        outcomes = [await plan.run(run.session, run.progress) for plan in plans]
    first = plans[0]
    labels, folds = first.labels, first.folds
    as_given = Candidate(
        "members as given; equal weights",
        np.column_stack([_own_values(o) for o in outcomes]),
        PanelWeights(False, pairwise),
    )
    aligned_values = np.column_stack([o.held_out_values() for o in outcomes])
    candidates = [as_given, Candidate("aligned members; equal weights", aligned_values, PanelWeights(False, pairwise))]
    if "weights" in levers:
        fitted = PanelWeights(True, pairwise)
        candidates.append(Candidate("aligned members; weights from agreement", aligned_values, fitted))
    before = crossfit(as_given, labels, folds)
    after, chosen = nested_predictions(candidates, labels, folds)
    final = candidates[choose(candidates, labels, folds)]
    rule = final.rule.fit(final.signals, labels, np.arange(len(labels)))
    assert isinstance(rule, Combined)
    weights = [float(w) for w in rule.weights]
    aligned = [o.aligned for o in outcomes] if final is not as_given else list(members)
    member_reports = {}
    for name, member, outcome in zip(names, aligned, outcomes):
        member_reports[name] = outcome.report(confidence)
        if final is not as_given:
            member.alignment_report = member_reports[name]
    report = build_report(
        first,
        candidates,
        final,
        before,
        after,
        chosen,
        confidence,
        fold_examples={},
        final_examples=[],
        learning_curve=pd.DataFrame(columns=["labels", "accuracy", "draws"]),
        seconds=sum(o.seconds for o in outcomes),
    )
    report.calls = calls
    report.chosen["weights"] = dict(zip(names, weights))
    report.members = member_reports
    return aligned, weights, report


def _own_values(outcome: Outcome) -> np.ndarray:
    """A member's values as given: its own score, or its own verdict's class for pairs."""
    candidate = outcome.candidates[0]
    labels = outcome.plan.labels
    return candidate.rule.fit(candidate.signals, labels, np.arange(len(labels))).values(candidate.signals)
