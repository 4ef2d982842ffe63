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

Raw against aligned stages (`--compare [--quick]`, issue 24): per dataset `--n` pairs (300; 150 with `--quick`)
in three parts, one to align each stage with (`judge.align`, `--levers`, default the decision rule and its
calibration: no call beyond judging those pairs once), one to calibrate the cascade on and one to test it on. The
raw and the aligned cascades are calibrated on the same pairs and every stage judges every test pair once (the
aligned judges send the very requests the raw ones do, so the cache serves both); then, for each target in
`--targets` (70 % and 80 %), the thresholds certified, and the test pairs decided and their agreement, for the
two-start walk and the paper's one-start walk (refit without a call). Run on the embedded model:
`python benchmarks/cascade.py --compare --quick --second variant`.

The walks by simulation (`--simulate [--quick]`, no model): judges of known accuracy (`jw.cascade.simulate`, the
settings of the table in docs/guide/cascades.md, "Checked by simulation", and judges whose accuracy levels off
below 1), each calibrated with the paper's walk and the two-start walk on the same draws: coverage, and how often
the guarantee held.

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
    parser.add_argument(
        "--n", type=int, default=None, help="pairs per dataset: half to calibrate (200), or thirds with --compare (300)"
    )
    parser.add_argument("--compare", action="store_true", help="raw against aligned stages at --targets")
    parser.add_argument("--simulate", action="store_true", help="the two walks by simulation (no model)")
    parser.add_argument("--quick", action="store_true", help="fewer pairs (150) or simulated splits (300)")
    parser.add_argument("--targets", default="0.7,0.8", help="targets of --compare (default 0.7,0.8)")
    parser.add_argument("--levers", default="rule", help="alignment levers of --compare (default rule)")
    parser.add_argument("--splits", type=int, default=None, help="simulated splits per setting (1000)")
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


def labelled(dataset: str, n: int | None, seed: int) -> pd.DataFrame:
    """`n` labelled pairs of a dataset, drawn with `seed` (all of them when `n` is None)."""
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
    calibrate, test = halves(labelled(name, args.n or 200, args.seed), args.seed)
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


# --- raw against aligned stages ------------------------------------------------------------------------------


def thirds(frame: pd.DataFrame, seed: int) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """The pairs in three parts, drawn with `seed`: to align, to calibrate, to test."""
    order = np.random.default_rng(seed).permutation(len(frame))
    cut = len(frame) // 3
    parts = (order[:cut], order[cut : 2 * cut], order[2 * cut :])
    return tuple(frame.iloc[p].reset_index(drop=True) for p in parts)  # type: ignore[return-value]


def judged(cascade: jw.Cascade, frame: pd.DataFrame) -> jw.Calibration:
    """Every stage's judgment of every pair of `frame` (the cascade's calibration pass; its thresholds unused)."""
    return cascade.calibrate(frame, progress=False)


def decided_on(test: jw.Calibration, thresholds: list[float | None]) -> dict[str, Any]:
    """The test pairs the thresholds decide, and their agreement with the human labels."""
    deciding = jw.cascade.route(test.confidence, thresholds)
    rows = np.flatnonzero(deciding >= 0)
    agrees = test.agrees[rows, deciding[rows]]
    return {
        "decided": len(rows),
        "coverage": len(rows) / test.rows if test.rows else 0.0,
        "agreement": float(agrees.mean()) if len(rows) else float("nan"),
        "shares": [float((deciding == j).mean()) for j in range(test.confidence.shape[1])],
    }


def paper_walk(calibration: jw.Calibration, target: float) -> list[float | None]:
    """The thresholds the paper's walk (one start, at the most confident rows) certifies on the same judgments."""
    stages = calibration.confidence.shape[1]
    test = jw.cascade.AgreementTest(target, calibration.delta / stages)
    fits = jw.cascade.fit_with(calibration.confidence, calibration.agrees, [test] * stages)
    return [fit.threshold for fit in fits]


def compare_dataset(name: str, judges: list[jw.PairwiseJudge], args: argparse.Namespace) -> list[dict[str, Any]]:
    """Raw and aligned stages on one dataset: aligned on one third, calibrated on another, tested on the last."""
    n = args.n or (150 if args.quick else 300)
    # PandaLM repeats some pairs word for word: one copy each, so that no pair is in two parts.
    pairs = labelled(name, None, args.seed).drop_duplicates(["question", "response_a", "response_b"])
    align, calibrate, test = thirds(sample(pairs, n, args.seed), args.seed)
    targets = [float(t) for t in args.targets.split(",") if t.strip()]
    levers = tuple(lever.strip() for lever in args.levers.split(",") if lever.strip())
    print(f"\n## {name}: {len(align)} pairs to align, {len(calibrate)} to calibrate, {len(test)} to test")
    started = time.perf_counter()
    aligned = [judge.align(align, levers=levers, progress=False) for judge in judges]
    report = pd.DataFrame(
        [
            {
                "stage": judge.display_name,
                "before": a.alignment_report.before["accuracy"],
                "after": a.alignment_report.after["accuracy"],
                "kept": a.alignment_report.chosen["candidate"],
            }
            for judge, a in zip(judges, aligned)
        ]
    )
    print(f"aligned on the first part ({time.perf_counter() - started:.0f} s; held-out accuracy on it):")
    print(report.round(3).to_string(index=False))
    rows: list[dict[str, Any]] = []
    for kind, stages in (("raw", judges), ("aligned", aligned)):
        cascade = jw.Cascade(stages, target_agreement=targets[0], delta=args.delta)
        started = time.perf_counter()
        try:
            calibration = judged(cascade, calibrate)
            tested = judged(cascade, test)
        except (jw.InputError, jw.ConfigurationError) as exc:
            print(f"{kind}: cannot calibrate: {exc}")
            rows.append({"dataset": name, "stages": kind, "error": str(exc)})
            continue
        alone = ", ".join(f"{s} {a:.1%}" for s, a in zip(cascade.names, tested.agrees.mean(axis=0)))
        print(f"{kind} stages, each alone on the test part: {alone} ({time.perf_counter() - started:.0f} s)")
        for target in targets:
            fitted = calibration.at(target)
            for walk, thresholds in (("two starts", fitted.thresholds), ("paper", paper_walk(fitted, target))):
                row = {
                    "dataset": name,
                    "stages": kind,
                    "target": target,
                    "walk": walk,
                    "thresholds": thresholds,
                    "tested": tested.rows,
                    **decided_on(tested, thresholds),
                }
                rows.append(row)
    table = pd.DataFrame([r for r in rows if "error" not in r])
    if not table.empty:
        shown = table.drop(columns=["dataset", "thresholds", "shares"]).assign(
            thresholds=[
                ", ".join("—" if t is None else f"{t:.3f}" for t in r["thresholds"]) for r in rows if "error" not in r
            ]
        )
        print(f"certified on the calibration part (δ = {args.delta}), measured on the test part:")
        print(shown.round(3).to_string(index=False))
    return rows


def target_line(rows: list[dict[str, Any]]) -> str:
    """Issue 24's target: aligned local stages decide ≥ 30 % of PandaLM's test pairs at a certified 70 %."""
    hit = [
        r
        for r in rows
        if r.get("dataset") == "pandalm" and r.get("stages") == "aligned" and r.get("walk") == "two starts"
        if r.get("target") == 0.7
    ]
    if not hit:
        return "target (aligned stages decide ≥ 30 % of PandaLM at a certified 70 %): not measured in this run"
    share = hit[0]["coverage"]
    verdict = "met" if share >= 0.3 else "short"
    return (
        f"target (aligned stages decide ≥ 30 % of PandaLM at a certified 70 %): {verdict}, {share:.1%} of "
        f"{hit[0]['tested']} test pairs decided, agreement on them {hit[0]['agreement']:.1%}"
    )


# --- the walks by simulation -----------------------------------------------------------------------------------

SIMULATED = (
    # (what, judges, target, δ, labelled rows)
    ("63 % → 79 %, calibrated", ((0.8, 1.5, 1.0, 0.0, 1.0), (2.0, 1.5, 1.0, 0.0, 1.0)), 0.9, 0.1, 400),
    ("63 % → 79 %, calibrated", ((0.8, 1.5, 1.0, 0.0, 1.0), (2.0, 1.5, 1.0, 0.0, 1.0)), 0.8, 0.05, 400),
    ("overconfident → overconfident", ((0.5, 1.5, 1.0, 0.6, 1.0), (1.5, 1.5, 1.0, 0.3, 1.0)), 0.85, 0.1, 300),
    ("always sure, right half → 79 %", ((0.0, 0.0, 0.0, 1.0, 1.0), (2.0, 1.5, 1.0, 0.0, 1.0)), 0.9, 0.1, 400),
    ("each good where the other is bad", ((0.8, 2.5, 0.3, 0.0, 1.0), (1.5, -2.5, 0.3, 0.0, 1.0)), 0.9, 0.1, 150),
    ("63 % → 79 %, calibrated", ((0.8, 1.5, 1.0, 0.0, 1.0), (2.0, 1.5, 1.0, 0.0, 1.0)), 0.8, 0.1, 100),
    ("levels off at 88 %, twice", ((0.8, 1.5, 1.0, 0.0, 0.88), (1.0, 1.5, 1.0, 0.0, 0.88)), 0.7, 0.1, 100),
    ("levels off at 88 %, twice", ((0.8, 1.5, 1.0, 0.0, 0.88), (1.0, 1.5, 1.0, 0.0, 0.88)), 0.7, 0.1, 200),
    ("levels off at 88 % / 90 %", ((1.0, 1.5, 1.0, 0.0, 0.88), (1.5, 1.5, 1.0, 0.0, 0.9)), 0.8, 0.1, 200),
    ("levels off at 90 %, alone", ((1.0, 1.5, 1.0, 0.0, 0.9),), 0.8, 0.1, 200),
    ("levels off at 85 %, twice", ((0.6, 1.5, 1.0, 0.0, 0.85), (0.8, 1.5, 1.0, 0.0, 0.85)), 0.7, 0.2, 40),
    ("levels off at 88 %, overconfident", ((0.8, 1.5, 1.0, 0.3, 0.88), (1.0, 1.5, 1.0, 0.3, 0.88)), 0.7, 0.1, 200),
    ("levels off at 85 %, overconfident", ((0.8, 1.5, 1.0, 0.5, 0.85), (1.0, 1.5, 1.0, 0.5, 0.85)), 0.7, 0.1, 100),
)


def simulate_walks(args: argparse.Namespace) -> list[dict[str, Any]]:
    """Each setting calibrated with both walks on the same draws: mean coverage, and the share of splits where the
    guarantee held (realised on 2,000 test items, and in the population)."""
    splits = args.splits or (300 if args.quick else 1000)
    rows = []
    started = time.perf_counter()
    for what, judges, target, delta, n in SIMULATED:
        simulated = [
            jw.cascade.SimulatedJudge(bias=b, skill=k, noise=e, overconfidence=o, ceiling=c) for b, k, e, o, c in judges
        ]
        row: dict[str, Any] = {"judges": what, "target": target, "delta": delta, "rows": n}
        for walk in ("paper", "two starts"):
            frame = jw.cascade.simulate(
                simulated, target, delta, n_calibration=n, n_test=2000, splits=splits, seed=args.seed, walk=walk
            )
            decided = frame.dropna(subset=["expected"])
            row[f"coverage ({walk})"] = float(frame["coverage"].mean())
            row[f"held ({walk})"] = float(frame["holds"].mean())
            row[f"held in population ({walk})"] = float((decided["expected"] >= target).mean()) if len(decided) else 1.0
        rows.append(row)
    table = pd.DataFrame(rows)
    spent = time.perf_counter() - started
    print(f"## the walks by simulation: {splits} splits per setting, 2,000 test items each ({spent:.0f} s)")
    print(table.round(3).to_string(index=False))
    gain = table["coverage (two starts)"] - table["coverage (paper)"]
    print(
        f"two starts decide more in {(gain > 0.005).sum()} of {len(table)} settings (up to {gain.max():+.1%}), "
        f"less in {(gain < -0.005).sum()} (at worst {gain.min():+.1%}); the guarantee held in "
        f"{table[[c for c in table if c.startswith('held')]].min().min():.1%} of splits or more "
        f"(needs ≥ 1 − δ)"
    )
    return rows


def main(argv: list[str] | None = None) -> list[dict[str, Any]]:
    args = parse_args(argv)
    if args.simulate:
        return simulate_walks(args)
    cache: bool | str = True
    if args.fresh:
        cache = str(Path(tempfile.mkdtemp(prefix="cascade-bench-")) / "calls.sqlite")
    judges = build_judges(args, cache)
    datasets = [d.strip() for d in args.datasets.split(",") if d.strip()]
    if args.compare:
        rows = [row for d in datasets for row in compare_dataset(d, judges, args)]
        print(f"\n{target_line(rows)}")
    else:
        rows = [run_dataset(d, judges, args) for d in datasets]
    print(f"\npaper: {PAPER}")
    return rows


if __name__ == "__main__":
    main()
