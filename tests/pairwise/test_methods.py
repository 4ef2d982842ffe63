"""The pairwise methods that position cannot decide, pinned on scripted logprobs (no model needed)."""

import math

import pytest

import judgewidgets as jw
from judgewidgets._constants import LOCAL_MAX_CONCURRENCY, LOCAL_TIMEOUT_S
from judgewidgets.engine import Completion
from judgewidgets.pairwise import PairwiseJudge
from judgewidgets.testing import ScriptedTransport
from tests.fakes import user_text
from tests.pairwise.helpers import slots


def tokens(*pieces: str | dict[str, float]) -> list[dict]:
    """Logprob entries: a string is a certain token; a dict {token: p} lists the alternatives, first chosen."""
    out = []
    for piece in pieces:
        alternatives = {piece: 1.0} if isinstance(piece, str) else piece
        listed = [{"token": t, "logprob": math.log(p)} for t, p in alternatives.items()]
        out.append({"token": listed[0]["token"], "logprob": listed[0]["logprob"], "top_logprobs": listed})
    return out


def slot_judge(p_first: dict[str, float], p_second: dict[str, float]):  # type: ignore[no-untyped-def]
    """A judge whose verdict distribution depends on which text ("x" or "y") sits in slot A."""

    def reply(request, attempt):  # type: ignore[no-untyped-def]
        a, _ = slots(request)
        dist = p_first if a == "x" else p_second
        chosen = max(dist, key=dist.get)  # type: ignore[arg-type]
        return Completion(
            content=f'{{"verdict": "{chosen}"}}', logprobs=tokens('{"', "verdict", '":', ' "', dist, '"}')
        )

    return ScriptedTransport(reply)


def pairwise(transport: ScriptedTransport, **kwargs) -> PairwiseJudge:  # type: ignore[no-untyped-def]
    return PairwiseJudge("openai/m", transport=transport, cache=False, **kwargs)


def test_probability_method_averages_both_orders_mapped_back() -> None:
    # Slot A is favoured in both orders (a position-biased judge), but x wins more often when shown first
    # than y does: P(x better) = (0.7 + 0.4) / 2 = 0.55 after mapping the swapped order back.
    transport = slot_judge({"A": 0.7, "B": 0.3}, {"A": 0.6, "B": 0.4})
    result = pairwise(transport, method="probability").compare("q", "x", "y")
    assert [v.winner for v in result.verdicts] == ["A", "B"]  # each order alone says "slot A"
    assert result.consistent is False
    assert result.p_a_better == pytest.approx(0.55)
    assert result.winner == "A" and result.confidence == pytest.approx(0.55)
    assert result.verdicts[1].probabilities == pytest.approx({"A": 0.4, "B": 0.6})
    assert transport.requests[0].params["logprobs"] is True
    assert "confidence" not in pairwise(transport, method="probability").json_schema()["properties"]


def test_probability_method_gives_the_mirrored_verdict_for_the_mirrored_pair() -> None:
    transport = slot_judge({"A": 0.8, "B": 0.2}, {"A": 0.55, "B": 0.45})
    judge = pairwise(transport, method="probability")
    forward, backward = judge.compare("q", "x", "y"), judge.compare("q", "y", "x")
    assert forward.winner == "A" and backward.winner == "B"
    assert forward.p_a_better == pytest.approx(1 - backward.p_a_better)


def test_probability_method_ties_inside_the_margin() -> None:
    transport = slot_judge({"A": 0.6, "B": 0.4}, {"A": 0.62, "B": 0.38})  # P(x better) = 0.49
    result = pairwise(transport, method="probability", tie_margin=0.05).compare("q", "x", "y")
    assert result.winner == "tie" and result.confidence == pytest.approx(0.98)
    assert pairwise(transport, method="probability", tie_margin=0.0).compare("q", "x", "y").winner == "B"


def test_tie_tokens_count_half_for_each_side() -> None:
    transport = slot_judge({"A": 0.5, "tie": 0.5}, {"tie": 0.5, "A": 0.3, "B": 0.2})
    result = pairwise(transport, method="probability").compare("q", "x", "y")
    # order 1: P(x) = .5 + .25; order 2 (y first): P(x) = P(B) + tie/2 = .2 + .25
    assert result.p_a_better == pytest.approx((0.75 + 0.45) / 2)


def test_probability_method_without_logprobs_falls_back_to_the_verdicts_and_says_so() -> None:
    transport = ScriptedTransport(lambda r, a: '{"verdict": "A"}')
    result = pairwise(transport, method="probability").compare("q", "x", "y")
    assert result.winner == "tie" and result.consistent is False and result.p_a_better is None
    assert all(v.fallback == "no logprobs at the verdict token" for v in result.verdicts)


def test_probability_method_needs_a_one_token_scale() -> None:
    with pytest.raises(jw.ConfigurationError, match="ab_tie"):
        PairwiseJudge("openai/m", method="probability", scale="five_level")
    with pytest.raises(jw.ConfigurationError, match="unknown pairwise method"):
        PairwiseJudge("openai/m", method="coin")


def score_judge(scores: dict[str, dict[str, float]]) -> ScriptedTransport:
    """A pointwise judge: the likert distribution of each response text."""

    def reply(request, attempt):  # type: ignore[no-untyped-def]
        text = user_text(request)
        response = next(r for r in scores if f"<response>\n{r}\n</response>" in text)
        dist = scores[response]
        chosen = max(dist, key=dist.get)  # type: ignore[arg-type]
        return Completion(content=f'{{"score": {chosen}}}', logprobs=tokens('{"', "score", '":', " ", dist, "}"))

    return ScriptedTransport(reply)


def test_pointwise_method_scores_each_response_alone() -> None:
    transport = score_judge({"x": {"4": 0.5, "5": 0.5}, "y": {"4": 0.5, "3": 0.5}})
    judge = pairwise(transport, method="pointwise", pointwise_template="likert")
    result = judge.compare("q", "x", "y")
    # P(x > y) = .5·1 + .5·.5 = .75, P(y > x) = 0: given that the scores differ, x is better for certain
    assert result.p_a_better == pytest.approx(1.0)
    assert result.winner == "A" and result.consistent is True
    assert result.verdicts[0].probabilities == pytest.approx({"A": 1.0, "B": 0.0})
    assert len(transport.requests) == 2  # one call per response, none per order
    mirrored = judge.compare("q", "y", "x")
    assert mirrored.winner == "B" and mirrored.p_a_better == pytest.approx(1 - result.p_a_better)
    assert len(transport.requests) == 4


def test_pointwise_without_logprobs_compares_the_answers() -> None:
    transport = ScriptedTransport(lambda r, a: '{"score": 5}' if "<response>\nx\n" in user_text(r) else '{"score": 2}')
    result = pairwise(transport, method="pointwise", pointwise_template="likert").compare("q", "x", "y")
    assert result.winner == "A" and result.confidence == 1.0


def test_pointwise_refuses_aspects() -> None:
    with pytest.raises(jw.ConfigurationError, match="aspects"):
        PairwiseJudge("openai/m", method="pointwise", aspects=["accuracy"])


def test_default_method_per_judge() -> None:
    assert PairwiseJudge("local").method == "pointwise"
    assert PairwiseJudge("openai/gpt-4o-mini").method == "probability"
    assert PairwiseJudge("anthropic/claude-3-5-haiku-20241022").method == "verdict"
    assert PairwiseJudge("openai/gpt-4o-mini", scale="five_level").method == "verdict"
    assert PairwiseJudge("local", aspects=["accuracy"]).method == "probability"


def test_local_pairwise_judge_gets_the_local_call_defaults() -> None:
    settings = PairwiseJudge("local").settings
    assert settings.max_concurrency == LOCAL_MAX_CONCURRENCY and settings.timeout == LOCAL_TIMEOUT_S
    hosted = PairwiseJudge("openai/gpt-4o-mini").settings
    assert hosted.max_concurrency == 32 and hosted.timeout == 120
    assert PairwiseJudge("local", max_concurrency=2, timeout=5).settings.max_concurrency == 2


def test_position_bias_of_a_debiased_method() -> None:
    transport = slot_judge({"A": 0.9, "B": 0.1}, {"A": 0.6, "B": 0.4})
    table = pairwise(transport, method="probability").compare_many(["q"], ["x"], ["y"], progress=False)
    assert table.loc[0, "winner"] == "A" and table.loc[0, "p_a_better"] == pytest.approx(0.65)
    bias = jw.position_bias(table)
    assert bias.loc[0, "first_slot_preference"] == 1.0  # the raw orders still show the slot bias


def test_pointwise_decides_two_confident_scores_by_where_the_rest_of_the_mass_goes() -> None:
    # Both answers are most likely a 5; x's remaining mass sits on 4, y's on 2: x is the better one.
    transport = score_judge({"x": {"5": 0.9, "4": 0.1}, "y": {"5": 0.9, "2": 0.1}})
    result = pairwise(transport, method="pointwise", pointwise_template="likert").compare("q", "x", "y")
    # P(x > y) = .9·.1 + .1·.1 = .10; P(y > x) = .1·.9 = .09
    assert result.winner == "A" and result.p_a_better == pytest.approx(0.10 / 0.19)


def test_identical_point_scores_tie() -> None:
    transport = ScriptedTransport(lambda r, a: '{"score": 4}')
    result = pairwise(transport, method="pointwise", pointwise_template="likert").compare("q", "x", "y")
    assert result.winner == "tie" and result.p_a_better == pytest.approx(0.5)


def test_two_orders_that_answer_tie_but_lean_to_b_name_b_in_each_order() -> None:
    """The conversations tutorial's ignores_correction-01: both orders answered "tie" (the most probable label) while
    their probabilities leaned to b, and the table said winner_ab = winner_ba = tie, consistent, winner b. Each
    order's winner is now decided from its probabilities by the pair's own rule, the written label stays in
    `verdict`, so agreeing orders always give the pair's winner."""
    transport = slot_judge({"tie": 0.5, "B": 0.35, "A": 0.15}, {"tie": 0.5, "A": 0.35, "B": 0.15})
    judge = pairwise(transport, method="probability")
    result = judge.compare("q", "x", "y")
    assert [v.verdict for v in result.verdicts] == ["tie", "tie"]  # what the judge wrote, in shown slots
    assert [v.winner for v in result.verdicts] == ["B", "B"] and result.consistent is True
    assert result.winner == "B" and result.p_a_better == pytest.approx(0.4)
    assert [v.confidence for v in result.verdicts] == pytest.approx([0.6, 0.6])
    row = judge.compare_many(["q"], ["x"], ["y"], progress=False).iloc[0]
    assert (row["winner_ab"], row["winner_ba"], row["consistent"], row["winner"]) == ("B", "B", True, "B")
    assert (row["verdict_ab"], row["verdict_ba"]) == ("tie", "tie")
    # inside the margin, each order is a tie and so is the pair
    tied = pairwise(transport, method="probability", tie_margin=0.25).compare("q", "x", "y")
    assert [v.winner for v in tied.verdicts] == ["tie", "tie"] and tied.winner == "tie" and tied.consistent


def test_orders_that_lean_opposite_ways_are_inconsistent_and_the_mean_decides() -> None:
    transport = slot_judge({"A": 0.9, "B": 0.1}, {"A": 0.6, "B": 0.4})  # x better in order 1, y in order 2
    result = pairwise(transport, method="probability").compare("q", "x", "y")
    assert [v.winner for v in result.verdicts] == ["A", "B"] and result.consistent is False
    assert result.winner == "A" and result.p_a_better == pytest.approx(0.65)
