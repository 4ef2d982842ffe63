"""Probability weighting (G-Eval): a judge's probabilities over its template's answers, read from its logprobs."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .._records import ScoreSource
from ..engine import Answer
from ..templates import Template


@dataclass(frozen=True)
class ProbabilityReading:
    """What a vote says about its probabilities: where its score came from and why, if not from them."""

    probabilities: dict[str, float] | None = None
    confidence: float | None = None
    source: ScoreSource = "answer"
    fallback: str | None = None


def read_probabilities(template: Template, answer: Answer[Any]) -> ProbabilityReading:
    """The judge's probabilities over the template's answers in `answer`, or why they are not there."""
    if not template.probability_readable():
        return ProbabilityReading(fallback="the template's answers cannot be told apart by one token")
    if not answer.logprobs:
        return ProbabilityReading(fallback="the model returned no logprobs")
    found = template.answer_probabilities(answer.logprobs, answer.prefill)
    if found is None:
        return ProbabilityReading(fallback="no answer among the alternatives at the answer's token")
    probabilities, _coverage = found
    return ProbabilityReading(
        probabilities=probabilities, confidence=max(probabilities.values()), source="probabilities"
    )
