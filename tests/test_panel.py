import asyncio
import math
import time
import warnings

import pandas as pd
import pytest

import judgewidgets as jw
from judgewidgets.scoring import JudgeCostEstimate
from judgewidgets.testing import ScriptedTransport
from tests.fakes import user_text

PROMPTS = ["What is 2+2?", "Capital of France?", "Largest planet?", "Author of Hamlet?"]
RESPONSES = ["4", "Paris", "Mars", "Shakespeare"]


def fixed(answer: str, delay: float = 0.0) -> ScriptedTransport:
    return ScriptedTransport(lambda r, a: answer, delay=delay)


def test_wide_table_has_one_column_per_judge_and_the_aggregates() -> None:
    panel = jw.LLMPanel(
        [
            jw.LLMJudge("openai/a", transport=fixed('{"score": 5}')),
            jw.LLMJudge("openai/b", transport=fixed('{"score": 3}')),
            jw.LLMJudge("openai/c", transport=fixed('{"score": 1}')),
        ],
    )
    df = panel.score(PROMPTS, RESPONSES, progress=False).to_df()
    assert list(df.columns) == [
        "prompt",
        "response",
        "judge_1",
        "judge_2",
        "judge_3",
        "avg",
        "median",
        "min",
        "max",
        "disagreement",
    ]
    row = df.iloc[0]
    assert (row.judge_1, row.judge_2, row.judge_3) == (1.0, 0.5, 0.0)
    assert (row.avg, row["median"], row["min"], row["max"]) == (0.5, 0.5, 0.0, 1.0)
    assert row.disagreement == pytest.approx(pd.Series([1.0, 0.5, 0.0]).std(ddof=0))


def test_model_strings_get_the_panel_template_and_kwargs() -> None:
    panel = jw.LLMPanel(["openai/gpt-4o-mini", "openai/gpt-4o"], template="likert", mock_response='{"score": 2}')
    df = panel.score(PROMPTS[:2], RESPONSES[:2], progress=False).to_df()
    assert df["judge_1"].tolist() == [0.25, 0.25]
    assert panel.names == ["judge_1", "judge_2"]


def test_default_template_is_true_false_uncertain() -> None:
    panel = jw.LLMPanel(["openai/gpt-4o-mini"], mock_response='{"verdict": "not sure"}')
    assert panel.score(["q"], ["a"], progress=False).to_df().loc[0, "judge_1"] == 0.5


def test_scoring_templates_one_per_judge() -> None:
    panel = jw.LLMPanel(
        ["openai/gpt-4o-mini", "openai/gpt-4o"],
        scoring_templates=["likert", "continuous"],
        mock_response='{"score": 5}',
    )
    df = panel.score(["q"], ["a"], progress=False).to_df()
    assert (df.loc[0, "judge_1"], df.loc[0, "judge_2"]) == (1.0, 0.05)


def test_weighted_average_with_weights() -> None:
    panel = jw.LLMPanel(
        [
            jw.LLMJudge("openai/a", transport=fixed('{"score": 5}')),
            jw.LLMJudge("openai/b", transport=fixed('{"score": 1}')),
        ],
        weights=[3, 1],
    )
    df = panel.score(["q"], ["a"], progress=False).to_df()
    assert df.loc[0, "weighted_avg"] == pytest.approx(0.75)
    assert df.loc[0, "avg"] == pytest.approx(0.5)


def test_judge_weights_are_used_when_no_panel_weights() -> None:
    panel = jw.LLMPanel(
        [
            jw.LLMJudge("openai/a", weight=1, transport=fixed('{"score": 5}')),
            jw.LLMJudge("openai/b", weight=3, transport=fixed('{"score": 1}')),
        ]
    )
    assert panel.score(["q"], ["a"], progress=False).to_df().loc[0, "weighted_avg"] == pytest.approx(0.25)


def test_missing_votes_are_skipped_with_a_warning_naming_the_rows() -> None:
    def flaky(request, attempt):  # type: ignore[no-untyped-def]
        return "garbage" if "Mars" in user_text(request) else '{"score": 1}'

    panel = jw.LLMPanel(
        [
            jw.LLMJudge("openai/a", transport=fixed('{"score": 5}')),
            jw.LLMJudge("openai/b", transport=ScriptedTransport(flaky), reasks=0),
        ],
        weights=[1, 1],
    )
    result = panel.score(PROMPTS, RESPONSES, progress=False)
    with pytest.warns(RuntimeWarning, match=r"rows \[2\] miss some judges' scores"):
        df = result.to_df()
    assert math.isnan(df.loc[2, "judge_2"])
    assert df.loc[2, "avg"] == df.loc[2, "min"] == df.loc[2, "weighted_avg"] == 1.0
    assert df.loc[0, "avg"] == 0.5
    assert result.errors["item"].tolist() == [2]


def test_all_judges_failing_leaves_aggregates_nan() -> None:
    panel = jw.LLMPanel([jw.LLMJudge("openai/a", transport=fixed("??"), reasks=0)])
    with pytest.warns(RuntimeWarning, match="no score from any judge"):
        df = panel.score(["q"], ["a"], progress=False).to_df()
    assert math.isnan(df.loc[0, "avg"])


def test_votes_are_a_tidy_long_table() -> None:
    panel = jw.LLMPanel(["openai/gpt-4o-mini", "openai/gpt-4o"], mock_response='{"verdict": "correct"}')
    votes = panel.score(PROMPTS, RESPONSES, progress=False).votes
    assert list(votes.columns) == [
        "item",
        "judge",
        "score",
        "raw",
        "explanation",
        "error",
        "latency_s",
        "prompt_tokens",
        "completion_tokens",
        "cost_usd",
        "cached",
        "waited_s",
        "score_source",
        "confidence",
        "prompt_cache_read_tokens",
        "prompt_cache_write_tokens",
        "reasoning_tokens",
        "list_cost_usd",
        "batch_id",
    ]
    assert len(votes) == 8
    assert set(votes["judge"]) == {"judge_1", "judge_2"}
    assert votes["cost_usd"].gt(0).all()  # priced from litellm's bundled cost map


def test_judges_run_concurrently() -> None:
    judges = [jw.LLMJudge(f"openai/m{i}", name=f"j{i}", transport=fixed('{"score": 3}', delay=0.2)) for i in range(3)]
    start = time.perf_counter()
    jw.LLMPanel(judges).score(PROMPTS * 5, RESPONSES * 5, progress=False)
    assert time.perf_counter() - start < 1.5  # 60 calls of 0.2 s run one after another would take 12 s


def test_explanation_columns() -> None:
    answer = '{"explanation": "fine", "verdict": "correct"}'
    panel = jw.LLMPanel(
        [
            jw.LLMJudge("openai/a", name="a", template="true_false", transport=fixed(answer)),
            jw.LLMJudge("openai/b", name="b", template="true_false", transport=fixed(answer)),
        ],
        explanations=True,
    )
    df = panel.score(["q"], ["a"], progress=False).to_df()
    assert df.loc[0, "a_explanation"] == "fine" and df.loc[0, "b_explanation"] == "fine"


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"judges": []}, "at least one judge"),
        ({"judges": ["openai/a", "openai/b"], "weights": [1]}, "1 weights given for 2 judges"),
        ({"judges": ["openai/a"], "weights": [-1]}, "positive finite"),
        (
            {"judges": ["openai/a"], "scoring_templates": ["likert", "likert"]},
            "2 scoring_templates given for 1 judges",
        ),
        ({"judges": [jw.LLMJudge("openai/a", name="x"), jw.LLMJudge("openai/b", name="x")]}, "repeated: x"),
        ({"judges": [42]}, "judge 0 is a int"),
        ({"judges": ["openai/a"], "template": "bogus"}, "unknown template 'bogus'"),
    ],
)
def test_bad_panels(kwargs: dict, message: str) -> None:
    with pytest.raises(jw.ConfigurationError, match=message):
        jw.LLMPanel(**kwargs)


def test_generate_and_score() -> None:
    panel = jw.LLMPanel(["openai/gpt-4o-mini"], template="likert", mock_response='{"score": 4}')
    result = panel.generate_and_score(
        PROMPTS[:2], llm="openai/gpt-4o-mini", mock_response="Generated answer.", progress=False
    )
    df = result.to_df()
    assert df["response"].tolist() == ["Generated answer.", "Generated answer."]
    assert df["judge_1"].tolist() == [0.75, 0.75]


def test_chart_is_an_altair_chart_of_every_vote() -> None:
    panel = jw.LLMPanel(["openai/gpt-4o-mini", "openai/gpt-4o"], mock_response='{"verdict": "correct"}')
    chart = panel.score(PROMPTS, RESPONSES, progress=False).chart()
    spec = chart.to_dict()
    assert len(spec["hconcat"]) == 2
    datasets = list(spec["datasets"].values())
    assert len(datasets[0]) == 8


def test_summary_per_judge() -> None:
    panel = jw.LLMPanel(["openai/gpt-4o-mini", "openai/gpt-4o"], mock_response='{"verdict": "correct"}')
    summary = panel.score(PROMPTS, RESPONSES, progress=False).summary()
    assert summary.loc["judge_1", "mean_score"] == 1.0
    assert summary.loc["judge_1", "failed"] == 0


def test_estimate_cost_before_a_run() -> None:
    panel = jw.LLMPanel(["openai/gpt-4o-mini", "local"], template="likert")
    estimate = panel.estimate_cost(PROMPTS, RESPONSES)
    df = estimate.to_df()
    assert df["calls"].tolist() == [4, 8]  # the embedded judge answers each question first (no references)
    assert df["answering_calls"].tolist() == [0, 4]
    assert df.loc[0, "prompt_tokens"] > 4 * 100
    assert df.loc[0, "cost_usd"] > 0 and df.loc[1, "cost_usd"] == 0
    assert "estimated cost" in str(estimate)


class KeywordJudge:
    """A custom judge that implements the Judge protocol without a model."""

    name = "keyword"
    weight = 1.0

    async def ajudge(self, items, session, progress):  # type: ignore[no-untyped-def]
        votes = []
        for index, item in enumerate(items):
            votes.append(jw.Vote(item=index, judge=self.name, score=float("paris" in item.response.lower())))
            progress.advance()
        return votes


def test_custom_judges_join_a_panel() -> None:
    panel = jw.LLMPanel(
        [
            KeywordJudge(),
            jw.LLMJudge("openai/a", name="llm", template="true_false", transport=fixed('{"verdict": "correct"}')),
        ]
    )
    df = panel.score(PROMPTS, RESPONSES, progress=False).to_df()
    assert df["keyword"].tolist() == [0.0, 1.0, 0.0, 0.0]
    assert df["llm"].tolist() == [1.0] * 4


class PricedKeywordJudge(KeywordJudge):
    """A custom judge that fills the whole Judge role: its own check and its own cost estimate."""

    def __init__(self, routable: bool = True) -> None:
        self.routable = routable

    def check(self) -> None:
        if not self.routable:
            raise jw.ConfigurationError("the keyword list is missing")

    def estimate_items(self, items, name=None):  # type: ignore[no-untyped-def]
        return JudgeCostEstimate(
            judge=name or self.name,
            model="keywords",
            calls=len(items),
            prompt_tokens=0,
            completion_tokens=0,
            cost_usd=0.0,
        )

    async def ajudge(self, items, session, progress, name=None):  # type: ignore[no-untyped-def]
        return await super().ajudge(items, session, progress)


def test_a_custom_judge_is_treated_like_an_llm_judge() -> None:
    complete, minimal = PricedKeywordJudge(), KeywordJudge()
    assert isinstance(complete, jw.Judge) and not isinstance(minimal, jw.Judge)
    panel = jw.LLMPanel([complete, jw.LLMJudge("openai/gpt-4o-mini", name="llm")])
    estimate = panel.estimate_cost(PROMPTS, RESPONSES).to_df()
    assert estimate["judge"].tolist() == ["keyword", "llm"] and estimate["calls"].tolist() == [4, 4]
    assert estimate.loc[0, "cost_usd"] == 0.0 and estimate.loc[1, "cost_usd"] > 0
    with pytest.raises(jw.ConfigurationError, match="keyword list"):
        jw.LLMPanel([PricedKeywordJudge(routable=False)]).score(PROMPTS, RESPONSES, progress=False)
    # A minimal judge (name, weight, ajudge) is completed: nothing to check, calls counted but unpriced.
    completed = jw.LLMPanel([minimal]).judges[0]
    assert isinstance(completed, jw.Judge) and completed.judge is minimal and completed.name == "keyword"
    assert jw.LLMPanel([minimal]).estimate_cost(PROMPTS, RESPONSES).to_df().loc[0, "cost_usd"] is None


async def test_async_twin_inside_a_running_loop() -> None:
    panel = jw.LLMPanel([jw.LLMJudge("openai/a", transport=fixed('{"score": 5}'))])
    result = await panel.ascore(PROMPTS, RESPONSES, progress=False)
    assert result.to_df()["avg"].tolist() == [1.0] * 4


def test_sync_facade_under_uvloop() -> None:
    uvloop = pytest.importorskip("uvloop")
    panel = jw.LLMPanel([jw.LLMJudge("openai/a", transport=fixed('{"score": 5}'))])

    async def cell() -> list[float]:
        assert "uvloop" in type(asyncio.get_running_loop()).__module__
        return panel.score(PROMPTS, RESPONSES, progress=False).to_df()["avg"].tolist()

    assert uvloop.run(cell()) == [1.0] * 4


def test_progress_is_reported_for_every_call() -> None:
    class Counter:
        def __init__(self) -> None:
            self.n = 0
            self.closed = False

        def advance(self, n: int = 1) -> None:
            self.n += n

        def close(self) -> None:
            self.closed = True

    counter = Counter()
    panel = jw.LLMPanel(
        [
            jw.LLMJudge("openai/a", transport=fixed('{"score": 5}')),
            jw.LLMJudge("openai/b", transport=fixed("x")),
        ]
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        panel.score(PROMPTS, RESPONSES, progress=counter)
    assert counter.n == 8 and counter.closed


def test_consensus_and_review_flags() -> None:
    def split(request, attempt):  # type: ignore[no-untyped-def]
        return '{"score": 1}' if "Mars" in user_text(request) else '{"score": 5}'

    panel = jw.LLMPanel(
        [
            jw.LLMJudge("openai/a", transport=fixed('{"score": 5}')),
            jw.LLMJudge("openai/b", transport=ScriptedTransport(split)),
            jw.LLMJudge(
                "openai/c",
                transport=ScriptedTransport(lambda r, a: "??" if "Hamlet" in user_text(r) else '{"score": 5}'),
                reasks=0,
            ),
        ]
    )
    result = panel.score(PROMPTS, RESPONSES, progress=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        consensus = result.consensus()
        review = result.review(jw.ReviewPolicy(max_disagreement=0.25, min_score=0.8))
    assert consensus.loc[0, "confidence"] == 1.0 and consensus.loc[0, "consensus"] == 1.0
    assert consensus.loc[2, "confidence"] < 0.2 and consensus.loc[3, "judges_answered"] == 2
    assert review["needs_review"].tolist() == [False, False, True, True]
    reasons = review.loc[2, "review_reasons"]
    assert any("judges disagree" in r for r in reasons) and any("low score" in r for r in reasons)
    assert review.loc[3, "review_reasons"] == [
        "1 judge call(s) failed (parse: no verdict in the answer: re-run or change the model)"
    ]
    with pytest.raises(ValueError):
        jw.ReviewPolicy(max_disagreement=1.5)
