import pytest

from judgewidgets.rubrics import CriterionResult
from judgewidgets.rubrics import CriterionVerdict as V
from judgewidgets.rubrics._scoring import score


def binary(verdict: V, weight: float) -> CriterionResult:
    return CriterionResult(name="c", requirement="c", weight=weight, scale_type="binary", verdict=verdict)


ISSUE = [binary(V.MET, 5), binary(V.CANNOT_ASSESS, 10), binary(V.UNMET, 3)]


@pytest.mark.parametrize(
    ("mode", "expected"), [("skip", 0.625), ("zero", 0.2778), ("partial", 0.5556), ("fail", 0.2778)]
)
def test_issue_example(mode: str, expected: float) -> None:
    assert score(ISSUE, [0.0] * 3, mode) == pytest.approx(expected, abs=1e-4)


def test_negative_weights() -> None:
    results = [binary(V.MET, 4), binary(V.MET, -2)]
    assert score(results, [0, 0]) == pytest.approx(0.5)
    assert score([binary(V.UNMET, -2)], [0]) == 1.0  # only penalties, none applied
    assert score([binary(V.MET, -2), binary(V.UNMET, -2)], [0, 0]) == pytest.approx(0.5)
    assert score([binary(V.MET, 1), binary(V.MET, -5)], [0, 0]) == 0.0  # clamped
    assert score([binary(V.CANNOT_ASSESS, -2)], [0], "fail") == 0.0
    assert score([binary(V.CANNOT_ASSESS, -2), binary(V.MET, 2)], [0, 0], "partial") == 1.0


def test_multi_choice_values_and_raw_score() -> None:
    results = [
        CriterionResult(name="q", requirement="q", weight=10, scale_type="ordinal", selected_index=2, value=0.67),
        binary(V.MET, 5),
    ]
    assert score(results, [0.0, 0.0]) == pytest.approx((6.7 + 5) / 15)
    assert score(results, [0.0, 0.0], normalize=False) == pytest.approx(11.7)


def test_nothing_scored_is_none() -> None:
    assert score([binary(V.CANNOT_ASSESS, 3)], [0]) is None
    assert score([], []) is None
