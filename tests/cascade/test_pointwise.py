"""Pointwise cascades: LLMJudge / LLMPanel stages, verdicts as answer labels or pass/fail at a threshold."""

from __future__ import annotations

import re
from collections.abc import Callable

import pandas as pd
import pytest

import judgewidgets as jw
from judgewidgets.testing import ScriptedTransport
from tests.cascade.helpers import verdict_completion
from tests.fakes import user_text


def verdicts(p_correct: Callable[[str, str], float]) -> ScriptedTransport:
    """A true_false judge: P("correct") = p_correct(prompt, response)."""

    def reply(request, attempt):  # type: ignore[no-untyped-def]
        text = user_text(request)
        prompt = re.search(r"<question>\n(.*?)\n</question>", text, re.S).group(1)  # type: ignore[union-attr]
        response = re.search(r"<response>\n(.*?)\n</response>", text, re.S).group(1)  # type: ignore[union-attr]
        p = p_correct(prompt, response)
        dist = {"correct": p, "in": 1 - p} if p >= 0.5 else {"in": 1 - p, "correct": p}
        return verdict_completion("correct" if p >= 0.5 else "incorrect", dist, 12, 0.0005)

    return ScriptedTransport(reply)


def scorer(p_correct: Callable[[str, str], float], name: str) -> jw.LLMJudge:
    return jw.LLMJudge(
        f"openai/{name}",
        name=name,
        template="true_false",
        probability_weighted=True,
        transport=verdicts(p_correct),
        cache=False,
    )


def rows(kinds: list[str], offset: int = 0) -> pd.DataFrame:
    """Prompt "<kind> i"; the response is right on even i ("right"), wrong on odd ("wrong")."""
    out = []
    for i, kind in enumerate(kinds):
        right = i % 2 == 0
        out.append(
            {
                "prompt": f"{kind} {offset + i}",
                "response": "right" if right else "wrong",
                "label": "correct" if right else "incorrect",
            }
        )
    return pd.DataFrame(out)


def cheap(prompt: str, response: str) -> float:
    """Sure and right on easy rows; on hard ones it says 60 % "correct" whatever the response."""
    if prompt.startswith("easy"):
        return 0.98 if response == "right" else 0.02
    return 0.6


def strong(prompt: str, response: str) -> float:
    return 0.92 if response == "right" else 0.08


LABELLED = rows(["easy"] * 40 + ["hard"] * 40)
NEW = rows(["easy"] * 10 + ["hard"] * 10, offset=500)


def test_label_verdicts_from_the_judges_probabilities() -> None:
    cascade = jw.Cascade([scorer(cheap, "cheap"), scorer(strong, "strong")], target_agreement=0.9, delta=0.2)
    assert cascade.labels == ("correct", "incorrect")
    assert cascade.sources == ["the judge's probability of its verdict"] * 2
    calibration = cascade.calibrate(LABELLED, progress=False)
    assert calibration.thresholds == [pytest.approx(0.98), pytest.approx(0.92)]
    result = cascade.run(NEW, progress=False)
    assert result.table["stage"].tolist() == ["cheap"] * 10 + ["strong"] * 10
    assert result.table["verdict"].tolist() == NEW["label"].tolist() and result.agreement == 1.0
    assert result.table["cost_usd"].tolist() == pytest.approx([0.0005] * 10 + [0.001] * 10)


def test_pass_fail_verdicts_at_a_threshold_with_boolean_labels() -> None:
    labelled = LABELLED.assign(label=LABELLED["label"] == "correct")  # True / False
    cascade = jw.Cascade(
        [scorer(cheap, "cheap"), scorer(strong, "strong")], target_agreement=0.9, delta=0.2, pass_threshold=0.5
    )
    assert cascade.labels == ("pass", "fail")
    cascade.calibrate(labelled, progress=False)
    result = cascade.run(NEW.assign(label=(NEW["label"] == "correct").astype(int)), progress=False)
    assert result.table["verdict"].tolist()[:4] == ["pass", "fail", "pass", "fail"]
    assert result.agreement == 1.0 and result.coverage == 1.0


def test_a_panel_stage_is_confident_by_its_vote_share() -> None:
    def wobbly(shift: float) -> Callable[[str, str], float]:
        def p(prompt: str, response: str) -> float:
            if prompt.startswith("easy"):
                return strong(prompt, response)
            return 0.8 if int(prompt.split()[1]) % 3 == int(shift) else 0.2  # the three disagree on hard rows

        return p

    panel = jw.LLMPanel([scorer(wobbly(k), f"v{k}") for k in range(3)])
    cascade = jw.Cascade([panel], target_agreement=0.9, delta=0.1)
    assert cascade.sources == ["vote share of 3 judges"]
    calibration = cascade.calibrate(LABELLED, progress=False)
    assert calibration.thresholds == [1.0]  # unanimous only
    assert calibration.confidence[40:, 0].tolist() == pytest.approx([2 / 3] * 40)
    result = cascade.run(NEW, progress=False)
    assert result.table["abstained"].tolist() == [False] * 10 + [True] * 10
    assert (result.table["calls"] == 3).all()


def test_simulated_annotators_for_pointwise_and_pairwise_judges() -> None:
    base = jw.LLMJudge("openai/p", template="true_false", name="base")
    panel = jw.cascade.simulated_annotators(base)
    assert isinstance(panel, jw.LLMPanel) and len(panel.judges) == 3
    instructions = [j.template.instruction for j in panel.judges]
    assert len(set(instructions)) == 3 and all(i.endswith(base.template.instruction) for i in instructions)
    assert panel.names == ["base · wording 1", "base · wording 2", "base · wording 3"]
    pairwise = jw.cascade.simulated_annotators(jw.PairwiseJudge("openai/m"), ["Pick the better.", "Which is best?"])
    assert isinstance(pairwise, jw.PairwisePanel) and [j.instruction for j in pairwise.judges] == [
        "Pick the better.",
        "Which is best?",
    ]
    assert jw.Cascade([pairwise]).sources == ["vote share of 2 judges"]
    with pytest.raises(jw.ConfigurationError, match="at least two"):
        jw.cascade.simulated_annotators(base, ["only one"])
    with pytest.raises(jw.ConfigurationError, match="must differ"):
        jw.cascade.simulated_annotators(base, ["same", "same"])
    with pytest.raises(jw.ConfigurationError, match="PairwiseJudge or LLMJudge"):
        jw.cascade.simulated_annotators(panel)  # type: ignore[arg-type]


def test_panels_must_share_labels() -> None:
    mixed = jw.LLMPanel(
        [
            jw.LLMJudge("openai/a", template="true_false", name="a"),
            jw.LLMJudge("openai/b", template="likert", name="b"),
        ]
    )
    with pytest.raises(jw.ConfigurationError, match="different labels"):
        jw.Cascade([mixed])
    assert jw.Cascade([mixed], pass_threshold=0.5).labels == ("pass", "fail")


def test_the_estimate_gives_a_duration_at_each_stages_reach_when_the_limits_are_known() -> None:
    def limited(name: str, rpm: float | None) -> jw.LLMJudge:
        return jw.LLMJudge(f"openai/{name}", name=name, template="true_false", rpm=rpm, transport=verdicts(cheap))

    unknown = jw.Cascade([limited("cheap", None), limited("strong", None)], target_agreement=0.9)
    assert unknown.estimate_cost(NEW).duration_s is None and "rate limits" not in str(unknown.estimate_cost(NEW))
    cascade = jw.Cascade([limited("cheap", 600), limited("strong", 60)], target_agreement=0.9)
    before = cascade.estimate_cost(NEW)  # every item reaches every stage: the slow endpoint binds, 20 calls at 60/min
    assert before.duration_s == pytest.approx(20 / 60 * 60 / 0.97)
    assert "about 21 s at the known rate limits" in str(before) and "judges_all" not in before.to_df().columns
    half = before.model_copy(update={"stages": [before.stages[0], before.stages[1].model_copy(update={"reach": 0.5})]})
    assert half.duration_s == pytest.approx(10 / 60 * 60 / 0.97)  # half the items reach the slow stage
