"""Leveled rubric dimensions: weighted dimensions with a description per level, graded as ordinal criteria.

Each `Dimension` becomes an ordinal `Criterion` whose options are its levels, valued (level − min) / (max − min),
and is graded by a `CriterionGrader` (one judge or an ensemble; optional retrieved context in the prompt). The
report gives each dimension's level, score and feedback (the judges' explanations) and two percentages, on the
seed's footing (a level counts level / max level):

- weighted % = 100 · Σ wᵢ·levelᵢ / Σ wᵢ·maxᵢ   (the dimension weights count: the default basis of the grade)
- raw %      = 100 · Σ levelᵢ / Σ maxᵢ         (weights ignored, as in the seed)

Dimensions without a level (not assessable, or every judge failed) are left out of both sums. The letter grade
is the first cut-off (highest first) the graded percentage reaches, else `fail_grade`; it uses the weighted
percentage by default, and `grade_on="raw"` reproduces the seed, which ignores the weights.
"""

from __future__ import annotations

import asyncio
import itertools
import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal, cast

import pandas as pd
from pydantic import BaseModel, ConfigDict, Field

from .._batching import Batching, BatchRetry, batchable
from .._errors import ConfigurationError, InputError
from .._progress import Progress
from .._records import _as_text_list, build_conversation_items
from .._run import run_scope
from .._runner import run_sync
from .._saved import Dump, Keepable, mean_or_nan, plain, provenance, reported, usage_of
from ..conversations import Target
from ..conversations._render import JudgedConversation
from ..engine import CallSession, Usage
from ..engine._usage import cost_summary
from ..scoring._judge import LLMJudge
from ._criterion import Criterion, CriterionOption
from ._grader import CriterionGrader, _rubric_target
from ._records import RubricReport, report_records, reports_from
from ._rubric import Rubric

GradeOn = Literal["weighted", "raw"]
DEFAULT_CUTOFFS: Mapping[str, float] = MappingProxyType({"A": 90, "B": 80, "C": 70, "D": 60})


class Dimension(BaseModel):
    """One dimension of a leveled rubric: a `name`, a `weight` (≥ 0), a description per integer level (at least
    two, all ≥ 0, e.g. {5: "All information is factually correct", ..., 1: "Mostly incorrect"}) and an optional
    `description` of what the dimension assesses (shown to the judge as the criterion)."""

    model_config = ConfigDict(frozen=True)

    name: str
    weight: float = 1.0
    levels: dict[int, str]
    description: str | None = None

    def __init__(
        self,
        name: str,
        weight: float = 1.0,
        levels: Mapping[int, str] | None = None,
        description: str | None = None,
        **data: Any,
    ) -> None:
        if not isinstance(name, str) or not name.strip():
            raise ConfigurationError(f"a dimension needs a non-empty name, got {name!r}")
        where = f"dimension {name!r}"
        if isinstance(weight, bool) or not isinstance(weight, (int, float)) or not math.isfinite(weight):
            raise ConfigurationError(f"{where}: weight must be a finite number, got {weight!r}")
        if weight < 0:
            raise ConfigurationError(f"{where}: weight {weight} is negative; weights must be ≥ 0")
        if not isinstance(levels, Mapping) or len(levels) < 2:
            raise ConfigurationError(f"{where}: give at least two levels as {{level: description}}, got {levels!r}")
        bad = [k for k in levels if isinstance(k, bool) or not isinstance(k, int)]
        if bad:
            raise ConfigurationError(f"{where}: levels must be integers, got {bad}")
        if min(levels) < 0:
            raise ConfigurationError(
                f"{where}: levels must be ≥ 0 (a level counts level / max level), got {min(levels)}"
            )
        empty = [k for k, v in levels.items() if not isinstance(v, str) or not v.strip()]
        if empty:
            raise ConfigurationError(f"{where}: levels {sorted(empty)} need a non-empty description")
        described = [v.strip().lower() for v in levels.values()]
        if len(set(described)) < len(described):
            raise ConfigurationError(f"{where}: two levels share a description; each level needs its own")
        if description is not None and (not isinstance(description, str) or not description.strip()):
            raise ConfigurationError(f"{where}: description must be non-empty text or None")
        ordered = {k: levels[k].strip() for k in sorted(levels, reverse=True)}
        super().__init__(name=name, weight=float(weight), levels=ordered, description=description, **data)

    @property
    def min_level(self) -> int:
        return min(self.levels)

    @property
    def max_level(self) -> int:
        return max(self.levels)

    def value(self, level: int) -> float:
        """The criterion value of a level: (level − min) / (max − min) in [0, 1]."""
        return (level - self.min_level) / (self.max_level - self.min_level)

    def label(self, level: int) -> str:
        """The option label the judge sees for a level: its description alone. A "Level 5: ..." label under
        option number 2 invites a small judge to answer 5 (the level) where the schema asks for the option's
        number; measured with the embedded judge, it did so on most dimensions once options were shuffled."""
        return self.levels[level]

    def to_criterion(self) -> Criterion:
        """This dimension as an ordinal criterion, one option per level (highest first)."""
        return Criterion(
            requirement=f"{self.name}: {self.description}" if self.description else self.name,
            name=self.name,
            weight=self.weight,
            scale_type="ordinal",
            options=[CriterionOption(self.label(level), self.value(level)) for level in self.levels],
        )


class DimensionScore(BaseModel):
    """One dimension's outcome: the level chosen (None when not assessed), its score in [0, 1], the judges'
    explanations as feedback, and any errors."""

    model_config = ConfigDict(frozen=True)

    name: str
    weight: float
    level: int | None = None
    level_description: str | None = None
    max_level: int
    score: float | None = Field(None, description="(level − min) / (max − min); None when not assessed.")
    feedback: str | None = Field(None, description="The judges' explanations, one per line.")
    agreement: float | None = None
    error: str | None = None


class LeveledReport(BaseModel, Keepable):
    """The grade of one submission against a leveled rubric."""

    dimensions: list[DimensionScore]
    weighted_percent: float | None = Field(description="100 · Σ w·level / Σ w·max over assessed dimensions.")
    raw_percent: float | None = Field(description="100 · Σ level / Σ max over assessed dimensions (the seed's).")
    grade: str | None = Field(description="Letter grade from the `grade_on` percentage; None without cut-offs.")
    grade_on: GradeOn = "weighted"
    report: RubricReport = Field(description="The underlying rubric report (every vote).")
    provenance: dict[str, Any] = Field(
        default_factory=dict, exclude=True, repr=False, description="The rubric's and grader's settings."
    )

    def _dump(self) -> Dump:
        """The grade and dimensions as records, with the rubric report's tables; the headline is the grade's
        percentages."""
        return Dump(
            kind="leveled_report",
            records=leveled_records([self]),
            metrics=leveled_metrics([self]),
            usage=usage_of(self.report.vote_list),
            judges=list(self.report.judge_scores),
            provenance=self.provenance,
        )

    @classmethod
    def _restore(cls, dump: Dump) -> LeveledReport:
        return leveled_from(dump)[0].model_copy(update={"provenance": dump.provenance})

    @property
    def usage(self) -> Usage:
        """What every call of the grade cost together (its rubric report's)."""
        return self.report.usage

    def summary(self) -> pd.DataFrame:
        """Per judge: calls, failed votes, tokens of each kind, cost as billed and at list price (its rubric
        report's)."""
        return self.report.summary()

    @property
    def percent(self) -> float | None:
        """The percentage the grade is based on (weighted or raw)."""
        return self.weighted_percent if self.grade_on == "weighted" else self.raw_percent

    @property
    def score(self) -> float | None:
        """The rubric score in [0, 1] from the criterion values (what `RubricReport.score` means)."""
        return self.report.score

    def to_df(self) -> pd.DataFrame:
        """One row per dimension: weight, level, level description, score, feedback, error."""
        return pd.DataFrame([d.model_dump(exclude={"agreement"}) for d in self.dimensions])

    def _repr_html_(self) -> str:
        def fmt(value: float | None) -> str:
            return "—" if value is None else f"{value:.1f}%"

        head = (
            f"<p><b>Grade {self.grade or '—'}</b> · weighted {fmt(self.weighted_percent)} · raw "
            f"{fmt(self.raw_percent)} (grade on {self.grade_on})</p>"
        )
        return head + self.to_df()._repr_html_()


class LeveledRubric:
    """Weighted dimensions with a description per level, graded through `CriterionGrader`.

    `grade_cutoffs` maps letters to minimum percentages, highest first (default the seed's A 90, B 80, C 70,
    D 60; below all of them `fail_grade`); None gives no letter grade. The grade uses the weighted percentage by
    default; `grade_on="raw"` reproduces the seed, which ignores the weights (the module docstring has both
    formulas). Conversations are graded as `CriterionGrader` grades them (`grade(conversation=...)`,
    `grade_many(conversations=...)`): every dimension's judge reads the fenced turns, the whole conversation or
    its last turn in context.
    """

    def __init__(
        self,
        dimensions: Sequence[Dimension | Mapping[str, Any]],
        grade_cutoffs: Mapping[str, float] | None = DEFAULT_CUTOFFS,
        grade_on: GradeOn = "weighted",
        fail_grade: str = "F",
    ) -> None:
        built = [d if isinstance(d, Dimension) else _dimension_from(d, i) for i, d in enumerate(dimensions)]
        if not built:
            raise ConfigurationError("a leveled rubric needs at least one dimension")
        names = [d.name for d in built]
        repeated = sorted({n for n in names if names.count(n) > 1})
        if repeated:
            raise ConfigurationError(f"dimension names must be unique; repeated: {', '.join(repeated)}")
        if sum(d.weight for d in built) <= 0:
            raise ConfigurationError(f"the dimension weights sum to 0 ({names}); give at least one a positive weight")
        if grade_on not in ("weighted", "raw"):
            raise ConfigurationError(f"grade_on must be 'weighted' or 'raw', got {grade_on!r}")
        self.dimensions: list[Dimension] = built
        self.grade_cutoffs = None if grade_cutoffs is None else _check_cutoffs(grade_cutoffs, fail_grade)
        self.grade_on: GradeOn = grade_on
        self.fail_grade = fail_grade
        self.rubric = Rubric([d.to_criterion() for d in built])

    @classmethod
    def rag_quality(
        cls,
        grade_cutoffs: Mapping[str, float] | None = DEFAULT_CUTOFFS,
        grade_on: GradeOn = "weighted",
        fail_grade: str = "F",
    ) -> LeveledRubric:
        """The seed's RAG-quality rubric: accuracy .3, groundedness .3, helpfulness .25, clarity .15, five levels
        each. Pass the retrieved documents as `context=` so groundedness can be judged."""
        return cls(RAG_QUALITY_DIMENSIONS, grade_cutoffs=grade_cutoffs, grade_on=grade_on, fail_grade=fail_grade)

    def __repr__(self) -> str:
        inner = ", ".join(f"{d.name}={d.weight:g}" for d in self.dimensions)
        return f"LeveledRubric({inner}, grade_on={self.grade_on!r})"

    def __len__(self) -> int:
        return len(self.dimensions)

    # --- grading ------------------------------------------------------------------------------------------

    def letter(self, percent: float | None) -> str | None:
        """The letter grade of a percentage under this rubric's cut-offs."""
        if percent is None or self.grade_cutoffs is None:
            return None
        for letter, cutoff in self.grade_cutoffs.items():
            if percent >= cutoff:
                return letter
        return self.fail_grade

    def report(self, rubric_report: RubricReport) -> LeveledReport:
        """A leveled report from the grader's report on this rubric."""
        scores: list[DimensionScore] = []
        for dimension, result in zip(self.dimensions, rubric_report.criteria):
            level = None
            if not result.abstained and result.selected_index is not None:
                level = list(dimension.levels)[result.selected_index]
            feedback = [f"{v.judge_id}: {v.explanation}" for v in result.votes if v.explanation]
            if len(result.votes) == 1 and feedback:
                feedback = [result.votes[0].explanation or ""]
            scores.append(
                DimensionScore(
                    name=dimension.name,
                    weight=dimension.weight,
                    level=level,
                    level_description=dimension.levels[level] if level is not None else None,
                    max_level=dimension.max_level,
                    score=dimension.value(level) if level is not None else None,
                    feedback="\n".join(feedback) or None,
                    agreement=result.agreement,
                    error="; ".join(result.errors) or None,
                )
            )
        assessed = [(s.weight, s.level, s.max_level) for s in scores if s.level is not None]
        raw = _percent([(1.0, level, top) for _, level, top in assessed])
        weighted = _percent(assessed)
        basis = weighted if self.grade_on == "weighted" else raw
        return LeveledReport(
            dimensions=scores,
            weighted_percent=weighted,
            raw_percent=raw,
            grade=self.letter(basis),
            grade_on=self.grade_on,
            report=rubric_report,
        )

    def grade(
        self,
        submission: str | None = None,
        query: str | None = None,
        context: str | None = None,
        reference: str | None = None,
        *,
        conversation: Any = None,
        target: Target | None = None,
        grader: CriterionGrader | str | LLMJudge | Sequence[str | LLMJudge] = "local",
        max_cost_usd: float | None = None,
        batch: bool | Batching = False,
        batch_retry: BatchRetry | None = None,
    ) -> LeveledReport:
        """Grade one submission (the answer to `query`, optionally with retrieved `context`), or one
        `conversation` (messages in the OpenAI chat format, or their JSON): the whole of it, or its last turn in
        context with `target="last_turn"`, as `CriterionGrader.grade` does; works in Jupyter.

        `grader` is a CriterionGrader, or the judges to build one from (model strings or LLMJudges).
        `max_cost_usd`: the budget, as `grade_many`'s.
        """
        return run_sync(
            self.agrade(
                submission,
                query,
                context,
                reference,
                conversation=conversation,
                target=target,
                grader=grader,
                max_cost_usd=max_cost_usd,
                batch=batch,
                batch_retry=batch_retry,
            )
        )

    @batchable
    async def agrade(
        self,
        submission: str | None = None,
        query: str | None = None,
        context: str | None = None,
        reference: str | None = None,
        *,
        conversation: Any = None,
        target: Target | None = None,
        grader: CriterionGrader | str | LLMJudge | Sequence[str | LLMJudge] = "local",
        max_cost_usd: float | None = None,
        batch: bool | Batching = False,
        batch_retry: BatchRetry | None = None,
    ) -> LeveledReport:
        """Async twin of `grade`."""
        if conversation is not None:
            if submission is not None or query is not None:
                raise InputError("give a conversation, or a submission (and query), not both")
            result = await self.agrade_many(
                conversations=[conversation],
                contexts=[context],
                references=[reference],
                target=target,
                grader=grader,
                progress=False,
                max_cost_usd=max_cost_usd,
                batch=batch,
                batch_retry=batch_retry,
            )
        elif target is not None:
            raise InputError("target= applies to a conversation; give conversation=")
        else:
            if not isinstance(submission, str):
                raise InputError(f"submission must be a string, got {type(submission).__name__}")
            result = await self.agrade_many(
                [submission],
                [query],
                [context],
                [reference],
                grader=grader,
                progress=False,
                max_cost_usd=max_cost_usd,
                batch=batch,
                batch_retry=batch_retry,
            )
        return result.reports[0].model_copy(update={"provenance": result.provenance})

    def grade_many(
        self,
        submissions: Sequence[str] | None = None,
        queries: Sequence[str | None] | None = None,
        contexts: Sequence[str | None] | None = None,
        references: Sequence[str | None] | None = None,
        *,
        conversations: Any = None,
        target: Target | None = None,
        grader: CriterionGrader | str | LLMJudge | Sequence[str | LLMJudge] = "local",
        progress: bool | Progress = True,
        max_cost_usd: float | None = None,
        batch: bool | Batching = False,
        batch_retry: BatchRetry | None = None,
    ) -> LeveledResult:
        """Grade every submission concurrently, or every conversation (`conversations=`: message lists or their
        JSON, each whole or on its last turn by `target`, with one context and reference per conversation); one
        report per submission or conversation, in order. For a conversation, the result's submission is the text
        judged (the transcript, or the last reply) and its query the last user message, as in
        `CriterionGrader.grade_many`. `max_cost_usd` is the run's budget: no call starts that could take the
        spend past it; the dimensions left are recorded as not run (error `budget: ...`), never raised."""
        return run_sync(
            self.agrade_many(
                submissions,
                queries,
                contexts,
                references,
                conversations=conversations,
                target=target,
                grader=grader,
                progress=progress,
                max_cost_usd=max_cost_usd,
                batch=batch,
                batch_retry=batch_retry,
            )
        )

    @batchable
    async def agrade_many(
        self,
        submissions: Sequence[str] | None = None,
        queries: Sequence[str | None] | None = None,
        contexts: Sequence[str | None] | None = None,
        references: Sequence[str | None] | None = None,
        *,
        conversations: Any = None,
        target: Target | None = None,
        grader: CriterionGrader | str | LLMJudge | Sequence[str | LLMJudge] = "local",
        progress: bool | Progress = True,
        session: CallSession | None = None,
        max_cost_usd: float | None = None,
        batch: bool | Batching = False,
        batch_retry: BatchRetry | None = None,
    ) -> LeveledResult:
        """Async twin of `grade_many`; `session` lets a pipeline share its call limits (and its budget)."""
        views: list[JudgedConversation | None] | None = None
        if conversations is not None:
            if submissions is not None or queries is not None:
                raise InputError("give conversations, or submissions (and queries), not both")
            items = build_conversation_items(conversations, _rubric_target(target), references, contexts)
            texts = [i.response for i in items]
            columns: dict[str, list[str | None]] = {
                "queries": [i.prompt for i in items],
                "contexts": [i.context for i in items],
                "references": [i.reference for i in items],
            }
            views = [i.conversation for i in items]
        elif target is not None:
            raise InputError("target= applies to conversations; give conversations=")
        else:
            if submissions is None:
                raise InputError("nothing to grade: give submissions (or conversations=)")
            texts = cast("list[str]", _as_text_list("submissions", submissions) or [])  # none may be missing
            if not texts:
                raise InputError("nothing to grade: submissions is empty")
            columns = {}
            for name, values in (("queries", queries), ("contexts", contexts), ("references", references)):
                column = _as_text_list(name, values, optional=True)
                if column is not None and len(column) != len(texts):
                    raise InputError(f"lengths differ: submissions={len(texts)}, {name}={len(column)}")
                columns[name] = column or [None] * len(texts)
        grader = as_grader(grader)
        for judge in grader.judges:
            judge.check()
        return await self._agrade_items(
            texts,
            columns["queries"],
            columns["contexts"],
            columns["references"],
            views,
            grader,
            progress,
            session,
            max_cost_usd,
            batch=batch,
            batch_retry=batch_retry,
        )

    async def _agrade_items(
        self,
        texts: Sequence[str],
        queries: Sequence[str | None],
        contexts: Sequence[str | None],
        references: Sequence[str | None],
        views: Sequence[JudgedConversation | None] | None,
        grader: CriterionGrader,
        progress: bool | Progress = False,
        session: CallSession | None = None,
        max_cost_usd: float | None = None,
        batch: bool | Batching = False,
        batch_retry: BatchRetry | None = None,
    ) -> LeveledResult:
        """Grade checked items (each with its conversation view, if any) through `grader._grade_item`, the path
        `CriterionGrader` takes; the pipeline's leveled stage calls this with its own items."""
        calls = len(texts) * len(grader.judges) * len(self)
        async with run_scope(
            progress,
            calls,
            f"grading {len(self)} dimensions",
            session=session,
            max_cost_usd=max_cost_usd,
            batch=batch,
            batch_retry=batch_retry,
            makers=grader.judges,
        ) as run:
            reports = await asyncio.gather(
                *(
                    grader._grade_item(
                        self.rubric,
                        text,
                        queries[i],
                        references[i],
                        run.session,
                        run.progress,
                        contexts[i],
                        views[i] if views else None,
                    )
                    for i, text in enumerate(texts)
                )
            )
        made_by = provenance({"rubric": self, "grader": grader})
        return reported(LeveledResult([self.report(r) for r in reports], list(texts), list(queries), made_by))


def leveled_records(reports: Sequence[LeveledReport]) -> dict[str, list[dict[str, Any]]]:
    """Leveled reports as records: `leveled` (one row each), `dimensions` (one per report and dimension) and the
    rubric reports' own tables (see `report_records`)."""
    rows = report_records([r.report for r in reports])
    rows["leveled"] = [
        {"report": i, **plain(r.model_dump(exclude={"dimensions", "report"}))} for i, r in enumerate(reports)
    ]
    rows["dimensions"] = [
        {"report": i, "position": k, **plain(d.model_dump())}
        for i, r in enumerate(reports)
        for k, d in enumerate(r.dimensions)
    ]
    return rows


def leveled_from(dump: Dump) -> list[LeveledReport]:
    """The leveled reports `leveled_records` wrote, rebuilt."""
    reports = reports_from(dump)
    dimensions: dict[int, list[DimensionScore]] = {}
    for row in sorted(dump.rows("dimensions"), key=lambda r: (r["report"], r["position"])):
        dimensions.setdefault(row["report"], []).append(DimensionScore.model_validate(row))
    return [
        LeveledReport.model_validate(
            {**row, "dimensions": dimensions.get(row["report"], []), "report": reports[row["report"]]}
        )
        for row in sorted(dump.rows("leveled"), key=lambda r: r["report"])
    ]


def leveled_metrics(reports: Sequence[LeveledReport]) -> dict[str, float]:
    """Mean weighted and raw percentages, and each dimension's mean score."""
    metrics = {
        "weighted_percent": mean_or_nan(r.weighted_percent for r in reports),
        "raw_percent": mean_or_nan(r.raw_percent for r in reports),
    }
    names = list(dict.fromkeys(d.name for r in reports for d in r.dimensions))
    for name in names:
        metrics[f"mean_score/{name}"] = mean_or_nan(d.score for r in reports for d in r.dimensions if d.name == name)
    return metrics


@dataclass
class LeveledResult(Keepable):
    """Leveled reports of a batch, one per submission; `to_df()` gives one row per submission. `provenance`: the
    rubric's and grader's settings (no secrets)."""

    reports: list[LeveledReport]
    submissions: list[str]
    queries: list[str | None]
    provenance: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    def _dump(self) -> Dump:
        """The reports as records (see `leveled_records`); the headline is the mean percentages."""
        return Dump(
            kind="leveled",
            state={"submissions": list(self.submissions), "queries": list(self.queries)},
            records=leveled_records(self.reports),
            metrics=leveled_metrics(self.reports),
            usage=usage_of(v for r in self.reports for v in r.report.vote_list),
            judges=list(dict.fromkeys(j for r in self.reports for j in r.report.judge_scores)),
            inputs=[{"query": q, "submission": s} for q, s in zip(self.queries, self.submissions)],
            provenance=self.provenance,
        )

    @classmethod
    def _restore(cls, dump: Dump) -> LeveledResult:
        state = dump.state
        return cls(leveled_from(dump), list(state["submissions"]), list(state["queries"]), dump.provenance)

    @property
    def usage(self) -> Usage:
        """What every call of every grade cost together."""
        return Usage.total(r.usage for r in self.reports)

    def summary(self) -> pd.DataFrame:
        """Per judge: calls, failed votes, tokens of each kind, cost as billed and at list price (`cost_summary`)."""
        return cost_summary((v.judge_id, v, v.error) for r in self.reports for v in r.report.vote_list)

    def __len__(self) -> int:
        return len(self.reports)

    def __getitem__(self, index: int) -> LeveledReport:
        return self.reports[index]

    def __iter__(self) -> Iterator[LeveledReport]:
        return iter(self.reports)

    def to_df(self) -> pd.DataFrame:
        """query, submission, weighted_percent, raw_percent, grade, then per dimension `<name>` (the level) and
        `<name>_feedback`."""
        rows = []
        for query, submission, report in zip(self.queries, self.submissions, self.reports):
            row: dict[str, Any] = {
                "query": query,
                "submission": submission,
                "weighted_percent": report.weighted_percent,
                "raw_percent": report.raw_percent,
                "grade": report.grade,
            }
            for d in report.dimensions:
                row[d.name] = d.level
                row[f"{d.name}_feedback"] = d.feedback
            rows.append(row)
        return pd.DataFrame(rows)

    def _call_errors(self) -> list[str | None]:
        return [v.error for r in self.reports for v in r.report.vote_list]

    def __repr__(self) -> str:
        return self._noted_text(f"LeveledResult: {len(self.reports)} submissions\n{self.to_df()!r}")

    def _repr_html_(self) -> str:
        return self._noted_html(self.to_df()._repr_html_())


def as_grader(grader: CriterionGrader | str | LLMJudge | Sequence[str | LLMJudge]) -> CriterionGrader:
    """A CriterionGrader as given, or one built from judges."""
    if isinstance(grader, CriterionGrader):
        return grader
    return CriterionGrader(judges=grader)


def _percent(parts: list[tuple[float, int, int]]) -> float | None:
    """100 · Σ w·level / Σ w·max, None when there is nothing to count."""
    total = sum(w * m for w, _, m in parts)
    if not parts or total <= 0:
        return None
    return 100.0 * sum(w * level for w, level, _ in parts) / total


def _check_cutoffs(cutoffs: Mapping[str, float], fail_grade: str) -> dict[str, float]:
    if not isinstance(cutoffs, Mapping) or not cutoffs:
        raise ConfigurationError(f"grade_cutoffs must map letters to percentages, got {cutoffs!r}")
    checked: dict[str, float] = {}
    for letter, cutoff in cutoffs.items():
        if not isinstance(letter, str) or not letter:
            raise ConfigurationError(f"grade letters must be non-empty text, got {letter!r}")
        if isinstance(cutoff, bool) or not isinstance(cutoff, (int, float)) or not 0 <= cutoff <= 100:
            raise ConfigurationError(f"cut-off of grade {letter!r} is {cutoff!r}; cut-offs lie in [0, 100]")
        checked[letter] = float(cutoff)
    values = list(checked.values())
    if any(a <= b for a, b in itertools.pairwise(values)):
        raise ConfigurationError(f"grade_cutoffs must be strictly descending (highest grade first), got {checked}")
    if fail_grade in checked:
        raise ConfigurationError(f"fail_grade {fail_grade!r} is also a cut-off letter")
    return checked


def _dimension_from(data: Any, index: int) -> Dimension:
    if not isinstance(data, Mapping):
        raise ConfigurationError(f"dimension {index + 1} is a {type(data).__name__}, not a Dimension or mapping")
    return Dimension(**data)


RAG_QUALITY_DIMENSIONS = (
    Dimension(
        "accuracy",
        0.30,
        {
            5: "All information is factually correct",
            4: "Correct apart from a minor slip that does not change the answer",
            3: "Partly correct: some claims are wrong or imprecise",
            2: "Mostly incorrect, with a few correct elements",
            1: "Mostly incorrect or hallucinated",
        },
        "Is the information in the answer factually correct?",
    ),
    Dimension(
        "groundedness",
        0.30,
        {
            5: "Every claim is supported by the retrieved context",
            4: "Nearly every claim is supported; one minor claim goes beyond the context",
            3: "Some claims are supported, others are not found in the context",
            2: "Few claims are supported by the context",
            1: "Ignores or contradicts the context",
        },
        "Is every claim in the answer supported by the retrieved <context>?",
    ),
    Dimension(
        "helpfulness",
        0.25,
        {
            5: "Fully answers the question and gives the user what they need",
            4: "Answers the question with small gaps",
            3: "Partly answers the question",
            2: "Barely addresses the question",
            1: "Does not help with the question",
        },
        "Does the answer address the question and help the user?",
    ),
    Dimension(
        "clarity",
        0.15,
        {
            5: "Clear, concise and well organised",
            4: "Clear, with minor wordiness or awkwardness",
            3: "Understandable but disorganised or wordy",
            2: "Hard to follow",
            1: "Confusing or incoherent",
        },
        "Is the answer clear and easy to follow?",
    ),
)
