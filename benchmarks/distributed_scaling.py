"""Ray scaling: the same panel run on 1 Ray worker, then on 2, against one loopback server, on the fast path.

    python benchmarks/distributed_scaling.py [--items 2000] [--latency 0.05] [--concurrency 16] [--shards 8]

A local Ray cluster with two CPUs starts on 127.0.0.1; the OpenAI-compatible test server runs in its own process.
Each worker judges whole shards with `panel.ascore` at `--concurrency` calls in flight, so one worker's ideal is
concurrency / latency calls per second. The default keeps one worker below one core of CPU (this machine has two
cores, shared by the server, the driver and both workers): what is measured is whether a second worker doubles the
throughput, as more nodes do on a cluster whose workers wait on remote GPUs rather than on their own CPU.
Target: 2 workers ≥ 1.7 × 1 worker.

Paper estimate: 100 workers × 8 GPUs of vLLM (printed at the end, with its assumptions).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
# Ray runs workers at nice 15 by default; on a machine shared with other work that starves them, so run them
# at the default priority like every other process here.
os.environ.setdefault("RAY_worker_niceness", "0")
# Ray's single-machine mode keeps the whole cluster on 127.0.0.1 (otherwise it binds the machine's address).
os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")

import pandas as pd
from _bench import bench_panel

import judgewidgets as jw
from judgewidgets import distributed
from judgewidgets.testing import OpenAITestServer

ESTIMATE = """
Paper estimate: 100 Ray workers, each a node with 8 GPUs serving an 8B judge with vLLM (no GPU measured here).
  assumptions: judge prompt ~450 tokens of which ~350 are the template's shared system text (vLLM prefix
  caching computes them once), ~100 item tokens, ~15 answer tokens (a JSON score, no explanation).
  per GPU (H100 class): ~100 new prefill tokens + 15 decode steps per call, batched at ~256 sequences
  -> roughly 150-300 calls/s per GPU; take 200.
  cluster: 800 GPUs x 200 = ~160,000 calls/s (~575 M judge calls an hour, ~53,000 rows/s for 3 judges).
  client per node: 8 x 200 = 1,600 calls/s. The fast path costs {fast_ms:.2f} ms of CPU per call (measured
  here), so one worker process per node needs ~{node_cores:.1f} core; on litellm ({litellm_ms:.0f} ms/call) it would
  need ~{litellm_cores:.0f} cores per node, and the client, not the GPUs, would set the pace on most nodes.
  in flight: Little's law, 1,600 calls/s x ~1.5 s under a full batch = ~2,400 per node: give each worker
  max_concurrency ~2,500 (one keep-alive connection each; far below the file-descriptor limit).
  driver: 53 finished 1,000-row shards/s is light work for Ray; network ~4 KB per call = ~6 MB/s per node.
  where the limit is: the GPUs (prefill, then decode when answers carry explanations). Next in line: the
  driver holding every vote in memory (~1 KB each: 10^7 rows x 3 judges = ~30 GB), so runs of that size
  should read the per-shard files under `output=` instead of the returned table; and the call cache,
  which is SQLite with WAL, shared by the workers of one host only: across nodes, one cache per node (a
  server-backed cache would be needed to share calls between nodes; finished shards are never redone anyway).
"""


def start_ray(temp: str) -> object:
    import ray

    error: Exception | None = None
    for _ in range(3):  # the raylet gives its agents 15 s to start; a loaded machine can miss it (ray#65983)
        try:
            ray.init(
                num_cpus=2,
                include_dashboard=False,
                log_to_driver=False,
                object_store_memory=200 * 1024**2,
                _node_ip_address="127.0.0.1",
                _temp_dir=temp,
            )
            return ray
        except Exception as exc:
            error = exc
            ray.shutdown()
    raise RuntimeError(f"could not start a local Ray cluster: {error}")


def panel(base_url: str, concurrency: int) -> jw.LLMPanel:
    return bench_panel(base_url, concurrency)


def table(n: int) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "prompt": [f"Question {i}: what is {i} + {i}?" for i in range(n)],
            "response": [f"It is {2 * i}." for i in range(n)],
        }
    )


def timed(p: jw.LLMPanel, data: pd.DataFrame, workers: int, shards: int) -> tuple[float, pd.DataFrame]:
    runner = distributed.RayRunner(workers=workers)
    started = time.perf_counter()
    frame = distributed.score(p, data, engine=runner, shards=shards, progress=False)
    return time.perf_counter() - started, frame


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--items", type=int, default=2000)
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--concurrency", type=int, default=16, help="calls in flight per worker")
    parser.add_argument("--shards", type=int, default=8)
    parser.add_argument("--repeats", type=int, default=2, help="alternating runs per setting; the best counts")
    parser.add_argument("--fast-ms", type=float, default=0.22, help="fast-path CPU ms/call, for the estimate")
    parser.add_argument("--litellm-ms", type=float, default=10.0, help="litellm CPU ms/call, for the estimate")
    args = parser.parse_args()
    calls = 3 * args.items
    temp = tempfile.mkdtemp(prefix="jwray-", dir="/tmp")
    ray = start_ray(temp)
    try:
        with OpenAITestServer(latency=args.latency, spawn=True) as server:
            p = panel(server.base_url, args.concurrency)
            timed(p, table(40), workers=2, shards=2)  # warm up both worker processes (imports, first loop)
            data = table(args.items)
            seconds: dict[int, list[float]] = {1: [], 2: []}
            frames: dict[int, pd.DataFrame] = {}
            for _ in range(args.repeats):  # alternate, so a burst of load elsewhere hits both settings alike
                for workers in (1, 2):
                    took, frames[workers] = timed(p, data, workers=workers, shards=args.shards)
                    seconds[workers].append(took)
            one_s, two_s = min(seconds[1]), min(seconds[2])
            one, two = frames[1], frames[2]
    finally:
        ray.shutdown()
    ideal = args.concurrency / args.latency
    print(
        f"\n{calls} judge calls ({args.items} items × 3 judges) in {args.shards} shards, server latency "
        f"{args.latency * 1000:.0f} ms, {args.concurrency} calls in flight per worker; one worker's ideal "
        f"{ideal:,.0f} calls/s\n"
    )
    print(f"{'Ray workers':<14}{'calls/s':>9}{'wall s':>8}{'of ideal':>10}   all runs (s)")
    for workers, best in ((1, one_s), (2, two_s)):
        rate = calls / best
        runs = ", ".join(f"{t:.2f}" for t in seconds[workers])
        print(f"{workers:<14}{rate:>9,.0f}{best:>8.2f}{rate / (workers * ideal):>10.1%}   {runs}")
    ratio = one_s / two_s
    same = one.equals(two)
    print(f"\n2 workers / 1 worker: {ratio:.2f}  (target >= 1.7); same table from both runs: {same}")
    print(f"load average: {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
    print(
        ESTIMATE.format(
            fast_ms=args.fast_ms,
            node_cores=1600 * args.fast_ms / 1000,
            litellm_ms=args.litellm_ms,
            litellm_cores=1600 * args.litellm_ms / 1000,
        )
    )
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
