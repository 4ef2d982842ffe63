import pandas as pd
import pytest

import judgewidgets as jw
from judgewidgets.engine import RetryPolicy
from judgewidgets.engine._litellm import CallFailure
from judgewidgets.pairwise import PairwiseJudge, PairwisePanel, position_bias
from judgewidgets.testing import ScriptedTransport
from tests.pairwise.helpers import answer, prefers, slots

FAST_RETRY = RetryPolicy(initial_delay=0.001, max_delay=0.002)


def fixed(name: str, pick: str, weight: float = 1.0) -> PairwiseJudge:
    """A judge that always prefers the response whose text is `pick`, in either slot."""

    def reply(request, attempt):  # type: ignore[no-untyped-def]
        a, b = slots(request)
        return answer("A" if a == pick else "B" if b == pick else "tie", 0.8)

    return PairwiseJudge("openai/m", name=name, weight=weight, transport=ScriptedTransport(reply), cache=False)


def test_majority_vote() -> None:
    panel = PairwisePanel([fixed("j1", "x"), fixed("j2", "x"), fixed("j3", "y")])
    result = panel.compare("q", "x", "y")
    assert result.winner == "A" and result.confidence == pytest.approx(2 / 3) and result.consistent
    assert [v.winner for v in result.vote_list] == ["A", "A", "B"]
    assert len(result.verdicts) == 6 and {v.judge for v in result.verdicts} == {"j1", "j2", "j3"}


def test_weighted_vote_follows_the_heavy_judge() -> None:
    judges = [fixed("light1", "x"), fixed("light2", "x"), fixed("heavy", "y", weight=3.0)]
    assert PairwisePanel(judges).compare("q", "x", "y").winner == "A"  # majority ignores weights
    weighted = PairwisePanel(judges, vote="weighted").compare("q", "x", "y")
    assert weighted.winner == "B" and weighted.confidence == pytest.approx(3 / 5)
    assert PairwisePanel(judges, vote="weighted", weights=[1, 1, 1]).compare("q", "x", "y").winner == "A"


def test_an_even_split_is_a_tie_and_failed_judges_are_skipped() -> None:
    def broken(request, attempt):  # type: ignore[no-untyped-def]
        raise CallFailure("InternalServerError", 500)

    down = PairwiseJudge("openai/m", name="down", transport=ScriptedTransport(broken), cache=False, retry=FAST_RETRY)
    result = PairwisePanel([fixed("j1", "x"), fixed("j2", "y"), down]).compare("q", "x", "y")
    assert result.winner == "tie" and result.error is None
    assert result.vote_list[2].error.startswith("infrastructure:")
    everyone_down = PairwisePanel([down]).compare("q", "x", "y")
    assert everyone_down.winner is None and "down: infrastructure" in everyone_down.error


def test_compare_many_gives_judge_columns_and_per_judge_position_bias() -> None:
    always_first = PairwiseJudge(
        "openai/m", name="first", transport=ScriptedTransport(lambda r, a: answer("A", 0.9)), cache=False
    )
    fair = PairwiseJudge("openai/m", name="fair", transport=prefers(lambda t: t.count("!")), cache=False)
    frame = pd.DataFrame(
        {"question": ["q1", "q2"], "response_a": ["a!", "b"], "response_b": ["a", "b!"], "label": ["A", "B"]}
    )
    table = PairwisePanel([always_first, fair]).compare_many(frame, progress=False)
    assert {"winner", "confidence", "first", "fair", "first_consistent"} <= set(table.columns)
    assert table["fair"].tolist() == ["A", "B"] and table["first"].tolist() == ["tie", "tie"]
    bias = position_bias(table).set_index("judge")
    assert bias.loc["first", "first_slot_preference"] == 1.0 and bias.loc["first", "consistency"] == 0.0
    assert bias.loc["fair", "accuracy"] == 1.0
    assert position_bias(table[table["question"] == "q2"]).loc[0, "n_pairs"] == 1  # filtering keeps its rows
    assert len(pd.concat([table, table])) == 4  # the recorded verdicts do not get in the way of pandas


def test_panel_configuration_errors() -> None:
    with pytest.raises(jw.ConfigurationError, match="at least one"):
        PairwisePanel([])
    with pytest.raises(jw.ConfigurationError, match="unknown vote"):
        PairwisePanel(["openai/m"], vote="loudest")  # type: ignore[arg-type]
    with pytest.raises(jw.ConfigurationError, match="unique"):
        PairwisePanel([fixed("j", "x"), fixed("j", "y")])
    built = PairwisePanel(["openai/a", "openai/b"], scale="five_level")
    assert built.names == ["judge_1", "judge_2"] and built.judges[1].scale.name == "five_level"
