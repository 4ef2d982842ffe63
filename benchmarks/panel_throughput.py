"""Engine overhead: a 3-judge panel against a loopback server, side by side with bare litellm calls.

    python benchmarks/panel_throughput.py [--items 1000] [--latency 0.05] [--concurrency 256]

Both runs send the same judge requests to the same OpenAI-compatible test server (in its own process, so it
does not share our GIL). The bare run is the floor the engine stands on: `asyncio.gather` over
`litellm.acompletion` with a semaphore. The ideal is calls × latency / concurrency. A second panel run with
5 % injected faults checks that no row is lost and every failed row carries its error.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time
import warnings
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from _bench import Run, bench_panel, items, litellm_call, settle_litellm_logging

import judgewidgets as jw
from judgewidgets.testing import FaultPlan, OpenAITestServer


async def bare_litellm(base_url: str, n: int, judges: int, concurrency: int) -> Run:
    call = litellm_call(base_url, concurrency)
    prompts, responses = items(n)
    await asyncio.gather(*(call(p, r) for p, r in zip(prompts[:50], responses[:50])))  # warm up
    await settle_litellm_logging()
    cpu, wall = time.process_time(), time.perf_counter()
    await asyncio.gather(*(call(p, r) for _ in range(judges) for p, r in zip(prompts, responses)))
    await settle_litellm_logging()
    return Run("bare litellm.acompletion", n * judges, time.perf_counter() - wall, time.process_time() - cpu)


async def judgewidgets_panel(
    base_url: str, n: int, concurrency: int, transport: str = "litellm"
) -> tuple[Run, jw.PanelResult]:
    """Engine overhead is measured on the litellm path; `transport="auto"` is what users get by default."""
    prompts, responses = items(n)
    panel = bench_panel(
        base_url, concurrency, transport=transport, retry=jw.RetryPolicy(initial_delay=0.05, max_retries=3)
    )
    await panel.ascore(prompts[:50], responses[:50], progress=False)  # warm up
    await settle_litellm_logging()
    cpu, wall = time.process_time(), time.perf_counter()
    result = await panel.ascore(prompts, responses, progress=False)
    await settle_litellm_logging()
    name = "judgewidgets LLMPanel on litellm" if transport == "litellm" else "judgewidgets LLMPanel, default"
    return Run(name, n * 3, time.perf_counter() - wall, time.process_time() - cpu), result


def uqlm_peer(python: str, base_url: str, n: int) -> Run:
    """uqlm's LLMPanel (3 langchain ChatOpenAI judges) against the same server, in its own interpreter."""
    import json
    import subprocess

    peer = Path(__file__).with_name("_uqlm_peer.py")
    out = subprocess.run([python, str(peer), base_url, str(n)], check=True, capture_output=True, text=True).stdout
    data = json.loads(out.strip().splitlines()[-1])
    return Run("uqlm LLMPanel (3 judges)", data["calls"], data["wall_s"], data["cpu_s"])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--items", type=int, default=1000)
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--concurrency", type=int, default=256)
    parser.add_argument("--fault-rate", type=float, default=0.05)
    parser.add_argument(
        "--uqlm-python",
        default=os.environ.get("JUDGEWIDGETS_UQLM_PYTHON"),
        help="an interpreter with uqlm and langchain-openai installed: adds uqlm's LLMPanel as a peer",
    )
    args = parser.parse_args()
    calls = 3 * args.items
    ideal_s = calls * args.latency / args.concurrency

    with OpenAITestServer(latency=args.latency, spawn=True) as server:
        bare = asyncio.run(bare_litellm(server.base_url, args.items, 3, args.concurrency))
        ours, result = asyncio.run(judgewidgets_panel(server.base_url, args.items, args.concurrency))
        default, _ = asyncio.run(judgewidgets_panel(server.base_url, args.items, args.concurrency, "auto"))
        uqlm = uqlm_peer(args.uqlm_python, server.base_url, args.items) if args.uqlm_python else None
    lost = args.items - len(result.to_df())

    share = args.fault_rate / 5
    faults = FaultPlan(rate_limit=share * 2, server_error=share, overloaded=share, malformed=share, seed=7)
    with OpenAITestServer(latency=args.latency, faults=faults, spawn=True) as server:
        faulty, faulty_result = asyncio.run(judgewidgets_panel(server.base_url, args.items, args.concurrency))
        faulty.name = f"  same, {args.fault_rate:.0%} faults"
        injected = server.stats.faults_total if hasattr(server.stats, "faults_total") else None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        faulty_df = faulty_result.to_df()
    votes = faulty_result.votes
    failed = votes[votes["score"].isna()]
    unexplained = int(failed["error"].isna().sum())
    retried = int(sum(v.attempts > 1 for v in faulty_result.vote_list))

    print(
        f"\n{calls} judge calls ({args.items} items × 3 judges), server latency {args.latency * 1000:.0f} ms, "
        f"concurrency {args.concurrency}; ideal {calls / ideal_s:,.0f} calls/s ({ideal_s:.2f} s)\n"
    )
    print(f"{'run':<36}{'calls/s':>10}{'wall s':>9}{'CPU ms/call':>13}{'of ideal':>10}")
    for run in (bare, ours, faulty, default, *([uqlm] if uqlm else [])):
        print(
            f"{run.name:<36}{run.calls_per_s:>10,.0f}{run.wall_s:>9.2f}{run.cpu_ms_per_call:>13.2f}"
            f"{run.calls_per_s / (calls / ideal_s):>10.1%}"
        )
    print(f"\njudgewidgets / bare litellm throughput: {ours.calls_per_s / bare.calls_per_s:.2f}  (target >= 0.85)")
    print(
        f"engine CPU overhead per call: {ours.cpu_ms_per_call - bare.cpu_ms_per_call:+.2f} ms "
        f"({ours.cpu_ms_per_call / bare.cpu_ms_per_call - 1:+.1%})"
    )
    if uqlm:
        print(
            f"judgewidgets / uqlm LLMPanel throughput: {ours.calls_per_s / uqlm.calls_per_s:.2f} on litellm, "
            f"{default.calls_per_s / uqlm.calls_per_s:.2f} by default (fast path; target >= 2)"
        )
    print(f"rows lost: {lost}")
    print(
        f"\nfault run ({args.fault_rate:.0%} of requests fail: 429/500/503/malformed): "
        f"rows {len(faulty_df)}/{args.items}, votes retried {retried}, votes failed after retries "
        f"{len(failed)}, failed without a recorded error {unexplained}"
        + (f", faults injected {injected}" if injected is not None else "")
    )
    ok = lost == 0 and len(faulty_df) == args.items and unexplained == 0
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
