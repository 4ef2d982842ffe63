"""Pairwise judges, panels and tournaments comparing conversations: two replies to one shared history, or two
conversations on their last turns or whole; what the judge reads in each order; errors before any call."""

from __future__ import annotations

import json
from typing import Any

import pandas as pd
import pytest
from hypothesis import given

import judgewidgets as jw
from tests.conversations.samples import AGENT, CHAT
from tests.fakes import user_text
from tests.test_fence import FAST, hostile, leaves_markup_open, same_tags, tags

from .helpers import prefers, slots

HISTORY = CHAT[:-1]  # the user's last question, unanswered; the system message asks for vegetarian recipes
GOOD, BAD = "Chickpea and spinach curry with tofu.", "Grilled chicken with lentils."


def vegetarian(text: str) -> float:
    """Quality of what a slot shows: 0 when it serves chicken."""
    return 0.0 if "chicken" in text.lower() else 1.0


def judge(**options: Any) -> tuple[jw.PairwiseJudge, Any]:
    transport = prefers(vegetarian)
    options = {"method": "verdict", **options}
    return jw.PairwiseJudge("openai/m", transport=transport, cache=False, **options), transport


def test_two_replies_to_a_shared_history_in_both_orders() -> None:
    pj, transport = judge()
    result = pj.compare(history=HISTORY, response_a=BAD, response_b=GOOD)
    assert (result.winner, result.consistent) == ("B", True)
    assert (result.question, result.response_a, result.response_b) == ("Something with more protein?", BAD, GOOD)
    first, swapped = (user_text(r) for r in transport.requests)
    assert slots(transport.requests[0]) == (BAD, GOOD) and slots(transport.requests[1]) == (GOOD, BAD)
    for text in (first, swapped):
        assert text.startswith("<conversation>\n") and "Every recipe must be vegetarian." in text
        assert text.index("</conversation>") < text.index("<response_a>")
    assert "two candidates for the assistant's next turn" in transport.requests[0].messages[0]["content"]


def test_a_reply_may_call_tools() -> None:
    pj, transport = judge()
    history = AGENT[:1]
    result = pj.compare(history=history, response_a=AGENT[1:], response_b="It is sunny, 30 °C.")
    assert result.winner is not None
    text = user_text(transport.requests[0])
    assert '<response_a>\n<turn n="2" role="assistant">\n[calls get_weather' in text


def test_two_conversations_on_their_last_turns_or_whole() -> None:
    good_chat = [*HISTORY, {"role": "assistant", "content": GOOD}]
    pj, transport = judge()
    assert pj.compare(conversation_a=CHAT, conversation_b=good_chat).winner == "B"
    # the same history: shown once, as for replies to it
    assert user_text(transport.requests[0]).startswith("<conversation>")
    pj, transport = judge()
    whole = pj.compare(conversation_a=good_chat, conversation_b=AGENT, target="whole")
    text = user_text(transport.requests[0])
    assert text.startswith('<response_a>\n<turn n="1" role="system">') and "<conversation>" not in text
    assert "the assistant's part in the two conversations" in transport.requests[0].messages[0]["content"]
    assert whole.response_b.startswith("user: What is the weather in Paris?")


def test_different_histories_mark_the_judged_turn() -> None:
    pj, transport = judge()
    pj.compare(conversation_a=CHAT, conversation_b=AGENT)
    text = user_text(transport.requests[0])
    assert '<turn n="5" role="assistant" judged="yes">\nGrilled chicken' in text
    assert '<turn n="4" role="assistant" judged="yes">\nIt is 18' in text
    assert text.count('judged="yes"') == 1 + 3  # the agent's turn: its tool call, the result and its answer


def test_compare_many_from_lists_and_from_a_dataframe() -> None:
    pj, _ = judge()
    table = pj.compare_many(histories=[HISTORY, HISTORY], responses_a=[BAD, GOOD], responses_b=[GOOD, BAD])
    assert table["winner"].tolist() == ["B", "A"] and table["response_a"].tolist() == [BAD, GOOD]
    frame = pd.DataFrame({"history": [json.dumps(HISTORY)], "response_a": [GOOD], "response_b": [BAD], "label": ["A"]})
    table = pj.compare_many(frame, progress=False)
    assert table["winner"].tolist() == ["A"] and table["label"].tolist() == ["A"]
    both = pd.DataFrame(
        {"conversation_a": [CHAT], "conversation_b": [[*HISTORY, {"role": "assistant", "content": GOOD}]]}
    )
    assert pj.compare_many(both, progress=False)["winner"].tolist() == ["B"]


def test_the_pointwise_method_scores_each_reply_in_its_conversation() -> None:
    def score(request: Any, attempt: int) -> str:
        text = user_text(request)
        return json.dumps({"verdict": "no" if "chicken" in text[text.index("<response>") :].lower() else "yes"})

    from judgewidgets.testing import ScriptedTransport

    transport = ScriptedTransport(score)
    pj = jw.PairwiseJudge("openai/m", method="pointwise", transport=transport, cache=False)
    assert pj.compare(history=HISTORY, response_a=BAD, response_b=GOOD).winner == "B"
    assert all(user_text(r).startswith("<conversation>") for r in transport.requests)


def test_a_panel_compares_conversations() -> None:
    panel = jw.PairwisePanel([judge()[0], judge(name="second")[0]])
    assert panel.compare(history=HISTORY, response_a=GOOD, response_b=BAD).winner == "A"
    table = panel.compare_many(conversations_a=[CHAT], conversations_b=[CHAT[:3]], target="whole", progress=False)
    assert table["winner"].tolist() == ["B"]


def test_a_tournament_of_replies_to_shared_histories_and_of_conversations() -> None:
    replies = {
        "veggie": [GOOD, "Lentil soup."],
        "meaty": [BAD, "Beef stew with chicken stock."],
        "mixed": ["Tofu stir-fry.", "Chicken soup."],
    }
    second = [*HISTORY[:3], {"role": "user", "content": "And a soup?"}]
    result = jw.Tournament(judge()[0], rating="wins").run(
        histories=[HISTORY, second], candidates=replies, progress=False
    )
    assert result.ranking["candidate"].iloc[0] == "veggie" and result.questions == [
        HISTORY[-1]["content"],
        "And a soup?",
    ]
    conversations = {n: [[*HISTORY, {"role": "assistant", "content": r[0]}]] for n, r in replies.items()}
    result = jw.Tournament(judge()[0], rating="wins").run(candidates=conversations, progress=False)
    assert result.ranking.set_index("candidate").loc["meaty", "rank"] == 3


@pytest.mark.parametrize(
    ("inputs", "message"),
    [
        ({"history": CHAT, "response_a": "x", "response_b": "y"}, "ends with a assistant message"),
        ({"history": HISTORY, "response_a": "x"}, "responses_a and responses_b"),
        ({"history": HISTORY, "response_a": [{"role": "user", "content": "x"}], "response_b": "y"}, "reply is the"),
        ({"conversation_a": CHAT}, "needs conversations_a and conversations_b"),
        ({"conversation_a": CHAT, "conversation_b": [*CHAT, {"role": "user", "content": "?"}]}, "ends with a user"),
        ({"conversation_a": CHAT, "conversation_b": CHAT, "target": "each_turn"}, "last turns or whole"),
        ({"conversation_a": [{"role": "bot", "content": "x"}], "conversation_b": CHAT}, "unknown role 'bot'"),
        ({"question": "q", "response_a": "a", "response_b": "b", "target": "whole"}, "target= applies"),
    ],
)
def test_malformed_conversations_are_errors_before_any_call(inputs: dict[str, Any], message: str) -> None:
    pj, transport = judge()
    with pytest.raises(jw.InputError, match=message):
        pj.compare(**inputs)
    assert transport.requests == []


@FAST
@given(hostile, hostile, hostile)
def test_no_reply_or_turn_leaves_its_fence(turn: str, first: str, second: str) -> None:
    pj, _ = judge()

    def build(t: str, a: str, b: str) -> Any:
        [item] = jw.pairwise._batch.one_pair(None, a, b, None, history=[{"role": "user", "content": t}])
        return pj._order_request(item, swapped=False)[1]

    harmless = build("text 0", "text 1", "text 2")
    built = build(turn, first, second)
    open_markup = any(leaves_markup_open(t) for t in (turn, first, second))
    for message, expected in zip(built, harmless, strict=True):
        assert same_tags(tags(message["content"]), tags(expected["content"]), open_markup), message["content"]


@pytest.mark.parametrize(
    ("inputs", "message"),
    [
        (
            {"conversations_a": [CHAT, CHAT], "conversations_b": [CHAT, [{"role": "bot", "content": "x"}]]},
            "conversation 1 of conversations_b, message 0 has unknown role 'bot'",
        ),
        (
            {"conversations_a": [CHAT, [{"role": "user"}]], "conversations_b": [CHAT, CHAT]},
            r"conversation 1 of conversations_a, message 0 \(user\) has no content",
        ),
        (
            {"conversations_a": [CHAT, CHAT], "conversations_b": [CHAT, CHAT[:1]]},
            "conversation 1 of conversations_b has no assistant message",
        ),
        (
            {"conversations_a": [CHAT, HISTORY], "conversations_b": [CHAT, CHAT]},
            "conversation 1 of conversations_a ends with a user message",
        ),
        (
            {"histories": [HISTORY, HISTORY], "responses_a": ["x", "y"], "responses_b": ["x", [{"role": "bot"}]]},
            "conversation 1 of responses_b, message 0 has unknown role 'bot'",
        ),
    ],
)
def test_a_malformed_conversation_in_a_batch_names_its_side_and_index(inputs: dict[str, Any], message: str) -> None:
    pj, transport = judge()
    with pytest.raises(jw.InputError, match=message) as raised:
        pj.compare_many(**inputs, progress=False)
    assert len(str(raised.value).splitlines()) == 1
    assert transport.requests == []
    panel = jw.PairwisePanel([judge()[0], judge()[0]])
    with pytest.raises(jw.InputError, match=message):
        panel.compare_many(**inputs, progress=False)
