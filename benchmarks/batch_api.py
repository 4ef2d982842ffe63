"""Batch judging against live judging: a panel of 3 judges x N items through the loopback batch server.

    python benchmarks/batch_api.py [--items 1000] [--delay 2.0] [--latency 0.05]

The same panel (two judges over OpenAI's protocol, one over Anthropic's, all at their published prices in
litellm's price map) scores the same items twice against `judgewidgets.testing.BatchTestServer`: once with
`batch=True` (OpenAI's Batch API, one batch per model; Anthropic's Message Batches API), the batch ending
`--delay` seconds after it is created, and once live (each answer `--latency` seconds late). Reported: what each
run cost at the published prices (batch: 50 %), the HTTP requests the client made, rows lost (no score and no
error), and the client's own time beyond the server's delay (batch: wall time less the delay; what collecting,
uploading, polling and reading back cost).
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

import judgewidgets as jw
from judgewidgets.testing import BatchTestServer, json_score

JUDGES = (
    ("openai/gpt-4o-mini", "openai"),
    ("openai/gpt-4.1-mini", "openai"),
    ("anthropic/claude-3-5-haiku-latest", "anthropic"),
)


def panel(server: BatchTestServer, cache: Path | bool) -> jw.LLMPanel:
    judges = [
        jw.LLMJudge(
            model,
            template="likert",
            name=model.split("/")[1],
            api_base=server.base_url if protocol == "openai" else server.url,
            api_key="sk-bench",
            cache=cache if isinstance(cache, bool) else str(cache),
            probability_weighted=False,
        )
        for model, protocol in JUDGES
    ]
    return jw.LLMPanel(judges)


def items(n: int) -> tuple[list[str], list[str]]:
    prompts = [f"Question {i}: what is {i} + {i}?" for i in range(n)]
    return prompts, [f"The answer is {2 * i}." for i in range(n)]


def requests_made(server: BatchTestServer) -> int:
    return server.stats.total + sum(server.batch_counts.values())


def measure(server: BatchTestServer, n: int, batch: bool, cache: Path | bool) -> dict[str, Any]:
    prompts, responses = items(n)
    before = requests_made(server)
    wall = time.perf_counter()
    result = panel(server, cache).score(prompts, responses, progress=False, batch=batch)
    wall = time.perf_counter() - wall
    votes = result.votes
    lost = int((votes["score"].isna() & votes["error"].isna()).sum())
    return {
        "run": "batch=True" if batch else "live",
        "rows": len(votes),
        "failed": int(votes["error"].notna().sum()),
        "lost": lost,
        "cost_usd": float(votes["cost_usd"].sum()),
        "requests": requests_made(server) - before,
        "batches": int(votes["batch_id"].nunique()) if "batch_id" in votes else 0,
        "wall_s": wall,
    }


def main(argv: list[str] | None = None) -> list[dict[str, Any]]:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--items", type=int, default=1000)
    parser.add_argument("--delay", type=float, default=2.0, help="seconds from a batch's creation to its end")
    parser.add_argument("--latency", type=float, default=0.05, help="seconds each live answer takes")
    args = parser.parse_args(argv)
    rows = []
    with (
        tempfile.TemporaryDirectory() as folder,
        BatchTestServer(json_score(4), delay=args.delay, latency=args.latency) as server,
    ):
        panel(server, False).score(*items(3), progress=False)  # warm up: imports, connections
        server.plan.delay, delay = 0.0, server.plan.delay
        panel(server, False).score(*items(3), progress=False, batch=True)
        server.plan.delay = delay
        server.reset_stats()
        server.batch_service.counts.clear()
        batched = measure(server, args.items, True, Path(folder) / "calls.sqlite")
        batched["client_s"] = batched["wall_s"] - args.delay
        rows.append(batched)
        live = measure(server, args.items, False, False)
        live["client_s"] = None
        rows.append(live)
        again = measure(server, args.items, True, Path(folder) / "calls.sqlite")
        again["run"] = "batch=True, run again"
        again["client_s"] = None
        rows.append(again)
    print(f"{len(JUDGES)} judges x {args.items} items; batch delay {args.delay:g} s, live latency {args.latency:g} s")
    head = ("run", "rows", "failed", "lost", "cost $", "requests", "batches", "wall s", "client s")
    print(f"{head[0]:<22} " + " ".join(f"{h:>{w}}" for h, w in zip(head[1:], (6, 6, 5, 9, 9, 8, 7, 9), strict=True)))
    for r in rows:
        client = "" if r["client_s"] is None else f"{r['client_s']:.2f}"
        print(
            f"{r['run']:<22} {r['rows']:>6} {r['failed']:>6} {r['lost']:>5} {r['cost_usd']:>9.4f} {r['requests']:>9} "
            f"{r['batches']:>8} {r['wall_s']:>7.2f} {client:>9}"
        )
    if rows[1]["cost_usd"]:
        print(f"batch cost / live cost: {rows[0]['cost_usd'] / rows[1]['cost_usd']:.3f}")
    return rows


if __name__ == "__main__":
    main()
