"""Reading conversations in the OpenAI chat format: what is accepted, and the one clear InputError for each kind of
malformed conversation (naming the conversation and the message)."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest

from judgewidgets import InputError
from judgewidgets.conversations import Conversation, Message, ToolCall, parse_conversation, parse_conversations

from .samples import AGENT, CHAT


def test_a_chat_and_an_agent_transcript_are_read() -> None:
    chat = parse_conversation(CHAT)
    assert [m.role for m in chat.messages] == ["system", "user", "assistant", "user", "assistant"]
    agent = parse_conversation(AGENT)
    assert agent.messages[1] == Message(
        role="assistant", tool_calls=(ToolCall(name="get_weather", arguments='{"city": "Paris"}', id="call_1"),)
    )
    assert agent.messages[2].tool_call_id == "call_1"


def test_json_text_a_request_body_and_arrays_read_the_same() -> None:
    expected = parse_conversation(AGENT)
    assert parse_conversation(json.dumps(AGENT)) == expected
    assert parse_conversation({"model": "x", "messages": AGENT}) == expected
    assert parse_conversation(np.array(AGENT, dtype=object)) == expected
    assert parse_conversation(expected) is expected
    assert parse_conversation(expected.to_openai()) == expected  # the round trip of a saved run
    assert Conversation.model_validate_json(expected.model_dump_json()) == expected


def test_content_parts_and_legacy_function_calls() -> None:
    conversation = parse_conversation(
        [
            {"role": "user", "content": [{"type": "text", "text": "What is this?"}, {"type": "image_url"}]},
            {"role": "assistant", "content": None, "function_call": {"name": "look", "arguments": {"x": 1}}},
            {"role": "function", "name": "look", "content": "a cat"},
            {"role": "assistant", "content": "A cat."},
        ]
    )
    assert conversation.messages[0].content == "What is this?\n[image_url]"
    assert conversation.messages[1].tool_calls == (ToolCall(name="look", arguments='{"x": 1}'),)


def test_a_batch_of_conversations_and_one_given_by_mistake() -> None:
    assert len(parse_conversations([CHAT, json.dumps(AGENT)])) == 2
    with pytest.raises(InputError, match="wrap it in a list"):
        parse_conversations(CHAT)
    with pytest.raises(InputError, match="nothing to judge"):
        parse_conversations([])


@pytest.mark.parametrize(
    ("conversation", "message"),
    [
        ([], "conversation 0 is empty"),
        ("[{", "conversation 0 is text but not JSON"),
        (None, "conversation 0 is missing"),
        (float("nan"), "conversation 0 is missing"),
        (42, "must be a list of messages, got int"),
        ([{"content": "hi"}], "conversation 0, message 0 has no role"),
        ([{"role": "bot", "content": "hi"}], "message 0 has unknown role 'bot'"),
        ([{"role": "user"}], r"message 0 \(user\) has no content"),
        ([{"role": "user", "content": {"text": "hi"}}], "content of type dict"),
        (["hello"], "message 0 must be a dict with role and content, got str"),
        (
            [{"role": "user", "content": "hi"}, {"role": "tool", "tool_call_id": "x", "content": "1"}],
            "without its call",
        ),
        ([{"role": "user", "content": "hi"}, {"role": "tool", "content": "1"}], "without tool_call_id"),
        ([{"role": "function", "name": "f", "content": "1"}], "function result without its call"),
        ([{"role": "assistant", "content": None, "tool_calls": [{"id": "a"}]}], "tool call 0 has no function name"),
        ([{"role": "user", "content": "\ud83d"}], "cannot be encoded as UTF-8"),
    ],
)
def test_each_malformed_conversation_is_one_clear_error(conversation: Any, message: str) -> None:
    with pytest.raises(InputError, match=message):
        parse_conversations([conversation])


def test_the_error_names_the_conversation_in_its_batch() -> None:
    with pytest.raises(InputError, match="conversation 1, message 1 has unknown role 'robot'"):
        parse_conversations([CHAT, [{"role": "user", "content": "hi"}, {"role": "robot", "content": "x"}]])


def test_the_assistants_turns() -> None:
    assert parse_conversation(CHAT).replies() == [(2, 3), (4, 5)]
    assert parse_conversation(AGENT).replies() == [(1, 4)]  # the tool call, its result and the answer: one turn
    assert parse_conversation([{"role": "user", "content": "hi"}]).replies() == []
