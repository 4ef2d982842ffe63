"""Aligning a panel: every member aligned on the same folds, then the panel's weights as one more lever."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from .._errors import ConfigurationError
from .._run import run_scope
from ._crossfit import Candidate, choose, crossfit, nested_predictions
from ._rules import PanelWeights


async def aalign_panel(panel: Any, labelled: pd.DataFrame, label: str, **options: Any) -> Any:
    """An LLMPanel or PairwisePanel of aligned members, weighted by their held-out agreement when that earns its
    place; the report is the panel's, with each member's own report in `members`."""
    from ..pairwise import PairwiseJudge, PairwisePanel
    from ..scoring import LLMJudge, LLMPanel
    from ._align import build_report, plan_alignment

    confidence = options.pop("confidence")
    progress = options.pop("progress")
    pairwise = isinstance(panel, PairwisePanel)
    members = list(panel.judges)
    kind = PairwiseJudge if pairwise else LLMJudge
    for name, member in zip(panel.names, members):
        if not isinstance(member, kind):
            raise ConfigurationError(f"panel member {name!r} is a {type(member).__name__}: only {kind.__name__}s align")
    levers = tuple(options.pop("levers"))
    plans = [
        plan_alignment(m, labelled, label, levers=[lv for lv in levers if lv != "weights"], **options) for m in members
    ]
    judgments = sum(p.judgments for p in plans)
    calls = sum(p.calls for p in plans)
    async with run_scope(progress, judgments, f"aligning a panel of {len(members)}: {calls} calls") as run:
        outcomes = [await plan.run(run.session, run.progress) for plan in plans]
    first = plans[0]
    labels, folds = first.labels, first.folds
    values = np.column_stack([o.held_out_values() for o in outcomes])
    own = np.column_stack([_own_values(o, pairwise) for o in outcomes])
    as_given = Candidate("members as given; equal weights", own, PanelWeights(False, pairwise))
    candidates = [
        as_given,
        Candidate("aligned members; equal weights", values, PanelWeights(False, pairwise)),
    ]
    if "weights" in levers:
        candidates.append(Candidate("aligned members; weights from agreement", values, PanelWeights(True, pairwise)))
    before = crossfit(as_given, labels, folds)
    after, chosen = nested_predictions(candidates, labels, folds)
    final = candidates[choose(candidates, labels, folds)]
    every = np.arange(len(labels))
    rule = final.rule.fit(final.signals, labels, every)
    weights = [float(w) for w in rule.weights]  # type: ignore[attr-defined]
    aligned_members = [o.aligned for o in outcomes] if final is not as_given else members
    for member, outcome in zip(aligned_members, outcomes):
        member.alignment_report = outcome.report(confidence)
    if pairwise:
        aligned: Any = PairwisePanel(aligned_members, vote="weighted", weights=weights)
    else:
        aligned = LLMPanel(aligned_members, weights=weights)
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
        learning_curve=outcomes[0].learning_curve().iloc[0:0],
        seconds=sum(o.seconds for o in outcomes),
    )
    report.calls = calls
    report.chosen["weights"] = dict(zip(panel.names, weights))
    report.members = {name: m.alignment_report for name, m in zip(panel.names, aligned_members)}
    aligned.alignment_report = report
    return aligned


def _own_values(outcome: Any, pairwise: bool) -> np.ndarray:
    """A member's values as given: its own score, or its own verdict's class for pairs."""
    candidate = outcome.candidates[0]
    rule = candidate.rule.fit(candidate.signals, outcome.plan.labels, np.arange(len(outcome.plan.labels)))
    return rule.values(candidate.signals)
