"""Every benchmark, one after the other, each in its own interpreter (so no run inherits another's state).

    python benchmarks/run_all.py [--only NAME ...] [--skip NAME ...]

Each benchmark prints its own table of ratios against the ideal or a peer measured in the same run; this
prints them in order, then a summary of what ran, how long it took and how it exited. A benchmark whose
optional dependency is missing (`ray` for distributed_scaling, the `local` extra for local_judge) is reported
as skipped. They run one at a time on purpose: two of them at once on a small machine measure each other.
"""

from __future__ import annotations

import argparse
import importlib.util
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
BENCHMARKS = (
    "import_time",
    "panel_throughput",
    "fast_transport",
    "batch_api",
    "costs",
    "distributed_scaling",
    "local_judge",
    "sequential_coverage",
    "tournament_efficiency",
    "runs",
)
NEEDS = {"distributed_scaling": "ray", "local_judge": "xllamacpp"}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", nargs="+", choices=BENCHMARKS, help="run just these")
    parser.add_argument("--skip", nargs="+", choices=BENCHMARKS, default=[], help="leave these out")
    args = parser.parse_args()
    chosen = [name for name in args.only or BENCHMARKS if name not in args.skip]
    summary: list[tuple[str, str, float]] = []
    for name in chosen:
        needed = NEEDS.get(name)
        if needed and importlib.util.find_spec(needed) is None:
            summary.append((name, f"skipped ({needed} is not installed)", 0.0))
            continue
        print(f"\n=== {name} ===", flush=True)
        started = time.perf_counter()
        code = subprocess.call([sys.executable, str(HERE / f"{name}.py")], cwd=HERE)
        summary.append((name, "ok" if code == 0 else f"exit {code}", time.perf_counter() - started))
    print("\nbenchmark                 result                              time")
    for name, outcome, seconds in summary:
        print(f"{name:<26}{outcome:<36}{seconds:>5.0f}s")
    return 0 if all(outcome.startswith(("ok", "skipped")) for _, outcome, _ in summary) else 1


if __name__ == "__main__":
    sys.exit(main())
