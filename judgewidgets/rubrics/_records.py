"""Records of rubric grading: each judge's vote on a criterion, the aggregated result, the report."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd
from pydantic import BaseModel, ConfigDict, Field

from .._saved import Dump, Keepable, plain, record_rows, usage_of
from ..engine import Usage
from ..engine._usage import cost_summary
from ._criterion import CriterionVerdict, ScaleType


class CriterionVote(Usage):
    """One judge's answer on one criterion, with what it cost (its Usage). Failed calls abstain (CANNOT_ASSESS or
    NA) and carry `error`."""

    model_config = ConfigDict(frozen=True)

    judge_id: str
    weight: float = 1.0
    verdict: CriterionVerdict | None = None
    selected_index: int | None = Field(None, description="Option index in the rubric's order (after shuffling back).")
    selected_label: str | None = None
    value: float | None = None
    na: bool = False
    explanation: str | None = None
    shuffle_order: list[int] | None = Field(None, description="Option indices in the order the judge saw them.")
    probabilities: dict[str, float] | None = Field(
        None,
        description="The judge's probability of each answer, read from its logprobs: verdict names (binary) or "
        "option labels (multi-choice).",
    )
    confidence: float | None = Field(None, description="The judge's probability of the answer it gave.")
    error: str | None = None
    raw: str = ""
    shortened: str | None = Field(
        None, description="Which turns of a conversation were left out to fit the judge's context (None: read whole)."
    )
    reference_source: str | None = Field(
        None,
        description="On a criterion about correctness, graded by a judge that commits first: the reference it graded "
        "against, 'given', 'judge' or 'solver:NAME' (None otherwise).",
    )
    made_reference: str | None = Field(None, description="The answer made first that this vote graded against.")


class CriterionResult(BaseModel):
    """A criterion's aggregated outcome with every vote behind it."""

    model_config = ConfigDict(frozen=True)

    name: str
    requirement: str
    weight: float
    scale_type: ScaleType
    verdict: CriterionVerdict | None = None
    selected_index: int | None = None
    selected_label: str | None = None
    value: float | None = None
    aggregated_value: float | None = None
    na: bool = False
    agreement: float | None = Field(None, description="Share of assessable votes that match the outcome.")
    shuffle_order: list[int] | None = Field(
        None,
        description="Option indices in the order the judges saw them (multi-choice): the one judge's order, or the "
        "order all judges saw when it was the same for each (shuffling off); None when judges saw different "
        "orders, in which case each vote holds its own.",
    )
    votes: list[CriterionVote] = Field(default_factory=list)

    @property
    def abstained(self) -> bool:
        """CANNOT_ASSESS (binary) or an NA outcome (multi-choice)."""
        return self.verdict == CriterionVerdict.CANNOT_ASSESS if self.scale_type == "binary" else self.na

    @property
    def score_value(self) -> float:
        """MET 1, UNMET 0, or the selected option's value."""
        if self.scale_type == "binary":
            return 1.0 if self.verdict == CriterionVerdict.MET else 0.0
        return float(self.value or 0.0)

    @property
    def outcome(self) -> str | None:
        """The verdict name or the selected option's label."""
        return self.verdict.value if self.verdict is not None else self.selected_label

    @property
    def errors(self) -> list[str]:
        return [v.error for v in self.votes if v.error]


class RubricReport(BaseModel, Keepable):
    """The grade of one submission: normalised score, raw weighted sum, and one result per criterion."""

    score: float | None = Field(description="Normalised score in [0, 1]; None when nothing could be scored.")
    raw_score: float | None = None
    criteria: list[CriterionResult]
    seed: int = Field(description="Master seed of the option shuffles (drawn when not given).")
    judge_scores: dict[str, float | None] = Field(default_factory=dict)
    provenance: dict[str, Any] = Field(
        default_factory=dict, exclude=True, repr=False, description="The grader's settings (no secrets)."
    )

    def _dump(self) -> Dump:
        """Report, criteria and votes as records (one table each); the headline is the score."""
        return Dump(
            kind="rubric_report",
            records=report_records([self]),
            metrics={"score": float("nan") if self.score is None else self.score},
            usage=usage_of(self.vote_list),
            judges=list(self.judge_scores),
            provenance=self.provenance,
        )

    @classmethod
    def _restore(cls, dump: Dump) -> RubricReport:
        report = reports_from(dump)[0]
        return report.model_copy(update={"provenance": dump.provenance})

    @property
    def usage(self) -> Usage:
        """What every judge's calls on every criterion cost together."""
        return Usage.total(self.vote_list)

    def summary(self) -> pd.DataFrame:
        """Per judge: calls, failed votes, tokens of each kind, cost as billed and at list price (`cost_summary`)."""
        return cost_summary((v.judge_id, v, v.error) for v in self.vote_list)

    def to_df(self) -> pd.DataFrame:
        """One row per criterion: outcome, value, weight, agreement and the judges' errors."""
        rows: list[dict[str, Any]] = []
        for c in self.criteria:
            rows.append(
                {
                    "criterion": c.name,
                    "scale_type": c.scale_type,
                    "weight": c.weight,
                    "outcome": c.outcome,
                    "value": None if c.abstained else c.score_value,
                    "aggregated_value": c.aggregated_value,
                    "agreement": c.agreement,
                    "votes": ", ".join(
                        f"{v.judge_id}={v.verdict.value if v.verdict else v.selected_label}" for v in c.votes
                    ),
                    "errors": "; ".join(c.errors) or None,
                }
            )
        return pd.DataFrame(rows)

    @property
    def votes(self) -> pd.DataFrame:
        """Tidy table: one row per (criterion, judge) vote (the same table as `votes_df()`)."""
        return self.votes_df()

    @property
    def vote_list(self) -> list[CriterionVote]:
        """Every judge's vote on every criterion, criterion by criterion."""
        return [v for c in self.criteria for v in c.votes]

    def votes_df(self) -> pd.DataFrame:
        """One row per (criterion, judge) vote."""
        rows = []
        for c in self.criteria:
            for v in c.votes:
                row = v.model_dump()
                row["verdict"] = v.verdict.value if v.verdict else None
                rows.append({"criterion": c.name, **row})
        return pd.DataFrame(rows)

    def _call_errors(self) -> list[str | None]:
        return [v.error for v in self.vote_list]

    def _repr_html_(self) -> str:
        score = "—" if self.score is None else f"{self.score:.3f}"
        return self._noted_html(f"<p><b>Rubric score: {score}</b> (seed {self.seed})</p>" + self.to_df()._repr_html_())


def report_records(reports: Sequence[RubricReport]) -> dict[str, list[dict[str, Any]]]:
    """Reports as three tables of records: `reports` (one row each), `criteria` (one per report and criterion,
    `report` and `position` saying where) and `criterion_votes` (one per vote, `report` and `criterion` too)."""
    rows: dict[str, list[dict[str, Any]]] = {"reports": [], "criteria": [], "criterion_votes": []}
    for r, report in enumerate(reports):
        rows["reports"].append({"report": r, **plain(report.model_dump(exclude={"criteria"}))})
        for c, criterion in enumerate(report.criteria):
            rows["criteria"].append({"report": r, "position": c, **plain(criterion.model_dump(exclude={"votes"}))})
            votes = criterion.votes
            rows["criterion_votes"] += record_rows(votes, report=[r] * len(votes), criterion=[c] * len(votes))
    return rows


def reports_from(dump: Dump) -> list[RubricReport]:
    """The reports `report_records` wrote, rebuilt (extra keys in a row are ignored by the records)."""
    votes: dict[tuple[int, int], list[CriterionVote]] = {}
    for row in dump.rows("criterion_votes"):
        votes.setdefault((row["report"], row["criterion"]), []).append(CriterionVote.model_validate(row))
    criteria: dict[int, list[CriterionResult]] = {}
    for row in sorted(dump.rows("criteria"), key=lambda r: (r["report"], r["position"])):
        key = (row["report"], row["position"])
        criteria.setdefault(row["report"], []).append(
            CriterionResult.model_validate({**row, "votes": votes.get(key, [])})
        )
    return [
        RubricReport.model_validate({**row, "criteria": criteria.get(row["report"], [])})
        for row in sorted(dump.rows("reports"), key=lambda r: r["report"])
    ]
