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


def test_a_second_start_certifies_past_an_early_disagreement() -> None:
    from judgewidgets.cascade import Walk

    # The surest rows are right 85 % of the time, the first of them wrong: the paper's walk, starting at the top,
    # fails at once; the second start, where the confidences predict the test passes on the most rows, certifies.
    confidence = np.linspace(0.9, 0.8, 200)
    agrees = np.ones(200, dtype=bool)
    agrees[::7] = False  # 29 of 200 wrong, the first among them
    paper = fit_stage(confidence, agrees, AgreementTest(0.7, 0.1))
    assert paper.threshold is None and paper.tested == 1
    two = fit_stage(confidence, agrees, Walk(0.7, 0.1))
    assert two.threshold is not None and two.trusted >= 100 and two.agreement > 0.8
    assert AgreementTest(0.7, 0.04).p_value(two.trusted, two.trusted - two.agreed) <= 0.04  # at the second's level


def test_the_walk_from_the_top_goes_on_past_the_second_start() -> None:
    from judgewidgets.cascade import Walk

    confidence = np.linspace(0.99, 0.9, 300)  # every verdict right: the walk from the top certifies all the way
    walk = Walk(0.8, 0.1)
    fit = fit_stage(confidence, np.ones(300, dtype=bool), walk)
    assert fit.trusted == 300 and fit.threshold == pytest.approx(0.9)
    assert fit.tested == 300 - walk.top.minimum + 1  # one walk, from the top start down, never restarted


def test_predicted_start_reads_only_the_confidences() -> None:
    from judgewidgets.cascade._calibrate import predicted_start

    trusted = np.arange(1, 201)
    sure = predicted_start(np.full(200, 0.99), trusted, AgreementTest(0.9, 0.05))
    assert sure == 200  # a judge right 99 % of the time: every row
    flat = predicted_start(np.full(200, 0.85), trusted, AgreementTest(0.7, 0.05))
    assert 100 <= flat <= 200
    falling = predicted_start(np.linspace(0.99, 0.3, 200), trusted, AgreementTest(0.8, 0.05))
    assert 40 <= falling <= 140  # beyond where the running agreement falls to the target, no further
