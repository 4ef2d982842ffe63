"""The cost estimate, the sweep and chart, and the target picker (model and widget, no browser)."""

from __future__ import annotations

import pytest

import judgewidgets as jw
from judgewidgets.cascade import TargetPickerModel
from tests.cascade.helpers import pairs, pairwise_judge
from tests.cascade.test_cascade import LABELLED, NEW, cheap_p, strong_p


@pytest.fixture(scope="module")
def calibrated() -> jw.Cascade:
    cascade = jw.Cascade(
        [pairwise_judge(cheap_p, "cheap"), pairwise_judge(strong_p, "strong")], target_agreement=0.9, delta=0.2
    )
    cascade.calibrate(LABELLED, progress=False)
    return cascade


def test_estimate_before_and_after_calibration(calibrated: jw.Cascade) -> None:
    fresh = jw.Cascade([pairwise_judge(cheap_p, "cheap"), pairwise_judge(strong_p, "strong")])
    before = fresh.estimate_cost(NEW)
    assert not before.calibrated and [s.reach for s in before.stages] == [1.0, 1.0]
    assert [s.calls_all for s in before.stages] == [60, 60]  # 30 pairs, both orders
    assert all(s.prompt_tokens_all > 0 for s in before.stages)
    assert before.total_calls == 120 and before.last_stage_alone_calls == 60
    after = calibrated.estimate_cost(NEW)
    # On the labelled rows 30 of 80 reached the strong judge.
    assert after.calibrated and [s.reach for s in after.stages] == pytest.approx([1.0, 30 / 80])
    assert after.total_calls == pytest.approx(60 + 60 * 30 / 80)
    assert "the last stage alone on every item: 60 calls" in str(after)
    assert list(after.to_df()["stage"]) == ["cheap", "strong"]
    assert sum(len(s.judge.settings.transport.requests) for s in fresh.stages) == 0


def test_estimate_of_a_local_stage_costs_nothing() -> None:
    local = jw.Cascade([jw.PairwiseJudge("local", method="probability")])
    estimate = local.estimate_cost(pairs(["q"] * 3))
    assert estimate.total_usd == 0.0 and estimate.stages[0].calls_all == 6


def test_sweep_and_chart(calibrated: jw.Cascade) -> None:
    sweep = calibrated.calibration.sweep([0.6, 0.9, 0.99])
    assert len(sweep) == 6 and set(sweep["stage"]) == {"cheap", "strong"}
    at = sweep.set_index(["target", "stage"])
    assert at.loc[(0.9, "cheap"), "share"] == pytest.approx(50 / 80)
    assert at.loc[(0.99, "cheap"), "coverage"] == 0.0
    # At 0.9 every labelled row costs the cheap judge's 2 calls, 30 of 80 the strong one's 2 more.
    assert at.loc[(0.9, "cheap"), "relative_calls"] == pytest.approx((160 + 60) / 160)
    spec = calibrated.calibration.chart([0.6, 0.9]).to_dict()
    assert "vconcat" in spec
    assert calibrated.run(NEW, progress=False).chart().to_dict()["vconcat"]


def test_picker_model(calibrated: jw.Cascade) -> None:
    model = TargetPickerModel(calibrated, targets=[0.6, 0.9, 0.95])
    assert model.target == 0.9
    strict = model.set_target(0.99)
    assert strict.thresholds == [None, None] and model.summary()["coverage"] == 0.0
    model.set_target(0.6)
    summary = model.summary()
    assert summary["thresholds"]["cheap"] == pytest.approx(0.55) and summary["shares"]["cheap"] == 1.0
    assert summary["relative_calls"] == pytest.approx(1.0)  # everything decided by the cheap stage
    assert "Target 60%" in model.describe()
    picked = model.picked()
    assert picked.target_agreement == 0.6 and calibrated.target_agreement == 0.9
    with pytest.raises(jw.ConfigurationError):
        model.set_target(1.0)
    with pytest.raises(jw.ConfigurationError, match="calibrate the cascade first"):
        TargetPickerModel(jw.Cascade([pairwise_judge(cheap_p, "x")]))


def test_picker_widget_follows_the_slider(calibrated: jw.Cascade) -> None:
    picker = jw.CascadeTargetPicker(calibrated)
    assert "Target 90%" in picker.details.value
    picker.slider.value = 0.6
    assert "Target 60%" in picker.details.value and picker.model.target == pytest.approx(0.6)
    assert picker.cascade.target_agreement == pytest.approx(0.6)
    assert picker.chart.chart is not None
