"""The real embedded judge with no reference and nothing configured (issue 46 item 4): under a correctness template
it answers each question first and grades against its answer, so a subtly wrong answer (a year, a unit, an
off-by-one, a swapped name) scores <= 0.3 and a right one >= 0.7. Ten questions of this test's own, in neither
benchmark set (benchmarks/no_reference.py measures 90: 90-94 % of questions meet both bounds under
true_false_uncertain, 88-90 % under likert; what misses is mostly a question the 1.5B model answers wrong)."""

from __future__ import annotations

import pytest

import judgewidgets as jw
from tests.local_model import require_local_model

pytestmark = require_local_model()

CASES = [  # question, right answer, subtly wrong answer
    ("In what year did the Second World War begin?", "It began in 1939.", "It began in 1941."),
    ("How many minutes are in an hour?", "An hour has 60 minutes.", "An hour has 100 minutes."),
    ("How many sides does a triangle have?", "A triangle has three sides.", "A triangle has four sides."),
    ("Who painted the ceiling of the Sistine Chapel?", "Michelangelo painted it.", "Raphael painted it."),
    ("What is the capital of Japan?", "Tokyo is the capital of Japan.", "Kyoto is the capital of Japan."),
    ("How many wheels does a bicycle have?", "Two.", "A bicycle has three wheels."),
    ("What is 12 + 15?", "27", "12 + 15 = 28."),
    ("Who wrote 'The Odyssey'?", "Homer.", "Virgil wrote The Odyssey."),
    ("What is the largest mammal?", "The blue whale.", "The African elephant is the largest mammal."),
    ("How many centimetres are in a metre?", "There are 100 centimetres in a metre.", "A metre has 10 centimetres."),
]


@pytest.mark.parametrize("template", ["true_false_uncertain", "likert"])
def test_subtly_wrong_answers_fail_and_right_ones_pass_without_a_reference(template: str) -> None:
    judge = jw.LLMJudge("local", template=template)  # nothing set: the default commits first
    prompts = [q for q, _, _ in CASES for _ in range(2)]
    responses = [a for _, right, wrong in CASES for a in (right, wrong)]
    votes = judge.score(prompts, responses, progress=False).vote_list
    assert all(v.error is None and v.reference_source == "judge" and v.made_reference for v in votes), votes
    scores = [(votes[2 * i].score, votes[2 * i + 1].score) for i in range(len(CASES))]
    met = [right >= 0.7 and wrong <= 0.3 for right, wrong in scores]
    report = [
        (q, round(r, 2), round(w, 2), votes[2 * i].made_reference)
        for i, ((q, _, _), (r, w)) in enumerate(zip(CASES, scores))
    ]
    assert sum(met) >= 9, report
    plain = jw.LLMJudge("local", template=template, commit_first=False).score(prompts, responses, progress=False)
    assert all(v.reference_source is None for v in plain.vote_list)  # off when told: today's verdicts
