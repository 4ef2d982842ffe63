"""SequentialRater rating conversations: one (its last turn in context, or whole), many from a list or a DataFrame
column, every turn with each_turn; the judge reads the fenced turns; errors before any call."""

from __future__ import annotations

import json
from typing import Any

import pandas as pd
import pytest

import judgewidgets as jw
from judgewidgets.engine import RetryPolicy
from judgewidgets.sequential import SequentialRater
from judgewidgets.testing import ScriptedTransport
from tests.conversations.samples import AGENT, CHAT
from tests.fakes import user_text


def steady(request: Any, attempt: int) -> str:
    """Ratings of 2 for a judged text serving chicken, 9 otherwise (no spread: converges at the pilot)."""
    text = user_text(request)
    judged = text[text.index("<response>") :] if "<response>" in text else text
    return json.dumps({"score": 2 if "chicken" in judged.lower() else 9})


def rater(**options: Any) -> tuple[SequentialRater, ScriptedTransport]:
    transport = ScriptedTransport(steady)
    return SequentialRater(
        ["openai/judge"], transport=transport, retry=RetryPolicy(max_retries=0), **options
    ), transport


def test_one_conversation_on_its_last_turn_or_whole() -> None:
    sequential, transport = rater()
    result = sequential.rate(conversation=CHAT)
    assert result.mean == 2 and result.status == "converged"
    assert user_text(transport.requests[0]).startswith("<conversation>")
    whole = sequential.rate(conversation=json.dumps(AGENT), target="whole")
    assert whole.mean == 9 and "<response>" not in user_text(transport.requests[-1])


def test_many_conversations_and_every_turn() -> None:
    sequential, _ = rater()
    frame = sequential.rate_many(conversations=[CHAT, AGENT], target="each_turn", progress=False)
    assert frame[["conversation", "turn"]].values.tolist() == [[0, 1], [0, 2], [1, 1]]
    assert frame["mean"].tolist() == [9, 2, 9]
    data = pd.DataFrame({"messages": [CHAT, json.dumps(AGENT)]})
    by_column = sequential.rate_many(data, conversation_col="messages", progress=False)
    assert by_column["mean"].tolist() == [2, 9] and by_column["turn"].tolist() == [2, 1]
    assert sequential.estimate_cost(data, conversation_col="messages", draws=3).to_df().loc[0, "calls"] == 6


def test_a_meta_prompt_receives_the_turns() -> None:
    sequential, transport = rater(meta_prompts=["History:\n{prompt}\nRate this reply:\n{response}"])
    sequential.rate(conversation=CHAT)
    text = user_text(transport.requests[0])
    assert text.startswith("History:\n<conversation>") and "Rate this reply:\n<response>\nGrilled chicken" in text


@pytest.mark.parametrize(
    ("inputs", "message"),
    [
        ({"conversation": CHAT, "target": "each_turn"}, "rate_many"),
        ({"conversation": CHAT, "prompt": "x"}, "not both"),
        ({"conversation": [{"role": "user", "content": "hi"}]}, "no assistant message"),
        ({"prompt": "x", "response": "y", "target": "whole"}, "target= applies"),
    ],
)
def test_malformed_input_is_an_error_before_any_call(inputs: dict[str, Any], message: str) -> None:
    sequential, transport = rater()
    with pytest.raises(jw.InputError, match=message):
        sequential.rate(**inputs)
    assert transport.requests == []
