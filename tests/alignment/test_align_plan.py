"""judge.align(labels, plan=plan): the items a plan drew (the judge's uncertain ones first) align the judge, and
the held-out agreement is weighted by 1 / the probability each was drawn with, so it speaks for every item."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import judgewidgets as jw

from .helpers import lenient, likert_judge, pointwise_set


def test_a_plans_labels_align_the_judge_and_the_agreement_is_weighted() -> None:
    data = pointwise_set(240, seed=3)
    judge, _ = likert_judge(lenient)
    result = judge.score(data["prompt"], data["response"], progress=False)
    plan = jw.label_plan(result, budget=50, seed=1, metric="pass_rate")
    queue = jw.labels.LabelQueueModel(result, store=None, plan=plan)
    for item in plan.items:
        queue.label(data["label"][item], row=item)
    outside = next(i for i in data.index if i not in plan.items)
    queue.label(data["label"][outside], row=outside)  # one by hand: aligns, but is not measured on
    labelled = queue.labels
    aligned = judge.align(labelled, label="label", levers=("rule",), plan=plan, progress=False)
    report = aligned.alignment_report
    assert f"weighted by 1 / the probability plan {plan.id} drew each item" in report.summary()
    assert report.chosen["weighted_by"] == plan.id
    after = report.table.set_index("rule").loc["after"]
    assert after["n"] == 50  # the hand label is left out of the measure
    weights = np.array([1 / plan.probability(i) if i in set(plan.items) else 0.0 for i in labelled.index])
    wrong = np.zeros(len(labelled), dtype=bool)
    wrong[report.disagreements.index.to_numpy()] = True
    assert after["accuracy"] == pytest.approx(1 - weights[wrong].sum() / weights.sum(), abs=1e-12)
    unweighted = judge.align(
        labelled.drop(columns=["plan", "probability"]), label="label", levers=("rule",), progress=False
    )
    assert "weighted" not in unweighted.alignment_report.summary()


def test_align_refuses_a_table_that_does_not_name_the_plans_items() -> None:
    data = pointwise_set(60, seed=4)
    judge, _ = likert_judge(lenient)
    scores = pd.Series(np.linspace(0.05, 0.95, 60))
    plan = jw.label_plan(scores, budget=20, seed=0)
    shifted = data.set_axis(range(100, 160))
    with pytest.raises(jw.InputError, match=r"must name plan .* items"):
        judge.align(shifted, label="label", plan=plan, progress=False)
    with pytest.raises(jw.InputError, match="plan must be the LabelPlan"):
        judge.align(data, label="label", plan="abc", progress=False)
