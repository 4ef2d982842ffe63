"""Bad input gets one clear error from the documented tree, before any call is made."""

from __future__ import annotations

import pandas as pd
import pytest

import judgewidgets as jw
from judgewidgets.testing import ScriptedTransport
from tests.cascade.helpers import pairs, pairwise_judge

LABELLED = pairs(["easy"] * 40)


def judge(name: str = "j") -> jw.PairwiseJudge:
    return pairwise_judge(lambda q: 0.9, name)


def requests(cascade: jw.Cascade) -> int:
    return sum(len(s.judge.settings.transport.requests) for s in cascade.stages)


@pytest.mark.parametrize("target", [0, 1, 1.2, -0.5, float("nan")])
def test_target_outside_the_unit_interval(target: float) -> None:
    with pytest.raises(jw.ConfigurationError, match="target_agreement must lie strictly between 0 and 1"):
        jw.Cascade([judge()], target_agreement=target)


@pytest.mark.parametrize("delta", [0, 1, 2])
def test_delta_outside_the_unit_interval(delta: float) -> None:
    with pytest.raises(jw.ConfigurationError, match="delta must lie strictly between 0 and 1"):
        jw.Cascade([judge()], delta=delta)


def test_no_judges() -> None:
    with pytest.raises(jw.ConfigurationError, match="at least one judge"):
        jw.Cascade([])
    with pytest.raises(jw.ConfigurationError, match="as a list"):
        jw.Cascade("local")  # type: ignore[arg-type]


def test_not_a_judge_and_mixed_kinds() -> None:
    with pytest.raises(jw.ConfigurationError, match="stage 'x' is a int"):
        jw.Cascade([3], names=["x"])
    pointwise = jw.LLMJudge("openai/p", template="true_false", probability_weighted=True)
    with pytest.raises(jw.ConfigurationError, match="all judge pairs or all judge single responses"):
        jw.Cascade([judge(), pointwise])
    with pytest.raises(jw.ConfigurationError, match="pass_threshold is for pointwise"):
        jw.Cascade([judge()], pass_threshold=0.5)


def test_judges_without_confidence() -> None:
    blind = jw.PairwiseJudge("openai/m", method="probability", probability_weighted=False)
    with pytest.raises(jw.ConfigurationError, match="reads its confidence from logprobs"):
        jw.Cascade([blind])
    blind_pointwise = jw.PairwiseJudge("openai/m", method="pointwise", probability_weighted=False)
    with pytest.raises(jw.ConfigurationError, match="reads its confidence from logprobs"):
        jw.Cascade([blind_pointwise])
    with pytest.raises(jw.ConfigurationError, match="panel of one judge"):
        jw.Cascade([jw.PairwisePanel([judge()])])
    scorer = jw.LLMJudge("openai/p", template="true_false", probability_weighted=False)
    with pytest.raises(jw.ConfigurationError, match="gives no confidence"):
        jw.Cascade([scorer])
    wide = jw.LLMJudge("openai/p", template="continuous", probability_weighted=True)
    with pytest.raises(jw.ConfigurationError, match="pass_threshold"):
        jw.Cascade([wide])  # no answer labels
    with pytest.raises(jw.ConfigurationError, match="cannot be told apart"):
        jw.Cascade([wide], pass_threshold=0.5)
    # A judge that states its confidence is usable.
    assert jw.Cascade([jw.PairwiseJudge("openai/m", method="verdict")]).sources == ["the judge's stated confidence"]


def test_stage_names_must_be_unique_and_match() -> None:
    with pytest.raises(jw.ConfigurationError, match="unique"):
        jw.Cascade([judge("a"), judge("b")], names=["x", "x"])
    with pytest.raises(jw.ConfigurationError, match="1 names given for 2 judges"):
        jw.Cascade([judge("a"), judge("b")], names=["x"])
    assert jw.Cascade([judge("a"), judge("a")]).names == ["a", "a #2"]


def test_calibration_input_errors_come_before_any_call() -> None:
    cascade = jw.Cascade([judge("a"), judge("b")], target_agreement=0.9, delta=0.1)
    with pytest.raises(jw.InputError, match="no label column 'gold'"):
        cascade.calibrate(LABELLED, label="gold", progress=False)
    with pytest.raises(jw.InputError, match="no label at rows 3"):
        cascade.calibrate(LABELLED.assign(label=[*["A"] * 3, None, *["A"] * 36]), progress=False)
    with pytest.raises(jw.InputError, match=r"labels 'C', 'a' in column 'label' are not among .*A, B, tie"):
        cascade.calibrate(LABELLED.assign(label=["a", "C"] * 20), progress=False)
    with pytest.raises(jw.InputError, match="lacks column"):
        cascade.calibrate(LABELLED.drop(columns="response_b"), progress=False)
    with pytest.raises(jw.InputError, match="DataFrame"):
        cascade.calibrate([("q", "a", "b", "A")], progress=False)  # type: ignore[arg-type]
    with pytest.raises(jw.InputError, match="nothing to compare"):
        cascade.calibrate(LABELLED.iloc[:0], progress=False)
    with pytest.raises(jw.InputError, match=r"28 labelled rows cannot certify 90.0% .* at least 29 rows"):
        cascade.calibrate(LABELLED.iloc[:28], progress=False)
    assert cascade.minimum_labelled_rows() == 29
    assert requests(cascade) == 0


def test_run_before_calibrating_and_bad_run_input_make_no_call() -> None:
    cascade = jw.Cascade([judge()], target_agreement=0.9, delta=0.1)
    with pytest.raises(jw.ConfigurationError, match="calibrate the cascade"):
        cascade.run(LABELLED, progress=False)
    cascade.calibrate(LABELLED, progress=False)
    made = requests(cascade)
    with pytest.raises(jw.InputError, match="not among"):
        cascade.run(LABELLED.assign(label="X"), progress=False)
    with pytest.raises(jw.InputError, match="no label column 'gold'"):
        cascade.run(LABELLED, label="gold", progress=False)
    assert requests(cascade) == made


def test_a_stage_that_never_answers_is_named() -> None:
    failing = jw.PairwiseJudge(
        "openai/down", method="probability", transport=ScriptedTransport(lambda r, a: "no verdict here"), cache=False
    )
    cascade = jw.Cascade([failing], target_agreement=0.9, delta=0.1)
    with pytest.raises(jw.ConfigurationError, match="stage 'openai/down' gave no confident verdict on any of the 40"):
        cascade.calibrate(LABELLED, progress=False)


def test_pointwise_label_errors() -> None:
    scorer = jw.LLMJudge("openai/p", template="true_false", probability_weighted=True, transport=ScriptedTransport(str))
    cascade = jw.Cascade([scorer], target_agreement=0.8, delta=0.2)
    rows = pd.DataFrame({"prompt": ["q"] * 30, "response": ["r"] * 30, "label": ["correct", "wrong"] * 15})
    with pytest.raises(jw.InputError, match=r"'wrong' .* \(correct, incorrect\)"):
        cascade.calibrate(rows, progress=False)
    with pytest.raises(jw.InputError, match="prompt, response"):
        cascade.calibrate(rows.rename(columns={"prompt": "question"}), progress=False)
    passing = jw.Cascade([scorer], target_agreement=0.8, delta=0.2, pass_threshold=0.5)
    with pytest.raises(jw.InputError, match="True/False or 1/0"):
        passing.calibrate(rows, progress=False)
    with pytest.raises(jw.ConfigurationError, match=r"pass_threshold must be a normalised score in \[0, 1\]"):
        jw.Cascade([scorer], pass_threshold=2)
    assert len(scorer.settings.transport.requests) == 0
