"""The evaluation pipeline and the aspect evaluator judging conversations: every stage kind reads the fenced turns
(judge, rubric, leveled rubric, aspects, pairwise against a baseline reply to the same history), under each
target; stages that cannot judge them are errors before any call."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

import judgewidgets as jw
from judgewidgets.aspects import AspectEvaluator
from judgewidgets.pipeline import EvaluationPipeline
from judgewidgets.rubrics import Dimension, LeveledRubric
from judgewidgets.testing import ScriptedTransport
from tests.conversations.samples import AGENT, CHAT
from tests.fakes import user_text
from tests.pairwise.helpers import prefers, slots

RUBRIC = jw.Rubric.from_yaml("- name: vegetarian\n  requirement: Every dish suggested is vegetarian\n")


def judged(text: str) -> str:
    """What a request judges: its response (or submission) fence, else the whole conversation."""
    for tag in ("response", "submission"):
        if f"<{tag}>" in text:
            return text[text.index(f"<{tag}>") :]
    return text


def answer(request: Any, attempt: int) -> str:
    meat = "chicken" in judged(user_text(request)).lower()
    system = request.messages[0]["content"]
    if '"verdict"' in system and "MET" in system:
        return json.dumps({"verdict": "UNMET" if meat else "MET", "explanation": "checked"})
    return json.dumps({"score": 1 if meat else 5})


def judge(seen: list[str] | None = None) -> jw.LLMJudge:
    def record(request: Any, attempt: int) -> str:
        if seen is not None:
            seen.append(user_text(request))
        return answer(request, attempt)

    return jw.LLMJudge("openai/m", structured_output=True, cache=False, transport=ScriptedTransport(record))


def vegetarian(text: str) -> float:
    return 0.0 if "chicken" in text.lower() else 1.0


def test_every_stage_kind_reads_the_conversation() -> None:
    seen: list[str] = []
    pairwise = jw.PairwiseJudge("openai/p", method="verdict", transport=prefers(vegetarian), cache=False)
    pipeline = EvaluationPipeline(
        {
            "judge": judge(seen),
            "rubric": (RUBRIC, jw.CriterionGrader(judges=[judge(seen)], binary_prompt="met_unmet")),
            "aspects": AspectEvaluator(["relevance"], judge=judge(seen)),
            "pairwise": pairwise,
        }
    )
    table = pipeline.run(conversations=[CHAT], baselines=["Tofu and chickpea curry."], progress=False)
    assert table.loc[0, "turn"] == 2 and table.loc[0, "response"] == "Grilled chicken with lentils."
    assert table.loc[0, "judge"] == 0.0 and table.loc[0, "rubric"] == 0.0 and table.loc[0, "pairwise"] == 0.0
    assert len(seen) == 3 and all(text.startswith("<conversation>") for text in seen)
    requests = pairwise.caller.settings.transport.requests  # type: ignore[union-attr]
    assert slots(requests[0]) == ("Grilled chicken with lentils.", "Tofu and chickpea curry.")


def test_each_turn_and_whole_conversations() -> None:
    pipeline = EvaluationPipeline({"judge": judge(), "rubric": (RUBRIC, jw.CriterionGrader(judges=[judge()]))})
    turns = pipeline.run(conversations=[CHAT, AGENT], target="each_turn", progress=False)
    assert turns[["conversation", "turn"]].values.tolist() == [[0, 1], [0, 2], [1, 1]]
    assert turns["judge"].tolist() == [1.0, 0.0, 1.0]
    whole = pipeline.run(conversations=[CHAT], target="whole", progress=False)
    assert whole.loc[0, "judge"] == 0.0 and whole["turn"].isna().all()
    assert len(pipeline.estimate_cost(conversations=[CHAT], target="each_turn").to_df()) == 2


def leveled_judge(seen: list[str]) -> jw.LLMJudge:
    """A judge of the vegetarian dimension: level 1 when the judged text has chicken in it, else level 2."""

    def reply(request: Any, attempt: int) -> str:
        seen.append(user_text(request))
        shown = {text: n for n, text in re.findall(r"^(\d+)\. (.+)$", request.messages[0]["content"], re.M)}
        meat = "chicken" in judged(seen[-1]).lower()
        return json.dumps({"selected_option": int(shown["Has meat" if meat else "Vegetarian"]), "explanation": "x"})

    return jw.LLMJudge("openai/l", cache=False, transport=ScriptedTransport(reply))


def test_a_leveled_rubric_stage_reads_the_conversation() -> None:
    seen: list[str] = []
    leveled = LeveledRubric([Dimension("vegetarian", levels={2: "Vegetarian", 1: "Has meat"})])
    grader = jw.CriterionGrader(judges=[leveled_judge(seen)], shuffle_options=False)
    pipeline = EvaluationPipeline({"leveled": (leveled, grader)})
    last = pipeline.run(conversations=[CHAT, AGENT], progress=False)
    assert last["leveled"].tolist() == [0.5, 1.0] and last.loc[0, "leveled_detail"] == "grade F (50% weighted)"
    assert all(text.startswith("<conversation>") and "<submission>" in text for text in seen)
    turns = pipeline.run(conversations=[CHAT], target="each_turn", progress=False)
    assert turns[["turn", "leveled"]].values.tolist() == [[1, 1.0], [2, 0.5]]
    seen.clear()
    whole = pipeline.run(conversations=[CHAT], target="whole", progress=False)
    assert whole.loc[0, "leveled"] == 0.5 and "<submission>" not in seen[0]
    assert pipeline.estimate_cost(conversations=[CHAT], target="each_turn").to_df()["calls"].tolist() == [2]


def test_the_aspect_evaluator_takes_conversations() -> None:
    seen: list[str] = []
    result = AspectEvaluator(["relevance"], judge=judge(seen)).evaluate(conversations=[CHAT, AGENT], progress=False)
    assert len(result.items) == 2 and all(text.startswith("<conversation>") for text in seen)


@pytest.mark.parametrize(
    ("stages", "inputs", "message"),
    [
        (
            {"pairwise": jw.PairwiseJudge("openai/p", method="verdict")},
            {"conversations": [CHAT], "target": "whole", "baselines": ["x"]},
            "no turn to reply to",
        ),
        (
            {"leveled": LeveledRubric([Dimension(name="d", levels={1: "a", 2: "b"})])},
            {"conversations": [[{"role": "bot", "content": "x"}]]},
            "unknown role 'bot'",
        ),
        ({"judge": "openai/m"}, {"conversations": [CHAT], "prompts": ["x"]}, "not both"),
        ({"judge": "openai/m"}, {"prompts": ["x"], "responses": ["y"], "target": "whole"}, "target= applies"),
        ({"judge": "openai/m"}, {"conversations": [[{"role": "user", "content": "x"}]]}, "no assistant message"),
    ],
)
def test_stages_that_cannot_judge_conversations_fail_before_any_call(
    stages: dict[str, Any], inputs: dict[str, Any], message: str
) -> None:
    with pytest.raises(jw.InputError, match=message):
        EvaluationPipeline(stages).run(progress=False, **inputs)
