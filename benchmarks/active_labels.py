"""Active labelling (issue 36): labels needed for a given interval width, a `jw.label_plan` against a uniform draw,
and coverage, on simulated judges and on the embedded judge's real PandaLM and LLMBar verdicts.

    python benchmarks/active_labels.py [--quick] [--draws 500] [--N 2000] [--ref-n 100] [--skip-real]
                                       [--verdicts benchmarks/data/active_labels_verdicts.csv]

Simulated: each draw is a fresh population of N items, a person's pass/fail label y ~ Bernoulli(p) on each, and a
judge's score s; the judge's verdict is s ≥ 0.5 for `pass_rate` and s itself for `mean` (the same 0/1 labels). A
plan (`label_plan`'s defaults: π ∝ sqrt of p(1 − p) read from s, at least 20 % of the budget spread evenly and
more until a meaningless uncertainty would cost at most 3 % of width) draws n items and `estimate_quality(...,
plan=)` gives the active PPI++ interval; beside it PPI++ on n items drawn uniformly (today's estimate). The truth is
the mean of p over the population's distribution. For each setting and n on a grid: coverage at nominal 95 % and
mean width over the draws; "labels for the same width" is the n at which the active interval is as narrow as the
uniform one at `--ref-n` (interpolated on the grid, log–log), so it counts what the judge's own variance over N
leaves to the labels.

Judges (calibrated: s = p; biased: s is not p):
- confident: 75 % of items with confidence max(p, 1 − p) uniform on [0.95, 1], the rest on [0.5, 0.95];
- very confident: 85 % on [0.99, 1], the rest on [0.5, 0.99];
- spread: p ~ Beta(0.6, 0.6) (the issue's example);
- uninformative: the same confidence for every item (p = 0.6);
- uninformative, spread: s ~ Beta(0.6, 0.6) says nothing about the labels (p = 0.6 for every item);
- lenient (biased): the confident population scored s = min(p + 0.15, 1) (clipped scores look certain);
- lenient, spread (biased): p ~ Beta(0.6, 0.6) scored √p;
- overconfident (biased): says 0.99 where it is right 95 % of the time (75 % of items);
- rare errors (biased): 80 % pass; the judge passes 10 % of the failures with confidence 0.9–1.

Real: the embedded judge (`jw.PairwiseJudge("local")`, both orders) on 300 PandaLM pairs (the seeded sample of
benchmarks/pandalm_verdicts.py) and all 419 LLMBar pairs; uncertainty from its P(a better) (or its two orders'
verdicts when it read no probabilities); metric `win_rate` (A 1, tie ½, B 0) against the human label; the truth is
the labels' mean over the pairs (a finite population, so intervals made for an infinite one are conservative).
Verdicts are read from `--verdicts` when the file is there; otherwise the judge runs (minutes, with the model) and
writes it. Data: PandaLM (Apache-2.0, Wang et al. 2023), LLMBar (MIT, Zeng et al. 2024), shipped in
judgewidgets/data.

Targets (issue 36): coverage ≥ 93 % at nominal 95 % in every setting; ≥ 25 % fewer labels than uniform for the
same width when ≥ 70 % of items are judged with confidence ≥ 0.95 by a calibrated judge; never more than 3 % wider
than uniform when the confidence is uninformative.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np
import pandas as pd

import judgewidgets as jw
from judgewidgets.estimates import MeanEstimate, ppi_mean, weighted_ppi_mean
from judgewidgets.labels._plan import draw_order, plan_probabilities

CONFIDENCE = 0.95
TARGET_COVERAGE = 0.93
TARGET_SAVING = 0.25
TARGET_COST = 1.03
FLOOR, MAX_COST = 0.2, 0.03  # label_plan's defaults
WIN = {"A": 1.0, "tie": 0.5, "B": 0.0}
VERDICTS = Path(__file__).resolve().parent / "data" / "active_labels_verdicts.csv"

Population = Callable[[np.random.Generator, int], tuple[np.ndarray, np.ndarray, float]]


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="200 draws, three settings, a short grid")
    parser.add_argument("--draws", type=int, default=500, help="draws per setting and n (≥ 500 for the targets)")
    parser.add_argument("--N", type=int, default=2000, help="items per simulated population")
    parser.add_argument("--ref-n", type=int, default=100, help="the uniform draw's labels the widths are matched at")
    parser.add_argument("--ns", default="40,55,70,85,100,120,140,170,200", help="labels per draw, the grid")
    parser.add_argument("--settings", default=None, help="comma-separated simulated settings (default: all)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--skip-real", action="store_true", help="simulations only")
    parser.add_argument("--verdicts", type=Path, default=VERDICTS, help="the embedded judge's saved verdicts")
    parser.add_argument("--pandalm-n", type=int, default=300, help="PandaLM pairs to judge when none are saved")
    parser.add_argument("--out", type=Path, default=None, help="also write the table's rows here (CSV)")
    args = parser.parse_args(argv)
    args.ns = [int(v) for v in str(args.ns).split(",")]
    if args.quick:
        args.draws, args.ns = min(args.draws, 200), [55, 85, 100, 140]
        args.settings = args.settings or "confident,uninformative spread,rare errors"
    return args


# --- simulated judges: (labels y, the judge's score s, the truth) for one population of N items ----------------


def _confident(rng: np.random.Generator, N: int, share: float, low: float) -> tuple[np.ndarray, np.ndarray, float]:
    sure = rng.random(N) < share
    confidence = np.where(sure, rng.uniform(low, 1.0, N), rng.uniform(0.5, low, N))
    passing = rng.random(N) < 0.6
    p = np.where(passing, confidence, 1.0 - confidence)
    truth = 0.6 * (share * (1 + low) / 2 + (1 - share) * (0.5 + low) / 2)
    truth += 0.4 * (share * (1 - low) / 2 + (1 - share) * (1 - (0.5 + low) / 2))
    return p, p, truth


def confident(rng: np.random.Generator, N: int) -> tuple[np.ndarray, np.ndarray, float]:
    return _confident(rng, N, 0.75, 0.95)


def very_confident(rng: np.random.Generator, N: int) -> tuple[np.ndarray, np.ndarray, float]:
    return _confident(rng, N, 0.85, 0.99)


def spread(rng: np.random.Generator, N: int) -> tuple[np.ndarray, np.ndarray, float]:
    p = rng.beta(0.6, 0.6, N)
    return p, p, 0.5


def uninformative(rng: np.random.Generator, N: int) -> tuple[np.ndarray, np.ndarray, float]:
    p = np.full(N, 0.6)
    return p, p, 0.6


def uninformative_spread(rng: np.random.Generator, N: int) -> tuple[np.ndarray, np.ndarray, float]:
    return np.full(N, 0.6), rng.beta(0.6, 0.6, N), 0.6


def lenient(rng: np.random.Generator, N: int) -> tuple[np.ndarray, np.ndarray, float]:
    p, _, truth = confident(rng, N)
    return p, np.minimum(p + 0.15, 1.0), truth


def lenient_spread(rng: np.random.Generator, N: int) -> tuple[np.ndarray, np.ndarray, float]:
    p = rng.beta(0.6, 0.6, N)
    return p, np.sqrt(p), 0.5


def overconfident(rng: np.random.Generator, N: int) -> tuple[np.ndarray, np.ndarray, float]:
    sure = rng.random(N) < 0.75
    right = np.where(sure, 0.95, rng.uniform(0.5, 0.95, N))
    said = np.where(sure, 0.99, right)
    passing = rng.random(N) < 0.6
    truth = 0.6 * (0.75 * 0.95 + 0.25 * 0.725) + 0.4 * (0.75 * 0.05 + 0.25 * 0.275)
    return np.where(passing, right, 1 - right), np.where(passing, said, 1 - said), truth


def rare_errors(rng: np.random.Generator, N: int) -> tuple[np.ndarray, np.ndarray, float]:
    y = rng.random(N) < 0.8
    fooled = ~y & (rng.random(N) < 0.1)
    s = np.where(y | fooled, rng.uniform(0.9, 1.0, N), rng.uniform(0.0, 0.1, N))
    return y.astype(float), s, 0.8  # p = the label itself: y drawn once, the judge's errors fixed


SETTINGS: dict[str, tuple[str, Population, float]] = {
    # name: (kind, population, share of items at confidence ≥ 0.95 as the judge states it)
    "confident": ("calibrated", confident, 0.75),
    "very confident": ("calibrated", very_confident, 0.85),
    "spread": ("calibrated", spread, float("nan")),
    "uninformative": ("calibrated", uninformative, 0.0),
    "uninformative spread": ("meaningless", uninformative_spread, float("nan")),
    "lenient": ("biased", lenient, float("nan")),
    "lenient spread": ("biased", lenient_spread, float("nan")),
    "overconfident": ("biased", overconfident, 0.75),
    "rare errors": ("biased", rare_errors, float("nan")),
}


def simulate(name: str, metric: str, args: argparse.Namespace, rng: np.random.Generator) -> dict[str, Any]:
    """One row: coverage and width of active and uniform over the grid, and the labels for the same width."""
    kind, population, sure = SETTINGS[name]
    grid = []
    checked = False
    for n in args.ns:
        draws = [population(rng, args.N) for _ in range(args.draws)]
        p = np.stack([d[0] for d in draws])
        s = np.stack([d[1] for d in draws])
        truth = draws[0][2]
        y = (rng.random(p.shape) < p).astype(float)
        f = (s >= 0.5).astype(float) if metric == "pass_rate" else s
        weights = np.zeros_like(s)
        shares, designs, seeds = [], [], rng.integers(2**31, size=args.draws)
        for d in range(args.draws):
            probabilities, share, _, design = plan_probabilities(s[d] * (1 - s[d]), n, FLOOR, MAX_COST)
            drawn = draw_order(probabilities, int(seeds[d])) < n
            weights[d, drawn] = 1.0 / probabilities[drawn]
            shares.append(share)
            designs.append(design)
        corners = True  # 0 / 1 labels for both metrics: estimate_quality counts the pseudo-disagreements
        active = _active_or_uniform(y, f, weights, designs, corners)
        if not checked:
            _check_against_the_api(y[0], s[0], n, int(seeds[0]), metric, active)
            checked = True
        order = np.argsort(rng.random(y.shape), axis=1)
        ys, fs = np.take_along_axis(y, order, 1), np.take_along_axis(f, order, 1)
        uniform = ppi_mean(ys[:, :n], fs[:, :n], fs[:, n:], corners=corners)
        grid.append(
            {
                "n": n,
                "active": _interval_stats(active, truth),
                "uniform": _interval_stats(uniform, truth),
                "share": float(np.mean(shares)),
                "active_design": float(np.mean([d == "active" for d in designs])),
            }
        )
    return _row(name, kind, metric, sure, grid, args.ref_n)


def _active_or_uniform(
    y: np.ndarray, f: np.ndarray, weights: np.ndarray, designs: list[str], corners: bool
) -> MeanEstimate:
    """The estimate `estimate_quality(plan=)` makes for each draw: active PPI++, or PPI++ on the draw when the plan
    is uniform (its labels are then a simple random sample)."""
    active = weighted_ppi_mean(y, f, weights, corners=corners)
    uniform_rows = np.array([d == "uniform" for d in designs])
    if not uniform_rows.any():
        return active
    estimate, se, lam = active.estimate.copy(), active.se.copy(), active.lam.copy()
    df = np.asarray(active.df).copy()
    for d in np.flatnonzero(uniform_rows):
        labelled = weights[d] > 0
        plain = ppi_mean(y[d, labelled], f[d, labelled], f[d, ~labelled], corners=corners)
        estimate[d], se[d], lam[d], df[d] = plain.estimate, plain.se, plain.lam, plain.df
    return MeanEstimate(estimate=estimate, se=se, lam=lam, df=df)


def _check_against_the_api(y: np.ndarray, s: np.ndarray, n: int, seed: int, metric: str, est: MeanEstimate) -> None:
    """The first draw through `jw.label_plan` + `jw.estimate_quality(plan=)` gives the vectorised numbers (else
    the benchmark measures something else than the package)."""
    scores = pd.Series(s)
    plan = jw.label_plan(scores, budget=n, seed=seed, metric=metric)  # type: ignore[arg-type]
    labels = pd.Series(y[plan.items], index=plan.items)
    got = jw.estimate_quality(scores, labels, metric, plan=plan)  # type: ignore[arg-type]
    low, high = est.interval(CONFIDENCE)
    want = (float(est.estimate[0]), float(low[0]), float(high[0]))
    if not np.allclose((got.estimate, got.low, got.high), want, atol=1e-9):
        raise AssertionError(f"label_plan + estimate_quality give {got.estimate, got.low, got.high}, not {want}")


def _interval_stats(est: MeanEstimate, truth: float) -> tuple[float, float]:
    low, high = est.interval(CONFIDENCE)
    return float(np.mean((low <= truth) & (truth <= high))), float(np.mean(high - low))


def _row(name: str, kind: str, metric: str, sure: float, grid: list[dict[str, Any]], ref_n: int) -> dict[str, Any]:
    ns = np.array([g["n"] for g in grid], dtype=float)
    active_w = np.array([g["active"][1] for g in grid])
    uniform_w = np.array([g["uniform"][1] for g in grid])
    target = float(np.exp(np.interp(np.log(ref_n), np.log(ns), np.log(uniform_w))))
    needed = labels_for_width(ns, active_w, target)
    at_ref = int(np.argmin(np.abs(ns - ref_n)))
    return {
        "setting": name,
        "judge": kind,
        "metric": metric,
        "sure": sure,
        "coverage_active": float(np.mean([g["active"][0] for g in grid])),  # pooled over the grid's draws
        "coverage_uniform": float(np.mean([g["uniform"][0] for g in grid])),
        "lowest_active": min(g["active"][0] for g in grid),  # the lowest single n (its Monte Carlo error ~1 %)
        "lowest_uniform": min(g["uniform"][0] for g in grid),
        "width_active": active_w[at_ref],
        "width_uniform": uniform_w[at_ref],
        "width_ratio": active_w[at_ref] / uniform_w[at_ref],
        "max_width_ratio": float(np.max(active_w / uniform_w)),
        "labels_active": needed,
        "labels_uniform": ref_n,
        "saving": 1.0 - needed / ref_n,
        "share": float(np.mean([g["share"] for g in grid])),
        "active_design": float(np.mean([g["active_design"] for g in grid])),
    }


def labels_for_width(ns: np.ndarray, widths: np.ndarray, target: float) -> float:
    """The n at which the widths (falling with n) reach `target`, interpolated log–log; extrapolated along the last
    two points beyond the grid."""
    logs, logw = np.log(ns), np.log(widths)
    if target >= widths[0]:
        i, j = 0, 1
    elif target <= widths[-1]:
        i, j = len(ns) - 2, len(ns) - 1
    else:
        j = int(np.flatnonzero(widths <= target)[0])
        i = j - 1
    slope = (logw[j] - logw[i]) / (logs[j] - logs[i])
    return float(np.exp(logs[i] + (math.log(target) - logw[i]) / slope))


# --- the embedded judge's real verdicts -------------------------------------------------------------------------


def real_verdicts(path: Path, pandalm_n: int) -> pd.DataFrame:
    """The embedded judge's verdicts on PandaLM and LLMBar pairs: read from `path`, or judged (and written)."""
    if path.is_file():
        return pd.read_csv(path)
    from benchmarks.pandalm_verdicts import pairs

    judge = jw.PairwiseJudge("local", name="local")
    frames = []
    for name, data in (("PandaLM", pairs(pandalm_n, 0)), ("LLMBar", jw.datasets.llmbar())):
        started = time.perf_counter()
        judged = judge.compare_many(data, progress=False)
        frame = pd.DataFrame(
            {
                "dataset": name,
                "subset": data.get("subset", ""),
                "pair_id": data["pair_id"],
                "label": data["label"],
                "winner": judged["winner"],
                "p_a_better": judged["p_a_better"],
                "winner_ab": judged["winner_ab"],
                "winner_ba": judged["winner_ba"],
            }
        )
        print(f"{name}: {len(frame)} pairs judged in {time.perf_counter() - started:.0f} s", flush=True)
        frames.append(frame)
    out = pd.concat(frames, ignore_index=True)
    path.parent.mkdir(parents=True, exist_ok=True)
    out.to_csv(path, index=False)
    return out


def real(frame: pd.DataFrame, args: argparse.Namespace, rng: np.random.Generator) -> list[dict[str, Any]]:
    """Per dataset: the same table over `args.draws` plans (seeds) and uniform draws of n of its pairs."""
    rows = []
    for name, data in frame.groupby("dataset", sort=False):
        usable = data.dropna(subset=["label", "winner"]).reset_index(drop=True)
        table = usable[["winner", "p_a_better", "winner_ab", "winner_ba"]]
        y_all = usable["label"].map(WIN).to_numpy(dtype=float)
        f_all = usable["winner"].map(WIN).to_numpy(dtype=float)
        truth = float(y_all.mean())
        ns = [n for n in args.ns if n <= len(usable) // 2]
        grid = []
        for n in ns:
            plan = jw.label_plan(table, budget=n, seed=0)
            probabilities = plan.table["probability"].to_numpy(dtype=float)
            weights = np.zeros((args.draws, len(usable)))
            for d in range(args.draws):
                drawn = draw_order(probabilities, int(rng.integers(2**31))) < n
                weights[d, drawn] = 1.0 / probabilities[drawn]
            y = np.broadcast_to(y_all, weights.shape)
            f = np.broadcast_to(f_all, weights.shape)
            active = _active_or_uniform(y, f, weights, [plan.design] * args.draws, corners=True)
            order = np.argsort(rng.random(weights.shape), axis=1)
            ys, fs = y_all[order], f_all[order]
            uniform = ppi_mean(ys[:, :n], fs[:, :n], fs[:, n:], corners=True)
            grid.append(
                {
                    "n": n,
                    "active": _interval_stats(active, truth),
                    "uniform": _interval_stats(uniform, truth),
                    "share": plan.floor,
                    "active_design": float(plan.design == "active"),
                }
            )
        agreement = float(np.mean(y_all == f_all))
        row = _row(
            f"{name} ({len(usable)} pairs, agreement {agreement:.0%})",
            "embedded",
            "win_rate",
            math.nan,
            grid,
            args.ref_n,
        )
        rows.append(row)
    return rows


def report(rows: list[dict[str, Any]], args: argparse.Namespace) -> dict[str, bool | None]:
    table = pd.DataFrame(rows)

    def percent(value: float, digits: int = 1) -> str:
        return f"{100 * value:.{digits}f} %"

    shown = pd.DataFrame(
        {
            "setting": table["setting"],
            "judge": table["judge"],
            "metric": table["metric"],
            "coverage active / uniform": table["coverage_active"].map(percent)
            + " / "
            + table["coverage_uniform"].map(percent),
            "lowest n": table["lowest_active"].map(percent) + " / " + table["lowest_uniform"].map(percent),
            f"width at {args.ref_n}: active / uniform": table["width_active"].map("{:.3f}".format)
            + " / "
            + table["width_uniform"].map("{:.3f}".format),
            "ratio (widest)": table["width_ratio"].map("{:.3f}".format)
            + " ("
            + table["max_width_ratio"].map("{:.3f}".format)
            + ")",
            f"labels for that width: active / {args.ref_n}": table["labels_active"].map("{:.0f}".format),
            "labels saved": table["saving"].map(lambda v: percent(v, 0)),
            "spread evenly": table["share"].map(lambda v: percent(v, 0)),
        }
    )
    print(
        f"\nActive against uniform ({args.draws} draws per setting and n; coverage pooled over n = "
        f"{', '.join(map(str, args.ns))}, and at the n where it was lowest; width and ratio at n = {args.ref_n} (the "
        f"widest ratio over n in brackets); labels = the active n for the uniform width at n = {args.ref_n}):\n"
    )
    print(markdown(shown))
    calibrated_sure = table[(table["judge"] == "calibrated") & (table["sure"] >= 0.7)]
    uninformative = table[table["setting"].str.startswith("uninformative")]
    met: dict[str, bool | None] = {
        f"coverage ≥ {TARGET_COVERAGE:.0%} in every setting": bool((table["coverage_active"] >= TARGET_COVERAGE).all()),
        f"≥ {TARGET_SAVING:.0%} fewer labels, calibrated judge with ≥ 70 % of items at ≥ 0.95": (
            bool((calibrated_sure["saving"] >= TARGET_SAVING).all()) if len(calibrated_sure) else None
        ),
        f"never more than {TARGET_COST - 1:.0%} wider when the confidence is uninformative": (
            bool((uninformative["max_width_ratio"] <= TARGET_COST).all()) if len(uninformative) else None
        ),
    }
    print()
    for target, ok in met.items():
        print(f"- {target}: {'not measured' if ok is None else 'met' if ok else 'NOT met'}")
    for _, row in table[table["coverage_active"] < TARGET_COVERAGE].iterrows():
        print(f"  coverage below target: {row['setting']} ({row['metric']}): {row['coverage_active']:.1%}")
    for _, row in calibrated_sure[calibrated_sure["saving"] < TARGET_SAVING].iterrows():
        print(f"  saving below target: {row['setting']} ({row['metric']}): {row['saving']:.0%}")
    return met


def markdown(frame: pd.DataFrame) -> str:
    """`frame` as a Markdown table (text columns left-aligned, the rest right), for the docs."""
    right = [not (frame[c].astype(str).str.match(r"^[A-Za-z]").any()) for c in frame.columns]
    rule = ["---:" if r else "---" for r in right]
    lines = [" | ".join(map(str, frame.columns)), " | ".join(rule)]
    lines += [" | ".join(str(v) for v in row) for row in frame.itertuples(index=False)]
    return "\n".join(f"| {line} |" for line in lines)


def main(argv: list[str] | None = None) -> pd.DataFrame:
    args = parse_args(argv)
    rng = np.random.default_rng(args.seed)
    names = list(SETTINGS) if args.settings is None else [s.strip() for s in args.settings.split(",")]
    unknown = sorted(set(names) - set(SETTINGS))
    if unknown:
        raise SystemExit(f"unknown setting(s) {', '.join(unknown)}: choose from {', '.join(SETTINGS)}")
    started = time.perf_counter()
    verdicts = None if args.skip_real else real_verdicts(args.verdicts, args.pandalm_n)  # the model first, if at all
    rows = [simulate(name, metric, args, rng) for name in names for metric in ("pass_rate", "mean")]
    if verdicts is not None:
        rows += real(verdicts, args, rng)
    if args.out is not None:
        pd.DataFrame(rows).to_csv(args.out, index=False)
    report(rows, args)
    print(f"\n({time.perf_counter() - started:.0f} s)")
    return pd.DataFrame(rows)


if __name__ == "__main__":
    main()
