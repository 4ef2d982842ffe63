"""jw.compare on constructed runs whose differences are known: per-item changes, paired intervals (their coverage
checked by simulation), exact tests, unmatched items and judges, the regression gate and the chart."""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.stats import binomtest, norm
from scipy.stats import t as t_dist

import judgewidgets as jw
from judgewidgets._records import Item, Vote
from judgewidgets.runs import paired_bootstrap, sign_test
from judgewidgets.runs._stats import expanded_alpha

from .helpers import PROMPTS, RESPONSES, judge, make, pairwise

N = 40
QUESTIONS = [f"question {i}" for i in range(N)]
BEFORE = np.round(np.linspace(0.25, 1.0, N) % 1.0, 2)


def run(
    scores: np.ndarray | list[float],
    prompts: list[str] = QUESTIONS,
    responses: list[str] | None = None,
    judge_name: str = "j",
    why: str = "because",
) -> jw.JudgeResult:
    """A judge's result with the given scores (NaN: a failed vote), built without a call."""
    responses = responses or [f"answer to {p}" for p in prompts]
    items = [Item(p, r) for p, r in zip(prompts, responses)]
    votes = [
        Vote(
            item=i,
            judge=judge_name,
            score=float(s),
            explanation=None if math.isnan(s) else f"{why} {i}",
            error="parse: no score" if math.isnan(s) else None,
        )
        for i, s in enumerate(scores)
    ]
    return jw.JudgeResult(items, votes, judge_name)


def known_change() -> tuple[np.ndarray, np.ndarray]:
    """Items 0-4 fall by 0.25·(k+1) (capped at 0), items 10-19 rise by 0.1 (capped at 1), the rest stay."""
    after = BEFORE.copy()
    for k in range(5):
        after[k] = max(0.0, BEFORE[k] - 0.25 * (k + 1))
    after[10:20] = np.minimum(1.0, BEFORE[10:20] + 0.1)
    return BEFORE, after


def test_per_item_changes_and_the_summary_are_exact() -> None:
    before, after = known_change()
    cmp = jw.compare(run(before), run(after, why="now"))
    items = cmp.to_df()
    assert len(items) == N and items["judge"].unique().tolist() == ["j"]
    assert np.allclose(items["delta"], after - before)
    expected = np.where(after > before, "better", np.where(after < before, "worse", "same"))
    assert items["change"].tolist() == expected.tolist()
    main = cmp.summary.set_index("metric").loc["mean_score"]
    d = after - before
    assert main["change"] == pytest.approx(d.mean()) and main["before"] == pytest.approx(before.mean())
    assert main["low"] < main["change"] < main["high"]
    assert main["p_value"] == pytest.approx(binomtest(int((d > 0).sum()), int((d != 0).sum())).pvalue)
    assert (main["better"], main["worse"], main["same"], main["n"]) == ((d > 0).sum(), (d < 0).sum(), (d == 0).sum(), N)
    passing = cmp.summary.set_index("metric").loc["pass_rate"]
    pb, pa = before >= 0.5, after >= 0.5
    assert passing["change"] == pytest.approx(pa.mean() - pb.mean())
    discordant = int((pa & ~pb).sum()), int((pb & ~pa).sum())
    assert passing["p_value"] == pytest.approx(binomtest(discordant[0], sum(discordant)).pvalue)  # exact McNemar


def test_regressions_come_worst_first_with_their_texts_and_explanations() -> None:
    before, after = known_change()
    cmp = jw.compare(run(before), run(after, why="now"))
    worst = cmp.regressions()
    assert worst["delta"].is_monotonic_increasing and len(worst) == int((after < before).sum())
    first = worst.iloc[0]
    k = int(np.argmin(after - before))
    assert first["input"] == QUESTIONS[k] and first["response_after"] == f"answer to {QUESTIONS[k]}"
    assert first["explanation_before"] == f"because {k}" and first["explanation_after"] == f"now {k}"
    best = cmp.improvements(n=3)
    assert len(best) == 3 and best["delta"].is_monotonic_decreasing and (best["delta"] > 0).all()


def test_items_in_one_run_only_are_reported_and_failed_votes_are_unscored() -> None:
    before = run(BEFORE)
    kept = [*range(3, N), 0]  # items 1 and 2 are gone, item 0 moved to the end, one item is new
    scores = [BEFORE[i] for i in kept] + [0.5]
    scores[0] = math.nan  # item 3 failed in the new run
    after = run(scores, prompts=[QUESTIONS[i] for i in kept] + ["a new question"])
    cmp = jw.compare(before, after)
    assert cmp.only_before["input" if "input" in cmp.only_before else "prompt"].tolist() == QUESTIONS[1:3]
    assert cmp.only_before["position"].tolist() == [1, 2]
    assert cmp.only_after["prompt"].tolist() == ["a new question"]
    row = cmp.summary.set_index("metric").loc["mean_score"]
    assert row["n"] == N - 3 and row["unscored"] == 1 and row["change"] == pytest.approx(0.0)
    assert cmp.items.set_index("input").loc[QUESTIONS[3], "change"] == "unscored"
    assert "2 only before, 1 only after" in cmp.describe()


def test_items_match_on_what_was_asked_by_default_or_as_told() -> None:
    new_answers = run(BEFORE, responses=[f"a better answer to {p}" for p in QUESTIONS])
    assert jw.compare(run(BEFORE), new_answers).settings["paired"] == N
    with pytest.raises(jw.InputError, match=r"no item of .* is in"):
        jw.compare(run(BEFORE), new_answers, on="item")
    shuffled = list(reversed(range(N)))
    reordered = run(BEFORE[shuffled], prompts=[QUESTIONS[i] for i in shuffled])
    by_position = jw.compare(run(BEFORE), reordered, on="position")
    assert by_position.settings["paired"] == N and not np.allclose(by_position.items["delta"], 0)
    by_ids = jw.compare(run(BEFORE), run(BEFORE, prompts=[f"q{i}" for i in range(N)]), ids=(range(N), range(N)))
    assert np.allclose(by_ids.items["delta"], 0)
    twice = run([0.2, 0.4, 0.9], prompts=["same", "same", "other"])
    again = run([0.3, 0.4, 0.9], prompts=["same", "same", "other"])
    paired = jw.compare(twice, again).items  # repeated prompts pair in order of appearance
    assert paired["delta"].round(6).tolist() == [0.1, 0.0, 0.0]


def test_panels_compare_overall_and_per_judge_and_name_judges_in_one_run_only() -> None:
    before = jw.LLMPanel([judge("a"), judge("b")]).score(PROMPTS, RESPONSES, progress=False)
    after = jw.LLMPanel([judge("a"), judge("c")]).score(PROMPTS, [f"{r} score=2" for r in RESPONSES], progress=False)
    cmp = jw.compare(before, after)
    assert cmp.judges == ["overall", "a"]
    assert cmp.judges_only_before == ["b"] and cmp.judges_only_after == ["c"]
    a = cmp.summary[(cmp.summary["judge"] == "a") & (cmp.summary["metric"] == "mean_score")].iloc[0]
    assert a["change"] == pytest.approx(0.25 - 0.75) and a["worse"] == len(PROMPTS)
    old, new = (judge(name).score(PROMPTS, RESPONSES, progress=False) for name in ("old", "new"))
    single = jw.compare(old, new)
    assert single.judges == ["old → new"]


def test_pairwise_tables_compare_win_rates() -> None:
    before = pairwise().compare_many(PROMPTS, RESPONSES, ["baseline"] * 4, progress=False)
    assert before["winner"].tolist() == ["tie"] * 4  # the scripted judge always says "A": the orders disagree
    after = before.copy()
    after["winner"] = ["B", "tie", "A", "A"]
    cmp = jw.compare(before, after)
    assert cmp.metric == "win_rate" and cmp.summary["metric"].tolist() == ["win_rate"]
    row = cmp.summary.iloc[0]
    assert row["before"] == 0.5 and row["after"] == pytest.approx(0.625)
    assert (row["worse"], row["same"], row["better"]) == (1, 1, 2) and cmp.judges == ["pj"]


def test_saved_runs_compare_by_path_and_the_same_seed_gives_the_same_interval(tmp_path: Path) -> None:
    before, after = known_change()
    run(before).save(tmp_path / "v1")
    run(after).save(tmp_path / "v2")
    cmp = jw.compare(tmp_path / "v1", tmp_path / "v2", seed=7)
    assert cmp.names == ("v1", "v2") and "v1 → v2" in cmp.describe()
    same = jw.compare(run(before), run(after), seed=7)
    other = jw.compare(run(before), run(after), seed=8)
    assert same.summary[["low", "high"]].equals(cmp.summary[["low", "high"]])
    assert not other.summary[["low", "high"]].equals(cmp.summary[["low", "high"]])


def test_the_paired_bootstrap_covers_the_true_change_at_its_level() -> None:
    """Simulated pairs of runs of 60 items (before uniform on [0.2, 0.8]; after = before + a change of mean 0.05
    and sd 0.08 per item): end to end, the 95 % interval of `jw.compare` covers the true change in 92–98 % of 400
    runs (measured: 92.5 %) and is less than half as wide as an unpaired interval (the items' own spread cancels
    out); the bootstrap itself covers it in 93.5–96.5 % of 2,000 more runs (measured: 95.6 %)."""
    rng = np.random.default_rng(27)
    covered, widths = 0, []
    for trial in range(400):
        base = rng.uniform(0.2, 0.8, 60)
        before = pd.DataFrame({"prompt": [f"q{i}" for i in range(60)], "score": base})
        after = before.assign(score=base + rng.normal(0.05, 0.08, 60))
        row = jw.compare(before, after, seed=trial, n_boot=1000).summary.iloc[0]
        covered += row["low"] <= 0.05 <= row["high"]
        widths.append(row["high"] - row["low"])
    assert 0.92 <= covered / 400 <= 0.98, covered
    unpaired = 2 * 1.96 * np.sqrt(2 * 0.6**2 / 12 / 60)  # two independent means of uniform(0.2, 0.8) scores
    assert np.mean(widths) < 0.5 * unpaired
    hits = 0
    for trial in range(2000):
        _, low, high = paired_bootstrap(rng.normal(0.05, 0.08, 60), n_boot=1000, seed=trial)
        hits += low <= 0.05 <= high
    assert 0.935 <= hits / 2000 <= 0.965, hits


def test_the_statistics_match_their_definitions() -> None:
    for n in (5, 60):  # Hesterberg's expanded percentile level, beside scipy's quantiles
        z = np.sqrt(n / (n - 1)) * t_dist.ppf(0.975, n - 1)
        assert expanded_alpha(0.05, n) == pytest.approx(2 * (1 - norm.cdf(z)), rel=1e-6)
    d = np.array([0.2, -0.1, 0.0, 0.3, 0.3, 0.1, -0.2, 0.4])
    estimate, low, high = paired_bootstrap(d, n_boot=20000, seed=1)
    means = np.array([d[np.random.default_rng(s).integers(0, 8, 8)].mean() for s in range(20000)])
    tail = expanded_alpha(0.05, 8) / 2
    assert estimate == pytest.approx(d.mean()) and low == pytest.approx(np.quantile(means, tail), abs=0.01)
    assert high == pytest.approx(np.quantile(means, 1 - tail), abs=0.01)
    assert all(math.isnan(v) for v in paired_bootstrap(np.array([0.1]))[1:])  # one item: no interval
    assert sign_test(np.zeros(4)) == 1.0 and sign_test(d) == pytest.approx(binomtest(5, 7).pvalue)
    many = np.r_[np.ones(700), -np.ones(560)]
    assert sign_test(many) == pytest.approx(binomtest(700, 1260).pvalue, rel=1e-9)


def test_assert_no_regression_passes_within_the_margin_and_names_the_worst_items() -> None:
    before, after = known_change()
    improved = jw.compare(run(before), run(np.minimum(before + 0.05, 1.0)))
    improved.assert_no_regression()
    mixed = jw.compare(run(before), run(after, why="now"))
    change = mixed.summary.iloc[0]["change"]
    assert change < 0
    mixed.assert_no_regression(margin=-change + 0.001)
    with pytest.raises(jw.RegressionError) as caught:
        mixed.assert_no_regression(margin=0.01)
    message = str(caught.value)
    k = int(np.argmin(after - before))
    assert isinstance(caught.value, AssertionError) and "j mean_score" in message
    assert f"1. '{QUESTIONS[k]}'" in message and f"now {k}" in message
    assert caught.value.failures["judge"].tolist() == ["j"] and len(caught.value.worst) == 5
    with pytest.raises(jw.RegressionError):  # non-inferiority: the interval must clear the margin too
        mixed.assert_no_regression(margin=-change + 0.001, rule="interval")
    with pytest.raises(jw.InputError, match="no metric 'win_rate'"):
        mixed.assert_no_regression(metric="win_rate")
    with pytest.raises(jw.ConfigurationError):
        mixed.assert_no_regression(margin=float("nan"))


def test_the_chart_draws_every_item_with_tooltips() -> None:
    before, after = known_change()
    cmp = jw.compare(run(before), run(after))
    spec = cmp.chart().to_dict()
    slope = spec["vconcat"][0]["hconcat"][0]
    data = next(rows for rows in spec["datasets"].values() if "run" in rows[0])
    assert len(data) == 2 * N and {d["run"] for d in data} == {"before", "after"}
    tooltips = [t["field"] for t in slope["layer"][1]["encoding"]["tooltip"]]
    assert {"input", "response", "explanation", "score"} <= set(tooltips)
    assert "paired-bootstrap" in spec["vconcat"][1]["title"]
    html = cmp._repr_html_()
    assert "Worst regressions" in html and "paired bootstrap" in html


def test_what_cannot_be_compared_says_so() -> None:
    with pytest.raises(jw.InputError, match="cannot compare a dict item by item"):
        jw.compare({}, {})
    with pytest.raises(jw.InputError, match="cannot compare a win_rate run with a mean_score run"):
        jw.compare(pairwise().compare_many(PROMPTS, RESPONSES, RESPONSES, progress=False), run(BEFORE))
    with pytest.raises(jw.ConfigurationError, match="n_boot"):
        jw.compare(run(BEFORE), run(BEFORE), n_boot=10)
    with pytest.raises(jw.InputError, match="4 ids for a run of 40 items"):
        jw.compare(run(BEFORE), run(BEFORE), ids=(range(4), range(4)))


def test_cascades_compare_their_verdicts_and_abstentions_are_unscored() -> None:
    before = make("cascade")
    table = before.table.copy()
    table.loc[0, ["verdict", "stage", "abstained"]] = ["B", "strong", False]  # a's win becomes a loss
    table.loc[6, ["verdict", "stage", "abstained"]] = [None, None, True]  # the cascade abstains on a decided item
    cmp = jw.compare(before, replace(before, table=table))
    row = cmp.summary.iloc[0]
    assert cmp.metric == "win_rate" and cmp.judges == ["cascade"]
    assert (row["n"], row["worse"], row["better"], row["unscored"]) == (9, 1, 0, 1)
    assert row["before"] == pytest.approx(4 / 9) and row["after"] == pytest.approx(3 / 9)
    assert cmp.regressions()["input"].tolist() == ["easy 1000"]
    passed = table.assign(verdict=["pass", "fail"] * 5, prompt=table["question"], response=table["response_a"]).drop(
        columns=["question", "response_a", "response_b"]
    )
    failed = passed.assign(verdict=["fail"] * 10)
    pass_fail = jw.compare(replace(before, table=passed), replace(before, table=failed))
    assert pass_fail.metric == "mean_score" and pass_fail.summary.iloc[0]["change"] == pytest.approx(-0.5)
    with pytest.raises(jw.InputError, match=r"verdicts are answer labels \(correct, incorrect\).*pass_threshold="):
        jw.compare(replace(before, table=passed.assign(verdict=["correct", "incorrect"] * 5)), before)


@pytest.mark.parametrize(
    ("kind", "hint"),
    [
        ("tournament", "compare the rankings"),
        ("alignment", "already compares its judge before and after alignment"),
        ("estimate", "an estimate is one number with its interval"),
    ],
)
def test_results_that_are_not_scores_per_item_say_what_to_compare(kind: str, hint: str) -> None:
    result = make(kind)
    with pytest.raises(jw.InputError, match=f"cannot compare {type(result).__name__} runs item by item: .*{hint}"):
        jw.compare(result, result)


def test_the_comparison_view_leaves_out_a_column_with_nothing_in_it() -> None:
    before, after = known_change()
    unexplained = [v.model_copy(update={"explanation": None}) for v in run(after).vote_list]
    quiet = jw.JudgeResult(run(after).items, unexplained, "j")
    worst = jw.compare(run(before), quiet).regressions(n=5)
    assert len(worst) == 5 and worst["explanation_after"].isna().all()
    html = jw.compare(run(before), quiet)._repr_html_()
    table = html[html.index("Worst regressions") :]
    assert "explanation_after" not in table and "None" not in table and "delta" in table
    assert "explanation_after" in jw.compare(run(before), run(after))._repr_html_()  # explained: shown
