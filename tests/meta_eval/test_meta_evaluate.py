"""Meta-evaluation on the shipped sets with scripted judges whose right answers are known (no model)."""

import math

import pandas as pd
import pytest

import judgewidgets as jw
from judgewidgets.datasets import LLMBAR_SUBSETS
from judgewidgets.engine import Completion
from judgewidgets.testing import ScriptedTransport
from tests.fakes import user_text
from tests.pairwise.helpers import slots


def gold_answers() -> dict[tuple[str, str], str]:
    """(question, better response) → "better" for every LLMBar and PandaLM pair with a decided label."""
    frames = [jw.datasets.llmbar(), jw.datasets.pandalm()]
    out = {}
    for frame in frames:
        for row in frame.itertuples():
            if row.label in ("A", "B"):
                out[(row.question, row.response_a if row.label == "A" else row.response_b)] = "better"
    return out


def question_of(request) -> str:  # type: ignore[no-untyped-def]
    text = user_text(request) if request.messages[-1]["role"] == "user" else request.messages[1]["content"]
    return text.split("<question>\n", 1)[1].split("\n</question>", 1)[0]


def oracle_pairwise() -> jw.PairwiseJudge:
    better = gold_answers()

    def reply(request, attempt):  # type: ignore[no-untyped-def]
        a, _ = slots(request)
        return '{"verdict": "A"}' if (question_of(request), a) in better else '{"verdict": "B"}'

    return jw.PairwiseJudge("openai/m", method="verdict", transport=ScriptedTransport(reply))


def first_slot_pairwise() -> jw.PairwiseJudge:
    return jw.PairwiseJudge(
        "openai/m", method="verdict", swap=False, transport=ScriptedTransport(lambda r, a: '{"verdict": "A"}')
    )


def test_an_oracle_is_right_everywhere_and_position_cannot_move_it() -> None:
    report = jw.meta_evaluate(oracle_pairwise(), ["llmbar"], n=6, seed=1, progress=False)
    measured = report.table[report.table["source"] == "measured"]
    assert list(measured["subset"]) == list(LLMBAR_SUBSETS)
    assert (measured["n"] == 6).all()
    assert (measured["accuracy"] == 1.0).all() and (measured["positional_agreement"] == 1.0).all()
    assert (measured["accuracy_both"] == 1.0).all() and (measured["failed"] == 0).all()
    published = report.table[(report.table["source"] == "published") & (report.table["subset"] == "Natural")]
    assert published.set_index("judge").loc["GPT-4", "accuracy"] == 0.955
    assert len(report.verdicts) == 2 * 6 * 5


def test_a_judge_that_always_picks_the_first_slot_is_a_coin() -> None:
    report = jw.meta_evaluate(first_slot_pairwise(), "llmbar", subsets=["natural"], progress=False)
    row = report.measured.iloc[0]
    assert row["n"] == 100
    assert row["accuracy"] == 0.5  # right in exactly one of the two presentations of every pair
    assert row["positional_agreement"] == 0.0 and row["first_slot_preference"] == 1.0
    assert row["accuracy_both"] == 0.0


def test_pandalm_reports_kappa_and_f1_against_the_human_majority() -> None:
    report = jw.meta_evaluate(oracle_pairwise(), "pandalm", n=40, seed=3, progress=False)
    row = report.measured.iloc[0]
    verdicts = report.verdicts
    assert row["accuracy"] == pytest.approx((verdicts["winner"] == verdicts["label"]).mean())
    # The oracle knows every decided pair and has no tie answer, so it misses only the human ties.
    assert row["accuracy"] <= 1 - (verdicts["label"] == "tie").mean()
    assert 0 < row["kappa"] < 1
    assert row["macro_f1"] == pytest.approx((row["f1_A"] + row["f1_B"] + row["f1_tie"]) / 3)
    published = report.table[report.table["source"] == "published"]
    assert set(published["judge"]) == {"gpt-3.5-turbo", "PandaLM-7B"}


def test_a_pointwise_judge_is_compared_by_its_scores_in_no_order() -> None:
    better = gold_answers()

    def reply(request, attempt):  # type: ignore[no-untyped-def]
        text = user_text(request)
        response = text.split("<response>\n", 1)[1].rsplit("\n</response>", 1)[0]
        good = (question_of(request), response) in better
        dist = {"5": 0.7, "4": 0.3} if good else {"2": 0.6, "3": 0.4}
        top = max(dist, key=dist.get)  # type: ignore[arg-type]
        listed = [{"token": t, "logprob": math.log(p)} for t, p in dist.items()]
        logprobs = [
            {"token": '{"score": ', "logprob": 0.0, "top_logprobs": []},
            {"token": top, "logprob": 0.0, "top_logprobs": listed},
            {"token": "}", "logprob": 0.0, "top_logprobs": []},
        ]
        return Completion(content=f'{{"score": {top}}}', logprobs=logprobs)

    judge = jw.LLMJudge("openai/m", transport=ScriptedTransport(reply), probability_weighted=True)
    report = jw.meta_evaluate(judge, "llmbar", subsets=["GPTOut"], n=10, seed=0, progress=False)
    row = report.measured.iloc[0]
    assert row["accuracy"] == 1.0 and row["positional_agreement"] == 1.0
    assert report.verdicts["p_a_better"].between(0, 1).all()
    assert report.verdicts["p_a_better"].round(6).isin([1.0, 0.0]).all()


def test_samples_are_seeded_and_bad_requests_refused_before_any_call() -> None:
    transport = ScriptedTransport(lambda r, a: '{"verdict": "A"}')
    judge = jw.PairwiseJudge("openai/m", method="verdict", transport=transport)
    one = jw.meta_evaluate(judge, "llmbar", subsets=["Manual"], n=5, seed=7, progress=False).verdicts["pair_id"]
    two = jw.meta_evaluate(judge, "llmbar", subsets=["Manual"], n=5, seed=7, progress=False).verdicts["pair_id"]
    assert one.tolist() == two.tolist()
    calls = len(transport.requests)
    with pytest.raises(jw.ConfigurationError, match="unknown dataset"):
        jw.meta_evaluate(judge, "mmlu")
    with pytest.raises(jw.InputError, match="unknown LLMBar subset"):
        jw.meta_evaluate(judge, "llmbar", subsets=["Trivia"])
    with pytest.raises(jw.ConfigurationError, match="cannot meta-evaluate"):
        jw.meta_evaluate(object(), "llmbar")
    assert len(transport.requests) == calls


def test_the_chart_places_the_judge_beside_the_published_ones() -> None:
    report = jw.meta_evaluate(first_slot_pairwise(), "llmbar", subsets=["Natural"], n=4, progress=False)
    spec = report.chart().to_dict()
    data = pd.DataFrame(next(iter(spec["datasets"].values())))
    assert {"openai/m", "GPT-4", "Falcon-180B-Chat"} <= set(data["judge"])
    assert set(data["who"]) == {"openai/m", "published judges"}


def test_datasets_ship_with_their_labels() -> None:
    bar = jw.datasets.llmbar()
    assert bar.groupby("subset").size().to_dict() == {
        "Adversarial-GPTInst": 92,
        "Adversarial-GPTOut": 47,
        "Adversarial-Manual": 46,
        "Adversarial-Neighbor": 134,
        "Natural": 100,
    }
    panda = jw.datasets.pandalm()
    assert panda["label"].value_counts().to_dict() == {"B": 472, "A": 422, "tie": 105}  # the authors' counts
    assert len(jw.datasets.arena_hard()) == 1348


def test_every_text_field_is_text() -> None:
    """Six PandaLM responses are the word "True", stored upstream as JSON `true`: they load as the text."""
    panda = jw.datasets.pandalm()
    for column in ("question", "response_a", "response_b"):
        assert panda[column].map(type).eq(str).all(), column
    assert panda.set_index("pair_id").loc[157, "response_a"] == "True"
    bar = jw.datasets.llmbar()
    for column in ("question", "response_a", "response_b"):
        assert bar[column].map(type).eq(str).all(), column
