import re

import numpy as np
import pandas as pd
import pytest

import judgewidgets as jw
from judgewidgets.engine import RetryPolicy
from judgewidgets.engine._litellm import CallFailure
from judgewidgets.pairwise import (
    Adaptive,
    PairwiseJudge,
    PairwisePanel,
    Tournament,
    bradley_terry,
    kendall_tau,
    position_bias,
)
from tests.fakes import ScriptedTransport
from tests.pairwise.helpers import answer, slots

STRENGTHS = {"weak": -1.5, "meh": -0.5, "fine": 0.5, "good": 1.5, "best": 2.5}
QUESTIONS = [f"question {i}" for i in range(6)]
CANDIDATES = {name: [f"[{name}] answer to question {i}" for i in range(6)] for name in STRENGTHS}


def noisy_judge(seed: int = 0, bias: float = 0.5) -> PairwiseJudge:
    """Prefers by known Bradley–Terry strengths with a first-slot bias; each call a seeded coin flip."""
    rng = np.random.default_rng(seed)

    def reply(request, attempt):  # type: ignore[no-untyped-def]
        first, second = (re.match(r"\[(\w+)\]", text).group(1) for text in slots(request))
        p = 1 / (1 + np.exp(-(STRENGTHS[first] - STRENGTHS[second] + bias)))
        return answer("A" if rng.random() < p else "B", round(float(max(p, 1 - p)), 3))

    return PairwiseJudge("openai/sim", transport=ScriptedTransport(reply), cache=False)


def exact_judge() -> PairwiseJudge:
    def reply(request, attempt):  # type: ignore[no-untyped-def]
        first, second = (re.match(r"\[(\w+)\]", text).group(1) for text in slots(request))
        return answer("A" if STRENGTHS[first] > STRENGTHS[second] else "B", 1.0)

    return PairwiseJudge("openai/exact", transport=ScriptedTransport(reply), cache=False)


TRUE_ORDER = sorted(STRENGTHS, key=STRENGTHS.get, reverse=True)


@pytest.mark.parametrize("format", ["round_robin", "swiss", "adaptive"])
def test_each_format_recovers_known_strengths(format: str) -> None:
    budget = {"round_robin": None, "swiss": 40, "adaptive": 40}[format]
    result = Tournament(noisy_judge(), format=format, budget=budget, seed=1).run(QUESTIONS, CANDIDATES, progress=False)
    ranking = result.ranking
    assert list(ranking.columns[:8]) == ["candidate", "rating", "ci_low", "ci_high", "wins", "losses", "ties", "rank"]
    estimated = ranking.set_index("candidate").loc[TRUE_ORDER, "rating"].to_numpy()
    assert kendall_tau(estimated, -np.arange(5)) >= 0.8, ranking
    assert ranking["candidate"].iloc[0] == "best"
    assert result.comparisons == (60 if format == "round_robin" else 40)
    assert len(result.matches) == 2 * result.comparisons  # both orders of every comparison


def test_round_robin_with_an_exact_judge_ranks_perfectly_and_counts_debiased_results() -> None:
    result = Tournament(exact_judge(), seed=0, bootstrap=200).run(QUESTIONS, CANDIDATES, progress=False)
    assert result.ranking["candidate"].tolist() == TRUE_ORDER
    assert result.ranking["wins"].tolist() == [24, 18, 12, 6, 0] and result.ranking["ties"].sum() == 0
    matches = result.matches
    orders = matches.groupby("pair_id")["swapped"].apply(lambda s: tuple(sorted(s)))
    assert (orders == (False, True)).all()
    assert set(matches["question_index"]) == set(range(6))
    # The matches table feeds the module-level functions directly.
    assert bradley_terry(matches, bootstrap=0)["candidate"].tolist() == TRUE_ORDER
    assert position_bias(matches).loc[0, "consistency"] == 1.0


def test_adaptive_stops_when_the_ranking_is_settled() -> None:
    result = Tournament(exact_judge(), format="adaptive", seed=0).run(QUESTIONS, CANDIDATES, progress=False)
    assert result.ranking["candidate"].tolist() == TRUE_ORDER
    assert result.comparisons < 60  # fewer than round robin's 10 pairs × 6 questions
    assert result.stability["kendall_tau"].iloc[-1] == 1.0


@pytest.mark.parametrize("rating", ["elo", "wins"])
def test_other_ratings(rating: str) -> None:
    result = Tournament(exact_judge(), rating=rating, seed=0, bootstrap=100).run(QUESTIONS, CANDIDATES, progress=False)
    assert result.ranking["candidate"].tolist() == TRUE_ORDER and result.rating == rating


def test_failed_comparisons_are_recorded_not_lost() -> None:
    def reply(request, attempt):  # type: ignore[no-untyped-def]
        first, second = slots(request)
        if "question 0" in first:
            raise CallFailure("InternalServerError", 500)
        return answer("A" if first > second else "B", 1.0)

    judge = PairwiseJudge(
        "openai/m", transport=ScriptedTransport(reply), cache=False, retry=RetryPolicy(initial_delay=0.001)
    )
    result = Tournament(judge, seed=0, bootstrap=50).run(QUESTIONS, CANDIDATES, progress=False)
    failed = result.matches[result.matches["question_index"] == 0]
    assert len(failed) == 20 and failed["error"].str.startswith("infrastructure:").all()
    assert result.ranking["games"].tolist() == [20] * 5  # 4 opponents × 5 questions that worked


def test_a_panel_can_judge_a_tournament() -> None:
    panel = PairwisePanel([exact_judge().with_options(name="a"), exact_judge().with_options(name="b")])
    result = Tournament(panel, budget=10, seed=0, bootstrap=50).run(QUESTIONS, CANDIDATES, progress=False)
    assert set(result.matches["judge"]) == {"a", "b"} and len(result.matches) == 40


def test_charts_build() -> None:
    result = Tournament(exact_judge(), format="adaptive", seed=0, bootstrap=50).run(
        QUESTIONS, CANDIDATES, progress=False
    )
    spec = result.chart().to_dict()
    assert "vconcat" in spec
    assert result.win_matrix().loc["best", "weak"] == 1.0
    assert "<table" in result._repr_html_()


async def test_async_twin() -> None:
    tournament = Tournament(exact_judge(), seed=3, bootstrap=50)
    result = await tournament.arun(QUESTIONS, CANDIDATES, progress=False)
    assert result.ranking["candidate"].tolist() == TRUE_ORDER


def test_bad_inputs_raise_clear_errors() -> None:
    judge = exact_judge()
    with pytest.raises(jw.InputError, match="3 entries for 6 questions"):
        Tournament(judge).run(QUESTIONS, {**CANDIDATES, "short": ["a", "b", "c"]}, progress=False)
    with pytest.raises(jw.InputError, match="at least 2 candidates"):
        Tournament(judge).run(QUESTIONS, {"solo": CANDIDATES["best"]}, progress=False)
    with pytest.raises(jw.InputError, match="at least one question"):
        Tournament(judge).run([], {"a": [], "b": []}, progress=False)
    with pytest.raises(jw.InputError, match="strings"):
        Tournament(judge).run(["q"], {"a": [None], "b": ["x"]}, progress=False)
    with pytest.raises(jw.ConfigurationError, match="unknown tournament format"):
        Tournament(judge, format="knockout")
    with pytest.raises(jw.ConfigurationError, match="unknown rating"):
        Tournament(judge, rating="glicko")
    with pytest.raises(jw.ConfigurationError, match="budget"):
        Tournament(judge, budget=0)
    with pytest.raises(jw.ConfigurationError, match="PairwiseJudge"):
        Tournament(object())  # type: ignore[arg-type]
    with pytest.raises(jw.ConfigurationError, match="explore"):
        Adaptive(explore=2.0)


def test_same_seed_same_tournament() -> None:
    first = Tournament(noisy_judge(5), format="swiss", budget=20, seed=9, bootstrap=50)
    second = Tournament(noisy_judge(5), format="swiss", budget=20, seed=9, bootstrap=50)
    one = first.run(QUESTIONS, CANDIDATES, progress=False)
    two = second.run(QUESTIONS, CANDIDATES, progress=False)
    pd.testing.assert_frame_equal(one.matches, two.matches)
