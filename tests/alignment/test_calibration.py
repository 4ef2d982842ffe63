"""The isotonic calibration agrees with scikit-learn's and keeps its promises."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.isotonic import IsotonicRegression

import judgewidgets as jw
from judgewidgets.alignment._calibration import isotonic_fit


@pytest.mark.parametrize("seed", range(5))
def test_matches_scikit_learn(seed: int) -> None:
    rng = np.random.default_rng(seed)
    x = rng.choice(np.linspace(0, 1, 9), size=80)  # tied scores, as probability-weighted judges give
    y = (rng.uniform(size=80) < x).astype(float)
    ours = jw.ScoreCalibration.fit(x, y, prior=0)
    theirs = IsotonicRegression(y_min=0, y_max=1, out_of_bounds="clip").fit(x, y)
    grid = np.linspace(-0.1, 1.1, 50)
    np.testing.assert_allclose(ours.apply(grid), theirs.predict(grid), atol=1e-12)


def test_the_prior_keeps_a_few_labels_from_claiming_certainty() -> None:
    calibration = jw.ScoreCalibration.fit([0.1, 0.2, 0.8, 0.9, 0.95], [0, 0, 1, 1, 1])
    assert calibration(0.95) == pytest.approx(3.5 / 4)  # three passes and one pseudo-label of 0.5
    assert calibration(0.1) == pytest.approx(0.5 / 3)  # two fails and the pseudo-label
    assert jw.ScoreCalibration.fit([0.1, 0.9], [0, 1], prior=0)(0.9) == 1.0


@pytest.mark.parametrize("seed", range(5))
def test_with_a_prior_it_still_never_decreases(seed: int) -> None:
    rng = np.random.default_rng(seed)
    x = rng.uniform(size=40)
    y = (rng.uniform(size=40) < x).astype(float)
    values = jw.ScoreCalibration.fit(x, y).apply(np.linspace(0, 1, 101))
    assert np.all(np.diff(values) >= -1e-12) and values.min() > 0 and values.max() < 1


def test_never_decreases_and_keeps_nan() -> None:
    calibration = jw.ScoreCalibration.fit([0.9, 0.1, 0.5, 0.7], [0, 0, 1, 1])
    values = calibration.apply(np.linspace(0, 1, 21))
    assert np.all(np.diff(values) >= 0)
    assert np.isnan(calibration(float("nan")))
    assert np.isnan(calibration.apply([np.nan])[0])


def test_round_trips_as_plain_numbers() -> None:
    calibration = jw.ScoreCalibration.fit([0.2, 0.4, 0.8], [0, 1, 1])
    assert jw.ScoreCalibration.model_validate_json(calibration.model_dump_json()) == calibration


def test_rejects_decreasing_knots() -> None:
    with pytest.raises(jw.ConfigurationError, match="must not decrease"):
        jw.ScoreCalibration(x=(0.0, 1.0), y=(1.0, 0.0))
    assert isotonic_fit(np.array([0.0, 1.0]), np.array([1.0, 0.0]))[1].tolist() == [0.5, 0.5]


def test_the_pair_rule_reads_confidence_as_the_judge_reports_it() -> None:
    from judgewidgets.alignment._rules import PairRule
    from judgewidgets.pairwise._records import decide

    p = np.append(np.linspace(0, 1, 101), np.nan)
    for lean, margin in [(0.0, 0.0), (0.1, 0.2), (-0.25, 0.06)]:
        rule = PairRule(lean, margin)
        confidence, predicted = rule.confidence(p), rule.predict(p)
        for value, got, code in zip(p[:-1], confidence, predicted):
            winner, expected = decide(min(1.0, max(0.0, value - lean)), margin)
            assert got == pytest.approx(expected) and ("A", "B", "tie")[code] == winner
        assert np.isnan(confidence[-1])


def test_agreement_calibration_maps_each_kind_of_verdict_alone() -> None:
    from judgewidgets.alignment import AgreementCalibration

    ties = [True] * 6 + [False] * 8
    confidence = [1.0, 0.98, 0.96, 0.94, 0.92, 0.9, 0.55, 0.6, 0.65, 0.7, 0.8, 0.85, 0.9, 0.95]
    agrees = [False] * 5 + [True] + [False, True, False, True, True, True, True, True]
    calibration = AgreementCalibration.fit(ties, confidence, agrees)
    assert calibration(True, 1.0) < 0.3  # sure ties, rarely a person's tie
    assert calibration(False, 0.95) > 0.8 > calibration(False, 0.55)
    assert calibration(False, float("nan")) != calibration(False, float("nan"))
    only_decisive = AgreementCalibration.fit([False, False], [0.6, 0.9], [False, True])
    assert only_decisive.tie is None and only_decisive(True, 0.99) == 0.5  # never seen: no claim either way
    again = AgreementCalibration.model_validate(calibration.model_dump())
    assert again == calibration
    with pytest.raises(jw.ConfigurationError):
        AgreementCalibration(decisive={"x": [0.5, 0.4], "y": [0.1, 0.2]})
