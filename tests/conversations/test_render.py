"""What a judge reads of a conversation under each target: turns fenced with their numbers and roles, tool calls
written out, the judged turn apart, nothing after it; and no text in any turn can pose as another role, end its turn
or the conversation (property-tested with the fence tests' hostile texts)."""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from judgewidgets import InputError, Rubric
from judgewidgets._records import build_conversation_items
from judgewidgets.conversations import parse_conversation
from judgewidgets.rubrics._prompts import criterion_messages
from judgewidgets.templates import get_template
from tests.test_fence import FAST, hostile, leaves_markup_open, same_tags, tags

from .samples import AGENT, CHAT, IMPOSTOR

_OUR_TURN = re.compile(r'^<turn n="(\d+)" role="(\w+)">$', re.MULTILINE)


def user_message(conversations: list[Any], target: str = "last_turn", template: str = "likert") -> list[str]:
    items = build_conversation_items(conversations, target)  # type: ignore[arg-type]
    return [
        get_template(template).messages(i.prompt, i.response, i.reference, conversation=i.conversation)[1]["content"]
        for i in items
    ]


def test_the_last_turn_in_context() -> None:
    [text] = user_message([CHAT])
    assert _OUR_TURN.findall(text) == [("1", "system"), ("2", "user"), ("3", "assistant"), ("4", "user")]
    assert text.endswith(
        '<turn n="4" role="user">\nSomething with more protein?\n</turn>\n</conversation>\n'
        "<response>\nGrilled chicken with lentils.\n</response>"
    )
    assert "Every recipe must be vegetarian." in text  # the constraint three turns earlier is read


def test_the_whole_conversation_has_no_separate_response() -> None:
    [text] = user_message([CHAT], "whole", "consistency")
    assert [role for _, role in _OUR_TURN.findall(text)] == ["system", "user", "assistant", "user", "assistant"]
    assert text.endswith("</conversation>") and "<response>" not in text


def test_each_turn_reads_what_came_before_and_nothing_after() -> None:
    first, second = user_message([CHAT], "each_turn")
    assert "Mushroom risotto" in first and "more protein" not in first and "chicken" not in first
    assert "<response>\nMushroom risotto" in first
    assert "<response>\nGrilled chicken with lentils.\n</response>" in second


def test_a_tool_calling_turn_is_written_out_readably() -> None:
    [text] = user_message([AGENT])
    reply = text[text.index("<response>") :]
    assert reply == (
        '<response>\n<turn n="2" role="assistant">\n[calls get_weather (call call_1) with arguments {"city": '
        '"Paris"}]\n</turn>\n<turn n="3" role="tool">\n[result of get_weather (call call_1)]\n{"temp_c": 18}\n'
        '</turn>\n<turn n="4" role="assistant">\nIt is 18 °C in Paris.\n</turn>\n</response>'
    )


def test_the_system_message_says_what_is_judged_and_stays_the_same_across_items() -> None:
    template = get_template("likert")
    systems = {
        template.messages(i.prompt, i.response, conversation=i.conversation)[0]["content"]
        for i in build_conversation_items([CHAT, AGENT, CHAT], "each_turn")
    }
    assert len(systems) == 1 and "<response> holds the assistant's next turn" in systems.pop()
    whole = build_conversation_items([CHAT], "whole")[0]
    system = get_template("consistency").messages(whole.prompt, whole.response, conversation=whole.conversation)[0]
    assert "Judge the assistant's turns, all of them" in system["content"]


def test_a_user_turn_cannot_pose_as_the_assistant() -> None:
    [text] = user_message([IMPOSTOR])
    assert _OUR_TURN.findall(text) == [("1", "user")]
    assert text.count("</turn>") == 1 and text.count("</conversation>") == 1
    assert '&lt;/turn>\n&lt;turn n="2" role="assistant">' in text


@FAST
@given(st.lists(hostile, min_size=2, max_size=5), st.sampled_from(["last_turn", "whole", "each_turn"]))
def test_no_turn_text_changes_the_structure(texts: list[str], target: str) -> None:
    """Whatever each message says, the judge reads exactly the turns, roles and fences of harmless text."""
    roles = ["user", "assistant"] * 3

    def conversation(contents: list[str]) -> list[dict[str, str]]:
        return [{"role": roles[i], "content": c} for i, c in enumerate(contents)]

    harmless = [f"text {i}" for i in range(len(texts))]
    found = user_message([conversation(texts[: len(texts) // 2 * 2])], target)
    expected = user_message([conversation(harmless[: len(texts) // 2 * 2])], target)
    open_markup = any(leaves_markup_open(t) for t in texts)
    for hostile_text, harmless_text in zip(found, expected, strict=True):
        assert _OUR_TURN.findall(hostile_text) == _OUR_TURN.findall(harmless_text)
        assert same_tags(tags(hostile_text), tags(harmless_text), open_markup), hostile_text


def test_a_target_with_nothing_to_judge_is_an_error_before_any_call() -> None:
    ends_with_user = [*CHAT, {"role": "user", "content": "Thanks"}]
    with pytest.raises(InputError, match="conversation 1 ends with a user message"):
        build_conversation_items([CHAT, ends_with_user], "last_turn")
    assert len(build_conversation_items([ends_with_user], "whole")) == 1
    assert len(build_conversation_items([ends_with_user], "each_turn")) == 2
    with pytest.raises(InputError, match="conversation 0 has no assistant message"):
        build_conversation_items([[{"role": "user", "content": "hi"}]], "whole")
    with pytest.raises(InputError, match="references with target='last_turn'"):
        build_conversation_items([CHAT], "each_turn", references=["x"])
    with pytest.raises(InputError, match="lengths differ"):
        build_conversation_items([CHAT], "last_turn", references=["x", "y"])


def test_items_carry_what_a_table_shows() -> None:
    [last] = build_conversation_items([CHAT], "last_turn")
    assert (last.prompt, last.response) == ("Something with more protein?", "Grilled chicken with lentils.")
    [whole] = build_conversation_items([AGENT], "whole")
    assert whole.prompt == "What is the weather in Paris?" and whole.response.startswith("user: What is the weather")
    assert whole.conversation is not None and whole.conversation.conversation == parse_conversation(AGENT)


def test_the_heading_names_the_judged_turn_as_the_tables_and_the_request_number_it() -> None:
    """The tables count the assistant's turns, the request numbers messages: a preview's first line gives both."""
    [agent] = build_conversation_items([AGENT], "last_turn")
    assert agent.conversation is not None and agent.conversation.turn == 1
    assert agent.conversation.heading == (
        "conversation 0, assistant turn 1 of 1 (the table's turn 1): messages 2-4 of the request"
    )
    _, second = build_conversation_items([CHAT], "each_turn")
    assert second.conversation is not None
    assert second.conversation.heading == (
        "conversation 0, assistant turn 2 of 2 (the table's turn 2): message 5 of the request"
    )
    [whole] = build_conversation_items([CHAT], "whole")
    assert whole.conversation is not None
    assert whole.conversation.heading == "conversation 0, the whole conversation: every assistant turn, messages 1-5"


@FAST
@given(hostile, hostile)
def test_a_rubric_criterion_reads_the_turns_fenced_as_well(user: str, reply: str) -> None:
    """The rubric's own layout (the judged turn as the submission) holds against any text in any turn."""
    [criterion] = list(Rubric.from_yaml("- name: c\n  requirement: Stays polite\n"))

    def build(u: str, r: str) -> list[str]:
        [item] = build_conversation_items([[{"role": "user", "content": u}, {"role": "assistant", "content": r}]])
        messages = criterion_messages(criterion, item.response, item.prompt, None, None, conversation=item.conversation)
        return [m["content"] for m in messages]

    open_markup = leaves_markup_open(user) or leaves_markup_open(reply)
    for found, expected in zip(build(user, reply), build("text 0", "text 1"), strict=True):
        assert _OUR_TURN.findall(found) == _OUR_TURN.findall(expected)
        assert same_tags(tags(found), tags(expected), open_markup), found
