"""The three "LLM-as-Judge Patterns" seed examples, run with the embedded local judge (no key, no network).

    python examples/seed_patterns.py

1. Aspect-based evaluation of a password-reset answer (relevance, clarity, helpfulness, safety).
2. The RAG-quality leveled rubric on "What is the capital of France?" with retrieved context.
3. A two-judge evaluation pipeline (an overall likert judge and the aspects) with review flags; the aspect
   calls of step 1 come from the cache.
"""

from __future__ import annotations

import pandas as pd

import judgewidgets as jw
from judgewidgets.aspects import AspectEvaluator
from judgewidgets.pipeline import EvaluationPipeline
from judgewidgets.rubrics import LeveledRubric

MODEL = "local"

PASSWORD_PROMPT = "How do I reset my password?"
PASSWORD_RESPONSE = (
    "Go to the sign-in page and click 'Forgot password'. Enter the email address of your account and we will "
    "send you a reset link, valid for 30 minutes. Open it, choose a new password of at least 12 characters, "
    "and sign in again. Never share the link or your password with anyone, including support staff."
)

RAG_QUESTION = "What is the capital of France?"
RAG_CONTEXT = "Paris is the capital and most populous city of France, with about 2.1 million residents."
RAG_ANSWER = "The capital of France is Paris, which is also its largest city."


def main() -> None:
    pd.set_option("display.width", 160)
    pd.set_option("display.max_colwidth", 70)
    # One call at a time, each with a generous timeout: the embedded model has one slot, and on a busy 2-core
    # machine a call can take a minute; queueing in the engine keeps the wait out of each call's timeout.
    judge = jw.LLMJudge(MODEL, max_concurrency=1, timeout=600)

    print("== 1. Aspect-based evaluation: password reset ==")
    aspects = AspectEvaluator(["relevance", "clarity", "helpfulness", "safety"], judge=judge)
    result = aspects.evaluate(PASSWORD_PROMPT, PASSWORD_RESPONSE)
    print(result.to_df().T.to_string())

    print("\n== 2. RAG-quality rubric: capital of France ==")
    rag = LeveledRubric.rag_quality()
    report = rag.grade(RAG_ANSWER, query=RAG_QUESTION, context=RAG_CONTEXT, grader=judge)
    print(report.to_df()[["name", "weight", "level", "level_description", "feedback"]].to_string())
    print(
        f"weighted {report.weighted_percent:.1f}% · raw {report.raw_percent:.1f}% · grade {report.grade} "
        f"(graded on the {report.grade_on} percentage)"
    )

    print("\n== 3. Two-judge pipeline ==")
    pipeline = EvaluationPipeline(
        judges={"overall": judge.with_options(template="likert"), "aspects": aspects},
        weights={"overall": 0.6, "aspects": 0.4},
        max_spread=0.3,
        min_score=0.5,
    )
    frame = pipeline.run(PASSWORD_PROMPT, PASSWORD_RESPONSE)
    columns = ["final_score", "confidence", "spread", "needs_human_review", "review_reasons", "overall", "aspects"]
    print(frame[columns].T.to_string())


if __name__ == "__main__":
    main()
