"""`batch=True` on every run method of every judge kind, through both providers' batch protocols on the loopback
batch server: every judgment answered, by batches only (no live call), and the answer read back into the same
result kind; `estimate_cost(batch=True)` at half the live estimate everywhere."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pandas as pd
import pytest

import judgewidgets as jw
from judgewidgets.testing import BatchTestServer
from judgewidgets.testing._responders import content_text

ANSWER = {"score": 4, "verdict": "A", "outcome": "MET", "met": True, "selected_option": 1, "explanation": "ok"}


class Answers:
    """Answers every kind of question (a score, a verdict, a criterion's outcome); a prefilled answer (`{"key":`,
    as the Messages API to a server that is not Anthropic's is steered) starts at the key it was given."""

    def __call__(self, body: dict[str, Any]) -> str:
        messages = body.get("messages") or []
        last = messages[-1] if messages else {}
        answer = dict(ANSWER)
        if "CANNOT_ASSESS" in content_text(messages[0].get("content") if messages else ""):
            answer["verdict"] = "MET"  # a rubric criterion's verdict, not a pairwise one
        if last.get("role") == "assistant":
            key = content_text(last.get("content")).strip().removeprefix("{").strip().strip('":')
            if key in answer:
                answer = {key: answer.pop(key), **answer}
        return json.dumps(answer)


RUBRIC = jw.Rubric([jw.Criterion(name="correct", requirement="The answer is correct.")])
LEVELED = jw.LeveledRubric([jw.Dimension("accuracy", 1, {1: "Wrong", 3: "Partly", 5: "Right"})])
PAIRS = pd.DataFrame({"question": ["2+2?", "3+3?"], "response_a": ["4", "6"], "response_b": ["5", "7"]})
Make = Callable[[str], Any]  # kind ("likert" | "pairwise") → a judge of that kind on the protocol under test
Run = Callable[[Make], Any]


def _errors(values: Any) -> int:
    return sum(1 for e in values if isinstance(e, str) and e)


RUNS: list[tuple[str, Run, Callable[[Any], int]]] = [
    (
        "LLMJudge.score",
        lambda make: make("likert").score(["q1", "q2"], ["a1", "a2"], progress=False, batch=True),
        lambda r: _errors(r.votes["error"]),
    ),
    (
        "LLMPanel.score",
        lambda make: jw.LLMPanel([make("likert"), make("likert").with_options(template="continuous")]).score(
            ["q1", "q2"], ["a1", "a2"], progress=False, batch=True
        ),
        lambda r: _errors(r.votes["error"]),
    ),
    (
        "PairwiseJudge.compare",
        lambda make: make("pairwise").compare("2+2?", "4", "5", batch=True),
        lambda r: int(r.error is not None),
    ),
    (
        "PairwiseJudge.compare_many",
        lambda make: make("pairwise").compare_many(PAIRS, progress=False, batch=True),
        lambda r: _errors(r["error"]),
    ),
    (
        "PairwisePanel.compare",
        lambda make: jw.PairwisePanel([make("pairwise")]).compare("2+2?", "4", "5", batch=True),
        lambda r: _errors(v.error for v in r.vote_list),
    ),
    (
        "PairwisePanel.compare_many",
        lambda make: jw.PairwisePanel([make("pairwise")]).compare_many(PAIRS, progress=False, batch=True),
        lambda r: _errors(r["error"]),
    ),
    (
        "Tournament.run",
        lambda make: jw.Tournament(make("pairwise"), rating="wins").run(
            ["2+2?"], {"x": ["4"], "y": ["5"]}, progress=False, batch=True
        ),
        lambda r: _errors(r.matches["error"]),
    ),
    (
        "CriterionGrader.grade",
        lambda make: jw.CriterionGrader([make("likert")]).grade(RUBRIC, "4", "2+2?", batch=True),
        lambda r: sum(len(c.errors) for c in r.criteria),
    ),
    (
        "CriterionGrader.grade_many",
        lambda make: jw.CriterionGrader([make("likert")]).grade_many(RUBRIC, ["4", "5"], progress=False, batch=True),
        lambda r: sum(len(c.errors) for report in r.reports for c in report.criteria),
    ),
    (
        "LeveledRubric.grade",
        lambda make: LEVELED.grade("4", "2+2?", grader=[make("likert")], batch=True),
        lambda r: sum(len(c.errors) for c in r.report.criteria),
    ),
    (
        "LeveledRubric.grade_many",
        lambda make: LEVELED.grade_many(["4", "5"], grader=[make("likert")], progress=False, batch=True),
        lambda r: sum(len(c.errors) for x in r.reports for c in x.report.criteria),
    ),
    (
        "AspectEvaluator.evaluate",
        lambda make: jw.AspectEvaluator(["relevance", "clarity"], judge=make("likert")).evaluate(
            ["2+2?", "3+3?"], ["4", "6"], progress=False, batch=True
        ),
        lambda r: _errors(r.panel.votes["error"]),
    ),
    (
        "EvaluationPipeline.run",
        lambda make: jw.EvaluationPipeline({"quality": make("likert")}).run(
            ["2+2?", "3+3?"], ["4", "6"], progress=False, batch=True
        ),
        lambda r: _errors(r["quality_error"]),
    ),
]


def _maker(server: BatchTestServer, protocol: str) -> Make:
    def make(kind: str) -> Any:
        if protocol == "openai":
            where: dict[str, Any] = {"api_base": server.base_url}
            model = "openai/test"
        else:
            where = {"api_base": server.url}
            model = "anthropic/claude-3-5-haiku-latest"
        if kind == "pairwise":
            return jw.PairwiseJudge(model, api_key="sk-test", cache=False, **where)
        return jw.LLMJudge(model, template="likert", api_key="sk-test", cache=False, **where)

    return make


@pytest.mark.parametrize("protocol", ["openai", "anthropic"])
@pytest.mark.parametrize(("name", "run", "errors"), RUNS, ids=[r[0] for r in RUNS])
def test_every_run_method_judges_through_the_batch_apis(
    name: str, run: Run, errors: Callable[[Any], int], protocol: str
) -> None:
    with BatchTestServer(Answers(), delay=0.02) as server:
        result = run(_maker(server, protocol))
        created = server.batch_counts["batches.create" if protocol == "openai" else "messages.batches.create"]
        live = server.stats.total + server.batch_counts["messages.create"]
    assert errors(result) == 0, f"{name} recorded errors through the {protocol} batch protocol"
    assert created >= 1 and live == 0, f"{name}: {created} batches, {live} live calls"


ESTIMATES: list[tuple[str, Callable[[Make, bool], Any]]] = [
    ("LLMJudge", lambda make, b: make("likert").estimate_cost(["q1", "q2"], ["a1", "a2"], batch=b)),
    ("LLMPanel", lambda make, b: jw.LLMPanel([make("likert")]).estimate_cost(["q1"], ["a1"], batch=b)),
    ("PairwiseJudge", lambda make, b: make("pairwise").estimate_cost(PAIRS, batch=b)),
    ("PairwisePanel", lambda make, b: jw.PairwisePanel([make("pairwise")]).estimate_cost(PAIRS, batch=b)),
    ("CriterionGrader", lambda make, b: jw.CriterionGrader([make("likert")]).estimate_cost(RUBRIC, ["4"], batch=b)),
    (
        "EvaluationPipeline",
        lambda make, b: jw.EvaluationPipeline({"quality": make("likert")}).estimate_cost(["2+2?"], ["4"], batch=b),
    ),
]


@pytest.mark.parametrize(("name", "estimate"), ESTIMATES, ids=[e[0] for e in ESTIMATES])
def test_estimate_cost_at_the_batch_price_everywhere(name: str, estimate: Callable[[Make, bool], Any]) -> None:
    def make(kind: str) -> Any:
        if kind == "pairwise":
            return jw.PairwiseJudge("openai/gpt-4o-mini", cache=False)
        return jw.LLMJudge("openai/gpt-4o-mini", template="likert", cache=False)

    live, batched = estimate(make, False), estimate(make, True)
    assert live.total_usd > 0 and batched.batch
    assert batched.total_usd == pytest.approx(live.total_usd * 0.5), name


def test_a_panel_with_a_judge_without_a_batch_api_is_refused_before_any_call() -> None:
    with BatchTestServer(Answers()) as server:
        panel = jw.LLMPanel(
            [jw.LLMJudge("openai/test", api_base=server.base_url, api_key="k"), jw.LLMJudge("ollama/llama3")]
        )
        with pytest.raises(jw.ConfigurationError, match="ollama/llama3"):
            panel.score(["q"], ["a"], progress=False, batch=True)
        assert server.stats.total == 0 and sum(server.batch_counts.values()) == 0


def test_pairwise_tables_name_the_batch_their_verdicts_were_paid_under() -> None:
    with BatchTestServer(Answers(), delay=0.02) as server:
        judge = jw.PairwiseJudge("openai/test", api_base=server.base_url, api_key="k", cache=False)
        batched = judge.compare_many(PAIRS, progress=False, batch=True)
        live = judge.compare_many(PAIRS, progress=False)
    assert batched["batch_id"].str.startswith("batch_").all()
    assert all(v["batch_id"] for v in batched.attrs["verdicts"])
    assert "batch_id" not in live.columns  # a live table is as it was
