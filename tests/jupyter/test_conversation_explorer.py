"""Conversations in the notebook (issue 26, part 4), without a browser: the explorer shows an item's conversation as
turns (who said what, escaped), the judged turn marked and nothing after it; a per-turn judgment has a conversations
× turns heatmap whose cells pick the turn."""

from __future__ import annotations

import json
import re
from typing import Any

import pandas as pd
import pytest
import vl_convert

import judgewidgets as jw
from judgewidgets.jupyter import DisagreementModel
from judgewidgets.testing import ScriptedTransport
from tests.conversations.samples import AGENT, CHAT
from tests.fakes import user_text
from tests.jupyter.test_linked_views import params, set_selection

# A user turn and a reply that hold markup: the explorer must show it as text, never run or draw it.
MARKUP = [
    {"role": "user", "content": "Say hi <script>alert('x')</script>"},
    {"role": "assistant", "content": "<b>hi</b> <img src=x onerror=alert(1)>"},
]


def scripted(name: str, strict: bool = True) -> jw.LLMJudge:
    """A judge that scores a judged turn serving chicken 1 of 5 (`strict`) or always 5, and fails any turn that
    mentions 18 °C (the agent's answer)."""

    def answer(request: Any, attempt: int) -> str:
        text = user_text(request)
        judged = text[text.index("<response>") :] if "<response>" in text else text
        if "18 °C" in judged:
            raise jw.CallFailure("InternalServerError: provider down", 500)
        return json.dumps({"score": 1 if strict and "chicken" in judged.lower() else 5})

    return jw.LLMJudge(
        "openai/m", name=name, transport=ScriptedTransport(answer), cache=False, retry=jw.RetryPolicy(max_retries=0)
    )


def panel_result(conversations: list[Any], target: str = "each_turn") -> jw.PanelResult:
    panel = jw.LLMPanel([scripted("strict"), scripted("lenient", strict=False)])
    return panel.score(conversations=conversations, target=target, progress=False)


def test_the_judged_turn_is_marked_and_later_messages_are_left_out() -> None:
    model = DisagreementModel(panel_result([CHAT, AGENT]))
    first = model.turns(0)  # the chat's first assistant turn
    assert first[["message", "role", "judged"]].values.tolist() == [
        [1, "system", False], [2, "user", False], [3, "assistant", True]
    ]  # fmt: skip
    assert first["turn"].tolist()[2] == 1 and first["read"].all()
    shown = model.conversation_html(0)
    assert "conversation 0, assistant turn 1 of 2" in shown
    assert "2 later messages not shown" in shown and "Grilled chicken" not in shown  # the judge never read it
    assert shown.count(">judged</span>") == 1
    second = model.turns(1)
    assert second["message"].tolist() == [1, 2, 3, 4, 5] and second["judged"].tolist() == [False] * 4 + [True]
    assert "later message" not in model.conversation_html(1)


def test_tool_calls_and_results_are_written_out_as_the_judge_reads_them() -> None:
    model = DisagreementModel(panel_result([CHAT, AGENT]))
    rows = model.turns(2)  # the agent's one turn: a call, its result, the answer
    assert rows["role"].tolist() == ["user", "assistant", "tool", "assistant"]
    assert rows["judged"].tolist() == [False, True, True, True] and rows["turn"].tolist()[1:] == [1, 1, 1]
    assert rows["text"][1] == '[calls get_weather (call call_1) with arguments {"city": "Paris"}]'
    assert rows["text"][2] == '[result of get_weather (call call_1)]\n{"temp_c": 18}'
    shown = model.conversation_html(2)
    assert "data-role='tool'" in shown and "[calls get_weather (call call_1) with arguments {&quot;city&quot;" in shown


def test_for_the_whole_conversation_every_assistant_turn_is_judged() -> None:
    model = DisagreementModel(panel_result([CHAT], target="whole"))
    rows = model.turns(0)
    assert rows["judged"].tolist() == [False, False, True, False, True]
    assert "the whole conversation" in model.conversation_html(0) and not model.per_turn
    assert "later message" not in model.conversation_html(0)


def test_markup_in_a_turn_is_shown_as_text() -> None:
    result = panel_result([MARKUP], target="last_turn")
    shown = DisagreementModel(result).conversation_html(0)
    assert "<script" not in shown and "<img" not in shown and "<b>hi" not in shown
    assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;" in shown and "&lt;img src=x onerror" in shown
    explorer = jw.DisagreementExplorer(result)
    assert "<script" not in explorer.details.value and "&lt;script&gt;" in explorer.details.value
    assert "Say hi <script>" in explorer.picker.label  # a dropdown's labels are plain text: shown as written


def test_an_item_without_a_conversation_shows_prompt_and_response() -> None:
    result = jw.LLMPanel([scripted("strict")]).score(["Dinner?"], ["Chicken."], progress=False)
    model = DisagreementModel(result)
    assert model.conversation_html(0) == "" and model.turns(0).empty and not model.per_turn
    # the same columns as a conversation's turns, so code reading `judged` or `read` works on either
    assert list(model.turns(0).columns) == list(DisagreementModel(panel_result([CHAT])).turns(0).columns)
    explorer = jw.DisagreementExplorer(result)
    assert "<b>Prompt:</b> Dinner?" in explorer.details.value and explorer.turn_chart is None


def test_the_per_turn_heatmap_has_a_cell_per_judged_turn() -> None:
    result = panel_result([CHAT, AGENT, CHAT])
    spec = result.turn_chart().to_dict()
    data = pd.DataFrame(next(iter(spec["datasets"].values())))
    consensus = data[data["judge"] == "consensus"]
    assert consensus[["conversation", "turn"]].values.tolist() == [[0, 1], [0, 2], [1, 1], [2, 1], [2, 2]]
    assert consensus["score_text"].tolist() == ["1.00", "0.50", "failed", "1.00", "0.50"]
    assert consensus["error"].tolist()[2] == "2 of 2 judges failed"
    assert set(data["judge"]) == {"consensus", "strict", "lenient"}
    assert data[data["judge"] == "strict"]["score_text"].tolist() == ["1.00", "0.00", "failed", "1.00", "0.00"]
    assert consensus["reply"].tolist()[1] == "Grilled chicken with lentils."
    assert consensus["user"].tolist()[1] == "Something with more protein?"
    heat = spec["layer"][0]["encoding"]
    assert (heat["x"]["field"], heat["y"]["field"]) == ("turn", "conversation")
    assert {"reply", "user", "error"} <= {t["field"] for t in heat["tooltip"]}
    found = params(spec)
    assert found["pick"]["select"] == {"type": "point", "fields": ["item"], "on": "click"}
    assert found["shown"]["value"] == "consensus"
    assert found["shown"]["bind"]["options"] == ["consensus", "strict", "lenient"]
    assert spec["transform"] == [{"filter": "(datum.judge === shown)"}]
    assert params(result.turn_chart(judge="lenient").to_dict())["shown"]["value"] == "lenient"
    v5 = {**spec, "$schema": "https://vega.github.io/schema/vega-lite/v5.json"}
    signals = {s["name"] for s in vl_convert.vegalite_to_vega(v5, vl_version="5.8")["signals"]}
    assert {"pick", "shown"} <= signals  # JupyterLab's Vega-Lite 5 builds the pick and the list


def test_a_single_judges_per_turn_heatmap() -> None:
    result = scripted("strict").score(conversations=[CHAT, AGENT], target="each_turn", progress=False)
    spec = result.turn_chart().to_dict()
    data = pd.DataFrame(next(iter(spec["datasets"].values())))
    assert data[["conversation", "turn", "score_text"]].values.tolist() == [
        [0, 1, "1.00"],
        [0, 2, "0.00"],
        [1, 1, "failed"],
    ]
    assert set(params(spec)) == {"pick"} and spec["title"]["text"] == "Scores per assistant turn: strict"


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: panel_result([CHAT], target="last_turn"), "of conversation 0's 2 turns only turn 2 was"),
        (lambda: panel_result([CHAT], target="whole"), "judges whole conversations"),
        (lambda: scripted("s").score(["q"], ["a"], progress=False), "judges prompts and responses"),
        (lambda: panel_result([CHAT, AGENT]).turn_chart(judge="nobody"), "no judge 'nobody'"),
    ],
)
def test_a_result_without_a_judgment_per_turn_has_no_turn_chart(make: Any, message: str) -> None:
    with pytest.raises(jw.InputError, match=message) as raised:
        make().turn_chart()
    assert "target='each_turn'" in str(raised.value) or "nobody" in message


def test_clicking_a_turn_shows_that_turn() -> None:
    result = panel_result([CHAT, AGENT])
    explorer = jw.DisagreementExplorer(result)
    assert explorer.model.per_turn and explorer.widget.children[0] is explorer.turn_chart
    assert explorer.turn_chart.params.shown == "consensus"
    set_selection(explorer.turn_chart, "pick", {"vlPoint": {"or": [{"item": 1}]}})
    assert explorer.picker.value == 1
    shown = explorer.details.value
    assert "conversation 0, assistant turn 2 of 2" in shown and "Grilled chicken with lentils." in shown
    assert re.search(r"<td[^>]*><code>strict</code></td><td[^>]*>0\.00</td>", shown)  # each judge's vote on that turn
    assert "conversation 0, turn 2: Something with more protein?" in explorer.picker.label
    set_selection(explorer.turn_chart, "pick", None)  # a double-click clears the pick: the turn stays shown
    assert explorer.picker.value == 1
    assert jw.DisagreementExplorer(panel_result([CHAT], target="last_turn")).turn_chart is None
