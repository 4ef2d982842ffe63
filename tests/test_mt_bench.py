"""MT-Bench as shipped (jw.datasets.mt_bench, mt_bench_pairs): the upstream files unchanged, 80 two-turn
questions, and the second-turn pairs as conversations that a pairwise judge compares on the loopback server."""

from __future__ import annotations

import hashlib
import json
import re
from importlib import resources
from typing import Any

import pandas as pd
import pytest

import judgewidgets as jw
from judgewidgets.conversations import parse_conversation
from judgewidgets.testing import OpenAITestServer
from judgewidgets.testing._responders import last_user_text

CATEGORIES = {"writing", "roleplay", "reasoning", "math", "coding", "extraction", "stem", "humanities"}
# git blob ids of the files in lm-sys/FastChat at 0e6d3e4 (unchanged since b494d0c, June 2023): copied verbatim
UPSTREAM = {
    "question.jsonl": "464e2c22f7a021a0f9a584d232338a9a17c40066",
    "reference_answer/gpt-4.jsonl": "8b66387a3129cbb117178fe515491df553dd52df",
    "LICENSE": "261eeb9e9f8b2b4b0d119366dda99c6fd7d35c64",
}


def git_blob_id(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


@pytest.fixture(scope="module")
def questions() -> pd.DataFrame:
    return jw.datasets.mt_bench()


@pytest.fixture(scope="module")
def pairs() -> pd.DataFrame:
    return jw.datasets.mt_bench_pairs()


def right(row: Any) -> str:
    return str(row.response_a if row.label == "A" else row.response_b)


def wrong(row: Any) -> str:
    return str(row.response_b if row.label == "A" else row.response_a)


@pytest.mark.parametrize("name", sorted(UPSTREAM))
def test_the_upstream_files_ship_unchanged(name: str) -> None:
    data = resources.files("judgewidgets").joinpath(f"data/mt_bench/{name}").read_bytes()
    assert git_blob_id(data) == UPSTREAM[name]


def test_eighty_questions_of_two_turns_ten_per_category(questions: pd.DataFrame) -> None:
    assert len(questions) == 80 and questions["question_id"].tolist() == list(range(81, 161))
    assert questions["category"].value_counts().to_dict() == dict.fromkeys(CATEGORIES, 10)
    for column in ("turn_1", "turn_2"):
        assert questions[column].map(lambda text: isinstance(text, str) and text.strip() != "").all()
    assert questions.loc[questions["question_id"] == 81, "turn_2"].item().startswith("Rewrite your previous response")


def test_reference_answers_where_the_authors_and_gpt4_gave_them(questions: pd.DataFrame) -> None:
    by_id = questions.set_index("question_id")
    gpt4 = by_id["gpt4_reference_1"].notna()
    assert gpt4[gpt4].index.tolist() == list(range(101, 131)) and by_id["gpt4_reference_2"].notna().sum() == 30
    authors = by_id["reference_1"].notna() | by_id["reference_2"].notna()
    assert authors.sum() == 39
    # where GPT-4's reference is wrong, the authors' is right (and blank turns are None, not "")
    assert (by_id.at[104, "gpt4_reference_1"], by_id.at[104, "reference_1"]) == (
        "David has only one brother.",
        "David has no brother. He is the one brother of his three sisters.",
    )
    assert by_id.at[111, "reference_2"] == "5pi" and by_id.at[103, "reference_2"] is None


def test_pairs_are_second_turn_histories_with_one_right_reply(pairs: pd.DataFrame, questions: pd.DataFrame) -> None:
    assert len(pairs) == 27 and pairs["pair_id"].tolist() == list(range(27))
    assert pairs["label"].tolist() == ["A" if k % 2 == 0 else "B" for k in range(27)]
    assert set(pairs["kind"]) == {"wrong", "history", "instruction"}
    turns = questions.set_index("question_id")
    for row in pairs.itertuples():
        conversation = parse_conversation(row.history)
        assert [m.role for m in conversation.messages] == ["user", "assistant", "user"]
        assert row.history[0]["content"] == turns.at[row.question_id, "turn_1"]
        assert row.history[2]["content"] == turns.at[row.question_id, "turn_2"]
        assert row.category == turns.at[row.question_id, "category"]
        assert right(row) != wrong(row) and row.flaw


def test_the_written_replies_hold_their_forms(pairs: pd.DataFrame) -> None:
    by_question = pairs.set_index("question_id")
    blog = right(next(by_question.loc[[81]].itertuples()))
    assert all(s.startswith("A") for s in re.split(r"(?<=[.!?])\s+", blog))
    story = right(next(by_question.loc[[87]].itertuples()))
    assert {len(s.replace('"', "").split()) for s in re.split(r'(?<=[.!?])\s+(?=["A-Z])', story)} == {4}
    for qid, opening in ((92, "As Sheldon"), (98, "As Stark")):
        row = next(by_question.loc[[qid]].itertuples())
        assert wrong(row).startswith(opening) and opening not in right(row)


def test_a_pairwise_judge_compares_the_pairs_on_the_loopback_server(pairs: pd.DataFrame) -> None:
    """The frame goes to compare_many as it is; a server that knows the right replies is right in both orders."""
    right_replies = {right(row) for row in pairs.itertuples()}

    def respond(body: dict[str, Any]) -> str:
        text = last_user_text(body)
        a = re.search(r"<response_a>\n(.*?)\n</response_a>", text, re.S)
        b = re.search(r"<response_b>\n(.*?)\n</response_b>", text, re.S)
        assert a and b and "<conversation>" in text
        return json.dumps({"verdict": "A" if a.group(1) in right_replies else "B"})

    with OpenAITestServer(respond) as server:
        pj = jw.PairwiseJudge("openai/test", api_base=server.base_url, api_key="sk-test", method="verdict", cache=False)
        table = pj.compare_many(pairs, progress=False)
        requests = server.stats.requests
    assert len(table) == 27 and (table["winner"] == table["label"]).all() and table["consistent"].all()
    assert len(requests) == 2 * 27
    sent = last_user_text(requests[0].body or {})
    first = pairs.iloc[0]
    assert first["history"][0]["content"][:60] in sent and first["history"][1]["content"][:60] in sent


def test_compare_many_takes_the_histories_as_lists_too(pairs: pd.DataFrame) -> None:
    subset = pairs.head(4)
    with OpenAITestServer(lambda body: json.dumps({"verdict": "tie"})) as server:
        pj = jw.PairwiseJudge("openai/test", api_base=server.base_url, api_key="sk-test", method="verdict", cache=False)
        table = pj.compare_many(
            histories=subset["history"].tolist(),
            responses_a=subset["response_a"].tolist(),
            responses_b=subset["response_b"].tolist(),
            progress=False,
        )
    assert table["winner"].tolist() == ["tie"] * 4
