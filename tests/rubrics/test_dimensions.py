"""Leveled rubric dimensions: mapping onto ordinal criteria, percentages, letter grades, context, bad configs."""

from __future__ import annotations

import json
import math
import re

import pytest

import judgewidgets as jw
from judgewidgets.engine._litellm import CallFailure
from judgewidgets.rubrics import Dimension, LeveledRubric
from judgewidgets.testing import ScriptedTransport
from tests.fakes import user_text

QUESTION = "What is the capital of France?"
CONTEXT = "Paris is the capital and most populous city of France."
ANSWER = "The capital of France is Paris."
LEVELS = {5: "All information is factually correct", 3: "Partly correct", 1: "Mostly incorrect or hallucinated"}


def dimension_of(request) -> str:  # type: ignore[no-untyped-def]
    return re.search(r"^Criterion: (\w+)", request.messages[0]["content"], re.M).group(1)


DESCRIPTIONS = {d.levels[k]: k for d in LeveledRubric.rag_quality().dimensions for k in d.levels} | {
    v: k for k, v in LEVELS.items()
}


def level_picker(levels: dict[str, int | None], fail: set[str] = frozenset()):  # type: ignore[no-untyped-def]
    """A fake judge picking a level per dimension (None: the NA option), by the number the option is shown under
    (options show the level's description, never its number)."""

    def reply(request, attempt):  # type: ignore[no-untyped-def]
        system = request.messages[0]["content"]
        name = dimension_of(request)
        if name in fail:
            raise CallFailure("bad request", status_code=400)
        shown = {
            DESCRIPTIONS[text]: int(n)
            for n, text in re.findall(r"^(\d+)\. (.+)$", system, re.M)
            if text in DESCRIPTIONS
        }
        na = re.search(r"^(\d+)\. Cannot assess", system, re.M)
        pick = shown[levels[name]] if levels[name] is not None else int(na.group(1))
        return json.dumps({"selected_option": pick, "explanation": f"{name} is level {levels[name]}"})

    return reply


def judge(reply, name: str | None = None) -> jw.LLMJudge:  # type: ignore[no-untyped-def]
    return jw.LLMJudge("openai/m", name=name, structured_output=True, transport=ScriptedTransport(reply))


def test_dimension_maps_onto_an_ordinal_criterion() -> None:
    dimension = Dimension("accuracy", 0.3, {1: "Wrong", 3: "Partly", 5: "Right"}, description="Is it correct?")
    assert list(dimension.levels) == [5, 3, 1]  # highest first
    criterion = dimension.to_criterion()
    assert criterion.scale_type == "ordinal" and criterion.weight == 0.3 and criterion.name == "accuracy"
    assert criterion.requirement == "accuracy: Is it correct?"
    assert [(o.label, o.value) for o in criterion.options] == [
        ("Right", 1.0),
        ("Partly", 0.5),
        ("Wrong", 0.0),
    ]
    rubric = LeveledRubric([dimension, Dimension("clarity", 0.7, {0: "Unclear", 2: "Clear"})])
    assert isinstance(rubric.rubric, jw.Rubric) and rubric.rubric.names == ["accuracy", "clarity"]


def test_rag_quality_rubric_is_the_seed_one() -> None:
    rag = LeveledRubric.rag_quality()
    assert [(d.name, d.weight) for d in rag.dimensions] == [
        ("accuracy", 0.3),
        ("groundedness", 0.3),
        ("helpfulness", 0.25),
        ("clarity", 0.15),
    ]
    assert all(list(d.levels) == [5, 4, 3, 2, 1] for d in rag.dimensions)
    assert rag.dimensions[0].levels[5] == "All information is factually correct"
    assert rag.grade_cutoffs == {"A": 90, "B": 80, "C": 70, "D": 60} and rag.grade_on == "weighted"


def test_rag_quality_on_the_capital_of_france_with_context() -> None:
    transport = ScriptedTransport(level_picker({"accuracy": 5, "groundedness": 5, "helpfulness": 4, "clarity": 4}))
    grader = jw.CriterionGrader(judges=[jw.LLMJudge("openai/m", structured_output=True, transport=transport)], seed=3)
    report = LeveledRubric.rag_quality().grade(ANSWER, query=QUESTION, context=CONTEXT, grader=grader)
    by_name = {d.name: d for d in report.dimensions}
    assert by_name["accuracy"].level == 5 and by_name["accuracy"].score == 1.0
    assert by_name["clarity"].level == 4 and by_name["clarity"].score == 0.75
    assert by_name["accuracy"].level_description == "All information is factually correct"
    assert by_name["helpfulness"].feedback == "helpfulness is level 4"
    assert report.weighted_percent == pytest.approx(100 * (0.3 * 5 + 0.3 * 5 + 0.25 * 4 + 0.15 * 4) / 5)  # 92
    assert report.raw_percent == pytest.approx(100 * 18 / 20)  # 90
    assert report.grade == "A" and report.percent == report.weighted_percent
    assert report.score == pytest.approx((0.3 + 0.3 + 0.25 * 0.75 + 0.15 * 0.75) / 1.0)
    assert len(transport.requests) == 4
    for request in transport.requests:
        text = user_text(request)
        assert f"<context>\n{CONTEXT}\n</context>" in text and QUESTION in text and ANSWER in text
        assert "<context>" in request.messages[0]["content"]
    assert list(report.to_df()["name"]) == ["accuracy", "groundedness", "helpfulness", "clarity"]


def test_grade_uses_weighted_percent_by_default_and_raw_reproduces_the_seed() -> None:
    picks = {"accuracy": 5, "groundedness": 5, "helpfulness": 3, "clarity": 2}
    weighted = LeveledRubric.rag_quality().grade(ANSWER, QUESTION, CONTEXT, grader=judge(level_picker(picks)))
    raw = LeveledRubric.rag_quality(grade_on="raw").grade(ANSWER, QUESTION, CONTEXT, grader=judge(level_picker(picks)))
    assert weighted.weighted_percent == pytest.approx(81.0) and weighted.raw_percent == pytest.approx(75.0)
    assert weighted.grade == "B"  # 81 % weighted
    assert raw.grade == "C" and raw.percent == pytest.approx(75.0)  # the seed's sum of levels / max possible


def test_custom_cutoffs_fail_grade_and_no_grade() -> None:
    dims = [Dimension("accuracy", 1, LEVELS)]
    reply = level_picker({"accuracy": 3})
    report = LeveledRubric(dims, grade_cutoffs={"pass": 50}, fail_grade="fail").grade("x", grader=judge(reply))
    assert report.raw_percent == pytest.approx(60.0) and report.grade == "pass"
    report = LeveledRubric(dims, grade_cutoffs={"pass": 70}, fail_grade="fail").grade("x", grader=judge(reply))
    assert report.grade == "fail"
    report = LeveledRubric(dims, grade_cutoffs=None).grade("x", grader=judge(reply))
    assert report.grade is None and report.weighted_percent == pytest.approx(60.0)
    assert LeveledRubric(dims).letter(59.99) == "F" and LeveledRubric(dims).letter(60) == "D"


def test_unassessed_and_failed_dimensions_are_left_out_of_the_percentages() -> None:
    dims = [Dimension("accuracy", 3, LEVELS), Dimension("clarity", 1, LEVELS), Dimension("tone", 1, LEVELS)]
    reply = level_picker({"accuracy": 5, "clarity": None, "tone": 1}, fail={"tone"})
    report = LeveledRubric(dims).grade("x", grader=judge(reply))
    by_name = {d.name: d for d in report.dimensions}
    assert by_name["clarity"].level is None and by_name["clarity"].score is None
    assert by_name["tone"].level is None and by_name["tone"].error.startswith("input: ")  # a 400: refused as given
    assert report.weighted_percent == 100.0 and report.raw_percent == 100.0  # only accuracy counts


def test_every_judge_failing_gives_no_percentage_and_no_grade() -> None:
    dims = [Dimension("accuracy", 1, LEVELS)]
    report = LeveledRubric(dims).grade("x", grader=judge(level_picker({}, fail={"accuracy"})))
    assert report.weighted_percent is None and report.raw_percent is None and report.grade is None
    assert report.score is None


def test_ensemble_of_judges_aggregates_levels_and_joins_their_feedback() -> None:
    grader = jw.CriterionGrader(
        judges=[judge(level_picker({"accuracy": 5}), "a"), judge(level_picker({"accuracy": 1}), "b")],
        ordinal_aggregation="min",
    )
    report = LeveledRubric([Dimension("accuracy", 1, LEVELS)]).grade("x", grader=grader)
    assert report.dimensions[0].level == 1
    assert report.dimensions[0].feedback == "a: accuracy is level 5\nb: accuracy is level 1"
    assert report.dimensions[0].agreement == 0.5


async def test_batch_and_async_twins() -> None:
    rubric = LeveledRubric([Dimension("accuracy", 1, LEVELS)])
    reply = level_picker({"accuracy": 3})
    result = rubric.grade_many(["a", "b"], queries=["q1", "q2"], grader=judge(reply), progress=False)
    df = result.to_df()
    assert list(df.columns) == [
        "query",
        "submission",
        "weighted_percent",
        "raw_percent",
        "grade",
        "accuracy",
        "accuracy_feedback",
    ]
    assert df["accuracy"].tolist() == [3, 3] and df["grade"].tolist() == ["D", "D"]  # 3 / 5 = 60 %
    single = await rubric.agrade("a", "q1", grader=judge(reply))
    assert single.weighted_percent == result[0].weighted_percent


def test_criterion_grader_shows_context_to_judges() -> None:
    transport = ScriptedTransport(lambda request, attempt: json.dumps({"verdict": "MET", "explanation": "ok"}))
    grader = jw.CriterionGrader(judges=[jw.LLMJudge("openai/m", structured_output=True, transport=transport)])
    grader.grade(jw.Rubric([jw.Criterion("Is grounded")]), ANSWER, query=QUESTION, context=CONTEXT)
    assert user_text(transport.requests[0]).startswith(f"<context>\n{CONTEXT}\n</context>")
    grader.grade(jw.Rubric([jw.Criterion("Is grounded too")]), ANSWER, query=QUESTION)
    assert "<context>" not in user_text(transport.requests[1])


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: Dimension("a", 1, {5: "x"}), "at least two levels"),
        (lambda: Dimension("a", 1, {5.0: "x", 1: "y"}), "integers"),
        (lambda: Dimension("a", 1, {"5": "x", 1: "y"}), "integers"),
        (lambda: Dimension("a", 1, {True: "x", 2: "y"}), "integers"),
        (lambda: Dimension("a", 1, {-1: "x", 2: "y"}), "≥ 0"),
        (lambda: Dimension("a", -0.5, LEVELS), "negative"),
        (lambda: Dimension("a", math.inf, LEVELS), "finite"),
        (lambda: Dimension("a", 1, {5: "x", 1: " "}), "non-empty"),
        (lambda: Dimension("a", 1, {5: "Good", 1: "good "}), "share a description"),
        (lambda: Dimension("", 1, LEVELS), "name"),
        (lambda: LeveledRubric([Dimension("a", 0, LEVELS), Dimension("b", 0, LEVELS)]), "sum to 0"),
        (lambda: LeveledRubric([]), "at least one"),
        (lambda: LeveledRubric([Dimension("a", 1, LEVELS)] * 2), "unique"),
        (lambda: LeveledRubric([Dimension("a", 1, LEVELS)], grade_cutoffs={"A": 80, "B": 90}), "descending"),
        (lambda: LeveledRubric([Dimension("a", 1, LEVELS)], grade_cutoffs={"A": 90, "B": 90}), "descending"),
        (lambda: LeveledRubric([Dimension("a", 1, LEVELS)], grade_cutoffs={"A": 120}), r"\[0, 100\]"),
        (lambda: LeveledRubric([Dimension("a", 1, LEVELS)], grade_cutoffs={"A": -5}), r"\[0, 100\]"),
        (lambda: LeveledRubric([Dimension("a", 1, LEVELS)], grade_cutoffs={}), "grade_cutoffs"),
        (lambda: LeveledRubric([Dimension("a", 1, LEVELS)], grade_cutoffs={"F": 50}), "fail_grade"),
        (lambda: LeveledRubric([Dimension("a", 1, LEVELS)], grade_on="median"), "grade_on"),
    ],
)
def test_bad_configuration_raises(build, message: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(jw.ConfigurationError, match=message):
        build()


def test_dimensions_from_mappings() -> None:
    rubric = LeveledRubric([{"name": "accuracy", "weight": 2, "levels": LEVELS}])
    assert rubric.dimensions[0] == Dimension("accuracy", 2, LEVELS)
