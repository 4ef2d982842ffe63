"""Grading a dataset: one report per item, ground-truth metrics, judge agreement and review flags."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from .._errors import InputError
from .._review import ReviewPolicy, failure_kind, review_table
from .._saved import Dump, Keepable, mean_or_nan, not_run_count, noted_html, plain, usage_of
from ..agreement import fleiss_kappa, judge_vs_truth, krippendorff_alpha
from ..engine import Usage
from ..engine._usage import cost_summary
from ._criterion import Criterion
from ._records import CriterionVote, RubricReport, report_records, reports_from
from ._rubric import Rubric

if TYPE_CHECKING:
    import altair as alt


def read_ground_truth(frame: pd.DataFrame, rubric: Rubric, ground_truth: str | dict[str, str]) -> pd.DataFrame:
    """Items × criteria table of true outcomes (verdict names or option labels; None where unknown).

    `ground_truth` names a column whose cells map criterion names to outcomes (dicts or JSON text), or maps
    criterion names to columns that hold each criterion's outcome.
    """
    names = rubric.names
    if isinstance(ground_truth, str):
        if ground_truth not in frame.columns:
            raise InputError(f"ground-truth column {ground_truth!r} is not in the data ({list(frame.columns)})")
        rows = []
        for i, cell in enumerate(frame[ground_truth]):
            if isinstance(cell, str):
                try:
                    cell = json.loads(cell)
                except json.JSONDecodeError:
                    raise InputError(f"ground truth of row {i} is not a mapping or JSON object: {cell!r}") from None
            if cell is None or (isinstance(cell, float) and np.isnan(cell)):
                cell = {}
            if not isinstance(cell, dict):
                raise InputError(f"ground truth of row {i} must map criterion names to outcomes, got {cell!r}")
            unknown = set(cell) - set(names)
            if unknown:
                raise InputError(f"ground truth of row {i} names unknown criteria {sorted(unknown)}")
            rows.append({n: cell.get(n) for n in names})
        table = pd.DataFrame(rows, columns=names)
    else:
        unknown = set(ground_truth) - set(names)
        if unknown:
            raise InputError(f"ground truth names unknown criteria {sorted(unknown)}")
        missing = [c for c in ground_truth.values() if c not in frame.columns]
        if missing:
            raise InputError(f"ground-truth columns {missing} are not in the data")
        table = pd.DataFrame({n: frame[ground_truth[n]] if n in ground_truth else None for n in names})
    for criterion in rubric:
        allowed = _outcomes(criterion)
        bad = {str(v) for v in table[criterion.name].dropna() if str(v) not in allowed}
        if bad:
            raise InputError(f"ground truth for {criterion.name!r} has unknown outcomes {sorted(bad)}; use {allowed}")
    return table.astype(object).where(table.notna(), None)


def _outcomes(criterion: Criterion) -> list[str]:
    if criterion.is_multi_choice:
        return [o.label for o in criterion.option_list]
    return ["MET", "UNMET", "CANNOT_ASSESS"]


def _scored_labels(criterion: Criterion) -> list[str]:
    if criterion.is_multi_choice:
        return [o.label for o in criterion.option_list if not o.na]
    return ["UNMET", "MET"]


@dataclass
class GradingResult(Keepable):
    """Reports of a graded dataset; `to_df()` gives one row per item. `provenance`: the grader's settings."""

    rubric: Rubric
    criteria: list[Criterion]
    reports: list[RubricReport]
    queries: list[str | None] | None
    submissions: list[str]
    ground_truth: pd.DataFrame | None
    judge_ids: list[str]
    provenance: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    def _dump(self) -> Dump:
        """The rubric and criteria (state), the reports as records, the ground truth as a table; the headline is
        the mean score, overall and per judge."""
        metrics = {
            "mean_score": mean_or_nan(r.score for r in self.reports),
            "not_run": not_run_count(v.error for v in self.vote_list),
        }
        for judge in self.judge_ids:
            metrics[f"mean_score/{judge}"] = mean_or_nan(r.judge_scores.get(judge) for r in self.reports)
        texts = [
            {"query": q, "submission": s}
            for q, s in zip(self.queries or [None] * len(self.submissions), self.submissions)
        ]
        return Dump(
            kind="grading",
            state={
                "rubric": [plain(c.model_dump()) for c in self.rubric],
                "criteria": [plain(c.model_dump()) for c in self.criteria],
                "queries": self.queries,
                "submissions": self.submissions,
                "judge_ids": list(self.judge_ids),
            },
            tables={} if self.ground_truth is None else {"ground_truth": self.ground_truth},
            records=report_records(self.reports),
            metrics=metrics,
            usage=usage_of(self.vote_list),
            judges=list(self.judge_ids),
            inputs=texts,
            provenance=self.provenance,
        )

    @classmethod
    def _restore(cls, dump: Dump) -> GradingResult:
        state = dump.state
        return cls(
            rubric=Rubric([Criterion(**c) for c in state["rubric"]]),
            criteria=[Criterion(**c) for c in state["criteria"]],
            reports=reports_from(dump),
            queries=state.get("queries"),
            submissions=list(state["submissions"]),
            ground_truth=dump.tables.get("ground_truth"),
            judge_ids=list(state["judge_ids"]),
            provenance=dump.provenance,
        )

    def to_df(self) -> pd.DataFrame:
        """query, submission, score, raw_score, one outcome column per criterion (+ `<name>_value`)."""
        frame = pd.DataFrame({"submission": self.submissions})
        if self.queries is not None:
            frame.insert(0, "query", self.queries)
        frame["score"] = [r.score for r in self.reports]
        frame["raw_score"] = [r.raw_score for r in self.reports]
        for index, criterion in enumerate(self.criteria):
            results = [r.criteria[index] for r in self.reports]
            frame[criterion.name] = [c.outcome for c in results]
            frame[f"{criterion.name}_value"] = [None if c.abstained else c.score_value for c in results]
        for judge in self.judge_ids:
            frame[f"score_{judge}"] = [r.judge_scores.get(judge) for r in self.reports]
        return frame

    @property
    def votes(self) -> pd.DataFrame:
        """Tidy table: one row per (item, criterion, judge) vote (the same table as `votes_df()`)."""
        return self.votes_df()

    @property
    def vote_list(self) -> list[CriterionVote]:
        """Every vote of every report, item by item."""
        return [v for report in self.reports for v in report.vote_list]

    @property
    def usage(self) -> Usage:
        """What every call of the grading cost together."""
        return Usage.total(r.usage for r in self.reports)

    def summary(self) -> pd.DataFrame:
        """Per judge: calls, failed votes, tokens of each kind, cost as billed and at list price (`cost_summary`)."""
        return cost_summary((v.judge_id, v, v.error) for v in self.vote_list)

    def votes_df(self) -> pd.DataFrame:
        """One row per (item, criterion, judge) vote, with shuffle order and errors."""
        frames = []
        for item, report in enumerate(self.reports):
            votes = report.votes_df()
            votes.insert(0, "item", item)
            frames.append(votes)
        return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()

    def _outcome_table(self, criterion_index: int) -> pd.DataFrame:
        """Items × (ensemble + judges) outcomes of one criterion; abstentions are missing."""
        columns: dict[str, list[Any]] = {"ensemble": []}
        for judge in self.judge_ids:
            columns[judge] = []
        for report in self.reports:
            result = report.criteria[criterion_index]
            columns["ensemble"].append(None if result.abstained else result.outcome)
            by_judge = {v.judge_id: v for v in result.votes}
            for judge in self.judge_ids:
                vote = by_judge.get(judge)
                if (
                    vote is None
                    or vote.error
                    or vote.na
                    or (vote.verdict is not None and vote.verdict.value == "CANNOT_ASSESS")
                ):
                    columns[judge].append(None)
                else:
                    columns[judge].append(vote.verdict.value if vote.verdict is not None else vote.selected_label)
        return pd.DataFrame(columns)

    def metrics(self, n_boot: int = 1000, seed: int = 0) -> pd.DataFrame:
        """Each criterion's ensemble outcome and each judge's against ground truth, with bootstrap CIs.

        Binary: accuracy, κ, precision/recall/F1 of MET. Ordinal: exact and adjacent accuracy, quadratic κ,
        Spearman. Nominal: accuracy and κ. Abstentions and items without truth are left out (`n_items`).
        """
        if self.ground_truth is None:
            raise InputError("no ground truth: pass ground_truth=... to grade_many")
        frames = []
        for index, criterion in enumerate(self.criteria):
            truth = self.ground_truth[criterion.name].where(self.ground_truth[criterion.name] != "CANNOT_ASSESS")
            table = self._outcome_table(index)
            labels = _scored_labels(criterion)
            truth = truth.where(truth.isin(labels))
            if truth.notna().sum() == 0:
                continue
            options: dict[str, Any] = {"labels": labels, "n_boot": n_boot, "seed": seed}
            if criterion.scale_type == "binary":
                options["positive"] = "MET"
            elif criterion.scale_type == "ordinal":
                options["ordinal"] = True
            rows = judge_vs_truth(table, truth.to_numpy(dtype=object), **options)
            rows.insert(0, "criterion", criterion.name)
            rows.insert(1, "scale_type", criterion.scale_type)
            frames.append(rows)
        return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()

    def inter_judge_agreement(self) -> pd.DataFrame:
        """Per criterion: Krippendorff's α (nominal, or ordinal for ordinal criteria) and Fleiss' κ across judges."""
        rows = []
        for index, criterion in enumerate(self.criteria):
            table = self._outcome_table(index)[self.judge_ids]
            labels = _scored_labels(criterion)
            level = "ordinal" if criterion.scale_type == "ordinal" else "nominal"
            row: dict[str, Any] = {"criterion": criterion.name, "scale_type": criterion.scale_type}
            if len(self.judge_ids) < 2:
                row.update(krippendorff_alpha=np.nan, fleiss_kappa=np.nan)
            else:
                row["krippendorff_alpha"] = _safe(krippendorff_alpha, table, level=level, labels=labels)
                complete = table.dropna()
                row["fleiss_kappa"] = _safe(fleiss_kappa, complete, labels=labels) if len(complete) else np.nan
            row["mean_agreement"] = np.nanmean(
                [
                    r.criteria[index].agreement if r.criteria[index].agreement is not None else np.nan
                    for r in self.reports
                ]
            )
            rows.append(row)
        return pd.DataFrame(rows)

    def review(self, policy: ReviewPolicy | None = None) -> pd.DataFrame:
        """Items that need a human, with reasons: judges disagree, a judge failed, or the score is low."""
        policy = policy or ReviewPolicy()
        disagreement = [
            1.0 - float(np.nanmin([c.agreement if c.agreement is not None else np.nan for c in r.criteria] or [1.0]))
            if any(c.agreement is not None for c in r.criteria)
            else 0.0
            for r in self.reports
        ]
        failures = [sorted({failure_kind(e) for c in r.criteria for e in c.errors}) for r in self.reports]
        errors = [sum(len(c.errors) for c in r.criteria) for r in self.reports]
        scores = [np.nan if r.score is None else r.score for r in self.reports]
        table = review_table(scores, disagreement, errors, policy, failure_kinds=failures)
        table.insert(0, "submission", self.submissions)
        return table

    # --- charts -------------------------------------------------------------------------------------------

    def verdict_chart(self) -> alt.Chart:
        """Per criterion, how each judge's votes are distributed over the outcomes."""
        from ._charts import verdict_chart

        return verdict_chart(self)

    def agreement_chart(self) -> alt.Chart:
        """Judge × criterion heatmap of agreement with the ensemble outcome."""
        from ._charts import agreement_chart

        return agreement_chart(self)

    def confusion_chart(self, criterion: str) -> alt.Chart:
        """Confusion matrix of the ensemble outcome against ground truth for one criterion."""
        from ._charts import confusion_chart

        return confusion_chart(self, criterion)

    @property
    def not_run(self) -> int:
        """How many criterion votes the run's budget (`max_cost_usd`) left unjudged (error `budget: ...`)."""
        return not_run_count(v.error for v in self.vote_list)

    def _call_errors(self) -> list[str | None]:
        return [v.error for v in self.vote_list]

    def __repr__(self) -> str:
        return self._noted_text(f"GradingResult: {len(self.reports)} submissions\n{self.to_df()!r}")

    def _repr_html_(self) -> str:
        return noted_html(self.to_df(), (v.error for v in self.vote_list))


def _safe(metric: Any, *args: Any, **kwargs: Any) -> float:
    """The metric, or NaN where it is undefined for this data (e.g. a single category)."""
    try:
        return float(metric(*args, **kwargs))
    except Exception:
        return float("nan")
