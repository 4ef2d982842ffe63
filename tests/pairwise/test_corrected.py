"""Tournament ratings corrected with a few human comparisons (prediction-powered Bradley–Terry and win rates)."""

from __future__ import annotations

import re
import zlib

import numpy as np
import pandas as pd
import ppi_py  # the authors' reference implementation (the test extra)
import pytest

import judgewidgets as jw
from judgewidgets.pairwise import PairwiseJudge, Tournament, corrected_ranking
from judgewidgets.pairwise._rectified import Comparisons, classical_bradley_terry, ppi_bradley_terry
from judgewidgets.testing import ScriptedTransport
from tests.benchmark_scripts import load_benchmark
from tests.pairwise.helpers import answer, slots

# ppi-python's logistic fits go through scikit-learn and numba, which warn about their own internals.
REFERENCE_WARNINGS = pytest.mark.filterwarnings(
    "ignore::FutureWarning:sklearn.*", "ignore:.*faster on contiguous arrays"
)

# The person's view: "flatterer" is third; the judge always sides with it, which lifts it to first.
STRENGTHS = {"best": 1.2, "good": 0.6, "flatterer": 0.0, "weak": -1.2}
TRUE_ORDER = ["best", "good", "flatterer", "weak"]
QUESTIONS = [f"question {i}" for i in range(40)]
CANDIDATES = {name: [f"[{name}] answer to question {i}" for i in range(40)] for name in STRENGTHS}


def _coin(question: str, x: str, y: str) -> float:
    """A uniform number fixed by the question and the (unordered) pair: the same in both orders."""
    first, second = sorted((x, y))
    return zlib.crc32(f"{question}|{first}|{second}".encode()) / 2**32


def _human(question: str, x: str, y: str) -> str:
    """The person's verdict on x (as A) against y: Bradley–Terry with STRENGTHS, its coin fixed per comparison."""
    first, second = sorted((x, y))
    p_first = 1 / (1 + np.exp(-(STRENGTHS[first] - STRENGTHS[second])))
    winner = first if _coin(question, x, y) < p_first else second
    return "A" if winner == x else "B"


def flattered_judge() -> PairwiseJudge:
    """Agrees with the person, except that "flatterer" wins every comparison it is in."""

    def reply(request, attempt):  # type: ignore[no-untyped-def]
        texts = slots(request)
        x, y = (re.match(r"\[(\w+)\]", t).group(1) for t in texts)  # type: ignore[union-attr]
        question = "question " + re.search(r"question (\d+)", texts[0]).group(1)  # type: ignore[union-attr]
        if "flatterer" in (x, y):
            return answer("A" if x == "flatterer" else "B", 0.9)
        return answer(_human(question, x, y), 0.9)

    return PairwiseJudge("openai/flattered", transport=ScriptedTransport(reply), cache=False)


@pytest.fixture(scope="module")
def flattered() -> jw.TournamentResult:
    return Tournament(flattered_judge(), seed=0, bootstrap=0).run(QUESTIONS, CANDIDATES, progress=False)


def _labels(result: jw.TournamentResult, n: int, seed: int = 0) -> pd.Series:
    """The person's verdicts on n comparisons drawn at random, on pair_id."""
    per = result.matches.drop_duplicates("pair_id")
    chosen = per.sample(n, random_state=seed)
    verdicts = [
        _human(QUESTIONS[q], a, b) for q, a, b in zip(chosen["question_index"], chosen["model_a"], chosen["model_b"])
    ]
    return pd.Series(verdicts, index=chosen["pair_id"].to_numpy())


def test_a_flattered_judge_misranks_and_a_hundred_labels_set_it_right(flattered: jw.TournamentResult) -> None:
    assert flattered.ranking["candidate"].iloc[0] == "flatterer"  # the judge's own ranking is wrong
    fixed = flattered.corrected(_labels(flattered, 100))
    ranking = fixed.ranking
    assert list(ranking.columns[:7]) == [
        "candidate",
        "rating",
        "ci_low",
        "ci_high",
        "judge_only_rating",
        "labels_only_rating",
        "rank",
    ]
    assert ranking["candidate"].tolist() == TRUE_ORDER
    flatterer = ranking.set_index("candidate").loc["flatterer"]
    assert flatterer["judge_only_rank"] == 1 and flatterer["rank"] == 3
    # The judge-only interval excludes the person's view of the flatterer; the corrected one holds it.
    assert flatterer["judge_win_rate"] > 0.95 and flatterer["win_rate_high"] < 0.8
    truth = 1000 + 400 / np.log(10) * (STRENGTHS["flatterer"] - np.mean(list(STRENGTHS.values())))
    assert flatterer["ci_low"] <= truth <= flatterer["ci_high"] < flatterer["judge_only_ci_low"]
    # With a judge this good elsewhere, the corrected intervals are narrower than the labels' alone.
    corrected_width = (ranking["ci_high"] - ranking["ci_low"]).mean()
    labels_width = (ranking["labels_only_ci_high"] - ranking["labels_only_ci_low"]).mean()
    assert 0 < fixed.lam <= 1 and corrected_width < labels_width
    gap, low, _ = fixed.difference("best", "weak")
    assert low > 0 and gap == pytest.approx(ranking["rating"].iloc[0] - ranking["rating"].iloc[-1])
    assert fixed.n_labelled == 100 and fixed.n_comparisons == 240 and 0 < fixed.agreement < 1
    assert "a different order from the judge's" in fixed.summary() and "<table" in fixed._repr_html_()
    spec = fixed.chart().to_dict()
    assert len(spec["hconcat"]) == 2


def test_labels_by_pair_and_question_in_either_order_equal_labels_by_pair_id(
    flattered: jw.TournamentResult,
) -> None:
    labels = _labels(flattered, 30, seed=1)
    per = flattered.matches.drop_duplicates("pair_id").set_index("pair_id").loc[labels.index]
    swap = {"A": "B", "B": "A", "tie": "tie"}
    # The person wrote every pair the other way round, and named questions by their text.
    table = pd.DataFrame(
        {
            "model_a": per["model_b"].to_numpy(),
            "model_b": per["model_a"].to_numpy(),
            "question": [QUESTIONS[q] for q in per["question_index"]],
            "winner": labels.map(swap).to_numpy(),
        }
    )
    by_id = flattered.corrected(labels).ranking
    pd.testing.assert_frame_equal(flattered.corrected(table).ranking, by_id)
    by_index = table.drop(columns="question").assign(question_index=per["question_index"].to_numpy())
    pd.testing.assert_frame_equal(flattered.corrected(by_index).ranking, by_id)
    winners = table.assign(winner=np.where(table["winner"] == "A", table["model_a"], table["model_b"]))
    pd.testing.assert_frame_equal(flattered.corrected(winners).ranking, by_id)


def test_tournament_view_shows_the_corrected_ranking_beside_the_judges(flattered: jw.TournamentResult) -> None:
    pytest.importorskip("ipywidgets")
    labels = _labels(flattered, 60)
    view = jw.TournamentView(flattered, corrected=labels)
    assert view.corrected is not None and view.corrected_chart is not None
    assert len(view.widget.children) == 4
    assert jw.TournamentView(flattered).corrected is None


# --- the statistics, on matches tables built directly ------------------------------------------------------


def _arena(
    rng: np.random.Generator, strengths: np.ndarray, rounds: int, favoured: int, accuracy: float = 0.85
) -> pd.DataFrame:
    """Round robins of comparisons: the person's verdict from Bradley–Terry, the judge's agreeing with it at
    `accuracy` and siding with candidate `favoured` half the time it plays; p is the person's chance A wins."""
    k = len(strengths)
    i, j = np.triu_indices(k, 1)
    a, b = np.tile(i, rounds), np.tile(j, rounds)
    flip = rng.random(len(a)) < 0.5
    a, b = np.where(flip, b, a), np.where(flip, a, b)
    p = 1 / (1 + np.exp(-(strengths[a] - strengths[b])))
    human = rng.random(len(a)) < p
    judge = np.where(rng.random(len(a)) < accuracy, human, ~human)
    push = ((a == favoured) | (b == favoured)) & (rng.random(len(a)) < 0.5)
    judge = np.where(push, a == favoured, judge)
    names = np.array([f"m{c}" for c in range(k)])
    return pd.DataFrame(
        {
            "model_a": names[a],
            "model_b": names[b],
            "winner": np.where(judge, "A", "B"),
            "human": np.where(human, "A", "B"),
            "p": p,
        }
    )


def test_corrected_intervals_cover_the_persons_ratings_and_win_rates_in_simulation() -> None:
    """400 simulated arenas (4 candidates, 240 comparisons, 80 labelled, a judge biased toward the weakest):
    the corrected win-rate and rating intervals cover the person's values at the nominal 95 % (measured: win
    rates 93.3–95.8 %, ratings 94.5–95.5 % per candidate); the judge's own interval never covers the favoured
    candidate's rating; the corrected intervals are narrower than the labels' alone (183 vs 198 rating points)."""
    rng = np.random.default_rng(2024)
    strengths = np.array([0.9, 0.3, -0.2, -1.0])
    centred = strengths - strengths.mean()
    names = [f"m{c}" for c in range(4)]
    wins, ratings, judge_covers, widths = [], [], [], []
    for _ in range(400):
        arena = _arena(rng, strengths, rounds=40, favoured=3)
        labelled = rng.choice(len(arena), 80, replace=False)
        fixed = corrected_ranking(arena, arena["human"].iloc[labelled]).ranking.set_index("candidate").loc[names]
        truth = np.array(
            [
                np.where(arena["model_a"] == c, arena["p"], 1 - arena["p"])[
                    arena[["model_a", "model_b"]].eq(c).any(axis=1)
                ].mean()
                for c in names
            ]
        )
        wins.append((fixed["win_rate_low"] <= truth) & (truth <= fixed["win_rate_high"]))
        rating = 1000 + 400 / np.log(10) * centred
        ratings.append((fixed["ci_low"] <= rating) & (rating <= fixed["ci_high"]))
        judge_covers.append(fixed["judge_only_ci_low"].iloc[3] <= rating[3] <= fixed["judge_only_ci_high"].iloc[3])
        widths.append(
            [
                (fixed["ci_high"] - fixed["ci_low"]).mean(),
                (fixed["labels_only_ci_high"] - fixed["labels_only_ci_low"]).mean(),
            ]
        )
    win_coverage, rating_coverage = np.mean(wins, axis=0), np.mean(ratings, axis=0)
    assert win_coverage.mean() >= 0.93 and win_coverage.min() >= 0.9, win_coverage
    assert rating_coverage.mean() >= 0.93 and rating_coverage.min() >= 0.9, rating_coverage
    assert np.mean(judge_covers) < 0.05
    corrected_width, labels_width = np.nanmean(widths, axis=0)
    assert corrected_width <= labels_width * 1.03


def _ppi_mean_inputs(arena: pd.DataFrame, labelled: np.ndarray, name: str) -> tuple[np.ndarray, ...]:
    mine = (arena["model_a"] == name) | (arena["model_b"] == name)
    as_a = (arena["model_a"] == name).to_numpy()
    f = np.where(as_a, arena["winner"] == "A", arena["winner"] == "B").astype(float)
    y = np.where(as_a, arena["human"] == "A", arena["human"] == "B").astype(float)
    is_labelled = np.zeros(len(arena), dtype=bool)
    is_labelled[labelled] = True
    return y[mine & is_labelled], f[mine & is_labelled], f[mine & ~is_labelled]


def test_win_rates_equal_ppi_pythons_ppi_mean_on_the_a_wins_encoding() -> None:
    rng = np.random.default_rng(7)
    arena = _arena(rng, np.array([0.5, 0.0, -0.4]), rounds=60, favoured=2)
    labelled = rng.choice(len(arena), 90, replace=False)
    fixed = corrected_ranking(arena, arena["human"].iloc[labelled], small_sample=False).ranking
    for name, row in fixed.set_index("candidate").iterrows():
        y, f, fu = _ppi_mean_inputs(arena, labelled, str(name))
        low, high = ppi_py.ppi_mean_ci(y, f, fu, alpha=0.05)
        assert row["win_rate"] == pytest.approx(float(ppi_py.ppi_mean_pointestimate(y, f, fu)[0]), abs=1e-12)
        assert (row["win_rate_low"], row["win_rate_high"]) == pytest.approx((low[0], high[0]), abs=1e-12)
        assert row["labels_win_rate"] == pytest.approx(y.mean())
        # The house's own PPI++ mean says the same (CLT intervals; its small-sample ones differ by design).
        scores = pd.Series(np.concatenate([f, fu]))
        quality = jw.estimate_quality(scores, pd.Series(y), metric="win_rate", small_sample=False)
        assert (quality.estimate, quality.low, quality.high) == pytest.approx(
            (row["win_rate"], row["win_rate_low"], row["win_rate_high"]), abs=1e-12
        )


def _logistic_inputs(games: Comparisons) -> np.ndarray:
    """ppi-python's design for Bradley–Terry: x = e_a − e_b with candidate 0's column dropped (θ_0 = 0)."""
    return games.design()[:, 1:]


def _split(arena: pd.DataFrame, labelled: np.ndarray) -> tuple[Comparisons, np.ndarray, Comparisons]:
    index = {name: i for i, name in enumerate(sorted(set(arena["model_a"])))}
    a = arena["model_a"].map(index).to_numpy()
    b = arena["model_b"].map(index).to_numpy()
    y = (arena["human"] == "A").to_numpy(dtype=float)
    f = (arena["winner"] == "A").to_numpy(dtype=float)
    rest = np.setdiff1d(np.arange(len(arena)), labelled)
    k = len(index)
    return Comparisons(k, a[labelled], b[labelled], y[labelled]), f[labelled], Comparisons(k, a[rest], b[rest], f[rest])


def _differences(theta: np.ndarray, cov: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """θ_j − θ_0 for j ≥ 1 and their standard errors: ppi-python's coefficients with candidate 0 as reference."""
    k = len(theta)
    contrast = np.eye(k)[1:] - np.eye(k)[0]
    return contrast @ theta, np.sqrt(np.diag(contrast @ cov @ contrast.T))


@REFERENCE_WARNINGS
@pytest.mark.parametrize("lam", [0.0, 0.5, 1.0])
def test_bradley_terry_at_a_fixed_lambda_equals_ppi_logistic_ci(lam: float) -> None:
    rng = np.random.default_rng(11)
    arena = _arena(rng, np.array([0.8, 0.2, -0.1, -0.9]), rounds=50, favoured=3)
    labelled, f, unlabelled = _split(arena, rng.choice(300, 120, replace=False))
    ours = ppi_bradley_terry(labelled, f, unlabelled, lam=lam, small_sample=False)
    low, high = ppi_py.ppi_logistic_ci(
        _logistic_inputs(labelled),
        labelled.score,
        f,
        _logistic_inputs(unlabelled),
        unlabelled.score,
        alpha=0.05,
        lam=lam,
    )
    estimate, se = _differences(ours.theta, ours.cov)
    np.testing.assert_allclose(estimate, (low + high) / 2, atol=1e-6)
    np.testing.assert_allclose(1.959963984540054 * se, (high - low) / 2, rtol=1e-5)
    if lam == 0.0:  # the labels alone: ppi-python's classical interval
        classical = classical_bradley_terry(labelled, small_sample=False)
        c_low, c_high = ppi_py.classical_logistic_ci(_logistic_inputs(labelled), labelled.score, alpha=0.05)
        c_estimate, c_se = _differences(classical.theta, classical.cov)
        np.testing.assert_allclose(c_estimate, (c_low + c_high) / 2, atol=1e-6)
        np.testing.assert_allclose(1.959963984540054 * c_se, (c_high - c_low) / 2, rtol=1e-5)


@REFERENCE_WARNINGS
def test_two_candidates_tuned_lambda_equals_ppi_logistic_ci_and_the_win_rate() -> None:
    """With two candidates Bradley–Terry is a logistic mean: ppi-python's tuned interval, and σ(θ_a − θ_b) is the
    PPI++ win rate of a."""
    rng = np.random.default_rng(3)
    arena = _arena(rng, np.array([0.4, -0.4]), rounds=300, favoured=1)
    chosen = rng.choice(300, 80, replace=False)
    labelled, f, unlabelled = _split(arena, chosen)
    ours = ppi_bradley_terry(labelled, f, unlabelled, small_sample=False)
    low, high = ppi_py.ppi_logistic_ci(
        _logistic_inputs(labelled), labelled.score, f, _logistic_inputs(unlabelled), unlabelled.score, alpha=0.05
    )
    estimate, se = _differences(ours.theta, ours.cov)
    np.testing.assert_allclose(estimate, (low + high) / 2, atol=1e-6)
    np.testing.assert_allclose(1.959963984540054 * se, (high - low) / 2, rtol=1e-5)
    fixed = corrected_ranking(arena, arena["human"].iloc[chosen], small_sample=False).ranking.set_index("candidate")
    gap = fixed.loc["m0", "strength"] - fixed.loc["m1", "strength"]
    assert 1 / (1 + np.exp(-gap)) == pytest.approx(fixed.loc["m0", "win_rate"], abs=1e-9)


def test_a_candidate_no_label_involves_is_rated_and_the_note_says_what_that_means() -> None:
    rng = np.random.default_rng(5)
    arena = _arena(rng, np.array([0.6, 0.0, -0.6]), rounds=40, favoured=2)
    without_m2 = np.flatnonzero((arena["model_a"] != "m2") & (arena["model_b"] != "m2"))
    fixed = corrected_ranking(arena, arena["human"].iloc[without_m2[:30]])
    row = fixed.ranking.set_index("candidate").loc["m2"]
    assert row["labelled"] == 0 and np.isfinite(row["rating"]) and np.isnan(row["labels_only_rating"])
    assert np.isnan(row["win_rate"]) and np.isfinite(row["judge_win_rate"])
    assert any("no labelled comparison involves m2" in note and "too narrow" in note for note in fixed.notes)


# --- errors, before any fitting -----------------------------------------------------------------------------


def _small_arena() -> pd.DataFrame:
    return _arena(np.random.default_rng(0), np.array([0.5, 0.0, -0.5]), rounds=10, favoured=0)


def test_labels_for_comparisons_that_do_not_exist_are_an_input_error(flattered: jw.TournamentResult) -> None:
    labels = _labels(flattered, 20)
    with pytest.raises(jw.InputError, match=r"2 labelled comparison\(s\) are not in the matches: 9999, 10000"):
        flattered.corrected(pd.concat([labels, pd.Series(["A", "B"], index=[9999, 10000])]))
    table = pd.DataFrame({"model_a": ["best"], "model_b": ["nobody"], "question": ["question 1"], "winner": ["A"]})
    with pytest.raises(jw.InputError, match="matches no comparison"):
        flattered.corrected(table)
    with pytest.raises(jw.InputError, match="did not ask"):
        flattered.corrected(table.assign(model_b="good", question="what is 2 + 2?"))


def test_unknown_verdicts_duplicates_and_too_few_labels_are_input_errors() -> None:
    arena = _small_arena()
    labels = arena["human"].iloc[:10]
    with pytest.raises(jw.InputError, match=r"not A / B / tie.*3: 'maybe'"):
        corrected_ranking(arena, labels.where(labels.index != 3, "maybe"))
    with pytest.raises(jw.InputError, match="more than once"):
        corrected_ranking(arena, pd.concat([labels, labels.iloc[:1]]))
    with pytest.raises(jw.InputError, match=r"4 labelled comparison.*too few for 3 candidates: label at least 5"):
        corrected_ranking(arena, labels.iloc[:4])
    with pytest.raises(jw.InputError, match="Series"):
        corrected_ranking(arena, ["A", "B"])
    with pytest.raises(jw.ConfigurationError, match="confidence"):
        corrected_ranking(arena, labels, confidence=95)


def test_labels_on_comparisons_the_judge_failed_and_split_candidates_are_input_errors() -> None:
    arena = _small_arena()
    failed = arena.assign(winner=arena["winner"].where(arena.index != 2, None))
    with pytest.raises(jw.InputError, match="no verdict on 1 labelled comparison"):
        corrected_ranking(failed, arena["human"].iloc[:10])
    split = pd.DataFrame(
        {"model_a": ["x", "z"] * 6, "model_b": ["y", "w"] * 6, "winner": ["A", "B"] * 6, "human": ["A"] * 12}
    )
    with pytest.raises(jw.InputError, match="groups that never meet"):
        corrected_ranking(split, split["human"])


def test_labels_that_never_saw_a_candidate_lose_give_ratings_without_intervals_and_say_why() -> None:
    """Without a Bradley–Terry fit of the labels (a candidate they never saw lose), a normal interval is not valid
    (in simulation such intervals covered about 60 %): the ratings come without one, and the note says why."""
    arena = _small_arena()
    human = arena["human"].where(arena["model_a"] != "m0", "A").where(arena["model_b"] != "m0", "B")
    fixed = corrected_ranking(arena, human.iloc[:12])
    ranking = fixed.ranking
    assert ranking["rating"].notna().all() and ranking["ci_low"].isna().all() and ranking["ci_high"].isna().all()
    assert ranking["labels_only_rating"].isna().all()
    assert any("the labels never saw m0 lose" in note for note in fixed.notes)
    gap, low, high = fixed.difference("m0", "m2")
    assert np.isfinite(gap) and np.isnan(low) and np.isnan(high)
    row = ranking.set_index("candidate").loc["m0"]
    # the win rate's small-sample interval (estimate_quality's: two pseudo-disagreements) stays honest when
    # every label went one way; the CLT interval cannot, so it is withheld and the note says why
    assert row["win_rate"] == 1.0 and 0.5 < row["win_rate_low"] < 1.0 and row["win_rate_high"] == 1.0
    clt = corrected_ranking(arena, human.iloc[:12], small_sample=False)
    assert np.isnan(clt.ranking.set_index("candidate").loc["m0", "win_rate_low"])
    assert any("every labelled comparison of m0 went the same way" in note for note in clt.notes)


def test_the_benchmarks_arena_section_prints_coverage_width_and_order(capsys: pytest.CaptureFixture[str]) -> None:
    benchmark = load_benchmark("ppi_estimates")
    frame = benchmark.simulated_arena(benchmark.parse_args(["--draws", "1000", "--ns", "60"]))
    rows = frame.set_index("method")
    assert set(rows.index) == {"corrected", "corrected win rate", "judge only", "labels only"}
    assert rows.loc["corrected", "coverage"] >= 0.88 and rows.loc["judge only", "coverage"] < 0.4
    assert rows.loc["corrected", "width"] < rows.loc["labels only", "width"]
    assert rows.loc["judge only", "true_order"] == 0.0
    assert "Arena (100 draws per n)" in capsys.readouterr().out
