"""Binary rubric criteria on labelled data: does a judge say MET exactly when the criterion holds?

Run: `python benchmarks/rubric_criteria.py [--prompts statement,met_unmet] [--llmbar-n 40] [--fresh]`.
Two labelled sets, each graded with every binary prompt of `jw.CriterionGrader` (`binary_prompt`):

- `benchmarks/data/rubric_criteria.jsonl`: 50 hand-labelled (submission, criterion) cases written for this
  benchmark (ours, under the package's Apache-2.0 license), half MET and half UNMET — correctness (with and
  without a reference answer), format, content, and flaws (negative weight: MET means the flaw is present).
  Coin and always-MET both score 50 %.
- LLMBar Natural (Zeng et al., ICLR 2024; human-checked preferred outputs): each pair's two outputs graded on
  "The response follows the instruction and answers it correctly"; a pair counts as right when the preferred
  output's P(MET) is the higher (a coin: 50 %).

Printed per prompt: accuracy (overall and per category), the share answered MET (truth: 50 %), the AUC of the
judge's P(MET) (how well its confidence ranks MET above UNMET cases), LLMBar pairs ordered right, and seconds
per criterion. The judge explains its verdicts with `--explanations` (AutoRubric's prompt always asks for
an explanation; the statement prompt only when the judge does). Calls go through the persistent call cache
unless `--fresh`. `--model` grades with another judge (e.g. a hosted one, with its key set); `--api-base URL
--model NAME` with a model on an OpenAI-compatible server (how the tests drive this script). `--out` writes
every case's verdict and P(MET) to a CSV.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _labelled import add_judge_options, judge_factory, load_cases, write_rows

import judgewidgets as jw
from judgewidgets.rubrics._prompts import BINARY_PROMPTS

CASES = Path(__file__).with_name("data") / "rubric_criteria.jsonl"
LLMBAR_REQUIREMENT = "The response follows the instruction and answers it correctly"


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--prompts", default=",".join(BINARY_PROMPTS), help="comma-separated binary prompts")
    parser.add_argument("--llmbar-n", type=int, default=40, help="LLMBar Natural pairs (0 to skip; default 40)")
    parser.add_argument("--seed", type=int, default=1, help="seed of the LLMBar sample")
    parser.add_argument("--explanations", action="store_true", help="the judge explains each verdict")
    add_judge_options(parser)
    return parser.parse_args(argv)


def llmbar_cases(n: int, seed: int) -> list[dict[str, Any]]:
    """Two cases per LLMBar Natural pair, the preferred output first."""
    if n <= 0:
        return []
    frame = jw.datasets.llmbar("Natural")
    frame = frame.sample(min(n, len(frame)), random_state=seed)
    cases = []
    for row in frame.itertuples():
        preferred, other = (row.response_a, row.response_b) if row.label == "A" else (row.response_b, row.response_a)
        for submission, truth in ((preferred, "MET"), (other, "UNMET")):
            cases.append(
                {
                    "category": "llmbar",
                    "question": row.question,
                    "submission": submission,
                    "reference": None,
                    "requirement": LLMBAR_REQUIREMENT,
                    "weight": 1.0,
                    "truth": truth,
                }
            )
    return cases


async def grade(grader: jw.CriterionGrader, case: dict[str, Any]) -> tuple[str | None, float | None, float]:
    """(verdict, P(MET), seconds) of one case."""
    rubric = jw.Rubric([jw.Criterion(case["requirement"], name="criterion", weight=case["weight"])])
    started = time.perf_counter()
    report = await grader.agrade(rubric, case["submission"], query=case["question"], reference=case["reference"])
    vote = report.criteria[0].votes[0]
    verdict = vote.verdict.value if vote.verdict is not None else None
    p_met = (vote.probabilities or {}).get("MET")
    return verdict, p_met, time.perf_counter() - started


def auc(positives: list[float], negatives: list[float]) -> float:
    """P(a random MET case's P(MET) is above a random UNMET case's); ties count half."""
    if not positives or not negatives:
        return float("nan")
    wins = sum((p > q) + 0.5 * (p == q) for p in positives for q in negatives)
    return wins / (len(positives) * len(negatives))


def summarise(prompt: str, cases: list[dict[str, Any]], results: list[tuple[str | None, float | None, float]]) -> None:
    labelled = [(c, r) for c, r in zip(cases, results) if c["category"] != "llmbar"]
    right = [r[0] == c["truth"] for c, r in labelled]
    categories: dict[str, list[bool]] = {}
    for (case, _), ok in zip(labelled, right):
        categories.setdefault(case["category"], []).append(ok)
    met_share = sum(r[0] == "MET" for _, r in labelled) / len(labelled)
    p_of = [(c["truth"], r[1] if r[1] is not None else (1.0 if r[0] == "MET" else 0.0)) for c, r in labelled]
    area = auc([p for t, p in p_of if t == "MET"], [p for t, p in p_of if t == "UNMET"])
    per_category = ", ".join(f"{k} {sum(v)}/{len(v)}" for k, v in categories.items())
    print(
        f"{prompt:10} {sum(right):3d}/{len(right)} = {sum(right) / len(right):5.1%}   MET share {met_share:5.1%}"
        f"   AUC {area:.3f}   ({per_category})"
    )
    pairs = [(c, r) for c, r in zip(cases, results) if c["category"] == "llmbar"]
    if pairs:
        p = [r[1] if r[1] is not None else float("nan") for _, r in pairs]
        ordered = sum(p[i] > p[i + 1] for i in range(0, len(p), 2))
        print(
            f"{'':10} LLMBar Natural: preferred output's P(MET) higher in {ordered}/{len(p) // 2} pairs"
            f" = {ordered / (len(p) // 2):.1%}   (coin 50 %)"
        )
    print(f"{'':10} median {statistics.median(r[2] for r in results):.2f} s per criterion")


async def main(argv: list[str] | None = None) -> list[dict[str, Any]]:
    args = parse_args(argv)
    prompts = [p.strip() for p in args.prompts.split(",") if p.strip()]
    cases = load_cases(CASES) + llmbar_cases(args.llmbar_n, args.seed)
    judge_for = judge_factory(args)
    print(
        f"{len(cases)} cases ({len(cases) - 2 * max(args.llmbar_n, 0)} hand-labelled, "
        f"{max(args.llmbar_n, 0)} LLMBar Natural pairs), judge {args.model!r}"
    )
    print("coin / always MET: 50.0 % on the hand-labelled set; AUC 0.5; LLMBar pairs 50 %")
    rows = []
    for prompt in prompts:
        grader = jw.CriterionGrader([judge_for(explanations=args.explanations)], binary_prompt=prompt, seed=0)
        results = [await grade(grader, case) for case in cases]
        summarise(prompt + (" +expl" if args.explanations and prompt == "statement" else ""), cases, results)
        rows += [
            {**case, "prompt": prompt, "verdict": v, "p_met": p, "seconds": s}
            for case, (v, p, s) in zip(cases, results)
        ]
    write_rows(rows, args.out)
    return rows


if __name__ == "__main__":
    asyncio.run(main())
