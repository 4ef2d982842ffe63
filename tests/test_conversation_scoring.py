"""LLMJudge and LLMPanel judging conversations: given as lists, JSON text or a DataFrame column, under each
target, with the per-turn table and its aggregate per conversation, errors before any call, cost estimates that
count the conversation, and saved runs that keep it."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import judgewidgets as jw
from judgewidgets.testing import ScriptedTransport
from tests.conversations.samples import AGENT, CHAT
from tests.fakes import user_text

# The chat's last reply forgets the vegetarian constraint of the system message.
GOOD_CHAT = [*CHAT[:-1], {"role": "assistant", "content": "Chickpea and spinach curry with tofu."}]


def by_reply(verdicts: bool) -> Any:
    """A scripted judge that fails a judged turn serving chicken: likert 1 (else 5), or the verdict "no" (else
    "yes") for a yes / no template."""

    def answer(request: Any, attempt: int) -> str:
        text = user_text(request)
        judged = text[text.index("<response>") :] if "<response>" in text else text  # the turn, or the whole
        bad = "chicken" in judged.lower()
        if verdicts:
            return json.dumps({"verdict": "no" if bad else "yes"})
        return json.dumps({"score": 1 if bad else 5})

    return answer


def judge(template: str = "likert", **options: Any) -> tuple[jw.LLMJudge, ScriptedTransport]:
    transport = ScriptedTransport(by_reply(jw.templates.get_template(template).choices is not None))
    return jw.LLMJudge("openai/m", template=template, transport=transport, cache=False, **options), transport


def test_the_last_turn_is_judged_by_default() -> None:
    llm, transport = judge()
    frame = llm.score(conversations=[CHAT, GOOD_CHAT], progress=False).to_df()
    assert list(frame.columns) == ["conversation", "turn", "prompt", "response", "score", "raw", "explanation", "error"]
    assert frame["score"].tolist() == [0.0, 1.0] and frame["turn"].tolist() == [2, 2]
    assert frame["response"].tolist() == ["Grilled chicken with lentils.", "Chickpea and spinach curry with tofu."]
    assert all("<conversation>" in user_text(r) for r in transport.requests)


async def test_the_async_twin_and_json_text_give_the_same_table() -> None:
    llm, _ = judge()
    as_json = await llm.ascore(conversations=[json.dumps(CHAT), json.dumps(GOOD_CHAT)], progress=False)
    assert as_json.to_df().equals(llm.score(conversations=[CHAT, GOOD_CHAT], progress=False).to_df())


def test_each_turn_gives_a_row_per_turn_and_an_aggregate_per_conversation() -> None:
    llm, transport = judge()
    result = llm.score(conversations=[CHAT, AGENT], target="each_turn", progress=False)
    frame = result.to_df()
    assert frame[["conversation", "turn"]].values.tolist() == [[0, 1], [0, 2], [1, 1]]
    assert frame["score"].tolist() == [1.0, 0.0, 1.0]
    table = result.by_conversation()
    assert table.to_dict("records") == [
        {"conversation": 0, "turns": 2, "failed": 0, "mean": 0.5, "min": 0.0, "last": 0.0, "lowest_turn": 2},
        {"conversation": 1, "turns": 1, "failed": 0, "mean": 1.0, "min": 1.0, "last": 1.0, "lowest_turn": 1},
    ]
    assert len(transport.requests) == 3


def test_a_conversation_template_judges_the_whole_conversation() -> None:
    llm, transport = judge("role_adherence")
    assert llm.default_target == "whole"
    frame = llm.score(conversations=[CHAT, GOOD_CHAT], progress=False).to_df()
    assert frame["turn"].isna().all() and frame["score"].tolist() == [0.0, 1.0]
    assert all("<response>" not in user_text(r) for r in transport.requests)
    # the judge's own setting, then the call's, win over the template's
    assert judge("role_adherence", target="last_turn")[0].default_target == "last_turn"
    frame = llm.score(conversations=[CHAT], target="each_turn", progress=False).to_df()
    assert frame["turn"].tolist() == [1, 2]


def test_a_dataframe_column_of_message_lists_or_their_json() -> None:
    llm, _ = judge()
    data = pd.DataFrame({"id": ["a", "b"], "messages": [CHAT, json.dumps(GOOD_CHAT)], "ref": ["tofu", None]})
    frame = llm.score(data=data, conversation_col="messages", progress=False).to_df()
    assert frame["score"].tolist() == [0.0, 1.0]
    with_reference = llm.score(data=data, conversation_col="messages", reference_col="ref", progress=False)
    assert [i.reference for i in with_reference.items] == ["tofu", None]
    plain = pd.DataFrame({"prompt": ["Dinner?"], "response": ["Chicken."]})
    assert llm.score(data=plain, progress=False).to_df()["score"].tolist() == [0.0]


def test_a_panel_judges_conversations_and_aggregates_per_conversation() -> None:
    panel = jw.LLMPanel([judge()[0], judge(name="second")[0]])
    result = panel.score(conversations=[CHAT, GOOD_CHAT], target="each_turn", progress=False)
    frame = result.to_df()
    assert list(frame.columns[:4]) == ["conversation", "turn", "prompt", "response"]
    assert frame["avg"].tolist() == [1.0, 0.0, 1.0, 1.0]
    assert result.by_conversation()["min"].tolist() == [0.0, 1.0]
    assert jw.LLMPanel([judge("consistency")[0], judge("role_adherence")[0]]).default_target == "whole"
    assert jw.LLMPanel([judge("consistency")[0], judge()[0]]).default_target == "last_turn"


@pytest.mark.parametrize(
    ("inputs", "message"),
    [
        ({"conversations": [[*CHAT, {"role": "user", "content": "hi"}]]}, "ends with a user message"),
        ({"conversations": [[{"role": "user", "content": "hi"}]]}, "has no assistant message"),
        ({"conversations": [[{"role": "bot", "content": "hi"}]]}, "unknown role 'bot'"),
        ({"conversations": [[]]}, "conversation 0 is empty"),
        ({"conversations": [CHAT], "target": "turns"}, "unknown target 'turns'"),
        ({"conversations": [CHAT], "prompts": ["x"], "responses": ["y"]}, "not both"),
        ({"prompts": ["x"], "responses": ["y"], "target": "whole"}, "target= applies to conversations"),
        ({"data": pd.DataFrame({"m": [CHAT]}), "conversation_col": "messages"}, "no column 'messages'"),
        ({}, "nothing to judge"),
    ],
)
def test_malformed_input_is_an_error_before_any_call(inputs: dict[str, Any], message: str) -> None:
    llm, transport = judge()
    with pytest.raises(jw.InputError, match=message):
        llm.score(progress=False, **inputs)
    with pytest.raises(jw.InputError, match=message):
        jw.LLMPanel([llm]).score(progress=False, **inputs)
    assert transport.requests == []


def test_a_judge_with_an_unknown_target_is_a_configuration_error() -> None:
    with pytest.raises(jw.ConfigurationError, match="unknown target"):
        jw.LLMJudge("openai/m", target="everything")  # type: ignore[arg-type]


def test_the_cost_estimate_counts_the_conversation_as_the_judge_reads_it() -> None:
    llm, _ = judge()
    short = llm.estimate_cost(conversations=[CHAT[-2:]]).to_df().loc[0, "prompt_tokens"]
    long = llm.estimate_cost(conversations=[CHAT]).to_df().loc[0, "prompt_tokens"]
    each = llm.estimate_cost(conversations=[CHAT], target="each_turn").to_df().loc[0, "prompt_tokens"]
    assert short < long < each
    assert jw.LLMPanel([llm]).estimate_cost(conversations=[CHAT]).to_df().loc[0, "prompt_tokens"] == long


def test_a_saved_run_keeps_the_conversations(tmp_path: Path) -> None:
    llm, _ = judge()
    result = llm.score(conversations=[CHAT, AGENT], target="each_turn", progress=False)
    result.save(tmp_path / "run")
    again = jw.load(tmp_path / "run")
    assert again.items == result.items
    assert again.to_df().equals(result.to_df()) and again.by_conversation().equals(result.by_conversation())


def test_every_prompt_is_the_same_for_the_same_conversation() -> None:
    """Deterministic prompts, so the call cache answers a repeated run."""
    first, second = judge(), judge()
    first[0].score(conversations=[AGENT, CHAT], target="each_turn", progress=False)
    second[0].score(conversations=[AGENT, CHAT], target="each_turn", progress=False)
    assert [r.messages for r in first[1].requests] == [r.messages for r in second[1].requests]
    assert re.search(r'<turn n="3" role="tool">', user_text(first[1].requests[0]))
