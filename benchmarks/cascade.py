"""Trust or escalate on human-labelled pairs: a cascade of the embedded judge (and a hosted one when a key is
set), calibrated on half of PandaLM's and LLMBar's labelled pairs and run on the other half.

Run: `python benchmarks/cascade.py [--n 200] [--datasets pandalm,llmbar] [--target 0.8] [--delta 0.1]`.
Stages: (1) the local judge's probability-based pairwise verdict (`jw.PairwiseJudge("local")`: each response
scored alone, P(a better) from its probabilities); (2) the local judge asked to write its reasons first
(`--second reason`, the default) or a second prompt (`--second variant`: the 1–5 instruction-following
template); (3) a hosted judge, only when `--hosted MODEL` is given or OPENAI_API_KEY / ANTHROPIC_API_KEY is
set. Per dataset: `--n` pairs drawn with `--seed` (PandaLM's rows without a majority label left out; LLMBar's
five subsets pooled), calibrated on one half and run on the other. Printed: each stage's accuracy alone (on
the calibration half, where every stage judged every pair), the thresholds, the test half's coverage and
agreement beside the guarantee, calls and model seconds beside the last stage run on every test pair, and the
in-sample coverage each target would buy; the paper's numbers beside them.

Calls go through the persistent call cache, so a second run (or a longer one after a quick one) pays only for
pairs not judged before; `--fresh` uses a new cache. `--api-base URL --model NAME` runs every stage on an
OpenAI-compatible server instead (how the tests drive this script, on the loopback test server).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np
import pandas as pd

import judgewidgets as jw
from judgewidgets.meta_eval._evaluate import sample

PAPER = (
    "Jung, Brahman & Choi (ICLR 2025), as quoted in their abstract: on a Chatbot Arena subset where GPT-4 alone "
    "almost never reaches 80 % human agreement, a Mistral-7B → GPT-3.5 → GPT-4 cascade guarantees ≥ 80 % "
    "agreement with almost 80 % test coverage."
)
HOSTED_BY_KEY = {"OPENAI_API_KEY": "openai/gpt-4o-mini", "ANTHROPIC_API_KEY": "anthropic/claude-3-5-haiku-20241022"}
SWEEP = (0.65, 0.7, 0.75, 0.8, 0.85, 0.9)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=200, help="pairs per dataset, half to calibrate (default 200)")
    parser.add_argument("--datasets", default="pandalm,llmbar", help="comma-separated: pandalm, llmbar")
    parser.add_argument("--target", type=float, default=0.8, help="target agreement (default 0.8)")
    parser.add_argument("--delta", type=float, default=0.1, help="allowed chance the guarantee fails (0.1)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--second", choices=("reason", "variant"), default="reason", help="the second stage")
    parser.add_argument("--hosted", default=None, help="a hosted judge's model for the last stage")
    parser.add_argument("--no-hosted", action="store_true", help="no hosted stage even when a key is set")
    parser.add_argument("--fresh", action="store_true", help="a new, empty call cache")
    parser.add_argument("--api-base", default=None, help="run every stage on this OpenAI-compatible server")
    parser.add_argument("--model", default="judge", help="the model name on --api-base")
    return parser.parse_args(argv)


def hosted_model(args: argparse.Namespace) -> str | None:
    if args.no_hosted:
        return None
    if args.hosted:
        return str(args.hosted)
    return next((model for key, model in HOSTED_BY_KEY.items() if os.environ.get(key)), None)


def build_judges(args: argparse.Namespace, cache: bool | str) -> list[jw.PairwiseJudge]:
    """The cascade's stages, cheapest first."""
    if args.api_base:
        server = {"api_base": args.api_base, "api_key": "sk-benchmark", "cache": cache}
        model = f"openai/{args.model}"
        return [
            jw.PairwiseJudge(model, name="server (probabilities)", method="probability", **server),
            jw.PairwiseJudge(
                model,
                name="server (second prompt)",
                method="probability",
                instruction=jw.cascade.PAIRWISE_WORDINGS[1],
                **server,
            ),
        ]
    judges = [jw.PairwiseJudge("local", name="local (probabilities)", cache=cache)]
    if args.second == "reason":
        judges.append(jw.PairwiseJudge("local", name="local (reasons first)", explanations=True, cache=cache))
    else:
        judges.append(
            jw.PairwiseJudge(
                "local", name="local (1–5 variant)", pointwise_template="instruction_following", cache=cache
            )
        )
    hosted = hosted_model(args)
    if hosted:
        judges.append(jw.PairwiseJudge(hosted, name=hosted, cache=cache))
    return judges


def labelled(dataset: str, n: int, seed: int) -> pd.DataFrame:
    """`n` labelled pairs of a dataset, drawn with `seed`."""
    if dataset == "pandalm":
        frame = jw.datasets.pandalm()
        frame = frame[frame["label"].notna()]
    elif dataset == "llmbar":
        frame = jw.datasets.llmbar()
    else:
        raise SystemExit(f"unknown dataset {dataset!r}; use pandalm or llmbar")
    frame = frame[["question", "response_a", "response_b", "label"]]
    return sample(frame, n, seed)


def halves(frame: pd.DataFrame, seed: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    order = np.random.default_rng(seed).permutation(len(frame))
    half = len(frame) // 2
    return frame.iloc[order[:half]].reset_index(drop=True), frame.iloc[order[half:]].reset_index(drop=True)


def run_dataset(name: str, judges: list[jw.PairwiseJudge], args: argparse.Namespace) -> dict[str, Any]:
    calibrate, test = halves(labelled(name, args.n, args.seed), args.seed)
    cascade = jw.Cascade(judges, target_agreement=args.target, delta=args.delta)
    print(f"\n## {name}: {len(calibrate)} pairs to calibrate, {len(test)} to test; stages: {', '.join(cascade.names)}")
    started = time.perf_counter()
    try:
        calibration = cascade.calibrate(calibrate, progress=False)
    except jw.InputError as exc:
        print(f"cannot calibrate: {exc}")
        return {"dataset": name, "error": str(exc)}
    calibrated_s = time.perf_counter() - started
    alone = pd.DataFrame(
        {
            "stage": cascade.names,
            "accuracy_alone": calibration.agrees.mean(axis=0),
            "calls_per_pair": calibration.calls.mean(axis=0),
            "model_s_per_pair": calibration.seconds.mean(axis=0),
        }
    )
    print(f"each stage alone on the calibration half ({calibrated_s:.0f} s wall):")
    print(alone.round(3).to_string(index=False))
    print("calibration:")
    print(calibration.table().round(3).to_string(index=False))
    started = time.perf_counter()
    result = cascade.run(test, progress=False)
    run_s = time.perf_counter() - started
    summary = result.summary()
    print(f"test half ({run_s:.0f} s wall):")
    print(result.stages().round(3).to_string(index=False))
    if summary["decided"]:
        met = "met" if summary["agreement"] >= args.target else "NOT met on this sample"
        agreement = f"agreement on the decided {summary['agreement']:.1%} (target {args.target:.0%}: {met})"
    else:
        agreement = "nothing decided: no stage certified the target on the calibration half"
    print(
        f"coverage {summary['coverage']:.1%} ({summary['decided']} of {summary['items']} decided), {agreement}; "
        f"guarantee: {result.guarantee}"
    )
    spent = (
        f"calls {summary['calls']:.0f} vs {summary['last_stage_alone_calls']:.0f} for the last stage alone on every "
        f"test pair, model seconds {summary['seconds']:.0f} vs {summary['last_stage_alone_seconds']:.0f}"
    )
    if summary["decided"]:
        print(f"{spent} ({summary['calls_saved']:.0%} of calls, {summary['seconds_saved']:.0%} of seconds saved)")
    else:
        print(f"{spent} (nothing decided: no saving to report)")
    sweep = calibration.sweep(SWEEP).drop_duplicates("target")[["target", "coverage", "relative_calls"]]
    print("in-sample coverage each target would buy (calibration half):")
    print(sweep.round(3).to_string(index=False))
    return {"dataset": name, **summary, "thresholds": calibration.thresholds, "stages": cascade.names}


def main(argv: list[str] | None = None) -> list[dict[str, Any]]:
    args = parse_args(argv)
    cache: bool | str = True
    if args.fresh:
        cache = str(Path(tempfile.mkdtemp(prefix="cascade-bench-")) / "calls.sqlite")
    judges = build_judges(args, cache)
    rows = [run_dataset(d.strip(), judges, args) for d in args.datasets.split(",") if d.strip()]
    print(f"\npaper: {PAPER}")
    return rows


if __name__ == "__main__":
    main()
