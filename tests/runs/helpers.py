"""A result of every kind, made cheaply with scripted judges (no model, no server), for the runs tests."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

import judgewidgets as jw
from judgewidgets.engine import RetryPolicy
from judgewidgets.testing import ScriptedTransport
from tests.cascade.helpers import pairs, pairwise_judge
from tests.fakes import user_text
from tests.pairwise.helpers import answer, slots

SECRET = "sk-secret-7f3a9c1e5b2d4f6a8c0e"
PROMPTS = ["What is 2 + 2?", "Capital of France?", "Largest planet?", "Boiling point of water at sea level?"]
RESPONSES = ["4", "Paris", "Jupiter", "100 °C"]


def _quality(request: Any) -> int:
    """A likert score read off the judged response: a digit in it, else 4."""
    response = re.search(r"<response>\n(.*?)\n</response>", user_text(request), re.S)
    digits = re.findall(r"score=(\d)", response.group(1) if response else "")
    return int(digits[0]) if digits else 4


def reply(request: Any, attempt: int) -> str:
    """Answers whatever schema the request asks for: a score, a verdict, an option or a pairwise verdict."""
    fields = (request.params.get("response_format") or {}).get("json_schema", {}).get("schema", {}).get("properties")
    if fields is None:
        return json.dumps({"score": _quality(request)})
    if "selected_option" in fields:
        return json.dumps({"explanation": "fits the second level", "selected_option": 2})
    if "score" in fields:
        return json.dumps({"explanation": f"scored {_quality(request)}", "score": _quality(request)})
    verdicts = fields.get("verdict", {}).get("enum", [])
    return json.dumps({"explanation": "clear enough", "verdict": "A" if "A" in verdicts else "MET"})


def judge(name: str = "j", **options: Any) -> jw.LLMJudge:
    """A likert judge with an API key (that must never be saved) answering through a scripted transport."""
    options.setdefault("structured_output", True)
    options.setdefault("probability_weighted", False)
    return jw.LLMJudge(
        "openai/scripted", name=name, transport=ScriptedTransport(reply), cache=False, api_key=SECRET, **options
    )


def pairwise(name: str = "pj") -> jw.PairwiseJudge:
    return jw.PairwiseJudge(
        "openai/pairwise",
        name=name,
        method="verdict",
        transport=ScriptedTransport(reply),
        cache=False,
        structured_output=True,
        api_key=SECRET,
    )


STRENGTHS = {"weak": -1.0, "fine": 0.5, "best": 2.0}
QUESTIONS = [f"question {i}" for i in range(3)]


def _tournament() -> jw.TournamentResult:
    def prefer(request: Any, attempt: int) -> str:
        first, second = (re.match(r"\[(\w+)\]", text).group(1) for text in slots(request))  # type: ignore[union-attr]
        return answer("A" if STRENGTHS[first] > STRENGTHS[second] else "B", 0.9)

    judge = jw.PairwiseJudge("openai/exact", transport=ScriptedTransport(prefer), cache=False, api_key=SECRET)
    candidates = {n: [f"[{n}] answer to {q}" for q in QUESTIONS] for n in STRENGTHS}
    return jw.Tournament(judge, seed=0, bootstrap=50).run(QUESTIONS, candidates, progress=False)


def _corrected() -> jw.CorrectedRanking:
    rng = np.random.default_rng(3)
    names = np.array(["m0", "m1", "m2"])
    a, b = rng.integers(0, 3, 90), rng.integers(0, 3, 90)
    b = np.where(a == b, (b + 1) % 3, b)
    p = 1 / (1 + np.exp(-(np.array([1.0, 0.0, -1.0])[a] - np.array([1.0, 0.0, -1.0])[b])))
    human = rng.random(90) < p
    judged = np.where(rng.random(90) < 0.8, human, ~human)
    arena = pd.DataFrame({"model_a": names[a], "model_b": names[b], "winner": np.where(judged, "A", "B")})
    labels = pd.Series(np.where(human, "A", "B"), index=arena.index)
    return jw.corrected_ranking(arena, labels.iloc[:40])


def _rubric() -> tuple[jw.Rubric, jw.CriterionGrader]:
    rubric = jw.Rubric(
        [
            jw.Criterion("The answer is correct", name="correct"),
            jw.Criterion(
                "How clear is it?",
                name="clarity",
                options=[jw.CriterionOption("poor", 0.0), jw.CriterionOption("good", 1.0)],
            ),
        ]
    )
    grader = jw.CriterionGrader([judge("g1"), judge("g2")], seed=1)
    return rubric, grader


def _leveled() -> jw.LeveledRubric:
    return jw.LeveledRubric(
        [
            jw.Dimension("accuracy", 0.6, {3: "All correct", 2: "Partly", 1: "Wrong"}),
            jw.Dimension("clarity", 0.4, {3: "Clear", 2: "Muddled", 1: "Confusing"}),
        ]
    )


def _alignment() -> jw.AlignmentReport:
    rng = np.random.default_rng(0)
    quality = rng.uniform(0, 1, 40)
    data = pd.DataFrame(
        {
            "prompt": [f"question {i}" for i in range(40)],
            "response": [f"item-{i} score={1 + round(4 * (0.3 + 0.7 * q))}" for i, q in enumerate(quality)],
            "label": np.where(quality > 0.6, "pass", "fail"),
        }
    )
    aligned = judge("aligned").align(data, levers=("rule",), folds=4, progress=False)
    assert aligned.alignment_report is not None
    return aligned.alignment_report


def _cascade() -> jw.CascadeResult:
    def cheap(question: str) -> float:
        kind, number = question.split()
        return 0.97 if kind == "easy" else (0.55 if int(number) % 2 == 0 else 0.45)

    cascade = jw.Cascade(
        [pairwise_judge(cheap, "cheap"), pairwise_judge(lambda q: 0.9, "strong")], target_agreement=0.9, delta=0.2
    )
    cascade.calibrate(pairs(["easy"] * 50 + ["hard"] * 30), progress=False)
    return cascade.run(pairs(["easy"] * 6 + ["hard"] * 4, offset=1000), progress=False)


def _sequential_rater() -> jw.SequentialRater:
    def draw(request: Any, attempt: int) -> str:
        rng = np.random.default_rng(request.sample)
        return json.dumps({"score": int(rng.integers(6, 9))})

    return jw.SequentialRater(
        ["openai/rater"], transport=ScriptedTransport(draw), retry=RetryPolicy(max_retries=0), cache=False, pilot=3
    )


def _meta() -> jw.MetaEvaluation:
    first_slot = jw.PairwiseJudge(
        "openai/m", method="verdict", swap=False, transport=ScriptedTransport(lambda r, a: '{"verdict": "A"}')
    )
    return jw.meta_evaluate(first_slot, ["llmbar"], subsets=["natural"], n=4, seed=1, progress=False)


def make(kind: str) -> Any:
    """A fresh result of `kind` (a key of `jw.runs.KINDS`)."""
    builders: dict[str, Callable[[], Any]] = {
        "judge": lambda: judge().score(PROMPTS, RESPONSES, progress=False),
        "panel": lambda: jw.LLMPanel([judge("a"), judge("b", explanations=True)]).score(
            PROMPTS, RESPONSES, progress=False
        ),
        "pairwise": lambda: pairwise().compare("q", "answer one", "answer two"),
        "pairwise_panel": lambda: jw.PairwisePanel([pairwise("x"), pairwise("y")]).compare("q", "one", "two"),
        "pairwise_table": lambda: pairwise().compare_many(PROMPTS, RESPONSES, RESPONSES[::-1], progress=False),
        "tournament": _tournament,
        "corrected_ranking": _corrected,
        "rubric_report": lambda: _rubric()[1].grade(_rubric()[0], "Paris", query="Capital of France?"),
        "grading": lambda: _rubric()[1].grade_many(
            _rubric()[0],
            pd.DataFrame(
                {"prompt": PROMPTS, "response": RESPONSES, "truth": [{"correct": "MET", "clarity": "good"}] * 4}
            ),
            ground_truth="truth",
            progress=False,
        ),
        "leveled_report": lambda: _leveled().grade("Paris", "Capital of France?", grader=judge("lv")),
        "leveled": lambda: _leveled().grade_many(RESPONSES, PROMPTS, grader=judge("lv"), progress=False),
        "aspects": lambda: jw.AspectEvaluator(["relevance", "clarity"], judge=judge("asp")).evaluate(
            PROMPTS, RESPONSES, progress=False
        ),
        "pipeline": lambda: jw.EvaluationPipeline(
            {"quality": judge("q"), "rubric": _rubric()}, weights={"quality": 0.6, "rubric": 0.4}
        ).run(PROMPTS, RESPONSES, progress=False),
        "sequential": lambda: _sequential_rater().rate("What is 2 + 2?", "4"),
        "sequential_batch": lambda: _sequential_rater().rate_many(PROMPTS[:2], RESPONSES[:2], progress=False),
        "cascade": _cascade,
        "alignment": _alignment,
        "estimate": lambda: jw.estimate_quality(
            pd.Series(np.linspace(0.2, 0.9, 30)), pd.Series(np.r_[np.ones(6), np.zeros(4)], index=range(0, 30, 3))
        ),
        "label_plan": lambda: jw.label_plan(
            pd.Series(np.linspace(0.02, 0.98, 40), index=[f"q{i}" for i in range(40)]), budget=8, seed=3
        ),
        "meta_evaluation": _meta,
    }
    return builders[kind]()
