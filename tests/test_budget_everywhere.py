"""`max_cost_usd=` on every run method of every judge kind: a budget that allows nothing sends nothing and records
every judgment as not run (never raised); a bad budget or a model without a price is one error before any call;
a budget reached part way through a cascade leaves its later stage's items not run."""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterator
from typing import Any

import pandas as pd
import pytest

import judgewidgets as jw
from judgewidgets.engine._litellm import import_litellm
from judgewidgets.testing import ScriptedTransport
from tests.cascade.helpers import pairs, pairwise_judge

PRICED = "openai/gpt-4o-mini"
BUDGET = "budget: not run, the budget of $0.00 was reached"


def transport() -> ScriptedTransport:
    """Answers every kind of question: a score, a verdict, a criterion's outcome, a level."""
    answer = {"score": 4, "verdict": "A", "outcome": "MET", "met": True, "level": 3, "explanation": "ok"}
    return ScriptedTransport(lambda r, a: json.dumps(answer))


def likert(scripted: ScriptedTransport) -> jw.LLMJudge:
    return jw.LLMJudge(PRICED, template="likert", transport=scripted, cache=False)


def pairwise(scripted: ScriptedTransport) -> jw.PairwiseJudge:
    return jw.PairwiseJudge(PRICED, transport=scripted, cache=False)


RUBRIC = jw.Rubric([jw.Criterion(name="correct", requirement="The answer is correct.")])
LEVELED = jw.LeveledRubric([jw.Dimension("accuracy", 1, {1: "Wrong", 3: "Partly", 5: "Right"})])
PAIRS = pd.DataFrame({"question": ["2+2?", "3+3?"], "response_a": ["4", "6"], "response_b": ["5", "7"]})

# (name, run with a budget, how many judgments the result says were not run)
Run = Callable[[ScriptedTransport, float], Any]
RUNS: list[tuple[str, Run, Callable[[Any], int]]] = [
    (
        "LLMJudge.score",
        lambda t, b: likert(t).score(["q1", "q2"], ["a1", "a2"], progress=False, max_cost_usd=b),
        lambda r: r.not_run,
    ),
    (
        "LLMPanel.score",
        lambda t, b: jw.LLMPanel([likert(t), likert(t).with_options(template="continuous")]).score(
            ["q1", "q2"], ["a1", "a2"], progress=False, max_cost_usd=b
        ),
        lambda r: r.not_run,
    ),
    (
        "LLMPanel.generate_and_score",
        lambda t, b: jw.LLMPanel([likert(t)]).generate_and_score(
            ["q1", "q2"],
            jw.Generator(PRICED, settings=jw.engine.CallSettings(transport=t)),
            progress=False,
            max_cost_usd=b,
        ),
        lambda r: r.not_run,
    ),
    (
        "PairwiseJudge.compare",
        lambda t, b: pairwise(t).compare("2+2?", "4", "5", max_cost_usd=b),
        lambda r: int(r.error is not None and r.error.startswith("budget:")),
    ),
    (
        "PairwiseJudge.compare_many",
        lambda t, b: pairwise(t).compare_many(PAIRS, progress=False, max_cost_usd=b),
        lambda r: int(r["error"].str.startswith("budget:").sum()),
    ),
    (
        "PairwisePanel.compare",
        lambda t, b: jw.PairwisePanel([pairwise(t)]).compare("2+2?", "4", "5", max_cost_usd=b),
        lambda r: sum(1 for v in r.vote_list if (v.error or "").startswith("budget:")),
    ),
    (
        "PairwisePanel.compare_many",
        lambda t, b: jw.PairwisePanel([pairwise(t)]).compare_many(PAIRS, progress=False, max_cost_usd=b),
        lambda r: int(r["error"].str.startswith("budget:").sum()),
    ),
    (
        "Tournament.run",
        lambda t, b: jw.Tournament(pairwise(t), rating="wins").run(
            ["2+2?"], {"x": ["4"], "y": ["5"]}, progress=False, max_cost_usd=b
        ),
        lambda r: int(r.matches["error"].str.startswith("budget:").sum()),
    ),
    (
        "CriterionGrader.grade",
        lambda t, b: jw.CriterionGrader([likert(t)]).grade(RUBRIC, "4", "2+2?", max_cost_usd=b),
        lambda r: sum(1 for c in r.criteria for e in c.errors if e.startswith("budget:")),
    ),
    (
        "CriterionGrader.grade_many",
        lambda t, b: jw.CriterionGrader([likert(t)]).grade_many(RUBRIC, ["4", "5"], progress=False, max_cost_usd=b),
        lambda r: r.not_run,
    ),
    (
        "LeveledRubric.grade",
        lambda t, b: LEVELED.grade("4", "2+2?", grader=[likert(t)], max_cost_usd=b),
        lambda r: sum(1 for c in r.report.criteria for e in c.errors if e.startswith("budget:")),
    ),
    (
        "LeveledRubric.grade_many",
        lambda t, b: LEVELED.grade_many(["4", "5"], grader=[likert(t)], progress=False, max_cost_usd=b),
        lambda r: sum(1 for x in r.reports for c in x.report.criteria for e in c.errors if e.startswith("budget:")),
    ),
    (
        "SequentialRater.rate",
        lambda t, b: jw.SequentialRater(PRICED, transport=t, cache=False).rate("2+2?", "4", max_cost_usd=b),
        lambda r: int(r.status == "budget" and r.error.startswith("budget:")),
    ),
    (
        "SequentialRater.rate_many",
        lambda t, b: jw.SequentialRater(PRICED, transport=t, cache=False).rate_many(
            ["q1", "q2"], ["a1", "a2"], progress=False, max_cost_usd=b
        ),
        lambda r: int((r["status"] == "budget").sum()),
    ),
    (
        "EvaluationPipeline.run",
        lambda t, b: jw.EvaluationPipeline({"quality": likert(t)}).run("2+2?", "4", progress=False, max_cost_usd=b),
        lambda r: int(r["quality_error"].str.startswith("budget:").sum()),
    ),
    (
        "AspectEvaluator.evaluate",
        lambda t, b: jw.AspectEvaluator(["relevance"], judge=likert(t)).evaluate(
            "2+2?", "4", progress=False, max_cost_usd=b
        ),
        lambda r: r.panel.not_run,
    ),
    (
        "meta_evaluate",
        lambda t, b: jw.meta_evaluate(pairwise(t), PAIRS.assign(label=["A", "A"]), progress=False, max_cost_usd=b),
        lambda r: int(r.verdicts["error"].str.startswith("budget:").sum()),
    ),
]


@pytest.mark.parametrize(("name", "run", "not_run"), RUNS, ids=[r[0] for r in RUNS])
def test_a_budget_of_nothing_sends_nothing_and_records_every_judgment_as_not_run(
    name: str, run: Run, not_run: Callable[[Any], int]
) -> None:
    scripted = transport()
    result = run(scripted, 0.0)
    assert scripted.requests == [], f"{name} sent a call the budget did not allow"
    assert not_run(result) >= 1, f"{name}'s result does not say what was not run"


@pytest.mark.parametrize(("name", "run", "not_run"), RUNS, ids=[r[0] for r in RUNS])
def test_a_budget_that_is_no_number_is_refused_before_any_call(
    name: str, run: Run, not_run: Callable[[Any], int]
) -> None:
    scripted = transport()
    with pytest.raises(jw.ConfigurationError, match="max_cost_usd must be a number of dollars"):
        run(scripted, math.nan)
    assert scripted.requests == [], name


@pytest.fixture
def priced_stages() -> Iterator[None]:
    """The cascade helpers' judges are `openai/cheap` and `openai/strong`: give them prices for the test."""
    litellm = import_litellm()
    litellm.register_model(
        {
            f"openai/{name}": {
                "input_cost_per_token": 1e-6,
                "output_cost_per_token": 1e-6,
                "litellm_provider": "openai",
            }
            for name in ("cheap", "strong")
        }
    )
    yield
    for name in ("cheap", "strong"):
        litellm.model_cost.pop(f"openai/{name}", None)


def test_a_cascade_out_of_budget_after_its_first_stage_leaves_the_escalated_items_not_run(
    priced_stages: None,
) -> None:
    def cheap(question: str) -> float:  # sure and right on easy pairs; unsure, and wrong on odd hard ones
        kind, number = question.split()
        return 0.97 if kind == "easy" else 0.55 if int(number) % 2 == 0 else 0.45

    cascade = jw.Cascade(
        [pairwise_judge(cheap, "cheap"), pairwise_judge(lambda q: 0.9, "strong")], target_agreement=0.9, delta=0.2
    )
    cascade.calibrate(pairs(["easy"] * 50 + ["hard"] * 30), progress=False)
    new = pairs(["easy"] * 4 + ["hard"] * 2, offset=1000)
    strong = cascade.stages[1].judge.settings.transport
    before = len(strong.requests)
    # The scripted judges bill $0.001 a call; the first stage makes two calls (both orders) for each of 6 items.
    result = cascade.run(new, progress=False, max_cost_usd=0.0125)
    assert len(strong.requests) == before, "the second stage was not run"
    table = result.to_df()
    assert table["stage"].tolist()[:4] == ["cheap"] * 4 and table["abstained"].tolist()[4:] == [True, True]
    second = result.judgments[result.judgments["stage"] == "strong"]
    assert len(second) == 2 and second["error"].str.startswith("budget: ").all()
    assert math.isnan(table["confidence"].iloc[5])


def test_a_cascade_with_an_unpriced_stage_refuses_a_budget_before_any_call() -> None:
    cascade = jw.Cascade([pairwise_judge(lambda q: 0.97, "unpriced-stage")], target_agreement=0.9, delta=0.2)
    cascade.calibrate(pairs(["easy"] * 50), progress=False)
    scripted = cascade.stages[0].judge.settings.transport
    before = len(scripted.requests)
    with pytest.raises(jw.ConfigurationError, match="no price for model 'openai/unpriced-stage'"):
        cascade.run(pairs(["easy"] * 2, offset=100), progress=False, max_cost_usd=1.0)
    assert len(scripted.requests) == before
