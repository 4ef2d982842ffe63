"""Aligned judges as cascade stages: the confidence a stage reads is the judge's calibrated chance that the person
agrees, applied once by the judge itself, and a stage is never certified on the rows it was aligned on."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import judgewidgets as jw
from judgewidgets.alignment import AgreementCalibration
from judgewidgets.labels import item_key
from judgewidgets.pairwise._batch import pairs_from
from tests.alignment.helpers import likert_judge, pointwise_set
from tests.cascade.helpers import pairs, pairwise_judge

# P(the good response is better), by the kind of pair: sure and right on easy pairs, and an even split on hard
# ones, which the judge calls a tie with confidence 1 − |lead| = 1, although people named a winner in every pair:
# the sure ties sit above every right verdict.
P_GOOD = {"easy": 0.9, "hard": 0.5}


def p_good(question: str) -> float:
    return P_GOOD[question.split()[0]]


ALIGN = pairs(["easy"] * 30 + ["hard"] * 14)
CALIBRATE = pairs(["easy"] * 60 + ["hard"] * 28, offset=100)
NEW = pairs(["easy"] * 12 + ["hard"] * 10, offset=500)


def aligned_judge() -> jw.PairwiseJudge:
    return pairwise_judge(p_good, "judge").align(ALIGN, levers=("rule",), progress=False)


def test_an_aligned_pairwise_judge_reports_its_calibrated_confidence() -> None:
    aligned = aligned_judge()
    calibration = aligned.calibration
    assert isinstance(calibration, AgreementCalibration)
    items, _ = pairs_from(ALIGN, None, None, None)
    assert set(calibration.items) == {item_key(item) for item in items}
    table = aligned.compare_many(NEW, progress=False)
    by_kind = table.assign(kind=[q.split()[0] for q in NEW["question"]]).groupby("kind")["confidence"]
    assert by_kind.min()["easy"] > 0.8 > by_kind.max()["hard"]  # its sure ties now fall below its right verdicts
    result = aligned.compare("hard 1", "good 1", "bad 1")
    assert result.uncalibrated_confidence is not None
    assert result.confidence == pytest.approx(calibration(result.winner == "tie", result.uncalibrated_confidence))
    own = aligned.with_options(calibration=None).compare("hard 1", "good 1", "bad 1")  # the same lean, uncalibrated
    assert own.uncalibrated_confidence is None and own.confidence == pytest.approx(result.uncalibrated_confidence)
    assert own.winner == result.winner  # calibrating changes no verdict


def test_aligned_stages_certify_where_the_raw_judge_cannot() -> None:
    raw = jw.Cascade([pairwise_judge(p_good, "raw")], target_agreement=0.8, delta=0.1)
    assert raw.calibrate(CALIBRATE, progress=False).thresholds == [None]  # the sure ties end the walk at once
    aligned = aligned_judge()
    cascade = jw.Cascade([aligned], target_agreement=0.8, delta=0.1, names=["aligned"])
    assert "calibrated" in cascade.sources[0]
    calibration = cascade.calibrate(CALIBRATE, progress=False)
    assert calibration.thresholds[0] is not None
    # one path: what the stage was calibrated on is the confidence the aligned judge itself reports
    own = aligned.compare_many(CALIBRATE, progress=False)["confidence"].to_numpy()
    assert calibration.confidence[:, 0] == pytest.approx(own)
    result = cascade.run(NEW, progress=False)
    decided = result.table[~result.table["abstained"]]
    assert set(decided["question"].str.split().str[0]) == {"easy"} and result.coverage == pytest.approx(12 / 22)
    assert result.agreement == 1.0


def test_a_cascade_refuses_rows_a_stage_was_aligned_on() -> None:
    aligned = aligned_judge()
    calls = len(aligned.settings.transport.requests)
    cascade = jw.Cascade([aligned, pairwise_judge(p_good, "other")], target_agreement=0.8, delta=0.2)
    mixed = pd.concat([CALIBRATE.head(30), ALIGN.head(5)], ignore_index=True)
    with pytest.raises(jw.InputError, match=r"aligned on 5 of these 35 labelled rows \(rows 30, 31, 32, 33, 34\)"):
        cascade.calibrate(mixed, progress=False)
    assert len(aligned.settings.transport.requests) == calls  # before any call
    renamed = jw.Cascade([aligned.with_options(name="renamed")], target_agreement=0.8, delta=0.2)
    with pytest.raises(jw.InputError, match="renamed"):  # the calibration travels with the judge's copies
        renamed.calibrate(ALIGN, progress=False)


def test_an_aligned_pointwise_judge_is_confident_by_its_calibrated_p_pass() -> None:
    # The lenient likert judge gives no probabilities: as given it has no confidence at all; aligned, its score
    # is P(pass) and the stage's confidence is P(pass) for a pass, 1 − P(pass) for a fail.
    judge, _ = likert_judge(lambda request: 3)
    raw = jw.Cascade([judge], target_agreement=0.8, delta=0.1, pass_threshold=0.5)
    with pytest.raises(jw.ConfigurationError, match="no confident verdict"):
        raw.calibrate(pointwise_set(60, seed=3), progress=False)
    lenient, _ = likert_judge(_lenient_steps)
    aligned = lenient.align(pointwise_set(60, seed=0), levers=("rule",), progress=False)
    assert aligned.calibration is not None and len(aligned.calibration.items) == 60
    cascade = jw.Cascade([aligned], target_agreement=0.8, delta=0.1, pass_threshold=0.5)
    assert "calibrated" in cascade.sources[0]
    labelled = pointwise_set(80, seed=1)
    calibration = cascade.calibrate(labelled, progress=False)
    scores = np.array(aligned.score(labelled["prompt"], labelled["response"], progress=False).score_list)
    assert calibration.confidence[:, 0] == pytest.approx(np.maximum(scores, 1 - scores))
    verdicts = np.where(scores >= 0.5, "pass", "fail")
    assert calibration.agrees[:, 0].tolist() == (verdicts == labelled["label"].to_numpy()).tolist()
    assert calibration.thresholds[0] is not None and calibration.coverage > 0.5


def _lenient_steps(request: object) -> int:
    """A lenient judge on a 1–5 scale: everything above quality 0.3 looks good to it."""
    from tests.alignment.helpers import judged_quality

    quality = judged_quality(request)
    return 1 if quality < 0.15 else 2 if quality < 0.3 else 4 if quality < 0.5 else 5
