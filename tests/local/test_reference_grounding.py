"""The real embedded judge, reference-grounded: with the reference given, a plausible wrong answer scores <= 0.5
and a right one worded unlike the reference >= 0.5 under the verdict templates; likert only orders them (it called
"one hundred degrees" different from "100 °C": the benchmark's 74 % of right answers >= 0.5 on likert)."""

from __future__ import annotations

import pytest

import judgewidgets as jw
from tests.local_model import require_local_model

pytestmark = require_local_model()

QUESTION = "What is the boiling point of water at sea level in Celsius?"
REFERENCE = "100 °C"
RIGHT = "At sea level it comes to a boil at one hundred degrees."
WRONG = "Water boils at 50 degrees Celsius."  # the README demo's: 0.72-0.86 before grounding


@pytest.mark.parametrize("template", ["true_false_uncertain", "true_false", "likert"])
def test_a_wrong_answer_scores_low_and_a_right_one_high_against_the_reference(template: str) -> None:
    judge = jw.LLMJudge("local", template=template)
    votes = judge.score([QUESTION] * 2, [RIGHT, WRONG], [REFERENCE] * 2, progress=False).vote_list
    right, wrong = votes
    assert all(v.error is None and v.score_source == "probabilities" for v in votes), votes
    assert all(v.raw.startswith('{"matches_reference": "') for v in votes), votes
    assert wrong.score < right.score, (template, right.raw, right.score, wrong.raw, wrong.score)
    if template != "likert":
        assert wrong.score <= 0.5 <= right.score, (template, right.raw, right.score, wrong.raw, wrong.score)
