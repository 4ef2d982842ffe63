"""AspectEvaluator with fake judges that answer per aspect: focused prompts, pass/fail, failures, config errors."""

from __future__ import annotations

import enum
import json
import math
import re

import pytest

import judgewidgets as jw
from judgewidgets.aspects import BUILTIN_ASPECTS, Aspect, AspectEvaluator
from judgewidgets.engine._litellm import CallFailure
from judgewidgets.testing import ScriptedTransport
from tests.fakes import user_text

PASSWORD_PROMPT = "How do I reset my password?"
PASSWORD_RESPONSE = (
    "Open Settings > Account > Security, choose 'Reset password', and follow the link we email you. "
    "Never share the link or your new password with anyone."
)


def aspect_of(request) -> str:  # type: ignore[no-untyped-def]
    return re.search(r"^Aspect: (\w+)$", request.messages[0]["content"], re.M).group(1)


def per_aspect(scores: dict[str, int], fail: set[str] = frozenset()):  # type: ignore[no-untyped-def]
    """A fake judge: the 1–5 score of each aspect, named in the prompt; aspects in `fail` get no answer."""

    def reply(request, attempt):  # type: ignore[no-untyped-def]
        name = aspect_of(request)
        if name in fail:
            raise CallFailure("server down", status_code=404)
        return json.dumps({"explanation": f"{name} looks {scores[name]}", "score": scores[name]})

    return reply


def judge(reply, delay: float = 0.0) -> jw.LLMJudge:  # type: ignore[no-untyped-def]
    return jw.LLMJudge("openai/m", structured_output=True, transport=ScriptedTransport(reply, delay=delay))


SEED_SCORES = {"relevance": 5, "clarity": 4, "helpfulness": 4, "safety": 5}


def test_builtins_cover_the_issue_list_each_with_a_focused_instruction() -> None:
    assert list(BUILTIN_ASPECTS) == [
        "relevance",
        "accuracy",
        "completeness",
        "coherence",
        "safety",
        "tone",
        "conciseness",
        "clarity",
        "helpfulness",
    ]
    instructions = [a.instruction for a in BUILTIN_ASPECTS.values()]
    assert len(set(instructions)) == len(instructions)
    template = BUILTIN_ASPECTS["safety"].template()
    assert template.scale == (1, 5)
    assert [template.normalise(s) for s in (1, 2, 3, 4, 5)] == [0, 0.25, 0.5, 0.75, 1]


def test_password_reset_seed_example() -> None:
    transport = ScriptedTransport(per_aspect(SEED_SCORES))
    evaluator = AspectEvaluator(
        ["relevance", "clarity", "helpfulness", "safety"],
        judge=jw.LLMJudge("openai/m", structured_output=True, transport=transport),
    )
    df = evaluator.evaluate(PASSWORD_PROMPT, PASSWORD_RESPONSE, progress=False).to_df()
    assert len(df) == 1
    row = df.iloc[0]
    assert row["relevance"] == 1.0 and row["clarity"] == 0.75 and row["helpfulness"] == 0.75
    assert row["safety"] == 1.0
    assert all(row[f"{a}_passed"] for a in SEED_SCORES)
    assert row["passed"] and row["average_score"] == pytest.approx(0.875)
    assert row["clarity_explanation"] == "clarity looks 4"
    assert row["error"] is None
    # one focused call per aspect: each prompt names its own aspect's instruction and no other
    assert sorted(aspect_of(r) for r in transport.requests) == sorted(SEED_SCORES)
    for request in transport.requests:
        own = aspect_of(request)
        system = request.messages[0]["content"]
        assert BUILTIN_ASPECTS[own].instruction in system
        assert all(BUILTIN_ASPECTS[o].instruction not in system for o in SEED_SCORES if o != own)
        assert PASSWORD_RESPONSE in user_text(request)


def test_columns_per_aspect_and_row_per_item() -> None:
    evaluator = AspectEvaluator(["relevance", "safety"], judge=judge(per_aspect({"relevance": 3, "safety": 5})))
    df = evaluator.evaluate(["q1", "q2", "q3"], ["r1", "r2", "r3"], progress=False).to_df()
    assert list(df.columns) == [
        "prompt",
        "response",
        "relevance",
        "relevance_passed",
        "relevance_explanation",
        "safety",
        "safety_passed",
        "safety_explanation",
        "passed",
        "average_score",
        "error",
    ]
    assert len(df) == 3
    assert not df["relevance_passed"].any() and df["safety_passed"].all()  # 0.5 < 0.7 ≤ 1.0
    assert not df["passed"].any()
    assert df["average_score"].tolist() == [0.75] * 3


def test_seed_enum_names_clarity_and_helpfulness_work_in_any_case() -> None:
    class SeedAspect(enum.Enum):
        CLARITY = "clarity"
        HELPFULNESS = "helpfulness"

    evaluator = AspectEvaluator([SeedAspect.CLARITY, SeedAspect.HELPFULNESS, "Relevance"], judge="openai/m")
    assert [a.name for a in evaluator.aspects] == ["clarity", "helpfulness", "relevance"]
    assert [a.name for a in AspectEvaluator(judge="openai/m").aspects] == list(BUILTIN_ASPECTS)


def test_user_defined_aspect_and_threshold_precedence() -> None:
    empathy = Aspect("empathy", "Does the response acknowledge the user's frustration?", threshold=0.9)
    scores = {"empathy": 4, "relevance": 4, "clarity": 4}
    evaluator = AspectEvaluator(
        [empathy, "relevance", "clarity"],
        judge=judge(per_aspect(scores)),
        thresholds={"clarity": 0.8},
        default_threshold=0.75,
    )
    assert evaluator.thresholds == {"empathy": 0.9, "relevance": 0.75, "clarity": 0.8}
    df = evaluator.evaluate("q", "r", progress=False).to_df()
    # 0.75: below empathy's own 0.9, exactly at the default 0.75 (passes), below the explicit 0.8
    assert df.loc[0, ["empathy_passed", "relevance_passed", "clarity_passed"]].tolist() == [False, True, False]
    assert "Does the response acknowledge" in empathy.template().instruction


def test_unknown_aspect_names_it_and_lists_the_builtins() -> None:
    with pytest.raises(jw.ConfigurationError) as info:
        AspectEvaluator(["relevance", "wit"], judge="openai/m")
    message = str(info.value)
    assert "'wit'" in message
    for name in BUILTIN_ASPECTS:
        assert name in message


@pytest.mark.parametrize(
    "kwargs",
    [
        {"thresholds": {"relevance": 1.5}},
        {"thresholds": {"relevance": -0.1}},
        {"thresholds": {"relevance": math.nan}},
        {"default_threshold": 2},
        {"thresholds": {"humour": 0.5}},
        {"aspects": []},
        {"aspects": ["relevance", "Relevance"]},
    ],
)
def test_bad_configuration_raises(kwargs: dict) -> None:
    kwargs = {"aspects": ["relevance"], **kwargs}
    with pytest.raises(jw.ConfigurationError):
        AspectEvaluator(judge="openai/m", **kwargs)


@pytest.mark.parametrize(
    "args",
    [("bad name", "x"), ("passed", "x"), ("average_score", "x"), ("ok", ""), ("ok", "x", 1.2), ("ok", "x", True)],
)
def test_bad_user_aspect_raises(args: tuple) -> None:
    with pytest.raises(jw.ConfigurationError):
        Aspect(*args)


def test_failed_aspect_call_scores_nan_does_not_pass_and_keeps_its_error() -> None:
    evaluator = AspectEvaluator(
        ["relevance", "safety"], judge=judge(per_aspect({"relevance": 5, "safety": 5}, fail={"safety"}))
    )
    result = evaluator.evaluate("q", "r", progress=False)
    row = result.to_df().iloc[0]
    assert math.isnan(row["safety"]) and not row["safety_passed"] and not row["passed"]
    assert row["average_score"] == 1.0  # over the aspects that scored
    assert row["error"].startswith("safety: infrastructure:")
    errors = result.errors
    assert errors["aspect"].tolist() == ["safety"] and "server down" in errors.loc[0, "error"]
    assert result.summary().set_index("aspect").loc["safety", "failed_calls"] == 1


def test_all_aspects_of_all_items_run_concurrently() -> None:
    transport = ScriptedTransport(per_aspect({"relevance": 4, "clarity": 4, "tone": 4}), delay=0.05)
    evaluator = AspectEvaluator(
        ["relevance", "clarity", "tone"], judge=jw.LLMJudge("openai/m", structured_output=True, transport=transport)
    )
    evaluator.evaluate(["a", "b"], ["x", "y"], progress=False)
    assert transport.max_active == 6


async def test_async_twin_matches_sync() -> None:
    evaluator = AspectEvaluator(["relevance", "clarity"], judge=judge(per_aspect({"relevance": 2, "clarity": 5})))
    sync = evaluator.evaluate("q", "r", progress=False).to_df()
    both = (await evaluator.aevaluate("q", "r", progress=False)).to_df()
    assert sync.equals(both)


def test_reference_reaches_the_judge_and_the_table() -> None:
    transport = ScriptedTransport(per_aspect({"accuracy": 5}))
    evaluator = AspectEvaluator(
        ["accuracy"], judge=jw.LLMJudge("openai/m", structured_output=True, transport=transport)
    )
    df = evaluator.evaluate("Capital?", "Paris", references=["Paris"], progress=False).to_df()
    assert df.loc[0, "reference"] == "Paris"
    assert "<reference>" in user_text(transport.requests[0])


def test_judge_from_model_string_takes_keyword_options_but_an_llmjudge_does_not() -> None:
    evaluator = AspectEvaluator(
        ["tone"], judge="openai/m", structured_output=True, transport=ScriptedTransport(per_aspect({"tone": 1}))
    )
    assert evaluator.evaluate("q", "r", progress=False).to_df().loc[0, "tone"] == 0.0
    with pytest.raises(jw.ConfigurationError, match="with_options"):
        AspectEvaluator(["tone"], judge=jw.LLMJudge("openai/m"), temperature=0.5)


def test_chart_shows_scores_per_item_with_threshold_ticks() -> None:
    evaluator = AspectEvaluator(["relevance", "clarity"], judge=judge(per_aspect({"relevance": 5, "clarity": 2})))
    spec = evaluator.evaluate(["q1", "q2"], ["r1", "r2"], progress=False).chart().to_dict()
    marks = [
        layer["mark"]["type"] if isinstance(layer["mark"], dict) else layer["mark"] for layer in spec["spec"]["layer"]
    ]
    assert marks == ["bar", "tick"]
    data = next(iter(spec["datasets"].values()))
    assert {d["aspect"] for d in data} == {"relevance", "clarity"} and len(data) == 4
    assert {d["threshold"] for d in data} == {0.7}
