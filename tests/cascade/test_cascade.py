"""A pairwise cascade end to end on scripted judges: calibrate, run, what each item and stage reports."""

from __future__ import annotations

import math

import pandas as pd
import pytest

import judgewidgets as jw
from tests.cascade.helpers import pairs, pairwise_judge


def cheap_p(question: str) -> float:
    """Sure and right on "easy" pairs; unsure on "hard" ones, right on even numbers and wrong on odd."""
    kind, number = question.split()
    if kind == "easy":
        return 0.97
    return 0.55 if int(number) % 2 == 0 else 0.45


def strong_p(question: str) -> float:
    return 0.9


LABELLED = pairs(["easy"] * 50 + ["hard"] * 30)
NEW = pairs(["easy"] * 20 + ["hard"] * 10, offset=1000)


def two_stages(**kwargs) -> jw.Cascade:  # type: ignore[no-untyped-def]
    return jw.Cascade(
        [pairwise_judge(cheap_p, "cheap"), pairwise_judge(strong_p, "strong")],
        target_agreement=0.9,
        delta=0.2,
        **kwargs,
    )


def test_calibration_trusts_each_stage_above_its_certified_threshold() -> None:
    cascade = two_stages()
    calibration = cascade.calibrate(LABELLED, progress=False)
    # Stage 1: its 50 sure verdicts all agree (0.9^50 ≤ 0.1), adding the 30 unsure ones (15 wrong) fails.
    # Stage 2: the 30 escalated rows, all right at 0.9 (0.9^30 = 0.042 ≤ δ/2 = 0.1).
    assert calibration.thresholds == [pytest.approx(0.97), pytest.approx(0.9)]
    table = calibration.table()
    assert table["reached"].tolist() == [80, 30] and table["trusted"].tolist() == [50, 30]
    assert table["agreement_in_sample"].tolist() == [1.0, 1.0]
    assert calibration.coverage == 1.0
    assert "≥ 90.0%" in calibration.guarantee and "80 labelled rows" in calibration.guarantee
    assert cascade.calibration is calibration


def test_run_decides_each_item_at_the_first_confident_stage() -> None:
    cascade = two_stages()
    cascade.calibrate(LABELLED, progress=False)
    strong = cascade.stages[1].judge
    before = len(strong.settings.transport.requests)
    result = cascade.run(NEW, progress=False)
    table = result.to_df()
    assert table["stage"].tolist() == ["cheap"] * 20 + ["strong"] * 10
    assert table["verdict"].tolist() == NEW["label"].tolist()
    assert not table["abstained"].any() and result.coverage == 1.0
    assert table["agrees"].all() and result.agreement == 1.0
    # Easy items cost stage 1's two orders; hard ones four calls (both stages).
    assert table["calls"].tolist() == [2] * 20 + [4] * 10
    assert table["cost_usd"].tolist() == pytest.approx([0.002] * 20 + [0.004] * 10)
    assert len(strong.settings.transport.requests) - before == 20  # only the 10 escalated pairs, both orders
    stages = result.stages().set_index("stage")
    assert stages.loc["cheap", "judged"] == 30 and stages.loc["cheap", "decided"] == 20
    assert stages.loc["strong", "judged"] == 10 and stages.loc["strong", "calls"] == 20
    summary = result.summary()
    assert summary["calls"] == 80 and summary["last_stage_alone_calls"] == 60  # 30 items × 2 orders
    assert summary["calls_saved"] == pytest.approx(1 - 80 / 60)
    assert summary["labelled_decided"] == 30
    judgments = result.judgments
    assert len(judgments) == 40 and judgments["trusted"].sum() == 30


async def test_arun_is_the_async_twin_of_run() -> None:
    cascade = two_stages()
    await cascade.acalibrate(LABELLED, progress=False)
    result = await cascade.arun(NEW, progress=False)
    assert (
        result.coverage == 1.0
        and result.table["stage"].tolist() == cascade.run(NEW, progress=False).table["stage"].tolist()
    )


def test_a_confidently_wrong_stage_is_never_trusted_and_never_called() -> None:
    # P(good better) = 0.5 on every pair: a tie, which no label names, with confidence 1 − |P(a) − P(b)| = 1.
    coin = pairwise_judge(lambda q: 0.5, "coin")
    cascade = jw.Cascade([coin, pairwise_judge(strong_p, "strong")], target_agreement=0.9, delta=0.2)
    calibration = cascade.calibrate(LABELLED, progress=False)
    assert calibration.thresholds[0] is None
    calls_before = len(coin.settings.transport.requests)
    result = cascade.run(NEW, progress=False)
    assert len(coin.settings.transport.requests) == calls_before  # skipped: it certified nothing
    assert set(result.table["stage"]) == {"strong"} and result.agreement == 1.0
    assert result.stages().set_index("stage").loc["coin", "judged"] == 0


def test_the_last_stage_unsure_means_abstaining() -> None:
    cascade = jw.Cascade([pairwise_judge(cheap_p, "cheap")], target_agreement=0.9, delta=0.2)
    cascade.calibrate(LABELLED, progress=False)
    result = cascade.run(NEW, progress=False)
    table = result.table
    assert table["abstained"].tolist() == [False] * 20 + [True] * 10
    assert table.loc[table["abstained"], "verdict"].isna().all()
    assert table.loc[table["abstained"], "agrees"].isna().all()
    assert result.coverage == pytest.approx(20 / 30) and result.agreement == 1.0


def test_abstaining_on_everything_reports_no_saving() -> None:
    """A cascade that decides nothing spent nothing, but that is no saving: the summary says NaN, not 100 %."""
    coin = pairwise_judge(lambda q: cheap_p("hard " + q.split()[1]), "coin")  # right on half the pairs, unsure
    cascade = jw.Cascade([coin], target_agreement=0.9, delta=0.2)
    cascade.calibrate(LABELLED, progress=False)
    summary = cascade.run(NEW, progress=False).summary()
    assert summary["decided"] == 0 and summary["calls"] == 0
    assert math.isnan(summary["calls_saved"]) and math.isnan(summary["seconds_saved"])


def test_unlabelled_run_and_partly_labelled_rows() -> None:
    cascade = two_stages()
    cascade.calibrate(LABELLED, progress=False)
    plain = cascade.run(NEW.drop(columns="label"), progress=False)
    assert "agrees" not in plain.table.columns and pd.isna(plain.agreement)
    partly = NEW.assign(label=[None] * 5 + NEW["label"].tolist()[5:])
    result = cascade.run(partly, progress=False)
    assert result.table["agrees"].isna().sum() == 5 and result.summary()["labelled_decided"] == 25


def test_with_target_refits_without_calls() -> None:
    cascade = two_stages()
    cascade.calibrate(LABELLED, progress=False)
    requests = [len(s.judge.settings.transport.requests) for s in cascade.stages]
    looser = cascade.with_target(0.6)
    assert [len(s.judge.settings.transport.requests) for s in cascade.stages] == requests
    assert looser.target_agreement == 0.6 and looser.calibration is not None
    assert looser.calibration.thresholds[0] == pytest.approx(0.55)  # 65 of 80 agree once the unsure are in
    assert cascade.calibration.thresholds[0] == pytest.approx(0.97)  # the original keeps its own
    stricter = cascade.with_target(0.99)
    assert stricter.calibration.thresholds == [None, None] and stricter.calibration.coverage == 0.0


def test_repr_and_html() -> None:
    cascade = two_stages()
    assert "not calibrated" in repr(cascade)
    cascade.calibrate(LABELLED, progress=False)
    assert "thresholds" in repr(cascade)
    assert "Calibrated" in cascade.calibration._repr_html_()
    html = cascade.run(NEW, progress=False)._repr_html_()
    assert "30 of 30 items decided" in html and "Guarantee" in html
