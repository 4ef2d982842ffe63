"""How right is the embedded judge? Its pairwise methods on all of LLMBar and a seeded PandaLM sample, beside
the published judges, with seconds per judgment on this machine.

Run: `python benchmarks/judge_quality.py [--n 20] [--pandalm-n 200] [--methods pointwise,probability,verdict]`.
Every pair is judged in both presentations (LLMBar's protocol: accuracy averaged over the two, positional
agreement = both presentations give the same winner). Calls go through the persistent call cache, so a second
run (or a longer one after a quick one) pays only for pairs not judged before; `--fresh` uses a new cache and
measures speed on a cold model.

Targets (issue 13): LLMBar Natural accuracy >= 80 % with positional agreement >= 90 %; Adversarial mean
accuracy >= 50 %; median <= 1.0 s per pointwise judgment and <= 2.5 s per pair on Natural.

`--commit-first` (issue 35) judges every set three times per method, as shipped, with `commit_first=True` (the
judge answers each instruction first, its short answer, and compares the responses against that answer; one answer
per question for both presentations) and with `commit_first="short"` (only where the answer is a word, number, name
or date), and prints them side by side; the seconds then include the answers. Targets: no
regression on LLMBar Natural (74 %) or PandaLM (63 %).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import pandas as pd

import judgewidgets as jw

TARGETS = {"natural_accuracy": 0.80, "natural_agreement": 0.90, "adversarial_accuracy": 0.50}
S_PER_JUDGMENT, S_PER_PAIR = 1.0, 2.5
# The embedded defaults' measured accuracy (issue 35): (dataset, subset) -> floor.
NO_REGRESSION = {("llmbar", "Natural"): 0.74, ("pandalm", "test"): 0.63}


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=None, help="pairs per LLMBar subset (default: all 419)")
    parser.add_argument("--pandalm-n", type=int, default=200, help="seeded PandaLM sample (0 skips it)")
    parser.add_argument("--methods", default="pointwise,probability", help="comma-separated pairwise methods")
    parser.add_argument("--subsets", default=None, help="comma-separated LLMBar subsets (default: all five)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--pointwise-template", default=None, help="template of the pointwise method")
    parser.add_argument("--tie-margin", type=float, default=None, help="the judges' tie margin (default: theirs)")
    parser.add_argument("--fresh", action="store_true", help="a new, empty call cache (cold timings)")
    parser.add_argument(
        "--commit-first", action="store_true", help="each method also with commit_first=True, side by side"
    )
    return parser.parse_args()


def judge_for(
    method: str, cache: bool | str, template: str | None, tie_margin: float | None, commit_first: bool | str = False
) -> jw.PairwiseJudge:
    options: dict[str, object] = {"pointwise_template": template} if template and method == "pointwise" else {}
    suffix = f", {template}" if options else ""
    if tie_margin is not None:
        options["tie_margin"] = tie_margin
        suffix += f", tie margin {tie_margin:g}"
    if commit_first:
        options["commit_first"] = commit_first
        suffix += ", commit-first" + (" short" if commit_first == "short" else "")
    return jw.PairwiseJudge("local", method=method, name=f"local ({method}{suffix})", cache=cache, **options)


def run(
    method: str, args: argparse.Namespace, cache: bool | str, commit_first: bool | str = False
) -> tuple[jw.MetaEvaluation, float]:
    judge = judge_for(method, cache, args.pointwise_template, args.tie_margin, commit_first)
    subsets = args.subsets.split(",") if args.subsets else None
    started = time.perf_counter()
    reports = [jw.meta_evaluate(judge, "llmbar", subsets=subsets, n=args.n, seed=args.seed, progress=False)]
    if args.pandalm_n:
        reports.append(jw.meta_evaluate(judge, "pandalm", n=args.pandalm_n, seed=args.seed, progress=False))
    wall = time.perf_counter() - started
    merged = jw.MetaEvaluation(
        judge=judge.display_name,
        measured=pd.concat([r.measured for r in reports], ignore_index=True),
        verdicts=pd.concat([r.verdicts for r in reports], ignore_index=True),
    )
    return merged, wall


def speed(report: jw.MetaEvaluation, method: str) -> tuple[float, float]:
    """(median s per judgment, median s per pair) on LLMBar Natural, over pairs that made uncached calls."""
    natural = report.verdicts[(report.verdicts["subset"] == "Natural") & ~report.verdicts["swapped"]]
    per_pair = natural["seconds"] * 2  # each presentation row carries half the pair's model time
    per_pair = per_pair[per_pair > 0]
    if per_pair.empty:
        return float("nan"), float("nan")
    calls_per_pair = 2  # pointwise: one per response; probability and verdict: one per order
    return float(per_pair.median() / calls_per_pair), float(per_pair.median())


def verdict(ok: bool) -> str:
    return "met" if ok else "NOT met"


def main() -> None:
    args = parse_args()
    cache: bool | str = True
    if args.fresh:
        cache = str(Path(tempfile.mkdtemp(prefix="judge-quality-")) / "calls.sqlite")
    methods = [m.strip() for m in args.methods.split(",") if m.strip()]
    tables = []
    kinds: tuple[bool | str, ...] = (False, True, "short") if args.commit_first else (False,)
    runs = [(m, committing) for m in methods for committing in kinds]
    for method, committing in runs:
        report, wall = run(method, args, cache, committing)
        method = method + {False: "", True: ", commit-first", "short": ", commit-first short"}[committing]
        summary = report.summary()
        judgment_s, pair_s = speed(report, method)
        print(f"\n## local judge, method={method}  ({wall:.0f} s wall)")
        print(report.table.drop(columns=["source"]).round(3).to_string(index=False))
        print()
        print(summary.round(3).to_string(index=False))
        natural = report.measured[report.measured["subset"] == "Natural"]
        adversarial = report.measured[report.measured["subset"].str.startswith("Adversarial")]
        if len(natural):
            row = natural.iloc[0]
            print(
                f"targets: Natural accuracy {row['accuracy']:.1%} (>= 80 %: {verdict(row['accuracy'] >= 0.8)}), "
                f"positional agreement {row['positional_agreement']:.1%} "
                f"(>= 90 %: {verdict(row['positional_agreement'] >= 0.9)})"
            )
            print(
                f"speed on Natural: median {judgment_s:.2f} s per judgment (<= {S_PER_JUDGMENT} s: "
                f"{verdict(judgment_s <= S_PER_JUDGMENT)}), {pair_s:.2f} s per pair (<= {S_PER_PAIR} s: "
                f"{verdict(pair_s <= S_PER_PAIR)}); nan when every call came from the cache"
            )
        if len(adversarial):
            mean = adversarial["accuracy"].mean()
            print(f"targets: Adversarial mean accuracy {mean:.1%} (>= 50 %: {verdict(mean >= 0.5)})")
        if committing:
            for (dataset, subset), floor in NO_REGRESSION.items():
                measured = report.measured
                rows = measured[(measured["dataset"] == dataset) & (measured["subset"] == subset)]
                if len(rows):
                    accuracy = rows.iloc[0]["accuracy"]
                    ok = verdict(accuracy >= floor)
                    print(f"no regression, {dataset} {subset}: {accuracy:.1%} (>= {floor:.0%}: {ok})")
        tables.append(report.measured.assign(method=method))
    if len(tables) > 1:
        both = pd.concat(tables, ignore_index=True)
        print("\n## methods side by side (accuracy / positional agreement)")
        wide = both.pivot_table(
            index=["dataset", "subset"], columns="method", values=["accuracy", "positional_agreement"]
        )
        print(wide.round(3).to_string())


if __name__ == "__main__":
    main()
