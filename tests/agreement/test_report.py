"""agreement_report and judge_vs_truth agree with the single metrics (and so with sklearn/statsmodels)."""

from __future__ import annotations

import html

import numpy as np
import pandas as pd
import pytest
from sklearn import metrics as skm

from judgewidgets import ConfigurationError, InputError
from judgewidgets.agreement import (
    AgreementReport,
    accuracy,
    agreement_report,
    bootstrap_ci,
    cohen_kappa,
    fleiss_kappa,
    judge_vs_truth,
    krippendorff_alpha,
)

TOL = 1e-9


def panel(seed: int, n: int = 150, judges: int = 3, k: int = 3, missing: float = 0.1) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    truth = rng.integers(1, k + 1, n).astype(float)
    frame = pd.DataFrame({"truth": truth})
    for j in range(judges):
        pred = np.where(rng.random(n) < 0.65 + 0.1 * j, truth, rng.integers(1, k + 1, n)).astype(float)
        pred[rng.random(n) < missing] = np.nan
        frame[f"judge_{j + 1}"] = pred
    return frame


@pytest.mark.parametrize(("seed", "level"), [(0, "ordinal"), (1, "interval"), (2, "nominal")])
def test_agreement_report_matches_single_metrics(seed: int, level: str) -> None:
    ratings = panel(seed, judges=4).drop(columns="truth")
    report = agreement_report(ratings, level=level)  # type: ignore[arg-type]
    assert isinstance(report, AgreementReport)
    assert len(report.pairs) == 6
    for row in report.pairs.itertuples():
        a, b = ratings[row.rater_a], ratings[row.rater_b]
        both = a.notna() & b.notna()
        assert row.n_items == both.sum()
        assert row.agreement == pytest.approx(accuracy(a, b), abs=TOL)
        assert row.kappa == pytest.approx(skm.cohen_kappa_score(a[both], b[both]), abs=TOL)
        for weights in ("linear", "quadratic"):
            expected = skm.cohen_kappa_score(a[both], b[both], weights=weights)
            assert getattr(row, f"kappa_{weights}") == pytest.approx(expected, abs=TOL)
    overall = report.overall["value"]
    assert overall["fleiss_kappa"] == pytest.approx(fleiss_kappa(ratings), abs=TOL)
    assert overall["krippendorff_alpha"] == pytest.approx(krippendorff_alpha(ratings, level=level), abs=TOL)  # type: ignore[arg-type]
    assert overall["mean_pairwise_kappa"] == pytest.approx(report.pairs["kappa"].mean(), abs=TOL)
    assert "<table" in report._repr_html_()


def test_agreement_report_string_labels() -> None:
    ratings = pd.DataFrame({"x": ["lo", "hi", "mid", None], "y": ["lo", "mid", "mid", "hi"], "z": [None] * 4})
    report = agreement_report(ratings)
    assert report.pairs["kappa_linear"].isna().all()
    assert report.pairs.loc[1:, "n_items"].eq(0).all() and report.pairs.loc[1:, "kappa"].isna().all()
    (note,) = report.notes  # the NaN columns come with their reason
    assert "no order" in note and "labels=[" in note and note in html.unescape(report._repr_html_())
    ordered = agreement_report(ratings, labels=["lo", "mid", "hi"])
    assert ordered.notes == ()
    expected = cohen_kappa(ratings["x"], ratings["y"], weights="linear", labels=["lo", "mid", "hi"])
    assert ordered.pairs.loc[0, "kappa_linear"] == pytest.approx(expected, abs=TOL)
    with pytest.raises(ConfigurationError, match="unknown level"):
        agreement_report(ratings, level="fuzzy")  # type: ignore[arg-type]


def test_judge_vs_truth_point_estimates_match_sklearn() -> None:
    frame = panel(2)
    table = judge_vs_truth(frame, "truth", positive=3.0, ordinal=True, n_boot=200, seed=1)
    assert list(table["judge"]) == ["judge_1", "judge_2", "judge_3"]
    for row in table.to_dict("records"):
        both = frame[row["judge"]].notna()
        p, t = frame.loc[both, row["judge"]], frame.loc[both, "truth"]
        assert row["n_items"] == both.sum()
        assert row["accuracy"] == pytest.approx(skm.accuracy_score(t, p), abs=TOL)
        assert row["kappa"] == pytest.approx(skm.cohen_kappa_score(t, p), abs=TOL)
        assert row["macro_f1"] == pytest.approx(skm.f1_score(t, p, average="macro"), abs=TOL)
        assert row["precision"] == pytest.approx(skm.precision_score(t, p, labels=[3.0], average=None)[0], abs=TOL)
        assert row["recall"] == pytest.approx(skm.recall_score(t, p, labels=[3.0], average=None)[0], abs=TOL)
        assert row["kappa_quadratic"] == pytest.approx(skm.cohen_kappa_score(t, p, weights="quadratic"), abs=TOL)
        assert row["mae"] == pytest.approx(skm.mean_absolute_error(t, p), abs=TOL)
        assert row["adjacent_accuracy"] == pytest.approx(np.mean(np.abs(p - t) <= 1), abs=TOL)
        for metric in ("accuracy", "kappa", "macro_f1", "f1", "spearman", "rmse"):
            assert row[f"{metric}_low"] <= row[metric] <= row[f"{metric}_high"], metric


def test_judge_vs_truth_intervals_equal_bootstrap_ci() -> None:
    frame = panel(3, missing=0.0)
    table = judge_vs_truth(frame, frame["truth"], judges=["judge_2"], n_boot=300, seed=4).iloc[0]
    p, t = frame["judge_2"].to_numpy(), frame["truth"].to_numpy()
    for metric, fn in (("accuracy", accuracy), ("kappa", cohen_kappa)):
        ci = bootstrap_ci(fn, p, t, n=300, seed=4)
        assert (table[f"{metric}_low"], table[f"{metric}_high"]) == pytest.approx((ci.low, ci.high), abs=1e-12)


def test_judge_vs_truth_shapes_and_errors() -> None:
    frame = panel(5)
    frame["silent"] = np.nan
    table = judge_vs_truth(frame, "truth", n_boot=0)
    assert list(table.columns) == ["judge", "n_items", "accuracy", "kappa", "macro_f1"]
    silent = table.set_index("judge").loc["silent"]
    assert silent["n_items"] == 0 and np.isnan(silent["accuracy"])
    with_ci = judge_vs_truth(frame[["silent"]], frame["truth"], n_boot=10)
    assert np.isnan(with_ci.loc[0, "kappa_high"])
    with pytest.raises(InputError, match="not columns"):
        judge_vs_truth(frame, "truth", judges=["nobody"])
    with pytest.raises(InputError, match="differ in length"):
        judge_vs_truth(frame, [1, 2, 3])
    with pytest.raises(ConfigurationError, match="n_boot"):
        judge_vs_truth(frame, "truth", n_boot=-1)
    with pytest.raises(InputError, match="positive label"):
        judge_vs_truth(frame, "truth", positive="yes", n_boot=0)
