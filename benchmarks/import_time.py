"""Cold import time of judgewidgets, against the imports it cannot avoid and the one it defers.

    python benchmarks/import_time.py [--runs 5]

Each import runs in a fresh interpreter; the median wall time is reported. pandas + pydantic is the floor
(judgewidgets' records and tables need them); litellm (≈6 s) is deferred until the first model call.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time

CASES = {
    "python -c pass (interpreter start)": "pass",
    "import pandas, pydantic (floor)": "import pandas, pydantic",
    "import judgewidgets": "import judgewidgets",
    "import litellm (deferred by judgewidgets)": "import litellm",
}


def cold_import_seconds(code: str, runs: int) -> float:
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True, env=env, capture_output=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    results = {name: cold_import_seconds(code, args.runs) for name, code in CASES.items()}
    floor = results["import pandas, pydantic (floor)"]
    print(f"{'import':<44}{'median s':>10}{'× floor':>9}")
    for name, seconds in results.items():
        print(f"{name:<44}{seconds:>10.2f}{seconds / floor:>9.2f}")
    ours = results["import judgewidgets"]
    print(
        f"\njudgewidgets adds {ours - floor:+.2f} s over pandas + pydantic; litellm would add "
        f"{results['import litellm (deferred by judgewidgets)'] - results['python -c pass (interpreter start)']:.2f} s"
    )


if __name__ == "__main__":
    main()
