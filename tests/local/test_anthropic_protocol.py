"""Judging through Anthropic's Messages API on a real server: llama.cpp's own HTTP server (xllamacpp) answers
`/v1/messages` as well as `/v1/chat/completions`, so the same weights can be judged through `anthropic/<name>`
(litellm's Anthropic provider, `api_base` at the server's root) and through `openai/<name>`. The Messages API takes
no response schema and gives no token probabilities: the engine starts each answer for the model (a prefill) and
scores come from the written verdict (`score_source == "answer"`). Items: the first questions of
benchmarks/data/reference_qa.csv, a right and a plausible wrong answer each, judged against their reference."""

from __future__ import annotations

import csv
from collections.abc import Iterator
from pathlib import Path

import pytest

import judgewidgets as jw
from tests.local_model import require_local_model

pytestmark = require_local_model()

ROWS = list(csv.DictReader((Path(__file__).parents[2] / "benchmarks/data/reference_qa.csv").open()))[:5]
QUESTIONS = [row["question"] for row in ROWS]
REFERENCES = [row["reference"] for row in ROWS]
RIGHT = [row["right"] for row in ROWS]
WRONG = [row["wrong"] for row in ROWS]


@pytest.fixture(scope="module")
def root(llama_server_url: str) -> Iterator[str]:
    """The server's root: litellm's Anthropic provider adds `/v1/messages` to it."""
    yield llama_server_url.removesuffix("/v1")


def anthropic(root: str, **options: object) -> jw.LLMJudge:
    return jw.LLMJudge("anthropic/qwen", api_base=root, api_key="sk-test", max_concurrency=1, cache=False, **options)


def test_likert_through_the_messages_api_scores_the_written_verdict(root: str) -> None:
    result = anthropic(root).score(QUESTIONS * 2, RIGHT + WRONG, references=REFERENCES * 2, progress=False)
    votes = result.vote_list
    assert all(v.error is None for v in votes), [v.error for v in votes]
    assert all(v.score_source == "answer" and v.probabilities is None for v in votes)
    assert all(v.raw.lstrip().startswith("{") for v in votes), [v.raw for v in votes]  # a verdict, not the schema
    right, wrong = votes[: len(ROWS)], votes[len(ROWS) :]
    ordered = sum(r.score > w.score for r, w in zip(right, wrong))
    assert ordered >= 3, [(r.raw, w.raw) for r, w in zip(right, wrong)]
    assert sum(w.score for w in wrong) / len(wrong) <= 0.5, [w.raw for w in wrong]


def test_a_panel_through_the_messages_api(root: str) -> None:
    panel = jw.LLMPanel([anthropic(root, name="likert"), anthropic(root, name="verdict", template="true_false")])
    n = 3
    df = panel.score(QUESTIONS[:n] * 2, RIGHT[:n] + WRONG[:n], references=REFERENCES[:n] * 2, progress=False).to_df()
    assert len(df) == 2 * n and not df[["likert", "verdict"]].isna().any().any(), df
    assert (df["avg"][:n].to_numpy() > df["avg"][n:].to_numpy()).sum() >= 2, df
    assert df["avg"][:n].mean() > df["avg"][n:].mean() + 0.2, df


def test_pairwise_through_the_messages_api_prefers_the_right_answer(root: str) -> None:
    judge = jw.PairwiseJudge("anthropic/qwen", api_base=root, api_key="sk-test", max_concurrency=1, cache=False)
    assert judge.method == "verdict"  # no token probabilities to read a one-token verdict from
    results = [judge.compare(q, w, r, reference=ref) for q, r, w, ref in zip(QUESTIONS[:3], RIGHT, WRONG, REFERENCES)]
    assert all(r.error is None for r in results), [r.error for r in results]
    assert sum(r.winner == "B" for r in results) >= 2, [(r.winner, r.consistent) for r in results]
    assert not any(r.winner == "A" for r in results), [(r.winner, r.consistent) for r in results]


def test_a_rubric_through_the_messages_api(root: str) -> None:
    rubric = jw.Rubric([jw.Criterion("The response answers the question correctly.", name="correct")])
    grader = jw.CriterionGrader(judges=[anthropic(root)])
    right = grader.grade(rubric, RIGHT[0], query=QUESTIONS[0], reference=REFERENCES[0])
    wrong = grader.grade(rubric, WRONG[0], query=QUESTIONS[0], reference=REFERENCES[0])
    assert right.score is not None and wrong.score is not None, (right.criteria, wrong.criteria)
    assert (right.score, wrong.score) == (1.0, 0.0), (right.criteria, wrong.criteria)
