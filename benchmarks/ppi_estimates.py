"""Coverage and width of `jw.estimate_quality` (PPI++) beside the labels alone and the judge alone (issue 24).

    python benchmarks/ppi_estimates.py [--quick] [--draws 5000] [--N 2000] [--ns 50,100,200] [--rhos 0,0.3,0.6,0.9]
                                       [--pandalm-verdicts verdicts.csv]

Simulated judges of known correlation ρ with the person's labels, on N unlabelled items plus n labelled ones:
- scores (metric "mean"): labels uniform on [0, 0.8]; the judge copies the label with probability ρ, else scores
  an unrelated item from the same distribution, and adds 0.2 (lenient): corr = ρ exactly, bias +0.2.
- pass/fail (metric "pass_rate"): 60 % of items pass; the judge copies the label with probability ρ, else passes
  with probability 0.8 (lenient); its correlation with the labels is computed exactly and printed as ρ_true.
For each setting, over many draws: coverage of the true mean at nominal 95 % and mean width of PPI++, labels only
and judge only, and PPI's width over the labels' beside the theory sqrt(1 − ρ²·N/(N+n)) (optimal λ, large n).
Targets (issue 24): PPI coverage ≥ 94 % at n ≥ 50; PPI never wider than labels only by more than 3 %; PPI's width
ratio within 5 % of the theory. Each draw's numbers are those of `jw.estimate_quality` (the first draw of every
setting is checked against it); the draws run at once through `judgewidgets.estimates.ppi_mean`.

PandaLM: `pandalm_resample(frame, ...)` takes one row per pair with the person's `label` and the judge's `verdict`
("A" / "B" / "tie") and measures the same over random labelled subsets, the truth being the share of pairs where
response 1 wins (ties count half) over the whole frame. Pass the judge's verdicts on the 999 PandaLM test pairs as
a CSV (pair_id, verdict) with --pandalm-verdicts; producing them is a model run of its own.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

import judgewidgets as jw
from judgewidgets.estimates import MeanEstimate, judge_mean, labels_mean, ppi_mean

CONFIDENCE = 0.95
TARGET_COVERAGE = 0.94
TARGET_WIDER = 1.03  # PPI's width at most 3 % over the labels alone
TARGET_THEORY = 0.05  # PPI's width ratio within 5 % of sqrt(1 − ρ²·N/(N+n))
WIN_CODES = {"A": 1.0, "tie": 0.5, "B": 0.0}
FAMILIES = ("scores", "pass/fail")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="2000 draws, ρ in {0, 0.9}, n = 50 (a second)")
    parser.add_argument("--draws", type=int, default=5000, help="simulated draws per setting")
    parser.add_argument("--N", type=int, default=2000, help="unlabelled items per draw")
    parser.add_argument("--ns", default="50,100,200", help="labelled items per draw, comma-separated")
    parser.add_argument("--rhos", default="0,0.3,0.6,0.9", help="the judges' correlations, comma-separated")
    parser.add_argument("--families", default=",".join(FAMILIES), help="scores, pass/fail")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--pandalm-verdicts", type=Path, help="CSV of the judge's verdicts: pair_id, verdict")
    args = parser.parse_args(argv)
    if args.quick:
        args.draws, args.ns, args.rhos = min(args.draws, 2000), "50", "0,0.9"
    args.ns = [int(v) for v in str(args.ns).split(",")]
    args.rhos = [float(v) for v in str(args.rhos).split(",")]
    args.families = [v.strip() for v in str(args.families).split(",")]
    return args


def simulate(family: str, rho: float, shape: tuple[int, int], rng: np.random.Generator) -> tuple[Any, ...]:
    """(labels, judge scores, true mean, true correlation, metric) for `shape` = (draws, items)."""
    copies = rng.random(shape) < rho
    if family == "scores":
        y = rng.uniform(0.0, 0.8, shape)
        f = np.where(copies, y, rng.uniform(0.0, 0.8, shape)) + 0.2
        return y, f, 0.4, rho, "mean"
    if family == "pass/fail":
        p, lenient = 0.6, 0.8
        y = (rng.random(shape) < p).astype(float)
        f = np.where(copies, y, (rng.random(shape) < lenient).astype(float))
        judged = rho * p + (1 - rho) * lenient
        corr = rho * p * (1 - p) / math.sqrt(p * (1 - p) * judged * (1 - judged))
        return y, f, p, corr, "pass_rate"
    raise SystemExit(f"unknown family {family!r}: choose from {', '.join(FAMILIES)}")


def interval_stats(est: MeanEstimate, truth: float | np.ndarray) -> tuple[float, float]:
    """(coverage of `truth`, mean width) over the draws."""
    low, high = est.interval(CONFIDENCE)
    return float(np.mean((low <= truth) & (truth <= high))), float(np.mean(high - low))


def theory_ratio(rho: float, N: int, n: int) -> float:
    """PPI++'s width over the labels' at the optimal λ: sqrt(1 − ρ²·N/(N+n))."""
    return math.sqrt(1.0 - rho**2 * N / (N + n))


def check_against_the_api(y: np.ndarray, f: np.ndarray, n: int, metric: str, ppi: MeanEstimate) -> None:
    """The first draw through `jw.estimate_quality` gives the vectorised numbers (else the benchmark is wrong)."""
    est = jw.estimate_quality(pd.Series(f), pd.Series(y[:n]), metric)  # type: ignore[arg-type]
    low, high = ppi.interval(CONFIDENCE)
    got, want = (est.estimate, est.low, est.high), (ppi.estimate[0], low[0], high[0])
    if not np.allclose(got, want, atol=1e-9):
        raise AssertionError(f"estimate_quality {got} differs from the simulation's {want}")


def simulated(args: argparse.Namespace) -> list[dict[str, Any]]:
    """One row per (family, ρ, n)."""
    rng = np.random.default_rng(args.seed)
    rows = []
    for family in args.families:
        for rho in args.rhos:
            for n in args.ns:
                y, f, truth, corr, metric = simulate(family, rho, (args.draws, n + args.N), rng)
                corners = metric != "mean"
                ppi = ppi_mean(y[:, :n], f[:, :n], f[:, n:], corners=corners)
                check_against_the_api(y[0], f[0], n, metric, ppi)
                labels = labels_mean(y[:, :n], corners=corners)
                judge = judge_mean(f)
                row: dict[str, Any] = {"family": family, "rho": rho, "rho_true": corr, "n": n, "N": args.N}
                for name, est in (("ppi", ppi), ("labels", labels), ("judge", judge)):
                    row[f"{name}_coverage"], row[f"{name}_width"] = interval_stats(est, truth)
                if corners:  # the same PPI++ without the two pseudo-disagreements, to show what they buy
                    plain = ppi_mean(y[:, :n], f[:, :n], f[:, n:])
                    row["plain_coverage"], row["plain_width"] = interval_stats(plain, truth)
                row["ppi_bias"] = float(np.mean(ppi.estimate) - truth)
                row["lam"] = float(np.mean(ppi.lam))
                row["ratio"] = row["ppi_width"] / row["labels_width"]
                row["theory"] = theory_ratio(corr, args.N, n)
                row["vs_theory"] = row["ratio"] / row["theory"] - 1.0
                rows.append(row)
    return rows


def rare_errors(args: argparse.Namespace) -> list[dict[str, Any]]:
    """Why pass_rate and win_rate count two pseudo-disagreements in PPI's variance: a judge right on 98 % of
    items whose every error is a false pass (80 % pass; it passes every good item and 10 % of the bad ones), so n
    labels often show no disagreement at all. Coverage and width with and without them, per n."""
    rng = np.random.default_rng(args.seed + 1)
    rows = []
    for n in args.ns:
        shape = (args.draws, n + args.N)
        y = (rng.random(shape) < 0.8).astype(float)
        f = np.where(rng.random(shape) < 0.9, y, 1.0)
        row: dict[str, Any] = {"n": n, "disagreements_seen": float(np.mean((y[:, :n] != f[:, :n]).sum(axis=1)))}
        for corners in (False, True):
            which = "with" if corners else "without"
            est = ppi_mean(y[:, :n], f[:, :n], f[:, n:], corners=corners)
            row[f"coverage_{which}"], row[f"width_{which}"] = interval_stats(est, 0.8)
        row["labels_coverage"], row["labels_width"] = interval_stats(labels_mean(y[:, :n], corners=True), 0.8)
        rows.append(row)
    return rows


def pandalm_resample(
    frame: pd.DataFrame, ns: list[int], draws: int = 500, seed: int = 0, N: int | None = None
) -> list[dict[str, Any]]:
    """PPI++, labels only and judge only on PandaLM-derived tasks: per n, `draws` random labelled subsets of
    `frame` (one row per pair: the person's `label`, the judge's `verdict`, "A" / "B" / "tie"), the rest (or `N`
    of the rest) unlabelled; the truth is the share of pairs where response 1 (A) wins, ties half, over the frame.
    Rows with a missing label or verdict are left out (and counted)."""
    usable = frame.dropna(subset=["label", "verdict"])
    y_all = usable["label"].map(WIN_CODES).to_numpy(dtype=float)
    f_all = usable["verdict"].map(WIN_CODES).to_numpy(dtype=float)
    if np.isnan(y_all).any() or np.isnan(f_all).any():
        raise ValueError('labels and verdicts must be "A", "B" or "tie"')
    truth = float(y_all.mean())
    rng = np.random.default_rng(seed)
    rows = []
    for n in ns:
        rest = len(usable) - n if N is None else min(N, len(usable) - n)
        if rest < 1:
            raise ValueError(f"n = {n} leaves no unlabelled pair of the {len(usable)}")
        order = np.argsort(rng.random((draws, len(usable))), axis=1)[:, : n + rest]
        y, f = y_all[order], f_all[order]
        ppi = ppi_mean(y[:, :n], f[:, :n], f[:, n:], corners=True)
        labels = labels_mean(y[:, :n], corners=True)
        judge = judge_mean(f)
        row: dict[str, Any] = {"n": n, "N": rest, "pairs": len(usable), "dropped": len(frame) - len(usable)}
        row["truth"], row["judge_agreement"] = truth, float(np.mean(y_all == f_all))
        for name, est in (("ppi", ppi), ("labels", labels), ("judge", judge)):
            row[f"{name}_coverage"], row[f"{name}_width"] = interval_stats(est, truth)
        row["ratio"] = row["ppi_width"] / row["labels_width"]
        row["lam"] = float(np.mean(ppi.lam))
        rows.append(row)
    return rows


def verdicts_frame(path: Path) -> pd.DataFrame:
    """The PandaLM test pairs' labels joined with the judge's verdicts read from `path` (pair_id, verdict)."""
    pairs = jw.datasets.pandalm()[["pair_id", "label"]]
    verdicts = pd.read_csv(path)[["pair_id", "verdict"]]
    return pairs.merge(verdicts, on="pair_id", how="left")


def mark(ok: bool) -> str:
    return "met" if ok else "NOT met"


def report(rows: list[dict[str, Any]], draws: int) -> dict[str, bool]:
    """Print the simulated table and the targets; returns {target: met}."""
    table = pd.DataFrame(rows)
    columns = ["family", "rho", "rho_true", "n", "ppi_coverage", "labels_coverage", "judge_coverage", "ppi_width"]
    shown = table[[*columns, "labels_width", "judge_width", "lam", "ratio", "theory", "vs_theory"]]
    percent = "{:.1%}".format
    print(
        shown.to_string(
            index=False,
            formatters={
                "rho_true": "{:.3f}".format,
                "ppi_coverage": percent,
                "labels_coverage": percent,
                "judge_coverage": percent,
                "ppi_width": "{:.4f}".format,
                "labels_width": "{:.4f}".format,
                "judge_width": "{:.4f}".format,
                "lam": "{:.2f}".format,
                "ratio": "{:.3f}".format,
                "theory": "{:.3f}".format,
                "vs_theory": "{:+.1%}".format,
            },
        )
    )
    mc = math.sqrt(0.95 * 0.05 / draws)
    at_50 = table[table["n"] >= 50]
    results = {
        "coverage": bool((at_50["ppi_coverage"] >= TARGET_COVERAGE).all()),
        "never_wider": bool((table["ratio"] <= TARGET_WIDER).all()),
        "theory": bool((table["vs_theory"].abs() <= TARGET_THEORY).all()),
    }
    worst = at_50.loc[at_50["ppi_coverage"].idxmin()] if len(at_50) else None
    print(f"\ntargets ({draws} draws per setting; a coverage's Monte Carlo standard error is {mc:.1%}):")
    if worst is not None:
        print(
            f"  PPI coverage >= {TARGET_COVERAGE:.0%} at n >= 50: {mark(results['coverage'])} "
            f"(lowest {worst['ppi_coverage']:.1%}: {worst['family']}, ρ = {worst['rho']:g}, n = {worst['n']})"
        )
    widest = table.loc[table["ratio"].idxmax()]
    print(
        f"  PPI never wider than labels only by > 3 %: {mark(results['never_wider'])} "
        f"(widest {widest['ratio']:.3f}: {widest['family']}, ρ = {widest['rho']:g}, n = {widest['n']})"
    )
    for family, part in table.groupby("family", sort=False):
        far = part.loc[part["vs_theory"].abs().idxmax()]
        met = bool((part["vs_theory"].abs() <= TARGET_THEORY).all())
        print(
            f"  PPI width within 5 % of sqrt(1 − ρ²·N/(N+n)) × labels only, {family}: {mark(met)} "
            f"(farthest {far['vs_theory']:+.1%} at ρ = {far['rho']:g}, n = {far['n']})"
        )
        if not met and "plain_coverage" in far and not math.isnan(far["plain_coverage"]):
            plain_ratio = far["plain_width"] / far["labels_width"] / far["theory"] - 1.0
            print(
                f"    the two pseudo-disagreements of pass_rate / win_rate widen it there; without them PPI is "
                f"{plain_ratio:+.1%} from the theory but covers {far['plain_coverage']:.1%}"
            )
    judge_cov = table["judge_coverage"].max()
    print(f"  judge only (blind to its bias): coverage at most {judge_cov:.1%} — the point of labels")
    return results


def simulated_arena(args: argparse.Namespace) -> pd.DataFrame:
    """Tournament ratings corrected with a few human comparisons (`jw.corrected_ranking`, issue 24 part 2).

    Simulated arenas: 4 candidates of Bradley–Terry strengths 0.9, 0.3, −0.2, −1.0 in the person's eyes, 40 round
    robins (240 comparisons); a judge that agrees with the person on 85 % of comparisons and sides with the
    weakest candidate half the times it plays; n of them labelled at random. Per method (corrected, judge only,
    labels only): coverage of each candidate's rating (centred strengths on the Elo scale) and win rate (its
    expected share of points over its comparisons), pooled over candidates, their mean widths, and the share of
    draws whose order is the person's. Coverage counts the draws with an interval (`defined`: the labels have a
    Bradley–Terry fit, a win rate's labels are not unanimous; otherwise `corrected_ranking` gives none and says
    why). Draws per n: a tenth of --draws (at least 100)."""
    rng = np.random.default_rng(args.seed)
    strengths = np.array([0.9, 0.3, -0.2, -1.0])
    names = [f"m{c}" for c in range(len(strengths))]
    rating = 1000 + 400 / math.log(10) * (strengths - strengths.mean())  # the ratings' Elo scale
    first, second = np.triu_indices(len(strengths), 1)
    draws = max(100, args.draws // 10)
    rows = []
    for n in args.ns:
        hits: dict[str, list[np.ndarray]] = {}
        for _ in range(draws):
            a, b = np.tile(first, 40), np.tile(second, 40)
            flip = rng.random(len(a)) < 0.5
            a, b = np.where(flip, b, a), np.where(flip, a, b)
            p = 1 / (1 + np.exp(-(strengths[a] - strengths[b])))
            human = rng.random(len(a)) < p
            judge = np.where(rng.random(len(a)) < 0.85, human, ~human)
            judge = np.where(((a == 3) | (b == 3)) & (rng.random(len(a)) < 0.5), a == 3, judge)
            arena = pd.DataFrame(
                {"model_a": np.array(names)[a], "model_b": np.array(names)[b], "winner": np.where(judge, "A", "B")}
            )
            labels = pd.Series(np.where(human, "A", "B")).iloc[rng.choice(len(a), min(n, len(a)), replace=False)]
            fixed = jw.corrected_ranking(arena, labels).ranking.set_index("candidate").loc[names]
            share = np.array([np.mean(np.where(a == c, p, 1 - p)[(a == c) | (b == c)]) for c in range(len(names))])
            for method, prefix, wins in (
                ("corrected", "", "win_rate"),
                ("judge only", "judge_only_", "judge_win_rate"),
                ("labels only", "labels_only_", "labels_win_rate"),
            ):
                low, high = fixed[f"{prefix}ci_low"].to_numpy(), fixed[f"{prefix}ci_high"].to_numpy()
                order = list(fixed[f"{prefix}rating"].sort_values(ascending=False).index)
                hits.setdefault(method, []).append(
                    np.concatenate(
                        [
                            (low <= rating) & (rating <= high),
                            high - low,
                            [order == names and not fixed[f"{prefix}rating"].isna().any()],
                            np.abs(fixed[wins].to_numpy() - share),
                        ]
                    )
                )
                if method == "corrected":
                    w_low, w_high = fixed["win_rate_low"].to_numpy(), fixed["win_rate_high"].to_numpy()
                    hits.setdefault("corrected win rate", []).append(
                        np.concatenate([(w_low <= share) & (share <= w_high), w_high - w_low])
                    )
        k = len(names)
        for method, values in hits.items():
            table = np.array(values, dtype=float)
            if method == "corrected win rate":
                bounded = ~np.isnan(table[:, k:])
                coverage, width = table[:, :k][bounded].mean(), table[:, k:][bounded].mean()
                rows.append({"n": n, "method": method, "coverage": coverage, "width": width, "defined": bounded.mean()})
                continue
            defined = ~np.isnan(table[:, k])
            rows.append(
                {
                    "n": n,
                    "method": method,
                    "coverage": table[defined, :k].mean() if defined.any() else np.nan,
                    "width": np.nanmean(table[:, k : 2 * k]) if defined.any() else np.nan,
                    "true_order": table[:, 2 * k].mean(),
                    "win_rate_error": np.nanmean(table[:, 2 * k + 1 :]),
                    "defined": defined.mean(),
                }
            )
    frame = pd.DataFrame(rows)
    print(
        f"\nArena ({draws} draws per n): 4 candidates, 240 comparisons, a judge right on 85 % that sides with the "
        "weakest\nhalf the time it plays; ratings (Elo scale) and win rates corrected with n human verdicts, "
        f"{CONFIDENCE:.0%} intervals"
    )
    print(frame.round(3).to_string(index=False))
    return frame


def main(argv: list[str] | None = None) -> list[dict[str, Any]]:
    """Run the simulation (and the PandaLM resample when verdicts are given); returns the simulated rows."""
    args = parse_args(argv)
    started = time.perf_counter()
    print(
        f"PPI++ vs labels only vs judge only, {CONFIDENCE:.0%} intervals: {args.draws} draws per setting, "
        f"N = {args.N} unlabelled items, n in {args.ns}, ρ in {args.rhos}\n"
    )
    rows = simulated(args)
    report(rows, args.draws)
    rare = pd.DataFrame(rare_errors(args))
    print(
        "\nA pass/fail judge right on 98 % of items, every error a false pass (80 % pass): PPI++ with and without "
        "the\ntwo pseudo-disagreements that pass_rate and win_rate count (coverage of the true 80 %, mean width)"
    )
    print(rare.round(4).to_string(index=False))
    if args.pandalm_verdicts is not None:
        panda = pandalm_resample(verdicts_frame(args.pandalm_verdicts), args.ns, draws=max(args.draws, 500))
        print("\nPandaLM (share of pairs where response 1 wins, ties half; the judge's verdicts from the CSV):")
        print(pd.DataFrame(panda).round(4).to_string(index=False))
    else:
        print("\nPandaLM: no judge verdicts given (--pandalm-verdicts verdicts.csv; the model run is separate)")
    simulated_arena(args)
    print(f"\n{time.perf_counter() - started:.1f} s")
    return rows


if __name__ == "__main__":
    main()
    sys.exit(0)
