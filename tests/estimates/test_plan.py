"""jw.label_plan: probabilities that follow the judge's uncertainty within a floor and a cost bound, a seeded and
nested draw, the uncertainty read from each kind of result, and each bad input refused before anything is drawn."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

import judgewidgets as jw
from judgewidgets.labels._plan import MIN_UNCERTAINTY, draw_order, plan_probabilities
from judgewidgets.pairwise._records import OrderVerdict, PairwiseResult
from judgewidgets.testing import ScriptedTransport


def confident_scores(n: int = 2000, seed: int = 0) -> pd.Series:
    rng = np.random.default_rng(seed)
    confidence = np.where(rng.random(n) < 0.75, rng.uniform(0.95, 1, n), rng.uniform(0.5, 0.95, n))
    return pd.Series(np.where(rng.random(n) < 0.6, confidence, 1 - confidence), index=[f"i{k}" for k in range(n)])


def cost(probabilities: np.ndarray, budget: int) -> float:
    return math.sqrt((np.mean(1 / probabilities) - 1) / (len(probabilities) / budget - 1)) - 1


def test_probabilities_follow_the_uncertainty_within_the_floor_and_the_cost_bound() -> None:
    scores = confident_scores()
    plan = jw.label_plan(scores, budget=100, seed=0, metric="pass_rate")
    table = plan.table
    assert list(table.columns) == ["item", "score", "uncertainty", "probability", "order", "drawn"]
    assert plan.design == "active" and table["probability"].sum() == pytest.approx(100)
    assert table["probability"].min() >= plan.floor * 100 / 2000 - 1e-12 and plan.floor >= 0.2
    assert cost(table["probability"].to_numpy(), 100) <= 0.03 + 1e-9
    # More uncertain items are more likely drawn, and never less likely than a surer one.
    ordered = table.sort_values("uncertainty")
    assert ordered["probability"].is_monotonic_increasing
    assert table["uncertainty"].min() == pytest.approx(MIN_UNCERTAINTY)  # nobody is surer than 99 %
    assert 0.05 < plan.predicted_saving < 0.6
    assert table["drawn"].sum() == 100 and len(plan.items) == 100
    assert list(table.set_index("item").loc[plan.items, "order"]) == list(range(1, 101))
    assert table["score"].isin([0.0, 1.0]).all()  # the verdicts on the pass_rate scale


def test_seeded_reproducible_and_a_larger_budget_extends_the_same_order() -> None:
    scores = confident_scores(800)
    plan = jw.label_plan(scores, budget=40, seed=7)
    again = jw.label_plan(scores, budget=40, seed=7)
    other = jw.label_plan(scores, budget=40, seed=8)
    assert plan.items == again.items and plan.id == again.id
    assert plan.items != other.items and plan.id != other.id
    larger = plan.with_budget(90)
    assert larger.items[:40] == plan.items and larger.floor == plan.floor and larger.seed == 7
    assert larger.probabilities().to_numpy() == pytest.approx(plan.probabilities().to_numpy() * 90 / 40)


def test_any_first_k_of_the_order_is_drawn_in_proportion_to_the_probabilities() -> None:
    probabilities = np.r_[np.full(50, 0.02), np.full(50, 0.08)]  # two groups, 1 : 4
    counts = np.zeros(100)
    for seed in range(4000):
        counts += draw_order(probabilities, seed) < 4  # the first 4 of a plan for 5
    assert counts[50:].sum() / counts[:50].sum() == pytest.approx(4.0, rel=0.08)


def test_a_flat_or_missing_uncertainty_draws_uniformly() -> None:
    flat = pd.Series(np.full(300, 0.7))
    plan = jw.label_plan(flat, budget=30)
    assert plan.design == "uniform" and plan.predicted_saving == 0.0
    assert np.allclose(plan.table["probability"], 0.1)
    hard = jw.label_plan(pd.Series(np.r_[np.ones(150), np.zeros(150)]), budget=30)  # verdicts, no probabilities
    assert hard.design == "uniform"
    assert "uniform" in repr(plan) and "label plan" in plan._repr_html_()


def test_items_the_judge_failed_on_are_left_out_with_a_note() -> None:
    scores = pd.Series([0.9, np.nan, 0.5, 0.2, 0.99, 0.6], index=list("abcdef"))
    plan = jw.label_plan(scores, budget=3, seed=1)
    assert plan.n_items == 5 and "b" not in plan.items and plan.probability("b") == 0.0
    assert any("no score for 1 item" in note for note in plan.notes)


def test_the_uncertainty_comes_from_each_kind_of_result() -> None:
    # A panel: judges that disagree on an item make it more uncertain than judges that agree.
    answers = {"agree": ["5", "5"], "split": ["1", "5"]}

    def judge(position: int) -> jw.LLMJudge:
        def reply(request: object, attempt: int) -> str:
            text = json.dumps(getattr(request, "messages", []))
            which = "split" if "split" in text else "agree"
            return json.dumps({"score": int(answers[which][position])})

        return jw.LLMJudge(
            "openai/m",
            template="likert",
            name=f"j{position}",
            transport=ScriptedTransport(reply),
            cache=False,
            api_key="sk-x",
        )

    panel = jw.LLMPanel([judge(0), judge(1)])
    result = panel.score(["q agree", "q split"] * 5, ["agree", "split"] * 5, progress=False)
    plan = jw.label_plan(result, budget=3, seed=0)
    split = plan.table[plan.table["item"] % 2 == 1]["probability"]
    agree = plan.table[plan.table["item"] % 2 == 0]["probability"]
    assert (split > agree.max()).all() and plan.metric == "mean"

    # Pairwise: orders that disagree are more uncertain than orders that agree; the metric is the win rate.
    def pair(first: str, second: str) -> PairwiseResult:
        verdicts = [
            OrderVerdict(judge="j", swapped=False, winner=first),  # type: ignore[arg-type]
            OrderVerdict(judge="j", swapped=True, winner=second),  # type: ignore[arg-type]
        ]
        winner = first if first == second else "tie"
        return PairwiseResult(
            question="q",
            response_a="a",
            response_b="b",
            judge="j",
            winner=winner,
            consistent=first == second,
            confidence=None,
            verdicts=verdicts,
        )

    pairs = [pair("A", "A"), pair("A", "B"), pair("B", "B"), pair("B", "A")] * 5
    plan = jw.label_plan(pairs, budget=4, seed=0)
    inconsistent = plan.table["item"] % 2 == 1
    assert plan.metric == "win_rate"
    assert (plan.table.loc[inconsistent, "probability"] > plan.table.loc[~inconsistent, "probability"].max()).all()
    # A compare_many table reads P(a better) where there is one.
    table = pd.DataFrame(
        {
            "winner": ["A", "B", "tie", "A"],
            "p_a_better": [0.99, 0.02, 0.5, np.nan],
            "winner_ab": ["A", "B", "tie", "A"],
            "winner_ba": ["A", "B", "tie", "tie"],
        }
    )
    plan = jw.label_plan(table, budget=2, seed=0)
    u = plan.table.set_index("item")["uncertainty"]
    assert u[2] == pytest.approx(0.25) and u[3] == pytest.approx(0.75 * 0.25) and u[0] == MIN_UNCERTAINTY
    # Given uncertainty wins over the scores'.
    scores = pd.Series([0.5] * 8)
    given = pd.Series([0.0, 0, 0, 0, 0, 0, 0.2, 0.2])
    plan = jw.label_plan(scores, budget=3, uncertainty=given)
    assert plan.table["probability"].iloc[6] > plan.table["probability"].iloc[0]


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda s: jw.label_plan(s, budget=1), "budget is the number of labels"),
        (lambda s: jw.label_plan(s, budget=2.5), "budget is the number of labels"),
        (lambda s: jw.label_plan(s, budget=500), "more than the 50 items"),
        (lambda s: jw.label_plan(s, budget=5, floor=0), "floor is a share"),
        (lambda s: jw.label_plan(s, budget=5, max_cost=-1), "max_cost"),
        (lambda s: jw.label_plan(s, budget=5, seed="x"), "seed must be an integer"),
        (lambda s: jw.label_plan(s, budget=5, metric="median"), "unknown metric"),
        (lambda s: jw.label_plan(s * 5, budget=5), "outside \\[0, 1\\]"),
        (lambda s: jw.label_plan(s, budget=5, uncertainty=[0.1] * 50), "uncertainty must be a pandas Series"),
        (lambda s: jw.label_plan(s, budget=5, uncertainty=s - 1), "numbers ≥ 0"),
        (lambda s: jw.label_plan(s, budget=5, uncertainty=pd.Series([0.1], index=["x"])), "did not score"),
        (lambda s: jw.label_plan(pd.concat([s, s]), budget=5), "more than once"),
    ],
)
def test_bad_inputs_are_refused_before_anything_is_drawn(call: object, message: str) -> None:
    scores = pd.Series(np.linspace(0.05, 0.95, 50))
    with pytest.raises((jw.InputError, jw.ConfigurationError), match=message):
        call(scores)  # type: ignore[operator]


def test_plan_probabilities_cap_at_one_and_spread_the_rest() -> None:
    u = np.r_[np.full(5, 0.25), np.full(95, 0.0001)]
    probabilities, share, saving, design = plan_probabilities(u, 20, 0.2, 10.0)
    assert saving > 0  # no cost bound: the floor only
    assert design == "active" and share == 0.2 and probabilities.sum() == pytest.approx(20)
    assert (probabilities <= 1).all() and probabilities[:5] == pytest.approx(np.ones(5) * probabilities[0])
    order = draw_order(np.r_[np.ones(3), np.full(7, 0.1)], seed=0)
    assert set(np.argsort(order)[:3]) == {0, 1, 2}  # items certain to be drawn come first
