"""EvaluationPipeline with fake judges of every kind: normalisation, weighted mean, confidence, review, errors."""

from __future__ import annotations

import json
import math
import re

import pandas as pd
import pytest

import judgewidgets as jw
from judgewidgets.aspects import AspectEvaluator
from judgewidgets.engine._litellm import CallFailure
from judgewidgets.pipeline import (
    AspectStage,
    EvaluationPipeline,
    JudgeStage,
    PairwiseStage,
    PipelineStage,
    RubricStage,
    StageScore,
)
from judgewidgets.rubrics import Dimension, LeveledRubric
from judgewidgets.testing import ScriptedTransport
from tests.fakes import user_text
from tests.pairwise.helpers import prefers

PROMPTS = ["What is the capital of France?", "What is 2 + 2?"]
RESPONSES = ["Paris.", "5."]


def likert(scores: dict[str, int | None]) -> jw.LLMJudge:
    """A likert judge scoring each response by its text; None fails the call."""

    def reply(request, attempt):  # type: ignore[no-untyped-def]
        response = re.search(r"<response>\n(.*?)\n</response>", user_text(request), re.S).group(1)
        if scores[response] is None:
            raise CallFailure("provider down", status_code=404)
        return json.dumps({"score": scores[response]})

    # no cache: two fake judges of the same model would otherwise share their answers
    return jw.LLMJudge("openai/m", structured_output=True, cache=False, transport=ScriptedTransport(reply))


def test_two_judge_seed_pipeline_weighted_mean_confidence_and_review() -> None:
    pipeline = EvaluationPipeline(
        judges={"quality": likert({"Paris.": 5, "5.": 1}), "correctness": likert({"Paris.": 4, "5.": 2})},
        weights={"quality": 0.6, "correctness": 0.4},
    )
    df = pipeline.run(PROMPTS, RESPONSES, progress=False)
    assert list(df.columns) == [
        "prompt",
        "response",
        "final_score",
        "confidence",
        "spread",
        "needs_human_review",
        "review_reasons",
        "quality",
        "quality_error",
        "quality_detail",
        "correctness",
        "correctness_error",
        "correctness_detail",
    ]
    first, second = df.iloc[0], df.iloc[1]
    assert first["quality"] == 1.0 and first["correctness"] == 0.75  # likert (s − 1) / 4
    assert first["final_score"] == pytest.approx(0.6 * 1.0 + 0.4 * 0.75)
    assert first["spread"] == pytest.approx(0.25) and first["confidence"] == pytest.approx(0.75)
    assert not first["needs_human_review"] and first["review_reasons"] == []
    assert second["final_score"] == pytest.approx(0.4 * 0.25)
    assert second["review_reasons"] == ["low final score (0.10 < 0.50)"]


def test_spread_above_max_spread_flags_disagreement() -> None:
    judges = {"a": likert({"x": 5}), "b": likert({"x": 3})}
    df = EvaluationPipeline(judges, max_spread=0.3).run("q", "x", progress=False)
    assert df.loc[0, "spread"] == 0.5 and df.loc[0, "confidence"] == 0.5
    assert df.loc[0, "review_reasons"] == ["stages disagree (spread 0.50 > 0.30)"]
    df = EvaluationPipeline(judges, max_spread=None).run("q", "x", progress=False)
    assert not df.loc[0, "needs_human_review"]


def test_min_score_is_configurable_and_can_be_switched_off() -> None:
    judges = {"a": likert({"x": 3})}
    assert EvaluationPipeline(judges, min_score=0.6).run("q", "x", progress=False).loc[0, "needs_human_review"]
    assert not EvaluationPipeline(judges, min_score=0.5).run("q", "x", progress=False).loc[0, "needs_human_review"]
    assert not EvaluationPipeline(judges, min_score=None).run("q", "x", progress=False).loc[0, "needs_human_review"]


def test_failed_stage_is_flagged_and_the_rest_still_score() -> None:
    judges = {"a": likert({"x": 5}), "b": likert({"x": None})}
    df = EvaluationPipeline(judges, weights={"a": 3, "b": 1}).run("q", "x", progress=False)
    row = df.iloc[0]
    assert row["final_score"] == 1.0 and math.isnan(row["b"])
    assert row["confidence"] == pytest.approx(0.75)  # (1 − 0) × 3 / 4: the failed stage's weight is missing
    assert row["needs_human_review"] and row["review_reasons"][0].startswith("b failed: infrastructure:")
    assert "provider down" in row["b_error"]
    quiet = EvaluationPipeline(judges, weights={"a": 3, "b": 1}, flag_failures=False).run("q", "x", progress=False)
    assert not quiet.loc[0, "needs_human_review"]


def test_every_stage_failing_gives_nan_not_zero_and_is_always_flagged() -> None:
    judges = {"a": likert({"x": None}), "b": likert({"x": None})}
    df = EvaluationPipeline(judges, flag_failures=False, min_score=None, max_spread=None).run("q", "x", progress=False)
    row = df.iloc[0]
    assert math.isnan(row["final_score"]) and math.isnan(row["spread"]) and row["confidence"] == 0.0
    assert row["needs_human_review"] and row["review_reasons"] == ["no stage produced a score"]


def test_zero_weight_stage_is_reported_but_not_counted() -> None:
    df = EvaluationPipeline({"a": likert({"x": 5}), "shadow": likert({"x": 1})}, weights={"a": 1, "shadow": 0}).run(
        "q", "x", progress=False
    )
    assert df.loc[0, "shadow"] == 0.0 and df.loc[0, "final_score"] == 1.0 and df.loc[0, "spread"] == 0.0


def test_panel_stage_uses_the_panels_weighted_mean_over_answering_judges() -> None:
    panel = jw.LLMPanel(
        [likert({"x": 5}).with_options(name="j1", weight=3), likert({"x": 1}).with_options(name="j2", weight=1)]
    )
    stage = JudgeStage(panel)
    assert stage.kind == "panel"
    df = EvaluationPipeline({"panel": panel}).run("q", "x", progress=False)
    assert df.loc[0, "panel"] == pytest.approx(0.75) and df.loc[0, "panel_detail"] == "2 of 2 judges answered"
    partial = jw.LLMPanel([likert({"x": 5}).with_options(name="j1"), likert({"x": None}).with_options(name="j2")])
    row = EvaluationPipeline({"panel": partial}).run("q", "x", progress=False).iloc[0]
    assert row["panel"] == 1.0 and row["review_reasons"][0].startswith("panel partly failed: j2: infrastructure")


def test_calibrated_judge_stage_shows_anchors() -> None:
    transport = ScriptedTransport(lambda request, attempt: json.dumps({"score": 4}))
    calibrated = jw.LLMJudge(
        "openai/m",
        structured_output=True,
        transport=transport,
        anchors=[jw.Anchor(prompt="2+2?", response="4", score=5)],
    )
    assert JudgeStage(calibrated).kind == "calibrated"
    df = EvaluationPipeline({"calibrated": calibrated}).run("q", "x", progress=False)
    assert df.loc[0, "calibrated"] == 0.75
    assert "Calibration examples" in transport.requests[0].messages[0]["content"]


def test_rubric_stage_scores_the_report_score_with_prompt_as_query() -> None:
    def reply(request, attempt):  # type: ignore[no-untyped-def]
        requirement = re.search(r"^Criterion: (.+)$", request.messages[0]["content"], re.M).group(1)
        return json.dumps({"verdict": "MET" if requirement == "Names Paris" else "UNMET", "explanation": "."})

    transport = ScriptedTransport(reply)
    grader = jw.CriterionGrader([jw.LLMJudge("openai/m", structured_output=True, transport=transport)])
    rubric = jw.Rubric([jw.Criterion("Names Paris", weight=3), jw.Criterion("Cites a source", weight=1)])
    df = EvaluationPipeline({"rubric": (rubric, grader)}).run(
        PROMPTS[0], "Paris.", contexts=["Paris is the capital."], progress=False
    )
    assert df.loc[0, "rubric"] == pytest.approx(0.75)
    text = user_text(transport.requests[0])
    assert PROMPTS[0] in text and "<context>" in text


def test_leveled_rubric_stage_scores_its_graded_percentage() -> None:
    levels = {5: "Right", 3: "Partly", 1: "Wrong"}

    def reply(request, attempt):  # type: ignore[no-untyped-def]
        shown = dict(re.findall(r"^(\d+)\. (.+)$", request.messages[0]["content"], re.M))
        return json.dumps({"selected_option": int({v: k for k, v in shown.items()}["Partly"]), "explanation": "."})

    rubric = LeveledRubric([Dimension("accuracy", 1, levels)])
    stage = RubricStage(rubric, jw.LLMJudge("openai/m", structured_output=True, transport=ScriptedTransport(reply)))
    assert stage.kind == "leveled_rubric"
    df = EvaluationPipeline({"rag": stage}).run("q", "x", progress=False)
    assert df.loc[0, "rag"] == pytest.approx(0.6) and df.loc[0, "rag_detail"] == "grade D (60% weighted)"


def test_aspect_stage_scores_the_average_aspect_score() -> None:
    scores = {"relevance": 5, "clarity": 2}

    def reply(request, attempt):  # type: ignore[no-untyped-def]
        name = re.search(r"^Aspect: (\w+)$", request.messages[0]["content"], re.M).group(1)
        return json.dumps({"explanation": ".", "score": scores[name]})

    evaluator = AspectEvaluator(
        ["relevance", "clarity"],
        judge=jw.LLMJudge("openai/m", structured_output=True, transport=ScriptedTransport(reply)),
    )
    assert isinstance(EvaluationPipeline({"aspects": evaluator}).stages["aspects"], AspectStage)
    df = EvaluationPipeline({"aspects": evaluator}).run("q", "x", progress=False)
    assert df.loc[0, "aspects"] == pytest.approx((1.0 + 0.25) / 2)
    assert df.loc[0, "aspects_detail"] == "below threshold: clarity"


def test_pairwise_stage_scores_win_tie_loss_against_the_baseline() -> None:
    quality = {"great": 3, "fine": 2, "poor": 1}
    judge = jw.PairwiseJudge("openai/m", structured_output=True, transport=prefers(lambda text: quality[text]))
    pipeline = EvaluationPipeline({"vs_baseline": judge}, min_score=None)
    assert isinstance(pipeline.stages["vs_baseline"], PairwiseStage)
    df = pipeline.run(["q1", "q2", "q3"], ["great", "fine", "poor"], baselines=["fine", "fine", "fine"], progress=False)
    assert df["vs_baseline"].tolist() == [1.0, 0.5, 0.0]
    assert df["baseline"].tolist() == ["fine"] * 3
    assert df.loc[0, "vs_baseline_detail"] == "win against the baseline"
    with pytest.raises(jw.InputError, match="baseline"):
        pipeline.run("q", "great", progress=False)
    with pytest.raises(jw.InputError, match="positions 1"):
        pipeline.run(["q", "q"], ["a", "b"], baselines=["fine", None], progress=False)


class ConstantStage:
    """A user-written stage implementing the PipelineStage protocol."""

    def __init__(self, score: float) -> None:
        self.score = score

    async def ascore(self, items, session):  # type: ignore[no-untyped-def]
        return [StageScore(score=self.score, detail="constant") for _ in items]


class BrokenStage:
    async def ascore(self, items, session):  # type: ignore[no-untyped-def]
        raise RuntimeError("bug in stage")


def test_custom_stages_through_the_protocol_and_their_failures() -> None:
    assert isinstance(ConstantStage(0.5), PipelineStage)
    df = EvaluationPipeline(
        {"const": ConstantStage(0.8), "out_of_range": ConstantStage(1.5), "broken": BrokenStage()}
    ).run(["q", "q2"], ["x", "y"], progress=False)
    assert df["final_score"].tolist() == [0.8, 0.8]
    assert df.loc[0, "out_of_range_error"] == "score 1.5 outside [0, 1]" and math.isnan(df.loc[0, "out_of_range"])
    assert df.loc[0, "broken_error"] == "RuntimeError: bug in stage"
    assert len(df.loc[0, "review_reasons"]) == 2


async def test_async_twin_matches_sync() -> None:
    pipeline = EvaluationPipeline({"a": likert({"Paris.": 5, "5.": 1}), "b": ConstantStage(0.5)})
    sync = pipeline.run(PROMPTS, RESPONSES, progress=False)
    both = await pipeline.arun(PROMPTS, RESPONSES, progress=False)
    pd.testing.assert_frame_equal(sync, both)


def test_references_are_passed_and_shown() -> None:
    judge = likert({"Paris.": 5})
    df = EvaluationPipeline({"a": judge}).run(PROMPTS[0], "Paris.", references=["Paris"], progress=False)
    assert df.columns[2] == "reference" and df.loc[0, "reference"] == "Paris"
    assert "<reference>" in user_text(judge.settings.transport.requests[0])


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"weights": {"a": 0, "b": 0}}, "sum to 0"),
        ({"weights": {"a": -1, "b": 2}}, "weight of stage 'a'"),
        ({"weights": {"a": 1, "b": math.nan}}, "weight of stage 'b'"),
        ({"weights": {"a": 1, "b": 1, "c": 1}}, "unknown stage.*'c'"),
        ({"weights": {"a": 1}}, "no weight for stage.*b"),
        ({"max_spread": 1.5}, "max_spread"),
        ({"min_score": -0.1}, "min_score"),
        ({"min_score": True}, "min_score"),
        ({"flag_failures": "yes"}, "flag_failures"),
    ],
)
def test_bad_configuration_raises(kwargs: dict, message: str) -> None:
    with pytest.raises(jw.ConfigurationError, match=message):
        EvaluationPipeline({"a": ConstantStage(1), "b": ConstantStage(1)}, **kwargs)


def test_bad_stages_raise() -> None:
    with pytest.raises(jw.ConfigurationError, match="stage 'x' is a int"):
        EvaluationPipeline({"x": 3})
    with pytest.raises(jw.ConfigurationError, match="column"):
        EvaluationPipeline({"final_score": ConstantStage(1)})
    with pytest.raises(jw.ConfigurationError, match="non-empty"):
        EvaluationPipeline({})
    assert isinstance(EvaluationPipeline({"r": jw.Rubric([jw.Criterion("x")])}).stages["r"], RubricStage)


def test_pipeline_result_feeds_the_review_queue() -> None:
    from judgewidgets.jupyter import ReviewQueueModel

    pipeline = EvaluationPipeline(
        judges={"quality": likert({"Paris.": 5, "5.": 1}), "correctness": likert({"Paris.": 4, "5.": None})},
        min_score=0.5,
    )
    df = pipeline.run(PROMPTS, RESPONSES, progress=False)
    model = ReviewQueueModel(df)
    assert model.queue == [1]  # low score and a failed stage
    views = model.views(1).set_index("judge")
    assert list(views.index) == ["quality", "correctness"]
    assert views.loc["quality", "score"] == 0.0 and math.isnan(views.loc["correctness", "score"])
    assert "provider down" in views.loc["correctness", "error"]
    model.label(1, "fail")
    agreement = model.agreement().set_index("judge")
    assert agreement.loc["quality", "agreement"] == 1.0 and agreement.loc["correctness", "labelled"] == 0
    queue = jw.ReviewQueue(df)
    assert "1 of 1 flagged" in queue.card.value and "correctness failed" in queue.card.value
    with pytest.raises(jw.InputError, match="already flagged"):
        ReviewQueueModel(df, jw.ReviewPolicy())
