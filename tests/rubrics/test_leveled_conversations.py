"""A LeveledRubric grading conversations as CriterionGrader does: whole by default or on the last turn, one or many,
what each dimension's judge reads, the judged text in the result, errors before any call, and a saved result."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import judgewidgets as jw
from judgewidgets.rubrics import Dimension, LeveledReport, LeveledResult, LeveledRubric
from judgewidgets.testing import ScriptedTransport
from tests.conversations.samples import AGENT, CHAT
from tests.fakes import user_text

LEVELED = LeveledRubric(
    [
        Dimension("vegetarian", 0.75, {2: "Every dish is vegetarian", 1: "A dish has meat"}),
        Dimension("tone", 0.25, {2: "Friendly", 1: "Curt"}),
    ]
)
# The first reply has meat, the last one (after the user's correction) does not.
CORRECTED: list[dict[str, Any]] = [
    {"role": "system", "content": "You are a cooking assistant. Every recipe must be vegetarian."},
    {"role": "user", "content": "Suggest a dinner for four."},
    {"role": "assistant", "content": "Roast chicken with potatoes."},
    {"role": "user", "content": "I said vegetarian!"},
    {"role": "assistant", "content": "Sorry: chickpea curry with rice."},
]


def judged(text: str) -> str:
    """What a request judges: the submission fence (the last turn in context), else the whole conversation."""
    return text[text.index("<submission>") :] if "<submission>" in text else text


def grader() -> tuple[jw.CriterionGrader, ScriptedTransport]:
    """A judge that reads the judged text: a dish with chicken in it is meat; the tone is always friendly."""

    def reply(request: Any, attempt: int) -> str:
        shown = {text: int(n) for n, text in re.findall(r"^(\d+)\. (.+)$", request.messages[0]["content"], re.M)}
        meat = "chicken" in judged(user_text(request)).lower()
        wanted = "Friendly" if "Friendly" in shown else ("A dish has meat" if meat else "Every dish is vegetarian")
        return json.dumps({"selected_option": shown[wanted], "explanation": "meat" if meat else "no meat"})

    transport = ScriptedTransport(reply)
    judge = jw.LLMJudge("openai/m", transport=transport, cache=False)
    return jw.CriterionGrader(judges=[judge], shuffle_options=False), transport


def levels(report: LeveledReport) -> dict[str, int | None]:
    return {d.name: d.level for d in report.dimensions}


def test_a_conversation_is_graded_whole_by_default_or_on_its_last_turn() -> None:
    grade, transport = grader()
    whole = LEVELED.grade(conversation=CORRECTED, grader=grade)
    assert levels(whole) == {"vegetarian": 1, "tone": 2} and whole.weighted_percent == pytest.approx(62.5)
    text = user_text(transport.requests[0])
    assert text.startswith('<conversation>\n<turn n="1" role="system">') and "<submission>" not in text
    assert "Roast chicken" in text and "chickpea curry" in text
    assert "Judge the assistant's turns, all of them" in transport.requests[0].messages[0]["content"]

    grade, transport = grader()
    last = LEVELED.grade(conversation=json.dumps(CORRECTED), target="last_turn", grader=grade)
    assert levels(last) == {"vegetarian": 2, "tone": 2} and last.grade == "A"
    assert last.dimensions[0].feedback == "no meat"
    text = user_text(transport.requests[0])
    assert "Roast chicken" in text.split("</conversation>")[0]  # the history, read in context
    assert "</conversation>\n<submission>\nSorry: chickpea curry with rice.\n</submission>" in text
    assert last.provenance and len(transport.requests) == 2  # one call per dimension


def test_the_async_twin_grades_a_conversation_alike() -> None:
    grade, transport = grader()
    report = asyncio.run(LEVELED.agrade(conversation=AGENT, target="last_turn", grader=grade))
    assert levels(report) == {"vegetarian": 2, "tone": 2}
    text = user_text(transport.requests[0])
    assert '</conversation>\n<submission>\n<turn n="2" role="assistant">' in text  # the tool call and result too
    assert 'role="tool"' in text and text.endswith("It is 18 °C in Paris.\n</turn>\n</submission>")


def test_many_conversations_with_their_judged_text_in_the_result() -> None:
    grade, transport = grader()
    result = LEVELED.grade_many(
        conversations=[CHAT, json.dumps(CORRECTED)],
        target="last_turn",
        contexts=["Menu: curry, risotto.", None],
        grader=grade,
        progress=False,
    )
    assert [r.dimensions[0].level for r in result] == [1, 2]
    assert result.submissions == ["Grilled chicken with lentils.", "Sorry: chickpea curry with rice."]
    assert result.queries == ["Something with more protein?", "I said vegetarian!"]
    frame = result.to_df()
    assert frame["submission"].tolist() == result.submissions and frame["vegetarian"].tolist() == [1, 2]
    texts = [user_text(r) for r in transport.requests]
    assert sum("Menu: curry, risotto." in t for t in texts) == 2  # the first conversation's two dimensions

    grade, _ = grader()
    whole = asyncio.run(LEVELED.agrade_many(conversations=pd.Series([CHAT, CORRECTED]), grader=grade, progress=False))
    assert [r.dimensions[0].level for r in whole] == [1, 1]
    assert whole.submissions[0].startswith("system: You are a cooking assistant")
    assert "assistant: Grilled chicken with lentils." in whole.submissions[0]


@pytest.mark.parametrize(
    ("inputs", "message"),
    [
        ({"conversation": CHAT, "target": "each_turn"}, "not each_turn"),
        ({"conversation": CHAT, "submission": "x"}, "not both"),
        ({"conversation": [{"content": "hi"}]}, "message 0 has no role"),
        ({"conversation": [{"role": "bot", "content": "x"}]}, "unknown role 'bot'"),
        ({"conversation": []}, "conversation 0 is empty"),
        (
            {
                "conversation": [
                    {"role": "user", "content": "hi"},
                    {"role": "tool", "tool_call_id": "x", "content": "1"},
                ]
            },
            "without its call",
        ),
        ({"conversation": [{"role": "user", "content": "hi"}], "target": "last_turn"}, "no assistant"),
        ({"submission": "x", "target": "whole"}, "target= applies to a conversation"),
    ],
)
def test_a_malformed_conversation_is_one_error_before_any_call(inputs: dict[str, Any], message: str) -> None:
    grade, transport = grader()
    with pytest.raises(jw.InputError, match=message):
        LEVELED.grade(grader=grade, **inputs)
    assert transport.requests == []


@pytest.mark.parametrize(
    ("inputs", "message"),
    [
        ({"conversations": [CHAT], "target": "each_turn"}, "not each_turn"),
        ({"conversations": [CHAT, [{"role": "bot", "content": "x"}]]}, "conversation 1, message 0 has unknown role"),
        ({"conversations": CHAT}, "wrap it in a list"),
        ({"conversations": []}, "conversations is empty"),
        ({"conversations": [CHAT], "submissions": ["x"]}, "not both"),
        ({"conversations": [CHAT, AGENT], "contexts": ["c"]}, "lengths differ: conversations=2, contexts=1"),
        ({"submissions": ["x"], "target": "whole"}, "target= applies to conversations"),
        ({}, "nothing to grade"),
    ],
)
def test_a_malformed_batch_is_one_error_before_any_call(inputs: dict[str, Any], message: str) -> None:
    grade, transport = grader()
    with pytest.raises(jw.InputError, match=message):
        LEVELED.grade_many(grader=grade, progress=False, **inputs)
    with pytest.raises(jw.InputError, match=message):
        asyncio.run(LEVELED.agrade_many(grader=grade, progress=False, **inputs))
    assert transport.requests == []


def test_texts_are_graded_as_before() -> None:
    grade, transport = grader()
    result = LEVELED.grade_many(
        ["Tofu stir-fry.", "Chicken soup."], ["Dinner?", "Lunch?"], grader=grade, progress=False
    )
    assert [r.dimensions[0].level for r in result] == [2, 1] and result.queries == ["Dinner?", "Lunch?"]
    assert all(user_text(r).startswith("<question>") for r in transport.requests)


def test_a_saved_result_of_conversations_loads_and_works(tmp_path: Path) -> None:
    grade, _ = grader()
    result = LEVELED.grade_many(conversations=[CHAT, CORRECTED], target="last_turn", grader=grade, progress=False)
    again = jw.load(result.save(tmp_path / "leveled"))
    assert isinstance(again, LeveledResult)
    pd.testing.assert_frame_equal(again.to_df(), result.to_df())
    assert again.submissions == result.submissions and again.queries == result.queries
    assert again.usage == result.usage and [r.grade for r in again] == [r.grade for r in result]
    pd.testing.assert_frame_equal(again[1].to_df(), result[1].to_df())

    report = LEVELED.grade(conversation=CORRECTED, grader=grade)
    loaded = jw.load(report.save(tmp_path / "report"))
    assert isinstance(loaded, LeveledReport) and levels(loaded) == levels(report)
    pd.testing.assert_frame_equal(loaded.to_df(), report.to_df())
    assert loaded.percent == report.percent and loaded.usage == report.usage
