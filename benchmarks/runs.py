"""Saving, loading and comparing runs at scale (issue 27): against the target of about a second each, and
against bare pyarrow / pandas doing the same work, measured in the same run.

    python benchmarks/runs.py [--quick] [--votes 100000] [--judges 4] [--items 10000] [--repeat 5]

No model and no server: the results are built from synthetic votes shaped like real ones (a likert answer, its
tokens, latency and cost; one vote in 20 failed with an error and a NaN score; half carry the judge's
probabilities over its answers, one in four an explanation).

- save: `result.save(folder)` of a panel with `--votes` votes (`--judges` judges × votes/judges items). Peer:
  pyarrow writing the same two tables (items, votes) straight from the records — each field read off the
  votes, the probabilities as JSON — with `pq.write_table`: the floor for writing these records to Parquet.
- load: `jw.load(folder)` of that run, every vote validated back into a `jw.Vote`. Peer: pyarrow reading the
  same two files back into Python rows (`pq.read_table(...).to_pylist()`), without building any record.
- compare: `jw.compare(before, after)` of two panel runs of `--items` items each (paired by a hash of the
  prompt and reference; per judge and overall, mean score and pass rate with 2,000-resample paired-bootstrap
  intervals and sign tests; the per-item table with texts). Peer: the same statistics by hand in pandas/numpy —
  the two score tables merged on the prompt, and per judge and metric the mean difference with a bootstrap of
  the same size, vectorised in blocks — without the sign tests, per-item texts, explanations or item keys.

Each time is the median of `--repeat` runs (wall clock; the CPU time beside it, which other work on a shared
machine does not inflate). `× target` divides the wall time by the target (1 s); `× peer` by the peer's.
`--quick`: 10,000 votes, 2,000 items, 3 repeats (a few seconds).
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import tempfile
import time
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

import judgewidgets as jw
from judgewidgets._records import Item, Vote

TARGET_S = 1.0
N_BOOT = 2000


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="10,000 votes, 2,000 items, 3 repeats")
    parser.add_argument("--votes", type=int, default=None, help="votes saved and loaded (default 100,000)")
    parser.add_argument("--judges", type=int, default=4, help="judges of the panels (default 4)")
    parser.add_argument("--items", type=int, default=None, help="items of each compared run (default 10,000)")
    parser.add_argument("--repeat", type=int, default=None, help="runs per measurement; the median is shown (5)")
    args = parser.parse_args(argv)
    args.votes = args.votes or (10_000 if args.quick else 100_000)
    args.items = args.items or (2_000 if args.quick else 10_000)
    args.repeat = args.repeat or (3 if args.quick else 5)
    return args


def panel_result(items: int, judges: int, seed: int = 0, worse: float = 0.0) -> jw.PanelResult:
    """A panel's result on `items` synthetic items; `worse`: the share of items whose scores drop a level."""
    rng = np.random.default_rng(seed)
    names = [f"judge_{j + 1}" for j in range(judges)]
    rows = [Item(f"Question {i}: what is {i} + {i}?", f"It is {2 * i}.", str(2 * i)) for i in range(items)]
    levels = rng.integers(2, 6, size=(judges, items))
    levels = np.where(rng.random(items) < worse, levels - 1, levels)
    votes = []
    for j, name in enumerate(names):
        failed = rng.random(items) < 0.05
        for i in range(items):
            level = int(levels[j, i])
            if failed[i]:
                votes.append(Vote(item=i, judge=name, score=float("nan"), error="parse: no verdict", attempts=2))
                continue
            probabilities = {str(level): 0.8, str(max(1, level - 1)): 0.2} if i % 2 else None
            votes.append(
                Vote(
                    item=i,
                    judge=name,
                    score=(level - 1) / 4,
                    raw=json.dumps({"score": level}),
                    explanation="The answer matches the reference." if i % 4 == 0 else None,
                    latency_s=0.4 + 0.001 * (i % 100),
                    prompt_tokens=180 + i % 40,
                    completion_tokens=6,
                    cost_usd=2.9e-5,
                    score_source="probabilities" if probabilities else "answer",
                    probabilities=probabilities,
                    confidence=0.8 if probabilities else None,
                )
            )
    return jw.PanelResult(items=rows, vote_list=votes, judges=names)


def measure(work: Callable[[int], Any], repeat: int) -> tuple[float, float]:
    """(median wall seconds, median CPU seconds) of `work(i)` over `repeat` runs."""
    walls, cpus = [], []
    for i in range(repeat):
        wall, cpu = time.perf_counter(), time.process_time()
        work(i)
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
    return statistics.median(walls), statistics.median(cpus)


def bare_write(result: jw.PanelResult, folder: Path) -> None:
    """The peer of `save`: the items and votes written with pyarrow straight from the records."""
    folder.mkdir()
    items = {field: [getattr(i, field) for i in result.items] for field in ("prompt", "response", "reference")}
    pq.write_table(pa.table(items), folder / "items.parquet")
    votes = {field: [getattr(v, field) for v in result.vote_list] for field in Vote.model_fields}
    votes["probabilities"] = [None if p is None else json.dumps(p) for p in votes["probabilities"]]
    pq.write_table(pa.table(votes), folder / "votes.parquet")


def bare_read(folder: Path) -> None:
    """The peer of `load`: the same files back as Python rows."""
    for name in ("items", "votes"):
        pq.read_table(folder / f"{name}.parquet").to_pylist()


def by_hand(before: jw.PanelResult, after: jw.PanelResult) -> pd.DataFrame:
    """The peer of `compare`: the score tables merged on the prompt; per judge (and the mean over judges) and
    metric, the mean difference with a paired bootstrap of the same size."""
    tables = []
    for result in (before, after):
        table = result.scores()
        table["overall"] = table.mean(axis=1)
        table["prompt"] = [i.prompt for i in result.items]
        tables.append(table)
    merged = tables[0].merge(tables[1], on="prompt", suffixes=("_before", "_after"))
    rows = []
    for judge in [*before.judges, "overall"]:
        pair = merged[[f"{judge}_before", f"{judge}_after"]].dropna().to_numpy()
        for metric, (b, a) in (("mean_score", pair.T), ("pass_rate", (pair >= 0.5).T.astype(float))):
            d = a - b
            rng = np.random.default_rng(0)
            block = max(1, 2_000_000 // len(d))  # resamples drawn in blocks, vectorised, as compare does
            means = np.concatenate(
                [
                    d[rng.integers(0, len(d), (min(block, N_BOOT - s), len(d)))].mean(axis=1)
                    for s in range(0, N_BOOT, block)
                ]
            )
            low, high = np.quantile(means, [0.025, 0.975])
            rows.append({"judge": judge, "metric": metric, "change": d.mean(), "low": low, "high": high})
    return pd.DataFrame(rows)


def main(argv: Sequence[str] | None = None) -> list[dict[str, Any]]:
    args = parse_args(argv)
    warnings.simplefilter("ignore", RuntimeWarning)  # the failed votes' rows "miss some judges' scores"
    items_saved = max(1, args.votes // args.judges)
    result = panel_result(items_saved, args.judges)
    before = panel_result(args.items, args.judges, seed=1)
    after = panel_result(args.items, args.judges, seed=1, worse=0.1)
    work = Path(tempfile.mkdtemp(prefix="judgewidgets-runs-bench-"))
    try:
        saved = result.save(work / "kept")
        cases = [
            ("save", f"{len(result.vote_list):,} votes", lambda i: result.save(work / f"save-{i}"), "pyarrow write",
             lambda i: bare_write(result, work / f"bare-{i}")),
            ("load", f"{len(result.vote_list):,} votes", lambda i: jw.load(saved), "pyarrow read to rows",
             lambda i: bare_read(saved)),
            ("compare", f"2 × {args.items:,} items, {args.judges} judges", lambda i: jw.compare(before, after),
             "pandas + numpy by hand", lambda i: by_hand(before, after)),
        ]  # fmt: skip
        rows = []
        for name, size, ours, peer_name, peer in cases:
            wall, cpu = measure(ours, args.repeat)
            peer_wall, _ = measure(peer, args.repeat)
            rows.append(
                {
                    "operation": name,
                    "size": size,
                    "seconds": wall,
                    "cpu_seconds": cpu,
                    "vs_target": wall / TARGET_S,
                    "peer": peer_name,
                    "peer_seconds": peer_wall,
                    "vs_peer": wall / peer_wall,
                }
            )
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print_table(rows, args)
    return rows


def print_table(rows: list[dict[str, Any]], args: argparse.Namespace) -> None:
    print(f"median of {args.repeat} runs; target {TARGET_S:g} s each")
    print(f"{'operation':<10}{'size':<30}{'s':>6}{'cpu s':>7}{'× target':>10}  {'peer':<24}{'peer s':>7}{'× peer':>8}")
    for r in rows:
        print(
            f"{r['operation']:<10}{r['size']:<30}{r['seconds']:>6.2f}{r['cpu_seconds']:>7.2f}{r['vs_target']:>10.2f}  "
            f"{r['peer']:<24}{r['peer_seconds']:>7.2f}{r['vs_peer']:>8.2f}"
        )

    def over(key: str) -> str:
        return ", ".join(r["operation"] for r in rows if r[key] > TARGET_S) or "none"

    share = sum(r["cpu_seconds"] for r in rows) / sum(r["seconds"] for r in rows)
    print(
        f"over the {TARGET_S:g} s target: {over('seconds')} by wall time, {over('cpu_seconds')} by CPU time (this "
        f"process had {share:.0%} of a core; on a busy machine wall times grow, CPU times do not)"
    )


if __name__ == "__main__":
    main()
