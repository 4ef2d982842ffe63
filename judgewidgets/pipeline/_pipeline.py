"""EvaluationPipeline: judges of different kinds combined into one confidence-weighted score per item.

For each item, over the stages with a positive weight that produced a score (S, weights wᵢ, scores sᵢ):

- final_score = Σ wᵢ·sᵢ / Σ wᵢ; NaN (never 0) when no stage in S scored the item
- spread      = max sᵢ − min sᵢ (0 when one stage scored; NaN when none did)
- confidence  = (1 − spread) × Σ_{i∈S} wᵢ / Σ_all wᵢ   (agreement, discounted by the weight of stages that failed;
  0 when no stage scored)

An item needs human review, with every reason listed, when a stage failed (`flag_failures`), the spread exceeds
`max_spread`, the final score is below `min_score`, and always when no stage produced a score. Stages with
weight 0 are run and reported but do not count.

Commit-first (`commit_first=True` or `solver=`): before any stage, each distinct question without a reference is
answered once and every stage grades against that answer as the item's reference (columns `reference_source` and
`made_reference`; the answers' cost is `attrs["usage"]["commit-first"]`). An item whose answer could not be made is
scored by no stage (each stage's error says why).
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from .._batching import Batching, BatchRetry, batchable
from .._errors import ConfigurationError, InputError
from .._progress import Progress, counted
from .._records import Item, _as_text_list, build_conversation_items, build_items
from .._run import run_scope
from .._runner import run_sync
from .._saved import provenance, reported
from ..aspects import AspectEvaluator
from ..conversations import Target, check_target
from ..engine import Caller, CallSession, Usage
from ..pairwise import PairwiseComparer
from ..rubrics import CriterionGrader, LeveledRubric, Rubric
from ..scoring import CostEstimate, LLMJudge
from ..scoring._commit import PLACEHOLDER_REFERENCE, CommitFirst, Committed, Committer, committer, question_of
from ..scoring._cost import JudgeCostEstimate
from ..scoring._panel import LLMPanel
from ._stages import (
    AspectStage,
    JudgeStage,
    PairwiseStage,
    PipelineItem,
    PipelineStage,
    RubricStage,
    StageScore,
    baseline_pair,
)
from ._table import PipelineTable

RESERVED_COLUMNS = frozenset(
    {
        "prompt",
        "response",
        "reference",
        "context",
        "baseline",
        "final_score",
        "confidence",
        "spread",
        "needs_human_review",
        "review_reasons",
    }
)
_ACCEPTED = (
    "an LLMJudge, LLMPanel, AspectEvaluator, PairwiseJudge/PairwisePanel, Rubric or LeveledRubric (graded by "
    "the local judge), a (rubric, CriterionGrader) pair, a model string, or an object with "
    "`async ascore(items, session) -> list[StageScore]`"
)


def as_stage(name: str, judge: Any) -> PipelineStage:
    """The pipeline stage for a judge of any supported kind."""
    if isinstance(judge, (LLMJudge, LLMPanel)):
        return JudgeStage(judge)
    if isinstance(judge, str):
        return JudgeStage(LLMJudge(judge))
    if isinstance(judge, AspectEvaluator):
        return AspectStage(judge)
    if isinstance(judge, (Rubric, LeveledRubric)):
        return RubricStage(judge)
    if isinstance(judge, tuple) and len(judge) == 2:
        rubric, grader = judge if isinstance(judge[0], (Rubric, LeveledRubric)) else judge[::-1]
        if isinstance(rubric, (Rubric, LeveledRubric)) and isinstance(grader, CriterionGrader):
            return RubricStage(rubric, grader)
    if isinstance(judge, PairwiseComparer):
        return PairwiseStage(judge)
    if isinstance(judge, PipelineStage):
        return judge
    raise ConfigurationError(f"stage {name!r} is a {type(judge).__name__}; give {_ACCEPTED}")


def _threshold(value: object, what: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 <= value <= 1.0:
        raise ConfigurationError(f"{what} must be a number in [0, 1] (or None to switch it off), got {value!r}")
    return float(value)


class EvaluationPipeline:
    """Runs judges of different kinds on the same items and combines their [0, 1] scores per item.

    `judges` maps stage names to judges (see `as_stage` for the kinds, and `judgewidgets.pipeline._stages` for
    how each kind's score is normalised); `weights` maps the same names to non-negative weights (default 1
    each). Final score, spread, confidence and review rules are documented in the module docstring. A pairwise
    stage compares each response with `baselines[i]`: win 1, tie 0.5, loss 0.
    `commit_first` / `solver` (see the module docstring): one answer per question for every stage, made by
    `solver` (a model string, Generator or Solver), else by the stages' judges' model when they all share one
    (several models need `solver=`: ConfigurationError).
    """

    def __init__(
        self,
        judges: Mapping[str, Any],
        weights: Mapping[str, float] | None = None,
        max_spread: float | None = 0.3,
        min_score: float | None = 0.5,
        flag_failures: bool = True,
        *,
        commit_first: CommitFirst = None,
        solver: Any = None,
    ) -> None:
        if not isinstance(judges, Mapping) or not judges:
            raise ConfigurationError("a pipeline needs judges as a non-empty {name: judge} mapping")
        stages: dict[str, PipelineStage] = {}
        for name, judge in judges.items():
            if not isinstance(name, str) or not name.strip():
                raise ConfigurationError(f"stage names must be non-empty text, got {name!r}")
            if name in RESERVED_COLUMNS:
                raise ConfigurationError(f"{name!r} cannot be a stage name: it is a column of the result")
            stages[name] = as_stage(name, judge)
        self.stages = stages
        self.weights = self._check_weights(weights)
        self.max_spread = _threshold(max_spread, "max_spread")
        self.min_score = _threshold(min_score, "min_score")
        if not isinstance(flag_failures, bool):
            raise ConfigurationError(f"flag_failures must be True or False, got {flag_failures!r}")
        self.flag_failures = flag_failures
        self.commit_first = commit_first
        self.solver = solver
        self.committer = self._committer()

    def _committer(self) -> Committer | None:
        """The pipeline's committer: `solver`'s, else the one model every stage's judges share."""
        callers = [c for stage in self.stages.values() for c in stage_callers(stage)]
        if self.commit_first and self.solver is None:
            models = sorted({c.model for c in callers})
            if len(models) != 1:
                raise ConfigurationError(
                    "commit_first answers each question with the stages' model, but they use "
                    f"{', '.join(models) or 'no model judgewidgets knows'}: name the one that answers with solver="
                )
        return committer(self.commit_first, self.solver, callers[0] if callers else Caller("local"))

    def _check_weights(self, weights: Mapping[str, float] | None) -> dict[str, float]:
        names = list(self.stages)
        if weights is None:
            return dict.fromkeys(names, 1.0)
        if not isinstance(weights, Mapping):
            raise ConfigurationError(f"weights must map stage names to numbers, got {weights!r}")
        unknown = [repr(k) for k in weights if k not in self.stages]
        if unknown:
            raise ConfigurationError(
                f"weights name unknown stage(s) {', '.join(unknown)}; the stages are {', '.join(names)}"
            )
        missing = [n for n in names if n not in weights]
        if missing:
            raise ConfigurationError(f"no weight for stage(s) {', '.join(missing)}; give every stage a weight")
        checked: dict[str, float] = {}
        for name in names:
            w = weights[name]
            if isinstance(w, bool) or not isinstance(w, (int, float)) or not math.isfinite(w) or w < 0:
                raise ConfigurationError(f"weight of stage {name!r} is {w!r}; weights must be finite and ≥ 0")
            checked[name] = float(w)
        if sum(checked.values()) <= 0:
            raise ConfigurationError(f"the stage weights sum to 0 ({checked}); give at least one a positive weight")
        return checked

    def __repr__(self) -> str:
        inner = ", ".join(
            f"{n}={getattr(s, 'kind', type(s).__name__)}×{self.weights[n]:g}" for n, s in self.stages.items()
        )
        return f"EvaluationPipeline({inner}, max_spread={self.max_spread}, min_score={self.min_score})"

    def check(self) -> None:
        """Raise ConfigurationError now for any stage whose models (or the solver's) cannot be routed (no call is
        made)."""
        for stage in self.stages.values():
            check = getattr(stage, "check", None)
            if callable(check):
                check()
        if self.committer is not None:
            self.committer.check()

    # --- running ------------------------------------------------------------------------------------------

    def run(
        self,
        prompts: Sequence[str] | str | None = None,
        responses: Sequence[str] | str | None = None,
        references: Sequence[str | None] | None = None,
        baselines: Sequence[str] | None = None,
        *,
        contexts: Sequence[str | None] | None = None,
        conversations: Any = None,
        target: Target | None = None,
        progress: bool | Progress = True,
        max_cost_usd: float | None = None,
        batch: bool | Batching = False,
        batch_retry: BatchRetry | None = None,
    ) -> PipelineTable:
        """Score every item with every stage and combine; works in scripts and inside Jupyter.

        Returns one row per item: prompt, response, final_score, confidence, spread, needs_human_review,
        review_reasons (a list of text), then `<stage>`, `<stage>_error` and `<stage>_detail` for each stage.
        `attrs["usage"]` holds what each stage's calls cost over the batch ({stage: Usage fields}).
        `conversations` (OpenAI chat message lists or their JSON) are judged under `target` (the last turn by
        default; "whole" or "each_turn", with conversation and turn columns); a pairwise stage's baselines are
        then other replies to the same histories, one per judged turn.
        `max_cost_usd` is the run's budget, over every stage: no call starts that could take the spend past it;
        a stage's score not run is NaN with `<stage>_error` saying `budget: ...`, never raised.
        """
        return run_sync(
            self.arun(
                prompts,
                responses,
                references,
                baselines,
                contexts=contexts,
                conversations=conversations,
                target=target,
                progress=progress,
                max_cost_usd=max_cost_usd,
                batch=batch,
                batch_retry=batch_retry,
            )
        )

    @batchable
    async def arun(
        self,
        prompts: Sequence[str] | str | None = None,
        responses: Sequence[str] | str | None = None,
        references: Sequence[str | None] | None = None,
        baselines: Sequence[str] | None = None,
        *,
        contexts: Sequence[str | None] | None = None,
        conversations: Any = None,
        target: Target | None = None,
        progress: bool | Progress = True,
        max_cost_usd: float | None = None,
        batch: bool | Batching = False,
        batch_retry: BatchRetry | None = None,
    ) -> PipelineTable:
        """Async twin of `run`."""
        pipeline_items = self._items(prompts, responses, references, baselines, contexts, conversations, target)
        self.check()
        async with run_scope(
            progress,
            len(self.stages),
            f"pipeline of {len(self.stages)} stages",
            max_cost_usd=max_cost_usd,
            batch=batch,
            batch_retry=batch_retry,
            makers=[self],
        ) as run:
            committed = await self._commit(pipeline_items, run.session)
            graded = [i for i, c in enumerate(committed) if c is None or not c.failed]
            shown = [
                item if c is None else replace(item, reference=c.reference)
                for item, c in ((pipeline_items[i], committed[i]) for i in graded)
            ]

            async def one(name: str, stage: PipelineStage) -> list[StageScore]:
                scores = [StageScore(error=c.error if c else None) for c in committed]
                try:
                    found = _checked(name, await stage.ascore(shown, run.session), len(shown)) if shown else []
                except (ConfigurationError, InputError):
                    raise
                except Exception as exc:  # a stage's bug must not lose the other stages' work
                    found = [StageScore(error=f"{type(exc).__name__}: {exc}")] * len(shown)
                for position, score in zip(graded, found):
                    scores[position] = score
                return scores

            per_stage = await asyncio.gather(*(counted(run.progress, one(n, s)) for n, s in self.stages.items()))
        table = self.combine(pipeline_items, dict(zip(self.stages, per_stage)), committed)
        table.attrs["provenance"] = provenance(self)
        return reported(table)

    async def _commit(self, items: Sequence[PipelineItem], session: CallSession) -> list[Committed | None]:
        """What committing first gave each item (None everywhere when the pipeline does not commit first)."""
        if self.committer is None:
            return [None] * len(items)
        made = self.committer

        async def one(item: PipelineItem) -> Committed:
            question = question_of(item.as_item()) if item.reference is None else None
            return await made.commit(item.reference, question, session)

        return list(await asyncio.gather(*(one(item) for item in items)))

    def _items(
        self,
        prompts: Sequence[str] | str | None,
        responses: Sequence[str] | str | None,
        references: Sequence[str | None] | None,
        baselines: Sequence[str] | None,
        contexts: Sequence[str | None] | None,
        conversations: Any = None,
        target: str | None = None,
    ) -> list[PipelineItem]:
        """The checked batch; InputError when a pairwise stage has no baseline to compare with."""
        if conversations is not None:
            if prompts is not None or responses is not None:
                raise InputError("give conversations, or prompts and responses, not both")
            items = build_conversation_items(conversations, check_target(target), references, contexts)
            self._check_conversation_stages(items)
        elif target is not None:
            raise InputError("target= applies to conversations; give conversations=")
        elif prompts is None or responses is None:
            raise InputError("nothing to judge: give prompts and responses, or conversations=")
        else:
            items = build_items(prompts, responses, references, contexts)
        baseline_list = _as_text_list("baselines", baselines, optional=True)
        if baseline_list is not None and len(baseline_list) != len(items):
            raise InputError(f"lengths differ: prompts={len(items)}, baselines={len(baseline_list)}")
        pairwise = [n for n, s in self.stages.items() if getattr(s, "needs_baseline", False)]
        if pairwise:
            missing = (
                list(range(len(items)))
                if baseline_list is None
                else [i for i, b in enumerate(baseline_list) if b is None]
            )
            if missing:
                shown = ", ".join(map(str, missing[:10])) + (" ..." if len(missing) > 10 else "")
                raise InputError(
                    f"stage(s) {', '.join(pairwise)} compare each response with a baseline: pass baselines=[...] "
                    f"with one baseline response per item (missing at positions {shown})"
                )
        pipeline_items = [
            PipelineItem(i.prompt, i.response, i.reference, i.context, None, i.conversation) for i in items
        ]
        if baseline_list is not None:
            pipeline_items = [replace(item, baseline=b) for item, b in zip(pipeline_items, baseline_list)]
        if pairwise and conversations is not None:
            for item in pipeline_items:
                baseline_pair(item)  # a baseline that cannot be a reply to the history fails here, before any call
        return pipeline_items

    def _check_conversation_stages(self, items: Sequence[Item]) -> None:
        """InputError before any call for a stage that cannot judge these conversations: a pairwise stage on whole
        conversations (its baseline is a reply to a judged turn's history)."""
        whole = any(i.conversation is not None and i.conversation.judged is None for i in items)
        for name, stage in self.stages.items():
            if whole and getattr(stage, "needs_baseline", False):
                raise InputError(
                    f"stage {name!r} compares each judged turn with a baseline reply; with target='whole' there "
                    "is no turn to reply to (use 'last_turn' or 'each_turn')"
                )

    def estimate_cost(
        self,
        prompts: Sequence[str] | str | None = None,
        responses: Sequence[str] | str | None = None,
        references: Sequence[str | None] | None = None,
        baselines: Sequence[str] | None = None,
        *,
        contexts: Sequence[str | None] | None = None,
        conversations: Any = None,
        target: Target | None = None,
        batch: bool = False,
    ) -> CostEstimate:
        """What `run` on the same arguments would spend (no call is made): one row per judge of every stage,
        named `<stage>: <judge>`. A stage of your own is counted when it has `estimate(items)`.
        `batch=True`: at the batch APIs' price."""
        items = self._items(prompts, responses, references, baselines, contexts, conversations, target)
        rows: list[JudgeCostEstimate] = []
        if self.committer is not None:
            questions = [q for i in items if i.reference is None and (q := question_of(i.as_item())) is not None]
            answering = self.committer.estimate(questions, "commit-first")
            rows.append(answering.model_copy(update={"answering_calls": answering.calls, "solver": answering.model}))
            items = [replace(i, reference=i.reference or PLACEHOLDER_REFERENCE) for i in items]
        for name, stage in self.stages.items():
            estimate = getattr(stage, "estimate", None)
            if callable(estimate):
                rows += [row.model_copy(update={"judge": f"{name}: {row.judge}"}) for row in estimate(items)]
        estimate = CostEstimate(judges=rows)
        return estimate.at_batch_price() if batch else estimate

    # --- combining ----------------------------------------------------------------------------------------

    def combine(
        self,
        items: Sequence[PipelineItem],
        scores: Mapping[str, Sequence[StageScore]],
        committed: Sequence[Committed | None] = (),
    ) -> PipelineTable:
        """The result table from every stage's scores (the module docstring has the formulas), and what
        committing first gave each item when it did."""
        total_weight = sum(self.weights.values())
        rows: list[dict[str, Any]] = []
        for index, item in enumerate(items):
            row: dict[str, Any] = {"prompt": item.prompt, "response": item.response}
            if item.conversation is not None:  # which conversation and turn the row judged, first
                row = {"conversation": item.conversation.index, "turn": item.conversation.turn, **row}
            counted = {
                n: s[index].score for n, s in scores.items() if not math.isnan(s[index].score) and self.weights[n] > 0
            }
            answered_weight = sum(self.weights[n] for n in counted)
            if counted:
                final = sum(self.weights[n] * v for n, v in counted.items()) / answered_weight
                spread = max(counted.values()) - min(counted.values())
                confidence = (1.0 - spread) * answered_weight / total_weight
            else:
                final, spread, confidence = math.nan, math.nan, 0.0
            reasons: list[str] = []
            if self.flag_failures:
                for name, stage_scores in scores.items():
                    score = stage_scores[index]
                    if score.error:
                        verb = "failed" if math.isnan(score.score) else "partly failed"
                        reasons.append(f"{name} {verb}: {score.error}")
            if not counted:
                reasons.append("no stage produced a score")
            if self.max_spread is not None and counted and spread > self.max_spread:
                reasons.append(f"stages disagree (spread {spread:.2f} > {self.max_spread:.2f})")
            if self.min_score is not None and counted and final < self.min_score:
                reasons.append(f"low final score ({final:.2f} < {self.min_score:.2f})")
            row.update(
                final_score=final,
                confidence=confidence,
                spread=spread,
                needs_human_review=bool(reasons),
                review_reasons=reasons,
            )
            for name, stage_scores in scores.items():
                row[name] = stage_scores[index].score
                row[f"{name}_error"] = stage_scores[index].error
                row[f"{name}_detail"] = stage_scores[index].detail
            rows.append(row)
        frame = PipelineTable(rows)
        frame.attrs["usage"] = {name: Usage.total(s).model_dump() for name, s in scores.items()}
        if any(i.reference is not None for i in items):
            frame.insert(2, "reference", [i.reference for i in items])
        if any(c is not None for c in committed):
            place = frame.columns.get_loc("final_score")
            frame.insert(place, "made_reference", [c.made if c else None for c in committed])
            frame.insert(place, "reference_source", [c.source if c else None for c in committed])
            frame.attrs["usage"]["commit-first"] = Usage.total(c.usage for c in committed if c).model_dump()
        if any(i.baseline is not None for i in items):
            frame.insert(frame.columns.get_loc("final_score"), "baseline", [i.baseline for i in items])
        return frame


def stage_callers(stage: object) -> list[Caller]:
    """The callers of the judges behind a stage (a panel's, a grader's, a pairwise judge's or panel's, an aspect
    evaluator's); none for a stage of your own."""
    holders: list[Any] = [getattr(stage, "panel", None), getattr(stage, "grader", None), getattr(stage, "judge", None)]
    evaluator = getattr(stage, "evaluator", None)
    if evaluator is not None:
        holders.append(getattr(evaluator, "panel", None))
    judges = [j for h in holders if h is not None for j in getattr(h, "judges", [h])]
    return [c for j in judges if isinstance(c := getattr(j, "caller", None), Caller)]


def _checked(name: str, scores: Sequence[StageScore], n_items: int) -> list[StageScore]:
    """A stage's scores, with a wrong count or an out-of-range score turned into recorded errors."""
    scores = list(scores)
    if len(scores) != n_items:
        return [StageScore(error=f"stage {name!r} returned {len(scores)} scores for {n_items} items")] * n_items
    out = []
    for score in scores:
        if not isinstance(score, StageScore):
            out.append(StageScore(error=f"stage {name!r} returned a {type(score).__name__}, not a StageScore"))
        elif not math.isnan(score.score) and not 0.0 <= score.score <= 1.0:
            out.append(
                StageScore(error=f"score {score.score} outside [0, 1]", detail=score.detail, **score.usage_fields())
            )
        else:
            out.append(score)
    return out
