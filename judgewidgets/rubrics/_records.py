"""Records of rubric grading: each judge's vote on a criterion, the aggregated result, the report."""

from __future__ import annotations

from typing import Any

import pandas as pd
from pydantic import BaseModel, ConfigDict, Field

from ..engine import Usage
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


class RubricReport(BaseModel):
    """The grade of one submission: normalised score, raw weighted sum, and one result per criterion."""

    score: float | None = Field(description="Normalised score in [0, 1]; None when nothing could be scored.")
    raw_score: float | None = None
    criteria: list[CriterionResult]
    seed: int = Field(description="Master seed of the option shuffles (drawn when not given).")
    judge_scores: dict[str, float | None] = Field(default_factory=dict)

    @property
    def usage(self) -> Usage:
        """What every judge's calls on every criterion cost together."""
        return Usage.total(self.vote_list)

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

    def _repr_html_(self) -> str:
        score = "—" if self.score is None else f"{self.score:.3f}"
        return f"<p><b>Rubric score: {score}</b> (seed {self.seed})</p>" + self.to_df()._repr_html_()
