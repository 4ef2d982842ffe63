"""Multi-choice rubric criteria on labelled data: does a judge pick the option that is true of the response?

Run: `python benchmarks/rubric_choices.py [--seeds 0,1] [--fresh] [--model M] [--out rows.csv]`.
`benchmarks/data/rubric_choices.jsonl`: 36 hand-written (response, multi-choice criterion, true option) cases
(ours, under the package's Apache-2.0 license) where the true option is not a matter of taste — ordinal:
correctness (incorrect / partly / fully correct, two with a reference answer), completeness (how many of the
question's parts are answered), length, quality of an explanation (none, wrong, right); nominal: tone (rude /
neutral / friendly), language, format (list, prose, code, table). Each case goes through `jw.CriterionGrader` as
a one-criterion rubric, with the automatic "cannot assess" option, once per option shuffle seed.

Printed: options picked right (overall and per category) against the chance rate of a judge that picks at
random; how often the pick survives a different option order (position robustness); and, for the ordinal
cases that share a question, the pairs of responses whose probability-weighted option values are ordered as
their true options are (a judge can rank right while picking the wrong labels). Calls go through the persistent
call cache unless `--fresh`; `--api-base URL --model NAME` grades with a model on an OpenAI-compatible server
(how the tests drive this script); `--out` writes every graded case to a CSV.
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

CASES = Path(__file__).with_name("data") / "rubric_choices.jsonl"


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", default="0,1", help="option-shuffle seeds, comma-separated (default 0,1)")
    add_judge_options(parser)
    return parser.parse_args(argv)


def criterion(case: dict[str, Any]) -> jw.Criterion:
    spec = case["criterion"]
    options = [jw.CriterionOption(o["label"], o["value"]) for o in spec["options"]]
    return jw.Criterion(spec["requirement"], name="criterion", scale_type=spec["scale_type"], options=options)


async def grade(grader: jw.CriterionGrader, case: dict[str, Any]) -> dict[str, Any]:
    """The option one judge picked for one case, its probability of each option, and the seconds it took."""
    rubric = jw.Rubric([criterion(case)])
    started = time.perf_counter()
    report = await grader.agrade(rubric, case["submission"], query=case["query"], reference=case.get("reference"))
    vote = report.criteria[0].votes[0]
    return {
        "picked": vote.selected_label,
        "probabilities": vote.probabilities or {},
        "error": vote.error,
        "seconds": time.perf_counter() - started,
    }


def expected_value(case: dict[str, Any], probabilities: dict[str, float], picked: str | None) -> float | None:
    """The option value weighted by the judge's probabilities (the picked option's value without them)."""
    values = {o["label"]: o["value"] for o in case["criterion"]["options"]}
    known = {label: p for label, p in probabilities.items() if label in values}
    if sum(known.values()) > 0:
        return sum(values[label] * p for label, p in known.items()) / sum(known.values())
    return values.get(picked) if picked is not None else None


def ordinal_pairs(cases: list[dict[str, Any]], values: list[float | None]) -> tuple[float, int]:
    """Pairs of ordinal cases on the same question and criterion with different true options: how many the
    judge's values order as the truth does (ties and missing values count half)."""
    groups: dict[tuple[str, str], list[tuple[float, float | None]]] = {}
    for case, value in zip(cases, values):
        spec = case["criterion"]
        if spec["scale_type"] == "ordinal":
            truth = next(o["value"] for o in spec["options"] if o["label"] == case["truth"])
            groups.setdefault((case["query"], spec["requirement"]), []).append((truth, value))
    right, n = 0.0, 0
    for group in groups.values():
        for i, (truth_i, value_i) in enumerate(group):
            for truth_j, value_j in group[i + 1 :]:
                if truth_i == truth_j:
                    continue
                n += 1
                if value_i is None or value_j is None or value_i == value_j:
                    right += 0.5
                else:
                    right += (value_i - value_j) * (truth_i - truth_j) > 0
    return right, n


def summarise(cases: list[dict[str, Any]], runs: dict[int, list[dict[str, Any]]]) -> None:
    chance = statistics.mean(1 / (len(c["criterion"]["options"]) + 1) for c in cases)  # + the "cannot assess"
    print(f"a judge picking at random: {chance:.1%} right")
    for seed, results in runs.items():
        right = [r["picked"] == c["truth"] for c, r in zip(cases, results)]
        categories: dict[str, list[bool]] = {}
        for case, ok in zip(cases, right):
            categories.setdefault(case["category"], []).append(ok)
        per_category = ", ".join(f"{k} {sum(v)}/{len(v)}" for k, v in categories.items())
        values = [expected_value(c, r["probabilities"], r["picked"]) for c, r in zip(cases, results)]
        ordered, pairs = ordinal_pairs(cases, values)
        failed = sum(r["error"] is not None for r in results)
        print(
            f"seed {seed}: {sum(right):3d}/{len(right)} = {sum(right) / len(right):5.1%} right ({per_category});"
            f" ordinal pairs ordered right by expected value {ordered:g}/{pairs}; failed calls {failed};"
            f" median {statistics.median(r['seconds'] for r in results):.2f} s per criterion"
        )
    if len(runs) > 1:
        picks = [[r["picked"] for r in results] for results in runs.values()]
        same = sum(len(set(p)) == 1 for p in zip(*picks))
        print(f"same option picked under every shuffle: {same}/{len(cases)} = {same / len(cases):.1%}")


async def main(argv: list[str] | None = None) -> list[dict[str, Any]]:
    args = parse_args(argv)
    seeds = [int(s) for s in args.seeds.split(",") if s.strip()]
    cases = load_cases(CASES)
    judge = judge_factory(args)()
    print(f"{len(cases)} multi-choice cases, judge {args.model!r}, option shuffle seeds {seeds}")
    runs = {}
    for seed in seeds:
        grader = jw.CriterionGrader([judge], seed=seed)
        runs[seed] = [await grade(grader, case) for case in cases]
    summarise(cases, runs)
    rows = [
        {**case, "criterion": case["criterion"]["requirement"], "seed": seed, **result}
        for seed, results in runs.items()
        for case, result in zip(cases, results)
    ]
    write_rows(rows, args.out)
    return rows


if __name__ == "__main__":
    asyncio.run(main())
