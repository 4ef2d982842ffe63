"""`jw.estimate_quality`: what it accepts (Series, the package's results), what it refuses (before any work), and
the result it gives (numbers, table, chart)."""

from __future__ import annotations

import json
import re
from typing import Any

import numpy as np
import pandas as pd
import pytest

import judgewidgets as jw
from judgewidgets.estimates import labels_mean, ppi_mean
from judgewidgets.testing import ScriptedTransport

QUALITY = re.compile(r"quality=([0-9.]+)")


def scores_and_labels(N: int = 400, n: int = 40, seed: int = 0) -> tuple[pd.Series, pd.Series]:
    """Judge scores over N items named item-0.., a lenient judge, and labels on n of them."""
    rng = np.random.default_rng(seed)
    truth = rng.uniform(0, 1, N)
    index = [f"item-{i}" for i in range(N)]
    scores = pd.Series(np.clip(truth + rng.normal(0, 0.1, N) + 0.2, 0, 1), index=index)
    labelled = rng.choice(N, n, replace=False)
    return scores, pd.Series(truth[labelled], index=scores.index[labelled])


def test_the_result_holds_the_three_estimates_and_says_what_the_judge_was_worth() -> None:
    scores, labels = scores_and_labels()
    est = jw.estimate_quality(scores, labels)
    assert isinstance(est, jw.QualityEstimate) and est.metric == "mean" and est.confidence == 0.95
    assert est.low < est.estimate < est.high and est.n_items == 400 and est.n_labelled == 40
    assert est.judge_only[0] == pytest.approx(scores.mean())
    assert est.labels_only[0] == pytest.approx(labels.mean())
    assert est.judge_only[0] > est.high  # the lenient judge alone is off, the estimate is not
    unlabelled = scores.drop(labels.index).to_numpy()
    ppi = ppi_mean(labels.to_numpy(), scores[labels.index].to_numpy(), unlabelled)
    assert est.lam == pytest.approx(float(ppi.lam)) and 0 < est.lam <= 1
    labels_var = float(labels_mean(labels.to_numpy()).se) ** 2
    assert est.effective_labels == pytest.approx(40 * labels_var / float(ppi.se) ** 2)
    assert est.effective_labels > 80  # a good judge is worth more labels than were given
    assert est.width < 0.7 * (est.labels_only[2] - est.labels_only[1])
    table = est.to_df()
    assert list(table["method"]) == ["ppi", "labels only", "judge only"]
    assert list(table.columns) == ["method", "estimate", "low", "high", "width", "n", "labels"]
    assert table.loc[0, ["estimate", "low", "high"]].tolist() == [est.estimate, est.low, est.high]
    assert table["width"].tolist() == pytest.approx((table["high"] - table["low"]).tolist())
    assert table["n"].tolist() == [400, 40, 400] and table["labels"].tolist() == [40, 40, 0]
    assert "PPI++" in repr(est) and "worth" in repr(est) and "<table" in est._repr_html_()
    assert est.notes == ()


def test_the_chart_shows_three_intervals_with_tooltips() -> None:
    scores, labels = scores_and_labels()
    spec = jw.estimate_quality(scores, labels).chart().to_dict()
    values = next(iter(spec["datasets"].values()))
    assert [v["method"] for v in values] == ["ppi", "labels only", "judge only"]
    layers = spec["layer"]
    assert {layer["mark"]["type"] for layer in layers} == {"rule", "point"}
    tooltips = {t["field"] for t in layers[0]["encoding"]["tooltip"]}
    assert {"method", "estimate", "low", "high", "width", "n"} <= tooltips


def test_pass_rate_reads_pass_fail_true_false_and_1_0_alike() -> None:
    scores, truth = scores_and_labels(seed=1)
    passed = truth >= 0.5
    results = [
        jw.estimate_quality(scores, labels, "pass_rate", pass_threshold=0.6)
        for labels in (passed, passed.astype(int), passed.map({True: "pass", False: "FAIL"}))
    ]
    assert results[0] == results[1] == results[2]
    assert results[0].pass_threshold == 0.6 and results[0].labels_only[0] == pytest.approx(passed.mean())
    assert results[0].judge_only[0] == pytest.approx((scores >= 0.6).mean())
    as_words = scores.map(lambda s: "pass" if s >= 0.6 else "fail")
    assert jw.estimate_quality(as_words, passed, "pass_rate") == results[0].model_copy(update={"pass_threshold": 0.5})


def same(a: jw.QualityEstimate, b: jw.QualityEstimate) -> bool:
    """The same numbers, up to the order of a sum."""
    return np.allclose(a.to_df().iloc[:, 1:], b.to_df().iloc[:, 1:]) and np.isclose(a.lam, b.lam)


def test_labels_may_come_as_a_labelled_table_or_with_gaps() -> None:
    scores, labels = scores_and_labels()
    table = pd.DataFrame({"label": labels, "who": "me"})
    gappy = labels.reindex(scores.index)  # NaN where unlabelled, in the judge's order
    first = jw.estimate_quality(scores, labels)
    assert jw.estimate_quality(scores, table) == first == jw.estimate_quality(scores, labels.to_dict())
    assert same(jw.estimate_quality(scores, gappy), first)


def test_when_every_item_is_labelled_the_estimate_is_the_labels() -> None:
    scores, labels = scores_and_labels(N=30, n=30)
    est = jw.estimate_quality(scores, labels)
    assert (est.estimate, est.low, est.high) == pytest.approx(est.labels_only)
    assert est.lam == 0 and "every judged item is labelled" in est.notes[0]


def test_unlabelled_items_the_judge_failed_on_are_left_out_with_a_warning() -> None:
    scores, labels = scores_and_labels()
    failed = scores.drop(labels.index).index[:7]
    holes = scores.copy()
    holes[failed] = np.nan
    with pytest.warns(RuntimeWarning, match="no score for 7 of 360 unlabelled items"):
        est = jw.estimate_quality(holes, labels)
    assert est.n_items == 393 and "left out" in est.notes[0]
    assert est.estimate == pytest.approx(jw.estimate_quality(scores.drop(failed), labels).estimate)


def test_a_perfect_judge_on_scores_is_flagged() -> None:
    scores, labels = scores_and_labels()
    exact = scores.copy()
    exact[labels.index] = labels
    est = jw.estimate_quality(exact, labels)
    assert any("equals the label on all 40" in note for note in est.notes)


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda s, y: jw.estimate_quality(s, y, "median"), jw.ConfigurationError, "unknown metric 'median'"),
        (lambda s, y: jw.estimate_quality(s, y, confidence=95), jw.ConfigurationError, "confidence"),
        (lambda s, y: jw.estimate_quality(s, y, "pass_rate", pass_threshold=3), jw.ConfigurationError, "threshold"),
        (lambda s, y: jw.estimate_quality(s, y.iloc[:0]), jw.InputError, "no labels"),
        (lambda s, y: jw.estimate_quality(s, y * np.nan), jw.InputError, "no labels"),
        (lambda s, y: jw.estimate_quality(s, y.iloc[:1]), jw.InputError, "at least 2"),
        (lambda s, y: jw.estimate_quality(s, y * 5), jw.InputError, r"labels do not fit metric 'mean' \(numbers in"),
        (lambda s, y: jw.estimate_quality(s * 4 + 1, y), jw.InputError, "judge scores do not fit metric 'mean'"),
        (lambda s, y: jw.estimate_quality(s, y, "pass_rate"), jw.InputError, "binary: pass/fail"),
        (lambda s, y: jw.estimate_quality(s, y, "win_rate"), jw.InputError, '"A", "B" or "tie"'),
        (lambda s, y: jw.estimate_quality(s.astype(str), y), jw.InputError, "judge scores do not fit"),
        (lambda s, y: jw.estimate_quality(pd.concat([s, s.iloc[:2]]), y), jw.InputError, "more than once"),
        (lambda s, y: jw.estimate_quality(s, "labels"), jw.InputError, "human_labels must be"),
        (lambda s, y: jw.estimate_quality(42, y), jw.InputError, "judge_scores must be"),
        (lambda s, y: jw.estimate_quality(s, pd.DataFrame({"x": y})), jw.InputError, "without a 'label' column"),
    ],
)
def test_each_mistake_is_one_clear_error(call: Any, error: type[Exception], message: str) -> None:
    scores, labels = scores_and_labels()
    with pytest.raises(error, match=message):
        call(scores, labels)


def test_labels_for_items_the_judge_did_not_score_are_named() -> None:
    scores, labels = scores_and_labels()
    stray = pd.concat([labels, pd.Series([0.5] * 7, index=[f"other-{i}" for i in range(7)])])
    with pytest.raises(jw.InputError, match=r"7 labelled item\(s\) were not scored.*'other-0'.*and 2 more"):
        jw.estimate_quality(scores, stray)


def test_missing_judge_scores_on_labelled_items_are_counted() -> None:
    scores, labels = scores_and_labels()
    holes = scores.copy()
    holes[labels.index[:3]] = np.nan
    with pytest.raises(jw.InputError, match=r"no score for 3 labelled item\(s\)"):
        jw.estimate_quality(holes, labels)


def test_a_binary_metric_refuses_a_score_out_of_range_naming_it() -> None:
    scores, labels = scores_and_labels()
    scores.iloc[0] = 1.5
    with pytest.raises(jw.InputError, match=r"1 judge scores do not fit metric 'pass_rate'.*'item-0': 1\.5"):
        jw.estimate_quality(scores, labels >= 0.5, "pass_rate")


def likert(request: Any, attempt: int) -> str:
    """A lenient likert judge: reads the quality q the response states and scores it as 0.3 + 0.7 q."""
    user = next(m["content"] for m in request.messages if m["role"] == "user")
    quality = float(QUALITY.findall(user)[-1])
    return json.dumps({"score": int(np.clip(round(1 + 4 * (0.3 + 0.7 * quality)), 1, 5))})


def test_a_panel_result_gives_its_per_item_aggregate() -> None:
    rng = np.random.default_rng(3)
    quality = rng.uniform(0, 1, 60)
    judges = [
        jw.LLMJudge(
            "openai/scripted",
            template="likert",
            transport=ScriptedTransport(likert),
            cache=False,
            api_key="sk-x",
            name=name,
        )
        for name in ("first", "second")
    ]
    result = jw.LLMPanel(judges).score(
        [f"question {i}" for i in range(60)],
        [f"item-{i} quality={q:.3f}" for i, q in enumerate(quality)],
        progress=False,
    )
    labels = pd.Series(quality[:20], index=range(20))  # positions, as the result's items
    est = jw.estimate_quality(result, labels)
    avg = result.to_df()["avg"]
    assert est.judge_only[0] == pytest.approx(avg.mean()) and est.n_items == 60
    assert est == jw.estimate_quality(avg, labels)
    judge_only = jw.estimate_quality(
        judges[0].score(["q"] * 3, ["quality=0.5"] * 3, progress=False), pd.Series([0.4, 0.6])
    )
    assert judge_only.n_items == 3 and judge_only.judge_only[0] == pytest.approx(0.75)


def test_a_compare_many_table_and_pairwise_results_give_a_win_rate() -> None:
    def prefer_first(request: Any, attempt: int) -> str:  # a judge that always prefers the response shown first
        return json.dumps({"verdict": "A", "confidence": 0.8})

    judge = jw.PairwiseJudge(
        "openai/scripted", method="verdict", transport=ScriptedTransport(prefer_first), cache=False, api_key="sk-x"
    )
    pairs = pd.DataFrame({"question": [f"q{i}" for i in range(12)], "response_a": ["a"] * 12, "response_b": ["b"] * 12})
    table = judge.compare_many(pairs, progress=False)
    assert set(table["winner"]) == {"tie"}  # its verdicts flip with the order: a tie once debiased
    people = pd.Series(["A", "A", "B", "tie", "A", "B"], index=range(6))
    est = jw.estimate_quality(table, people, "win_rate")
    assert est.judge_only[0] == pytest.approx(0.5) and est.labels_only[0] == pytest.approx(3.5 / 6)
    assert est.lam == 0  # verdicts that never vary tell nothing: the estimate is the labels'
    assert (est.estimate, est.low, est.high) == pytest.approx(est.labels_only)
    results = [judge.compare(q, "a", "b") for q in pairs["question"]]
    assert jw.estimate_quality(results, people, "win_rate") == est


def test_a_mean_of_pass_fail_labels_counts_the_pseudo_disagreements_as_a_pass_rate_does() -> None:
    # A judge right on all 30 labelled items but wrong with confidence on a few of the rest: the labels show no
    # disagreement, so without the pseudo-disagreements the interval would have almost no width.
    rng = np.random.default_rng(4)
    scores = pd.Series(np.where(rng.random(600) < 0.8, 1.0, 0.0))
    labelled = scores.iloc[:30]
    mean = jw.estimate_quality(scores, labelled, "mean")
    passed = jw.estimate_quality(scores, labelled.map({1.0: "pass", 0.0: "fail"}), "pass_rate")
    assert mean.width == pytest.approx(passed.width) and mean.width > 0.1
    # Labels that are not all 0 or 1 (scores on [0, 1]) keep the plain small-sample interval.
    graded = jw.estimate_quality(scores, labelled.where(labelled < 1.0, 0.9), "mean")
    assert graded.width < mean.width
