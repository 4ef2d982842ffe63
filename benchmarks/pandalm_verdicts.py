"""The embedded judge's verdicts on PandaLM pairs, as the CSV `benchmarks/ppi_estimates.py --pandalm-verdicts` reads.

Run: `python benchmarks/pandalm_verdicts.py [--n 300] [--out pandalm_verdicts.csv]`, then
`python benchmarks/ppi_estimates.py --quick --pandalm-verdicts pandalm_verdicts.csv`.

The pairs are the ones benchmarks/alignment.py judges, in its order: the seeded test sample of 200 (the one
benchmarks/judge_quality.py measures), then the seeded labelled pool it aligns on, up to `--n` pairs in all; so
after an alignment run every call here comes from the persistent call cache. The judge is
`jw.PairwiseJudge("local")` as given (both orders, its default method); a failed comparison is written with no
verdict and left out by the resampling. `--api-base URL --model NAME` judges on an OpenAI-compatible server instead.
Data: PandaLM (Apache-2.0, Wang et al. 2023), shipped in judgewidgets/data.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import pandas as pd

import judgewidgets as jw
from judgewidgets.meta_eval._evaluate import sample

TEST_N = 200  # benchmarks/alignment.py's default test sample


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=300, help="pairs to judge (the 200 test pairs first)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default="pandalm_verdicts.csv")
    parser.add_argument("--api-base", default=None, help="judge on this OpenAI-compatible server")
    parser.add_argument("--model", default="judge", help="the model name on --api-base")
    return parser.parse_args(argv)


def pairs(n: int, seed: int) -> pd.DataFrame:
    """The first `n` pairs in benchmarks/alignment.py's order: its test sample, then its shuffled labelled pool."""
    every = jw.datasets.pandalm().dropna(subset=["label"]).reset_index(drop=True)
    test = sample(every, TEST_N, seed)
    pool = every[~every["pair_id"].isin(test["pair_id"])].sample(frac=1.0, random_state=seed)
    return pd.concat([test, pool]).head(n).reset_index(drop=True)


def main(argv: list[str] | None = None) -> pd.DataFrame:
    args = parse_args(argv)
    if args.api_base:
        judge = jw.PairwiseJudge(f"openai/{args.model}", name="server", api_base=args.api_base, api_key="sk-benchmark")
    else:
        judge = jw.PairwiseJudge("local", name="local")
    chosen = pairs(args.n, args.seed)
    started = time.perf_counter()
    judged = judge.compare_many(chosen, progress=False)
    out = pd.DataFrame({"pair_id": chosen["pair_id"], "label": chosen["label"], "verdict": judged["winner"]})
    out.to_csv(args.out, index=False)
    agree = float((out["verdict"] == out["label"]).mean())
    print(
        f"{len(out)} PandaLM pairs judged in {time.perf_counter() - started:.0f} s "
        f"({out['verdict'].isna().sum()} failed); agreement with the human majority {agree:.1%}; "
        f"verdicts A {(out['verdict'] == 'A').mean():.1%}, B {(out['verdict'] == 'B').mean():.1%}, "
        f"tie {(out['verdict'] == 'tie').mean():.1%}; written to {args.out}"
    )
    return out


if __name__ == "__main__":
    main()
