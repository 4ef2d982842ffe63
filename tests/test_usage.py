"""One usage record on every vote kind: what a run spends adds up, and equals what `estimate_cost` said it would.

A scripted transport bills each request as a provider would if the estimate's assumptions held: the prompt
tokens litellm counts for the messages it received, a typical completion length (a short answer, plus an
explanation when the schema asks for one), at gpt-4o-mini's prices. Then an estimate that counts the very
requests a run sends, and results that keep every call's accounting, must agree exactly, for every judge kind.
"""

from __future__ import annotations

import json

import pandas as pd
import pytest

import judgewidgets as jw
from judgewidgets._constants import ESTIMATED_EXPLANATION_TOKENS, ESTIMATED_SCORE_TOKENS
from judgewidgets.engine import ChatRequest, Completion, Usage
from judgewidgets.engine._litellm import import_litellm, token_prices
from judgewidgets.testing import ScriptedTransport

MODEL = "openai/gpt-4o-mini"
PROMPTS = ["What is the capital of France?", "What is 2 + 2?", "Name a prime number."]
RESPONSES = ["Paris.", "4", "9 is prime."]
BASELINES = ["Lyon.", "5", "7."]


def _reply(request: ChatRequest) -> str:
    schema = request.params["response_format"]["json_schema"]["schema"]
    fields = schema["properties"]
    answer: dict[str, object] = {"explanation": "Because."} if "explanation" in fields else {}
    if "score" in fields:
        answer["score"] = 4 if "Paris" in request.messages[-1]["content"] else 2
    elif "selected_option" in fields:
        answer["selected_option"] = 1
    elif "verdict" in fields:
        verdicts = fields["verdict"].get("enum") or ["MET"]
        answer["verdict"] = "A" if "A" in verdicts else verdicts[0]
    return json.dumps(answer)


def billing() -> ScriptedTransport:
    litellm = import_litellm()
    prices = token_prices(MODEL)
    assert prices is not None

    def reply(request: ChatRequest, attempt: int) -> Completion:
        schema = request.params["response_format"]["json_schema"]["schema"]
        completion = ESTIMATED_SCORE_TOKENS + (
            ESTIMATED_EXPLANATION_TOKENS if "explanation" in schema["properties"] else 0
        )
        prompt = litellm.token_counter(model=MODEL, messages=list(request.messages))
        cost = prompt * prices[0] + completion * prices[1]
        return Completion(_reply(request), prompt_tokens=prompt, completion_tokens=completion, cost_usd=cost)

    return ScriptedTransport(reply)


def _agree(estimate: jw.scoring.CostEstimate, spent: Usage, transport: ScriptedTransport) -> None:
    assert estimate.calls == len(transport.requests) == spent.attempts > 0
    assert sum(j.prompt_tokens for j in estimate.judges) == spent.prompt_tokens
    assert sum(j.completion_tokens for j in estimate.judges) == spent.completion_tokens
    assert estimate.total_usd == pytest.approx(spent.cost_usd, rel=1e-9)
    assert spent.cost_usd == pytest.approx(sum(c.cost_usd for c in transport.completions), rel=1e-9)


def _judge(transport: ScriptedTransport, **options: object) -> jw.LLMJudge:
    return jw.LLMJudge(MODEL, transport=transport, cache=False, probability_weighted=False, **options)  # type: ignore[arg-type]


def test_a_panel_spends_what_it_estimated() -> None:
    transport = billing()
    panel = jw.LLMPanel([_judge(transport, name="plain"), _judge(transport, name="why", explanations=True)])
    estimate = panel.estimate_cost(PROMPTS, RESPONSES)
    result = panel.score(PROMPTS, RESPONSES, progress=False)
    _agree(estimate, Usage.total(result.vote_list), transport)


def test_a_rubric_grading_spends_what_it_estimated() -> None:
    transport = billing()
    rubric = jw.Rubric(
        [
            jw.Criterion("The answer is correct", name="correct", weight=2),
            jw.Criterion(
                "How clear is it?",
                name="clarity",
                scale_type="ordinal",
                options=[jw.CriterionOption("poor", 0.0), jw.CriterionOption("good", 1.0)],
            ),
        ]
    )
    grader = jw.CriterionGrader([_judge(transport, name="a"), _judge(transport, name="b")], seed=3)
    data = pd.DataFrame({"prompt": PROMPTS, "response": RESPONSES})
    estimate = grader.estimate_cost(rubric, data)
    graded = grader.grade_many(rubric, data, progress=False)
    assert all(v.cost_usd for r in graded.reports for c in r.criteria for v in c.votes)
    _agree(estimate, graded.usage, transport)


@pytest.mark.parametrize("method", ["probability", "pointwise", "verdict"])
def test_pairwise_comparisons_spend_what_they_estimated(method: str) -> None:
    transport = billing()
    judge = jw.PairwiseJudge(MODEL, method=method, transport=transport, cache=False)  # type: ignore[arg-type]
    estimate = judge.estimate_cost(PROMPTS, RESPONSES, BASELINES)
    table = judge.compare_many(PROMPTS, RESPONSES, BASELINES, progress=False)
    spent = Usage(
        prompt_tokens=int(table["prompt_tokens"].sum()),
        completion_tokens=int(table["completion_tokens"].sum()),
        cost_usd=float(table["cost_usd"].sum()),
        attempts=len(transport.requests),
    )
    _agree(estimate, spent, transport)


def test_sequential_ratings_spend_what_their_draws_were_estimated_at() -> None:
    transport = billing()
    judge = _judge(transport, template=jw.sequential.rating_template((1, 10)))
    rater = jw.SequentialRater(judges=[judge], pilot=3, max_samples=4)
    frame = rater.rate_many(PROMPTS, RESPONSES, progress=False)
    drawn = {len(r.trace) for r in frame.results}
    assert len(drawn) == 1
    estimate = rater.estimate_cost(PROMPTS, RESPONSES, draws=drawn.pop())
    _agree(estimate, Usage.total(r.usage for r in frame.results), transport)
    assert rater.estimate_cost(PROMPTS, RESPONSES).calls == 3 * 4  # by default: the most it can spend


def test_a_pipeline_spends_what_it_estimated() -> None:
    transport = billing()
    rubric = jw.Rubric([jw.Criterion("The answer is correct", name="correct")])
    pipeline = jw.EvaluationPipeline(
        {
            "judge": _judge(transport),
            "rubric": (rubric, jw.CriterionGrader([_judge(transport)], seed=1)),
            "aspects": jw.AspectEvaluator(["accuracy", "clarity"], judge=_judge(transport)),
            "versus": jw.PairwiseJudge(MODEL, method="verdict", transport=transport, cache=False),
        }
    )
    estimate = pipeline.estimate_cost(PROMPTS, RESPONSES, baselines=BASELINES)
    assert {j.judge.split(":")[0] for j in estimate.judges} == {"judge", "rubric", "aspects", "versus"}
    frame = pipeline.run(PROMPTS, RESPONSES, baselines=BASELINES, progress=False)
    spent = Usage.total(Usage(**usage) for usage in frame.attrs["usage"].values())
    _agree(estimate, spent, transport)


def _billed_judge(transport: ScriptedTransport, name: str = "j", **options: object) -> jw.LLMJudge:
    return jw.LLMJudge(
        "openai/scripted",
        name=name,
        transport=transport,
        cache=False,
        api_key="sk-x",
        structured_output=True,
        probability_weighted=False,
        **options,  # type: ignore[arg-type]
    )


def _billed_pairwise(transport: ScriptedTransport, name: str = "pj") -> jw.PairwiseJudge:
    return jw.PairwiseJudge(
        "openai/pairwise",
        name=name,
        method="verdict",
        transport=transport,
        cache=False,
        api_key="sk-x",
        structured_output=True,
    )


def _rubric(transport: ScriptedTransport) -> tuple[jw.Rubric, jw.CriterionGrader]:
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
    return rubric, jw.CriterionGrader([_billed_judge(transport, "g1"), _billed_judge(transport, "g2")], seed=1)


LEVELED = jw.LeveledRubric(
    [
        jw.Dimension("accuracy", 0.6, {3: "All correct", 2: "Partly", 1: "Wrong"}),
        jw.Dimension("clarity", 0.4, {3: "Clear", 2: "Muddled", 1: "Confusing"}),
    ]
)
CANDIDATES = {name: [f"[{name}] answer to {q}" for q in PROMPTS] for name in ("terse", "plain", "long")}
RESULTS = {
    "JudgeResult": lambda t: _billed_judge(t).score(PROMPTS, RESPONSES, progress=False),
    "PanelResult": lambda t: jw.LLMPanel([_billed_judge(t, "a"), _billed_judge(t, "b", explanations=True)]).score(
        PROMPTS, RESPONSES, progress=False
    ),
    "PairwiseResult": lambda t: _billed_pairwise(t).compare("q", "answer one", "answer two"),
    "PanelComparison": lambda t: jw.PairwisePanel([_billed_pairwise(t, "x"), _billed_pairwise(t, "y")]).compare(
        "q", "one", "two"
    ),
    "PairwiseTable": lambda t: _billed_pairwise(t).compare_many(PROMPTS, RESPONSES, BASELINES, progress=False),
    "TournamentResult": lambda t: jw.Tournament(_billed_pairwise(t), seed=0, bootstrap=20).run(
        PROMPTS, CANDIDATES, progress=False
    ),
    "RubricReport": lambda t: (lambda r, g: g.grade(r, "Paris", query="Capital of France?"))(*_rubric(t)),
    "GradingResult": lambda t: (lambda r, g: g.grade_many(r, pd.DataFrame({"prompt": PROMPTS, "response": RESPONSES})))(
        *_rubric(t)
    ),
    "LeveledReport": lambda t: LEVELED.grade("Paris", "Capital of France?", grader=_billed_judge(t, "lv")),
    "LeveledResult": lambda t: LEVELED.grade_many(RESPONSES, PROMPTS, grader=_billed_judge(t, "lv"), progress=False),
    "AspectResult": lambda t: jw.AspectEvaluator(["relevance", "clarity"], judge=_billed_judge(t, "asp")).evaluate(
        PROMPTS, RESPONSES, progress=False
    ),
    "SequentialResult": lambda t: jw.SequentialRater(
        [_billed_judge(t, "r")], scale=(1, 5), pilot=3, max_samples=4
    ).rate("q", "4"),
    "SequentialFrame": lambda t: jw.SequentialRater(
        [_billed_judge(t, "r")], scale=(1, 5), pilot=3, max_samples=4
    ).rate_many(PROMPTS, RESPONSES, progress=False),
    "PipelineTable": lambda t: jw.EvaluationPipeline(
        {"quality": _billed_judge(t, "q"), "rubric": _rubric(t)}, weights={"quality": 0.6, "rubric": 0.4}
    ).run(PROMPTS, RESPONSES, progress=False),
}


@pytest.mark.parametrize("kind", list(RESULTS))
def test_every_result_that_made_calls_adds_their_usage_up(kind: str) -> None:
    """`.usage` on every result that judged something: what its calls were billed, added up — and what `save()`
    records as the run's usage."""
    from tests.runs.helpers import reply

    transport = ScriptedTransport(reply)  # bills each answer 10 prompt tokens, 3 completion tokens, $0.001
    result = RESULTS[kind](transport)
    assert type(result).__name__ == kind
    usage = result.usage
    calls = len(transport.requests)
    assert isinstance(usage, Usage) and calls > 0
    assert (usage.attempts, usage.prompt_tokens, usage.completion_tokens) == (calls, 10 * calls, 3 * calls)
    assert usage.cost_usd == pytest.approx(0.001 * calls) and usage.cached is False
    saved = Usage(**result._dump().usage)
    assert saved.model_dump(exclude={"latency_s", "cost_usd"}) == usage.model_dump(exclude={"latency_s", "cost_usd"})
    assert (saved.latency_s, saved.cost_usd) == pytest.approx((usage.latency_s, usage.cost_usd))
