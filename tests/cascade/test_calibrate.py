"""Fixed-sequence testing per stage, on hand-made calibration tables."""

from __future__ import annotations

import numpy as np
import pytest

from judgewidgets.cascade import AgreementTest, fit_cascade, route
from judgewidgets.cascade._calibrate import fit_stage


def column(*runs: tuple[float, int, int]) -> tuple[np.ndarray, np.ndarray]:
    """(confidence, agrees) from runs of (confidence, rows, of which disagree)."""
    confidence, agrees = [], []
    for value, rows, wrong in runs:
        confidence += [value] * rows
        agrees += [False] * wrong + [True] * (rows - wrong)
    return np.array(confidence, dtype=float), np.array(agrees)


def test_walks_down_while_certified_and_stops_at_the_first_failure() -> None:
    test = AgreementTest(0.9, 0.1)
    # 0.99: 30 right (certified: 0.9^30 ≤ 0.1); 0.9: +20 with 10 wrong (fails); 0.8: +200 right (would pass).
    confidence, agrees = column((0.99, 30, 0), (0.9, 20, 10), (0.8, 200, 0))
    fit = fit_stage(confidence, agrees, test)
    assert fit.threshold == 0.99 and fit.trusted == 30 and fit.agreed == 30 and fit.tested == 2
    assert fit.agreement == 1.0


def test_starts_at_the_first_candidate_that_can_certify() -> None:
    test = AgreementTest(0.9, 0.1)  # needs 22 rows
    confidence, agrees = column((0.999, 5, 1), (0.95, 40, 0), (0.5, 50, 25))
    fit = fit_stage(confidence, agrees, test)
    # The 5 top rows alone cannot certify anything; 45 rows with 1 disagreement can.
    assert fit.threshold == 0.95 and fit.trusted == 45 and fit.agreed == 44


def test_a_stage_sure_of_every_verdict_and_often_wrong_trusts_nothing() -> None:
    confidence, agrees = column((1.0, 300, 90))
    assert fit_stage(confidence, agrees, AgreementTest(0.9, 0.1)).threshold is None


def test_no_verdict_is_never_trusted() -> None:
    confidence, agrees = column((0.99, 40, 0))
    confidence[:10] = np.nan
    fit = fit_stage(confidence, agrees, AgreementTest(0.9, 0.1))
    assert fit.trusted == 30 and fit.reached == 40
    assert fit_stage(np.full(5, np.nan), np.ones(5, bool), AgreementTest(0.9, 0.1)).threshold is None


def test_too_few_rows_certify_nothing() -> None:
    confidence, agrees = column((0.99, 21, 0))
    assert fit_stage(confidence, agrees, AgreementTest(0.9, 0.1)).threshold is None


def test_later_stages_see_only_what_earlier_ones_escalated() -> None:
    conf1, ok1 = column((0.95, 40, 0), (0.6, 40, 20))
    conf2, ok2 = column((0.5, 40, 40), (0.9, 40, 0))  # wrong wherever stage 1 is sure, right elsewhere
    fits = fit_cascade(np.column_stack([conf1, conf2]), np.column_stack([ok1, ok2]), 0.9, 0.2)
    assert fits[0].threshold == 0.95 and fits[1].reached == 40
    assert fits[1].threshold == 0.9 and fits[1].trusted == 40
    deciding = route(np.column_stack([conf1, conf2]), [f.threshold for f in fits])
    assert deciding.tolist() == [0] * 40 + [1] * 40


def test_route_skips_untrusting_stages_and_abstains() -> None:
    confidence = np.array([[0.99, 0.2], [0.5, 0.95], [np.nan, 0.95], [0.5, 0.2]])
    assert route(confidence, [0.9, 0.9]).tolist() == [0, 1, 1, -1]
    assert route(confidence, [None, 0.9]).tolist() == [-1, 1, 1, -1]


def test_delta_is_split_over_the_stages() -> None:
    conf, ok = column((0.99, 25, 0))  # 25 rows certify 0.9 at δ = 0.1 (needs 22) but not at 0.05 (needs 29)
    one = fit_cascade(conf[:, None], ok[:, None], 0.9, 0.1)
    two = fit_cascade(np.column_stack([conf, conf]), np.column_stack([ok, ok]), 0.9, 0.1)
    assert one[0].threshold == pytest.approx(0.99) and two[0].threshold is None
