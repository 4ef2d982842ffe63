"""Criteria of a rubric: binary (MET / UNMET / CANNOT_ASSESS) or multi-choice (ordinal or nominal options)."""

from __future__ import annotations

import math
import re
from enum import Enum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from .._errors import configuration_error

ScaleType = Literal["binary", "ordinal", "nominal"]
BINARY_AGGREGATIONS = ("majority", "weighted", "unanimous", "any")
ORDINAL_AGGREGATIONS = ("mean", "median", "weighted_mean", "mode", "min", "max")
NOMINAL_AGGREGATIONS = ("mode", "weighted_mode", "unanimous")
NA_LABEL = "Cannot assess / not applicable"
# Words that make a criterion one about correctness when it does not say (`Criterion.correctness`).
CORRECTNESS_WORDS = re.compile(
    r"\b(correct(ly|ness)?|incorrect(ly)?|accura(te|tely|cy)|inaccura(te|cy)|factual(ly)?|wrong|errors?|mistakes?)\b",
    re.IGNORECASE,
)


class CriterionVerdict(str, Enum):
    """A binary criterion's verdict."""

    MET = "MET"
    UNMET = "UNMET"
    CANNOT_ASSESS = "CANNOT_ASSESS"


def _validated(cls: type[BaseModel], what: str, data: dict[str, Any]) -> dict[str, Any]:
    """Run pydantic validation, turning its error into one ConfigurationError that names the field."""
    try:
        return dict(cls.__pydantic_validator__.validate_python(data).__dict__)
    except ValidationError as exc:
        raise configuration_error(what, exc) from None


class CriterionOption(BaseModel):
    """One answer a judge can pick. Non-NA values lie in [0, 1]; NA options are excluded from scoring."""

    model_config = ConfigDict(frozen=True)

    label: str
    value: float = 0.0
    na: bool = False

    def __init__(self, label: str | None = None, value: float = 0.0, na: bool = False, **data: Any) -> None:
        fields = {"label": label if label is not None else data.pop("label", None), "value": value, "na": na, **data}
        super().__init__(**_validated(_OptionFields, f"option {fields['label']!r}", fields))


class _OptionFields(BaseModel):
    label: str = Field(min_length=1)
    value: float = 0.0
    na: bool = False

    @model_validator(mode="after")
    def _check(self) -> _OptionFields:
        if not math.isfinite(self.value):
            raise ValueError(f"value must be finite, got {self.value}")
        if not self.na and not 0.0 <= self.value <= 1.0:
            raise ValueError(f"value {self.value} of a scored option must lie in [0, 1]")
        return self


class Criterion(BaseModel):
    """One requirement of a rubric, with a weight (negative weights penalise: the criterion is a flaw).

    Without options it is binary; with options it is multi-choice, ordinal by default or nominal.
    `aggregation` overrides the grader's ensemble strategy for this criterion alone. `correctness` says whether the
    criterion is about getting the answer right: a grader that commits first shows such criteria the answer made
    first as the reference (None: decided from its words, see `about_correctness`).
    """

    model_config = ConfigDict(frozen=True)

    requirement: str
    name: str | None = None
    weight: float = 1.0
    scale_type: ScaleType = "binary"
    options: tuple[CriterionOption, ...] | None = None
    aggregation: str | None = None
    correctness: bool | None = None

    def __init__(
        self,
        requirement: str | None = None,
        name: str | None = None,
        weight: float = 1.0,
        scale_type: ScaleType | None = None,
        options: list[CriterionOption] | list[dict[str, Any]] | None = None,
        aggregation: str | None = None,
        correctness: bool | None = None,
        **data: Any,
    ) -> None:
        requirement = requirement if requirement is not None else data.pop("requirement", None)
        if options is not None:
            options = [o if isinstance(o, CriterionOption) else CriterionOption(**o) for o in options]
        if scale_type is None:
            scale_type = "ordinal" if options else "binary"
        fields = {
            "requirement": requirement,
            "name": name,
            "weight": weight,
            "scale_type": scale_type,
            "options": tuple(options) if options is not None else None,
            "aggregation": aggregation,
            "correctness": correctness,
            **data,
        }
        super().__init__(**_validated(_CriterionFields, f"criterion {name or requirement!r}", fields))

    # --- structure ----------------------------------------------------------------------------------------

    @property
    def is_multi_choice(self) -> bool:
        return self.options is not None

    @property
    def about_correctness(self) -> bool:
        """Whether the criterion is about getting the answer right: `correctness` when given, else whether its
        name or requirement speaks of it (correct, incorrect, accurate, factual, wrong, error, mistake)."""
        if self.correctness is not None:
            return self.correctness
        return bool(CORRECTNESS_WORDS.search(f"{self.name or ''} {self.requirement}"))

    @property
    def label(self) -> str:
        """The name, or the requirement when the criterion has none."""
        return self.name or self.requirement

    @property
    def na_option_index(self) -> int | None:
        if not self.options:
            return None
        return next((i for i, o in enumerate(self.options) if o.na), None)

    @property
    def option_list(self) -> tuple[CriterionOption, ...]:
        """The options in the rubric's order (none for a binary criterion)."""
        return self.options or ()

    def with_na_option(self) -> Criterion:
        """This criterion with an NA option appended, unless it is binary or already has one."""
        if not self.is_multi_choice or self.na_option_index is not None:
            return self
        options = [*self.option_list, CriterionOption(NA_LABEL, 0.0, na=True)]
        return self.model_copy(update={"options": tuple(options)})

    def worst_option_among(self, indices: list[int]) -> int:
        """The score-minimising option among `indices`: lowest value when weight ≥ 0, highest when < 0,
        lowest index on a value tie."""
        options = self.option_list
        assert options and indices
        if self.weight >= 0:
            return min(indices, key=lambda i: (options[i].value, i))
        return min(indices, key=lambda i: (-options[i].value, i))

    def worst_scored_option(self) -> int:
        """The score-minimising non-NA option (index)."""
        assert self.options is not None
        scored = [i for i, o in enumerate(self.options) if not o.na]
        return self.worst_option_among(scored)


class _CriterionFields(BaseModel):
    requirement: str = Field(min_length=1)
    name: str | None = None
    weight: float = 1.0
    scale_type: ScaleType = "binary"
    options: tuple[CriterionOption, ...] | None = None
    aggregation: str | None = None
    correctness: bool | None = None

    @model_validator(mode="after")
    def _check(self) -> _CriterionFields:
        if not math.isfinite(self.weight):
            raise ValueError(f"weight must be finite, got {self.weight}")
        if self.scale_type == "binary":
            if self.options is not None:
                raise ValueError("a binary criterion takes no options; use scale_type 'ordinal' or 'nominal'")
            allowed: tuple[str, ...] = BINARY_AGGREGATIONS
        else:
            if not self.options or sum(not o.na for o in self.options) < 2:
                raise ValueError(f"a {self.scale_type} criterion needs at least two scored options")
            labels = [o.label for o in self.options]
            if len(set(labels)) != len(labels):
                raise ValueError(f"option labels must be unique, got {labels}")
            if sum(o.na for o in self.options) > 1:
                raise ValueError("at most one option may be NA")
            allowed = ORDINAL_AGGREGATIONS if self.scale_type == "ordinal" else NOMINAL_AGGREGATIONS
        if self.aggregation is not None and self.aggregation not in allowed:
            raise ValueError(f"aggregation {self.aggregation!r} is not one of {', '.join(allowed)}")
        return self
