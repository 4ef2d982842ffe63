"""A CriterionGrader grading conversations: whole by default or on the last turn, one or many (a list, or a
DataFrame column of message lists or their JSON), what each criterion's judge reads, errors before any call."""

from __future__ import annotations

import json
from typing import Any

import pandas as pd
import pytest

import judgewidgets as jw
from judgewidgets.testing import ScriptedTransport
from tests.conversations.samples import AGENT, CHAT
from tests.fakes import user_text

RUBRIC = jw.Rubric.from_yaml(
    """
- name: vegetarian
  requirement: Every dish the assistant suggests is vegetarian
- name: tone
  requirement: How friendly is the assistant?
  scale_type: ordinal
  options: [{label: curt, value: 0.0}, {label: friendly, value: 1.0}]
"""
)
GOOD_CHAT = [*CHAT[:-1], {"role": "assistant", "content": "Chickpea and spinach curry with tofu."}]


def grader() -> tuple[jw.CriterionGrader, ScriptedTransport]:
    def answer(request: Any, attempt: int) -> str:
        text = user_text(request)
        meat = "chicken" in text.lower()
        if "selected_option" in request.messages[0]["content"]:  # the multi-choice schema
            return json.dumps({"selected_option": 1, "explanation": "fine"})
        return json.dumps({"verdict": "UNMET" if meat else "MET", "explanation": "checked"})

    transport = ScriptedTransport(answer)
    judge = jw.LLMJudge("openai/m", transport=transport, cache=False)
    return jw.CriterionGrader(judges=[judge], shuffle_options=False, binary_prompt="met_unmet"), transport


def test_a_conversation_is_graded_whole_by_default() -> None:
    grade, transport = grader()
    bad = grade.grade(RUBRIC, conversation=CHAT)
    good = grade.grade(RUBRIC, conversation=json.dumps(GOOD_CHAT))
    assert bad.criteria[0].verdict == jw.CriterionVerdict.UNMET and good.criteria[0].verdict == jw.CriterionVerdict.MET
    text = user_text(transport.requests[0])
    assert text.startswith('<conversation>\n<turn n="1" role="system">') and "<submission>" not in text
    assert "Judge the assistant's turns, all of them" in transport.requests[0].messages[0]["content"]


def test_the_last_turn_is_the_submission_in_context() -> None:
    grade, transport = grader()
    report = grade.grade(RUBRIC, conversation=AGENT, target="last_turn")
    assert report.score is not None
    text = user_text(transport.requests[0])
    assert '</conversation>\n<submission>\n<turn n="2" role="assistant">' in text


def test_many_conversations_from_a_list_or_a_column() -> None:
    grade, _ = grader()
    result = grade.grade_many(RUBRIC, conversations=[CHAT, GOOD_CHAT], progress=False)
    assert [r.criteria[0].verdict for r in result.reports] == [jw.CriterionVerdict.UNMET, jw.CriterionVerdict.MET]
    frame = pd.DataFrame({"messages": [json.dumps(CHAT), GOOD_CHAT], "who": ["x", "y"]})
    again = grade.grade_many(RUBRIC, frame, conversation_col="messages", progress=False)
    assert [r.criteria[0].verdict for r in again.reports] == [jw.CriterionVerdict.UNMET, jw.CriterionVerdict.MET]
    assert again.submissions[1].startswith("system: You are a cooking assistant")
    estimate = grade.estimate_cost(RUBRIC, frame, conversation_col="messages").to_df()
    assert estimate.loc[0, "calls"] == 4


@pytest.mark.parametrize(
    ("inputs", "message"),
    [
        ({"conversation": CHAT, "target": "each_turn"}, "not each_turn"),
        ({"conversation": CHAT, "submission": "x"}, "not both"),
        ({"conversation": [{"role": "bot", "content": "x"}]}, "unknown role 'bot'"),
        ({"submission": "x", "target": "whole"}, "target= applies to a conversation"),
    ],
)
def test_malformed_input_is_an_error_before_any_call(inputs: dict[str, Any], message: str) -> None:
    grade, transport = grader()
    with pytest.raises(jw.InputError, match=message):
        grade.grade(RUBRIC, **inputs)
    assert transport.requests == []
    with pytest.raises(jw.InputError, match="no column 'messages'"):
        grade.grade_many(RUBRIC, pd.DataFrame({"m": [CHAT]}), conversation_col="messages", progress=False)
