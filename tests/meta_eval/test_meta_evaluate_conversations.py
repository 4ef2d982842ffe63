"""Meta-evaluation on your own labelled pairs (dataset "labelled"): two replies to a shared history, two whole
conversations or plain texts, each presented in both orders; labels that are not A / B / tie and malformed
conversations are one InputError before any call."""

from __future__ import annotations

import json
import re
from typing import Any

import pandas as pd
import pytest

import judgewidgets as jw
from judgewidgets.testing import ScriptedTransport
from tests.fakes import user_text
from tests.pairwise.helpers import slots


def history(i: int) -> list[dict[str, Any]]:
    return [
        {"role": "system", "content": "Every recipe must be vegetarian."},
        {"role": "user", "content": f"A dinner idea, please ({i})."},
    ]


def labelled_pairs(n: int = 8) -> pd.DataFrame:
    """Two replies to each history: the good one (vegetarian) in slot a on even rows, b on odd ones."""
    rows = []
    for i in range(n):
        good, bad = f"good: lentil curry {i}", f"bad: chicken stew {i}"
        first = i % 2 == 0
        rows.append(
            {
                "history": history(i),
                "response_a": good if first else bad,
                "response_b": bad if first else good,
                "label": "A" if first else "B",
                "subset": "constraint" if i < n // 2 else "plain",
            }
        )
    return pd.DataFrame(rows)


def oracle(requests: list[str] | None = None) -> jw.PairwiseJudge:
    def reply(request, attempt):  # type: ignore[no-untyped-def]
        if requests is not None:
            requests.append(user_text(request))
        a, _ = slots(request)
        return '{"verdict": "A"}' if "good" in a else '{"verdict": "B"}'

    return jw.PairwiseJudge("openai/oracle", method="verdict", transport=ScriptedTransport(reply), cache=False)


def first_slot() -> jw.PairwiseJudge:
    transport = ScriptedTransport(lambda r, a: '{"verdict": "A"}')
    return jw.PairwiseJudge("openai/first", method="verdict", swap=False, transport=transport, cache=False)


def test_an_oracle_on_replies_to_shared_histories() -> None:
    requests: list[str] = []
    report = jw.meta_evaluate(oracle(requests), labelled_pairs(), progress=False)
    measured = report.measured
    assert measured["dataset"].tolist() == ["labelled", "labelled"]
    assert measured["subset"].tolist() == ["constraint", "plain"] and measured["n"].tolist() == [4, 4]
    assert (measured["accuracy"] == 1.0).all() and (measured["positional_agreement"] == 1.0).all()
    assert len(report.verdicts) == 2 * 8 and set(report.verdicts["label"]) == {"A", "B"}
    assert requests and all("<conversation>" in text and "vegetarian" in text for text in requests)
    assert report.table["source"].eq("measured").all()  # nothing published for your own set
    summary = report.summary()
    assert summary["set"].tolist() == ["labelled pairs (mean of subsets)"] and summary["pairs"].iloc[0] == 8
    assert report.chart().to_dict()["facet"]


def test_the_second_presentation_swaps_the_conversations() -> None:
    row = jw.meta_evaluate(first_slot(), labelled_pairs(), progress=False).measured
    assert (row["accuracy"] == 0.5).all() and (row["positional_agreement"] == 0.0).all()
    assert (row["first_slot_preference"] == 1.0).all()
    assert (row["macro_f1"] == 0.5).all() and row["f1_tie"].isna().all()  # no tie labelled or judged: A and B only


async def test_whole_conversations_json_text_and_the_async_twin() -> None:
    pairs = labelled_pairs()
    whole = pd.DataFrame(
        {
            "conversation_a": [
                json.dumps([*h, {"role": "assistant", "content": a}])
                for h, a in zip(pairs["history"], pairs["response_a"])
            ],
            "conversation_b": [
                [*h, {"role": "assistant", "content": b}] for h, b in zip(pairs["history"], pairs["response_b"])
            ],
            "label": pairs["label"].map({"A": "model_a", "B": "model_b"}),
            "pair_id": [f"p{i}" for i in range(len(pairs))],
        }
    )
    seen: list[str] = []

    def reply(request, attempt):  # type: ignore[no-untyped-def]
        text = user_text(request)
        seen.append(text)
        first = text.split("<response_a>", 1)[1].split("</response_a>", 1)[0]
        return '{"verdict": "A"}' if "good" in first else '{"verdict": "B"}'

    judge = jw.PairwiseJudge("openai/m", method="verdict", transport=ScriptedTransport(reply), cache=False)
    report = await jw.ameta_evaluate(judge, whole, target="whole", progress=False)
    assert report.measured["accuracy"].iloc[0] == 1.0 and report.measured["subset"].iloc[0] == "all"
    assert report.verdicts["pair_id"].iloc[0] == "p0"
    assert seen and all('judged="yes"' not in text for text in seen)  # whole: no turn singled out


def test_a_pointwise_judge_scores_each_reply_in_its_conversation() -> None:
    def reply(request, attempt):  # type: ignore[no-untyped-def]
        text = user_text(request)
        assert "<conversation>" in text
        judged = re.search(r"<response>\n(.*?)\n</response>", text, re.S).group(1)  # type: ignore[union-attr]
        return json.dumps({"score": 5 if judged.startswith("good") else 1})

    judge = jw.LLMJudge("openai/p", template="likert", transport=ScriptedTransport(reply), cache=False)
    report = jw.meta_evaluate(judge, labelled_pairs(), subsets=["plain"], progress=False)
    assert report.measured["subset"].tolist() == ["plain"]
    assert report.measured["accuracy"].iloc[0] == 1.0 and report.measured["positional_agreement"].iloc[0] == 1.0


def test_plain_texts_are_labelled_pairs_too() -> None:
    texts = pd.DataFrame(
        {
            "question": ["Capital of France?", "2 + 2?"],
            "response_a": ["good: Paris", "bad: 5"],
            "response_b": ["bad: Lyon", "good: 4"],
            "label": ["A", "B"],
        }
    )
    report = jw.meta_evaluate(oracle(), texts, n=2, seed=0, progress=False)
    assert report.measured["accuracy"].iloc[0] == 1.0


BROKEN = [
    ([{"content": "no role"}], "role"),
    ([{"role": "wizard", "content": "hi"}], "wizard"),
    ([], "empty"),
    ([{"role": "user", "content": "hi"}, {"role": "tool", "tool_call_id": "c9", "content": "{}"}], "c9"),
]


@pytest.mark.parametrize(("broken", "message"), BROKEN)
def test_a_malformed_conversation_fails_before_any_call(broken: Any, message: str) -> None:
    pairs = labelled_pairs()
    pairs.at[5, "history"] = broken
    requests: list[str] = []
    with pytest.raises(jw.InputError, match=message):
        jw.meta_evaluate(oracle(requests), pairs, progress=False)
    assert requests == []


def test_labels_and_options_that_cannot_apply_fail_before_any_call() -> None:
    requests: list[str] = []
    judge = oracle(requests)
    pairs = labelled_pairs()
    with pytest.raises(jw.InputError, match="which response is better"):
        jw.meta_evaluate(judge, pairs.assign(label=["pass", "fail"] * 4), progress=False)
    with pytest.raises(jw.InputError, match="no column 'verdict'"):
        jw.meta_evaluate(judge, pairs, label="verdict", progress=False)
    with pytest.raises(jw.InputError, match="missing at rows 2"):
        jw.meta_evaluate(judge, pairs.assign(label=["A", "B", None, "A", "B", "A", "B", "A"]), progress=False)
    with pytest.raises(jw.InputError, match="pair_id repeats"):
        jw.meta_evaluate(judge, pairs.assign(pair_id=1), progress=False)
    with pytest.raises(jw.InputError, match="unknown subset"):
        jw.meta_evaluate(judge, pairs, subsets=["Natural"], progress=False)
    with pytest.raises(jw.InputError, match="replies to a shared history"):
        jw.meta_evaluate(judge, pairs, target="whole", progress=False)
    with pytest.raises(jw.InputError, match="target= applies"):
        jw.meta_evaluate(judge, "llmbar", target="whole", progress=False)
    assert requests == []
