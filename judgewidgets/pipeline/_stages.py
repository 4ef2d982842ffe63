"""Pipeline stages: judges of different kinds behind one Protocol, each scoring items in [0, 1].

How each kind's score is normalised onto [0, 1]:

- judge / panel / calibrated judge: the template's own normalisation (likert 1–5 → (s − 1) / 4, continuous
  0–100 → s / 100, correct / not sure / incorrect → 1 / 0.5 / 0); a panel's judges are combined by their
  weighted mean when they have weights, else their mean, over the judges that answered.
- rubric: the rubric report's score, Σ value·weight / Σ positive weight (clamped to [0, 1]); a leveled rubric
  gives the percentage its grade is based on, divided by 100.
- aspects: the mean of the aspects' scores ((s − 1) / 4 each) over the aspects that scored.
- pairwise against a baseline: the response wins 1, ties 0.5 (also when the two orders disagree), loses 0.
"""

from __future__ import annotations

import asyncio
import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from pydantic import ConfigDict, Field

from .._errors import ConfigurationError
from .._progress import NoProgress
from .._records import Item, Vote
from ..aspects import AspectEvaluator
from ..conversations import Conversation
from ..conversations._render import JudgedConversation
from ..engine import CallSession, Usage
from ..pairwise import PairwiseComparer
from ..pairwise._records import PairItem, continued
from ..rubrics import CriterionGrader, LeveledRubric, Rubric
from ..rubrics._dimensions import as_grader
from ..scoring import JudgeCostEstimate, LLMJudge
from ..scoring._panel import LLMPanel


@dataclass(frozen=True)
class PipelineItem:
    """One item a pipeline scores: prompt and response, optional reference and context, and the baseline
    response a pairwise stage compares against. An item made from a conversation carries it (`conversation`);
    its baseline is then another reply to the same history."""

    prompt: str
    response: str
    reference: str | None = None
    context: str | None = None
    baseline: str | None = None
    conversation: JudgedConversation | None = None

    def as_item(self) -> Item:
        return Item(self.prompt, self.response, self.reference, self.context, self.conversation)


class StageScore(Usage):
    """One stage's score of one item in [0, 1]; NaN when the stage could not score it. `error` is set whenever
    something failed (also beside a score, e.g. one judge of a panel), `detail` says briefly how it scored. Its
    Usage is what the stage's calls on the item cost together (unknown for a stage that does not say)."""

    model_config = ConfigDict(frozen=True)

    score: float = Field(math.nan, description="Normalised score in [0, 1]; NaN when no score was produced.")
    error: str | None = Field(None, description="What failed, if anything.")
    detail: str | None = Field(None, description="A short note for the reviewer (grade, winner, failed aspects).")


@runtime_checkable
class PipelineStage(Protocol):
    """The stage role: score every item in [0, 1], in order, recording failures instead of raising them."""

    async def ascore(self, items: Sequence[PipelineItem], session: CallSession) -> list[StageScore]: ...


class JudgeStage:
    """An LLMJudge (calibrated when it has `anchors`) or an LLMPanel; the score is the panel's weighted mean
    (or mean) over the judges that answered, each already in [0, 1] by its template."""

    def __init__(self, judge: LLMJudge | LLMPanel) -> None:
        if isinstance(judge, LLMPanel):
            self.panel, self.kind = judge, "panel"
        else:
            self.panel, self.kind = LLMPanel([judge]), "calibrated" if judge.anchors else "judge"

    def check(self) -> None:
        self.panel.check()

    def estimate(self, items: Sequence[PipelineItem]) -> list[JudgeCostEstimate]:
        return self.panel.estimate_items([i.as_item() for i in items])

    async def ascore(self, items: Sequence[PipelineItem], session: CallSession) -> list[StageScore]:
        result = await self.panel.ascore_items([i.as_item() for i in items], session, False)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            consensus = result.consensus()["consensus"].tolist()
        n = len(result.judges)
        failed: list[list[str]] = [[] for _ in items]
        for vote in result.vote_list:
            if vote.error:
                failed[vote.item].append(f"{vote.judge}: {vote.error}" if n > 1 else vote.error)
        usage = _usage_per_item(result.vote_list, len(items))
        return [
            StageScore(
                score=float(score),
                error="; ".join(errors) or None,
                detail=f"{n - len(errors)} of {n} judges answered" if n > 1 else None,
                **spent.usage_fields(),
            )
            for score, errors, spent in zip(consensus, failed, usage)
        ]


class RubricStage:
    """A rubric graded by a CriterionGrader (or the judges to build one from): the report's score in [0, 1].
    A LeveledRubric gives the percentage its grade is based on / 100. The item's prompt is the query, its
    context and reference are shown to the judges; an item made from a conversation is graded on its fenced
    turns (the judged turn in context, or the whole conversation), by either kind of rubric."""

    def __init__(
        self, rubric: Rubric | LeveledRubric, grader: CriterionGrader | str | LLMJudge | Sequence = "local"
    ) -> None:
        if not isinstance(rubric, (Rubric, LeveledRubric)):
            raise ConfigurationError(f"a rubric stage needs a jw.Rubric or LeveledRubric, got {type(rubric).__name__}")
        self.rubric = rubric
        self.grader = as_grader(grader)
        self.kind = "leveled_rubric" if isinstance(rubric, LeveledRubric) else "rubric"

    def check(self) -> None:
        for judge in self.grader.judges:
            judge.check()

    def estimate(self, items: Sequence[PipelineItem]) -> list[JudgeCostEstimate]:
        rubric = self.rubric.rubric if isinstance(self.rubric, LeveledRubric) else self.rubric
        columns = ([i.response for i in items], [i.prompt for i in items], [i.reference for i in items])
        return self.grader.estimate_items(rubric, *columns, [i.context for i in items], [i.conversation for i in items])

    async def ascore(self, items: Sequence[PipelineItem], session: CallSession) -> list[StageScore]:
        if isinstance(self.rubric, LeveledRubric):
            leveled = await self.rubric._agrade_items(
                [i.response for i in items],
                [i.prompt for i in items],
                [i.context for i in items],
                [i.reference for i in items],
                [i.conversation for i in items],
                self.grader,
                progress=False,
                session=session,
            )
            out = []
            for report in leveled:
                errors = [f"{d.name}: {d.error}" for d in report.dimensions if d.error]
                percent = report.percent
                spent = report.report.usage.usage_fields()
                if percent is None:
                    out.append(StageScore(error=_no_score(errors), **spent))
                    continue
                grade = f"grade {report.grade} " if report.grade else ""
                out.append(
                    StageScore(
                        score=percent / 100,
                        error="; ".join(errors) or None,
                        detail=f"{grade}({percent:.0f}% {report.grade_on})",
                        **spent,
                    )
                )
            return out
        progress = NoProgress()
        reports = await asyncio.gather(
            *(
                self.grader._grade_item(
                    self.rubric, i.response, i.prompt, i.reference, session, progress, i.context, i.conversation
                )
                for i in items
            )
        )
        out = []
        for graded in reports:
            errors = sorted({e for c in graded.criteria for e in c.errors})
            out.append(
                StageScore(
                    score=math.nan if graded.score is None else graded.score,
                    error=_no_score(errors) if graded.score is None else ("; ".join(errors) or None),
                    **graded.usage.usage_fields(),
                )
            )
        return out


class AspectStage:
    """An AspectEvaluator: the average of the aspects' scores in [0, 1] over the aspects that scored."""

    kind = "aspects"

    def __init__(self, evaluator: AspectEvaluator) -> None:
        self.evaluator = evaluator

    def check(self) -> None:
        self.evaluator.check()

    def estimate(self, items: Sequence[PipelineItem]) -> list[JudgeCostEstimate]:
        return self.evaluator.panel.estimate_items([i.as_item() for i in items])

    async def ascore(self, items: Sequence[PipelineItem], session: CallSession) -> list[StageScore]:
        result = await self.evaluator.aevaluate_items([i.as_item() for i in items], session)
        frame = result.to_df()
        usage = _usage_per_item(result.panel.vote_list, len(items))
        out = []
        for (_, row), spent in zip(frame.iterrows(), usage):
            failing = [n for n in result.names if not row[f"{n}_passed"]]
            average = float(row["average_score"])
            out.append(
                StageScore(
                    score=average,
                    error=row["error"] if isinstance(row["error"], str) else None,
                    detail="all aspects passed" if not failing else "below threshold: " + ", ".join(failing),
                    **spent.usage_fields(),
                )
            )
        return out


class PairwiseStage:
    """A pairwise judge comparing each response (as A) with the item's baseline response (as B): a win scores
    1, a tie 0.5 (also the tie given when the two orders disagree), a loss 0."""

    kind = "pairwise"
    needs_baseline = True

    def __init__(self, judge: PairwiseComparer) -> None:
        self.judge = judge

    def check(self) -> None:
        self.judge.check()

    def estimate(self, items: Sequence[PipelineItem]) -> list[JudgeCostEstimate]:
        estimate = getattr(self.judge, "estimate_items", None)
        if not callable(estimate):
            return []
        found = estimate(self._pairs(items))
        return found if isinstance(found, list) else [found]

    def _pairs(self, items: Sequence[PipelineItem]) -> list[PairItem]:
        return [baseline_pair(i) for i in items]

    async def ascore(self, items: Sequence[PipelineItem], session: CallSession) -> list[StageScore]:
        results = await self.judge.acompare_items(self._pairs(items), session, NoProgress())
        out = []
        for result in results:
            spent = Usage.total(result.verdicts).usage_fields()
            if result.winner is None:
                out.append(StageScore(error=result.error or "no verdict", **spent))
                continue
            score = {"A": 1.0, "tie": 0.5, "B": 0.0}[result.winner]
            outcome = {"A": "win", "tie": "tie", "B": "loss"}[result.winner]
            note = " (orders disagree)" if result.consistent is False else ""
            out.append(StageScore(score=score, detail=f"{outcome} against the baseline{note}", **spent))
        return out


def baseline_pair(item: PipelineItem) -> PairItem:
    """The comparison of an item's response (as a) with its baseline (as b): for a conversation's turn, the
    baseline is another reply to the same history."""
    view = item.conversation
    if view is None or view.judged is None:
        return PairItem(item.prompt, item.response, item.baseline or "", item.reference)
    history = Conversation(messages=view.history)
    baseline = continued(history, view.index, item.baseline or "", "baselines")
    return PairItem(item.prompt, item.response, item.baseline or "", item.reference, view, baseline)


def _usage_per_item(votes: Sequence[Vote], n_items: int) -> list[Usage]:
    """The usage of each item's votes together."""
    per_item: list[list[Vote]] = [[] for _ in range(n_items)]
    for vote in votes:
        per_item[vote.item].append(vote)
    return [Usage.total(item_votes) for item_votes in per_item]


def _no_score(errors: list[str]) -> str:
    return "no score: " + ("; ".join(errors) if errors else "nothing could be assessed")
