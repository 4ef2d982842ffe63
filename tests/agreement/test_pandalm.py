"""Real data: the PandaLM human test set (999 pairwise comparisons, three annotators).

Labels: 0 tie, 1 response 1 better, 2 response 2 better. The PandaLM paper (Wang et al., 2023) reports pairwise
Cohen's κ of 0.85 (annotators 1–2), 0.88 (1–3) and 0.86 (2–3), and a majority-label distribution of 105 ties,
422 for response 1 and 472 for response 2. The data is the repository's licensed copy (tests/datasets.py).
"""

from __future__ import annotations

import krippendorff
import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.inter_rater import aggregate_raters
from statsmodels.stats.inter_rater import fleiss_kappa as sm_fleiss_kappa

from judgewidgets.agreement import agreement_report, cohen_kappa, fleiss_kappa, judge_vs_truth, krippendorff_alpha
from tests.datasets import pandalm_testset

ANNOTATORS = ["annotator1", "annotator2", "annotator3"]
PUBLISHED_KAPPA = {
    ("annotator1", "annotator2"): 0.85,
    ("annotator1", "annotator3"): 0.88,
    ("annotator2", "annotator3"): 0.86,
}
PUBLISHED_MAJORITY = {0: 105, 1: 422, 2: 472}
TOL = 1e-9


@pytest.fixture(scope="module")
def ratings() -> pd.DataFrame:
    frame = pd.DataFrame(pandalm_testset())[ANNOTATORS]
    return frame.apply(lambda column: column.astype(str).astype(int))  # labels are "0"/"1"/"2" or 0/1/2


def test_dataset_shape(ratings: pd.DataFrame) -> None:
    assert ratings.shape == (999, 3)
    assert set(np.unique(ratings.to_numpy())) == {0, 1, 2}


@pytest.mark.parametrize("pair", list(PUBLISHED_KAPPA))
def test_pairwise_kappa_equals_sklearn_and_published(ratings: pd.DataFrame, pair: tuple[str, str]) -> None:
    a, b = ratings[pair[0]], ratings[pair[1]]
    ours = cohen_kappa(a, b)
    assert ours == pytest.approx(cohen_kappa_score(a, b), abs=TOL)
    assert ours == pytest.approx(PUBLISHED_KAPPA[pair], abs=0.02)
    # string labels give the same κ: only label identity matters
    assert cohen_kappa(a.astype(str), b.astype(str)) == pytest.approx(ours, abs=TOL)


def test_fleiss_and_alpha_equal_reference_packages(ratings: pd.DataFrame) -> None:
    data = ratings.to_numpy()
    assert fleiss_kappa(ratings) == pytest.approx(sm_fleiss_kappa(aggregate_raters(data)[0]), abs=TOL)
    expected_alpha = krippendorff.alpha(reliability_data=data.T, level_of_measurement="nominal")
    assert krippendorff_alpha(ratings) == pytest.approx(expected_alpha, abs=TOL)
    # the three-annotator figures sit with the published pairwise κ (0.85-0.88)
    assert 0.85 <= fleiss_kappa(ratings) <= 0.88
    assert 0.85 <= krippendorff_alpha(ratings) <= 0.88


def test_majority_distribution_matches_published(ratings: pd.DataFrame) -> None:
    counts = ratings.apply(lambda row: row.value_counts().iloc[0], axis=1)
    assert (counts >= 2).all(), "every item has a majority among three annotators"
    majority = ratings.mode(axis=1)[0].astype(int)
    assert majority.value_counts().sort_index().to_dict() == PUBLISHED_MAJORITY


def test_reports_on_real_data(ratings: pd.DataFrame) -> None:
    report = agreement_report(ratings)
    for row in report.pairs.itertuples():
        assert row.kappa == pytest.approx(PUBLISHED_KAPPA[(row.rater_a, row.rater_b)], abs=0.02)
    assert report.overall.loc["fleiss_kappa", "value"] == pytest.approx(fleiss_kappa(ratings), abs=TOL)
    # annotators 2 and 3 scored against annotator 1 as if it were ground truth
    versus = judge_vs_truth(ratings, "annotator1", n_boot=200, seed=0)
    for row in versus.itertuples():
        assert row.kappa == pytest.approx(cohen_kappa(ratings[row.judge], ratings["annotator1"]), abs=TOL)
        assert row.kappa_low < row.kappa < row.kappa_high
        assert row.kappa_high - row.kappa_low < 0.1
