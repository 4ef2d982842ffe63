"""Records that cross the engine's boundary: one item to judge, and one judge's vote on it."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import ConfigDict, Field

from ._errors import InputError
from .engine import Usage
from .engine._request import unencodable

ScoreSource = Literal["probabilities", "answer"]


@dataclass(frozen=True)
class Item:
    """One thing to judge: the prompt, the response, and optionally a reference answer and context."""

    prompt: str
    response: str
    reference: str | None = None
    context: str | None = None


class Vote(Usage):
    """One judge's verdict on one item, with what it cost (its Usage). `score` is NaN and `error` set when it
    failed."""

    model_config = ConfigDict(frozen=True)

    item: int = Field(description="Position of the item in the batch.")
    judge: str = Field(description="Name of the judge that voted.")
    score: float = Field(description="Normalised score in [0, 1]; NaN when the judge failed.")
    raw: str = Field("", description="The judge's answer as it came back.")
    explanation: str | None = Field(None, description="The judge's reasoning, when asked for.")
    error: str | None = Field(
        None, description="Why the vote is missing, prefixed 'infrastructure:', 'input:' or 'parse:'."
    )
    score_source: ScoreSource | None = Field(
        None,
        description="'probabilities': the expected score under the judge's probabilities over its answers; "
        "'answer': the answer it wrote (asked for none, or none came back: see `fallback`).",
    )
    fallback: str | None = Field(None, description="Why probabilities were asked for but not used.")
    probabilities: dict[str, float] | None = Field(
        None, description="The judge's probability of each possible answer (renormalised over valid answers)."
    )
    confidence: float | None = Field(
        None, description="Probability of the judge's most likely answer (from `probabilities`), in [0, 1]."
    )
    uncalibrated_score: float | None = Field(
        None, description="The judge's own score when an aligned judge's calibration mapped it onto `score`."
    )


def check_encodable(name: str, position: int | None, text: str) -> None:
    """InputError naming the row when `text` cannot be sent as UTF-8 (it would fail its call)."""
    problem = unencodable(text)
    if problem is not None:
        where = f"{name} at position {position}" if position is not None else name
        raise InputError(f"{where} {problem}")


def _as_text_list(name: str, values: Any, *, optional: bool = False) -> list[str | None] | None:
    if values is None:
        return None
    if isinstance(values, str):
        values = [values]
    try:
        values = list(values)
    except TypeError:
        raise InputError(f"{name} must be a list of strings, got {type(values).__name__}") from None
    bad = []
    for i, value in enumerate(values):
        missing = value is None or (isinstance(value, float) and math.isnan(value))
        if missing and optional:
            values[i] = None
            continue
        if missing or not isinstance(value, str):
            bad.append(i)
        elif not bad:
            check_encodable(name, i, value)
    if bad:
        shown = ", ".join(map(str, bad[:10])) + (" ..." if len(bad) > 10 else "")
        raise InputError(f"{name} must hold strings; missing (None/NaN) or non-text values at positions {shown}")
    return values


def build_items(
    prompts: Sequence[str] | str,
    responses: Sequence[str] | str,
    references: Sequence[str | None] | str | None = None,
    contexts: Sequence[str | None] | str | None = None,
) -> list[Item]:
    """Check a batch and pair it up; every problem raises one InputError before any call is made."""
    prompt_list = _as_text_list("prompts", prompts)
    response_list = _as_text_list("responses", responses)
    reference_list = _as_text_list("references", references, optional=True)
    context_list = _as_text_list("contexts", contexts, optional=True)
    assert prompt_list is not None and response_list is not None
    if not prompt_list:
        raise InputError("nothing to judge: prompts is empty")
    lengths = {"prompts": len(prompt_list), "responses": len(response_list)}
    if reference_list is not None:
        lengths["references"] = len(reference_list)
    if context_list is not None:
        lengths["contexts"] = len(context_list)
    if len(set(lengths.values())) > 1:
        raise InputError("lengths differ: " + ", ".join(f"{k}={v}" for k, v in lengths.items()))
    return [
        Item(
            prompt=str(p),  # checked: no prompt or response is missing
            response=str(r),
            reference=reference_list[i] if reference_list is not None else None,
            context=context_list[i] if context_list is not None else None,
        )
        for i, (p, r) in enumerate(zip(prompt_list, response_list))
    ]
