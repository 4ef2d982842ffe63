"""Hosted providers as they fail: a 3-judge panel with nothing configured against a server answering each fault.

    python benchmarks/provider_faults.py [--quick] [--only NAME ...] [--transports auto litellm]

Each scenario starts the loopback server (`judgewidgets.testing.OpenAITestServer`, in its own process) with one
fault of issue 42 / 46 as the providers send it (bodies, status codes, headers) and judges with a fresh panel of three
judges on one model (likert, true_false_uncertain, continuous; the call cache on, in a fresh file; defaults
everywhere), on the fast path ("auto") and on litellm. It prints rows lost, wall time against the ideal (what the
fault itself costs: the outage's length, the hung call's timeout), requests sent per row, and, for Ctrl-C, how long
a script took to stop after SIGINT in each state and what its rerun sent; beside what the issues measured before.
The full run takes about 4 minutes; `--quick` about 2.

Targets (issues 42 and 46): 0 rows lost to overloads; a spent quota ends a 3,000-call run in under 3 s with under 100
requests; a hung first request costs the other calls nothing (every judge has answers in the first 5 s); Ctrl-C
stops within 2 s in every state and the rerun sends only the rest; a request no wait lets through is its row's own
failure within 120 s, and no row is retried in a tight loop (requests per row within a small multiple).
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
import warnings
from pathlib import Path
from typing import Any, NamedTuple

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import judgewidgets as jw
from judgewidgets.engine._litellm import import_litellm
from judgewidgets.testing import FaultPlan, OpenAITestServer, ProviderLimit, fits_schema

ROOT = Path(__file__).resolve().parents[1]
TEMPLATES = ("likert", "true_false_uncertain", "continuous")


class Scenario(NamedTuple):
    name: str
    label: str
    items: int
    plan: FaultPlan
    ideal_s: float  # what the fault itself costs, at best
    stuck_row: str = ""  # a directive planted in one row (the others are answered)
    timeout: float | None = None
    before: str = ""  # what the issue measured before this change
    target: str = ""


SCENARIOS = (
    Scenario(
        "overload-529",
        "529 overloaded_error for the first 5 s, then OK",
        100,
        FaultPlan(overloaded_529=1.0, faults_for_s=5.0),
        5.0,
        before="290 of 300 rows lost (80 on litellm)",
        target="0 lost",
    ),
    Scenario(
        "overload-503",
        "503 overloaded for the first 5 s, then OK",
        100,
        FaultPlan(overloaded=1.0, faults_for_s=5.0),
        5.0,
        target="0 lost",
    ),
    Scenario(
        "quota",
        "429 insufficient_quota on every call",
        1000,
        FaultPlan(quota_spent=1.0),
        0.0,
        before="3,000 calls: 45.5 s (20.5 s on litellm)",
        target="< 3 s, < 100 requests",
    ),
    Scenario(
        "unknown-model",
        "404 model_not_found on every call",
        1000,
        FaultPlan(model_not_found=1.0),
        0.0,
        before="every call tried, rows NaN",
        target="< 3 s, < 100 requests",
    ),
    Scenario(
        "hung-first",
        "the first request accepted and never answered (timeout=10)",
        100,
        FaultPlan(hang_first=1, hang_seconds=600),
        10.0,
        timeout=10.0,
        before="12.9 s at timeout=10, the other 99 calls held back",
        target="every judge answered in the first 5 s",
    ),
    Scenario(
        "too-large",
        "one row of 20: 429 'Request too large ... on tokens per min'",
        20,
        FaultPlan(),
        0.0,
        stuck_row="[[fault:request_too_large]]",
        before="> 120 s (600 s patience), again on a rerun",
        target="ends at once, that row's own failure",
    ),
    Scenario(
        "429-retry-after-0",
        "one row of 1,000: 429 with retry-after: 0 on every try",
        1000,
        FaultPlan(retry_after_header="0"),
        0.0,
        stuck_row="[[fault:429]]",
        before="486,564 requests for that row in 120 s",
        target="≤ 120 s, a few requests for that row",
    ),
)


def panel(base_url: str, transport: str, cache: Path, timeout: float | None) -> jw.LLMPanel:
    extra: dict[str, Any] = {} if timeout is None else {"timeout": timeout}
    return jw.LLMPanel(
        [
            jw.LLMJudge(
                "openai/faulty",
                template=t,
                name=t,
                api_base=base_url,
                api_key="sk-faulty",
                cache=jw.CallCache(cache),
                transport=transport,  # type: ignore[arg-type]
                **extra,
            )
            for t in TEMPLATES
        ]
    )


def run(scenario: Scenario, transport: str, scale: float) -> dict[str, Any]:
    n = max(20, round(scenario.items * scale)) if scenario.name not in ("too-large",) else scenario.items
    prompts = [f"Question {i}: what is {i} + {i}?" for i in range(n)]
    responses = [f"The answer is {2 * i}." for i in range(n)]
    stuck = n // 2
    if scenario.stuck_row:
        responses[stuck] += f" {scenario.stuck_row}"
    jw.rate_limits.reset()
    with (
        tempfile.TemporaryDirectory() as folder,
        OpenAITestServer(fits_schema(), faults=scenario.plan, spawn=True) as server,
    ):
        judges = panel(server.base_url, transport, Path(folder) / "calls.sqlite", scenario.timeout)
        early: list[int] = []
        watcher = threading.Timer(5.0, lambda: early.append(server.stats.by_status.get(200, 0)))
        watcher.start()
        started = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = judges.score(prompts, responses, progress=False)
            votes = result.votes
        wall = time.perf_counter() - started
        watcher.cancel()
        stats = server.stats
    failed = votes[votes["score"].isna()]
    lost = int(failed["item"].nunique())
    calls = n * len(TEMPLATES)
    stuck_sent = None
    if scenario.stuck_row:
        lost = int(failed.loc[failed["item"] != stuck, "item"].nunique())  # the planted row is meant to fail
        stuck_sent = sum(v.attempts for v in result.vote_list if v.item == stuck)
    row = {
        "scenario": scenario.label,
        "transport": "fast path" if transport == "auto" else transport,
        "calls": calls,
        "lost": lost,
        "wall_s": wall,
        "ideal_s": scenario.ideal_s,
        "requests": stats.total,
        "per_row": stats.total / n,
        "stuck_sent": stuck_sent,
        "early": early[0] if early else None,
        "errors": sorted({str(e)[:90] for e in failed["error"]})[:2],
        "before": scenario.before,
        "target": scenario.target,
    }
    row["met"] = met(scenario.name, row, calls)
    return row


def met(name: str, row: dict[str, Any], calls: int) -> bool:
    if name.startswith("overload"):
        return row["lost"] == 0
    if name in ("quota", "unknown-model"):
        return row["wall_s"] < 3 and row["requests"] < 100 and row["lost"] == calls // len(TEMPLATES)
    if name == "hung-first":
        return row["lost"] == 0 and (row["early"] or 0) >= calls - 1
    if name == "too-large":
        return row["lost"] == 0 and row["wall_s"] < 10
    return row["lost"] == 0 and row["wall_s"] < 120 and (row["stuck_sent"] or 0) <= 3 * 20


# --- Ctrl-C ---------------------------------------------------------------------------------------------------------

_SCRIPT = """
import sys, time
import judgewidgets as jw
base, cache, n, timeout = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
panel = jw.LLMPanel([jw.LLMJudge("openai/faulty", template=t, name=t, api_base=base, api_key="sk-faulty",
                                 cache=jw.CallCache(cache), timeout=timeout)
                     for t in ("likert", "true_false_uncertain", "continuous")])
print("started", flush=True)
try:
    panel.score([f"Question {i}" for i in range(n)], ["an answer"] * n, progress=False)
    print("finished", flush=True)
except KeyboardInterrupt:
    print("interrupted", flush=True)
"""


class Interrupt(NamedTuple):
    name: str
    label: str
    plan: FaultPlan
    limit: ProviderLimit | None = None
    timeout: float = 120.0


INTERRUPTS = (
    Interrupt("pacer", "waiting on the pacer (120 RPM)", FaultPlan(), ProviderLimit(rpm=120, headers="none")),
    Interrupt("retry-after", "waiting out retry-after: 30 on every call", FaultPlan(rate_limit=1.0, retry_after=30)),
    Interrupt("backoff", "backing off a 529 on every call", FaultPlan(overloaded_529=1.0)),
    Interrupt("hung", "every request hung", FaultPlan(timeout=1.0, hang_seconds=600)),
)


def interrupt(case: Interrupt, after_s: float) -> dict[str, Any]:
    """SIGINT to a script `after_s` into its run: seconds to stop; then what its rerun sends, against the rows left."""
    n = 40
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    with (
        tempfile.TemporaryDirectory() as folder,
        OpenAITestServer(fits_schema(), faults=case.plan, limit=case.limit, spawn=True) as s,
    ):
        cache = str(Path(folder) / "calls.sqlite")
        args = [sys.executable, "-c", _SCRIPT, s.base_url, cache, str(n), str(case.timeout)]
        child = subprocess.Popen(args, stdout=subprocess.PIPE, text=True, env=env)
        assert child.stdout is not None and child.stdout.readline().strip() == "started"
        time.sleep(after_s)
        answered = s.stats.by_status.get(200, 0)
        child.send_signal(signal.SIGINT)
        sent_at = time.perf_counter()
        try:
            out, _ = child.communicate(timeout=60)
            stop_s = time.perf_counter() - sent_at
        except subprocess.TimeoutExpired:
            child.kill()
            out, stop_s = "", float("inf")
        rerun = None
        if case.name == "pacer":  # the rerun (limit still on) must send only the calls not answered
            s.reset_stats()
            again = subprocess.run(args, capture_output=True, text=True, env=env, timeout=600)
            assert "finished" in again.stdout, again.stderr[-2000:]
            stats = s.stats
            rerun = (stats.by_status.get(200, 0), 3 * n - answered)
    return {
        "state": case.label,
        "stop_s": stop_s,
        "said": out.strip().splitlines()[-1] if out.strip() else "(nothing)",
        "answered_before": answered,
        "rerun": rerun,
        "met": stop_s <= 2.0 and (rerun is None or rerun[0] <= rerun[1]),
    }


# --- the report -----------------------------------------------------------------------------------------------------


def print_tables(rows: list[dict[str, Any]], stops: list[dict[str, Any]]) -> None:
    print()
    print(
        "| fault | transport | calls | rows lost | wall vs ideal | requests per row | stuck row's requests "
        "| answers in 5 s | before | target | met |"
    )
    print("|---|---|---:|---:|---:|---:|---:|---:|---|---|---|")
    for r in rows:
        wall = f"{r['wall_s']:.1f} s (ideal {r['ideal_s']:.0f} s)"
        stuck = "—" if r["stuck_sent"] is None else str(r["stuck_sent"])
        early = "—" if r["early"] is None else str(r["early"])
        print(
            f"| {r['scenario']} | {r['transport']} | {r['calls']} | {r['lost']} | {wall} | {r['per_row']:.2f} "
            f"| {stuck} | {early} | {r['before'] or '—'} | {r['target']} | {'yes' if r['met'] else '**no**'} |"
        )
    for r in rows:
        if r["errors"]:
            print(f"  {r['scenario']} ({r['transport']}): {r['errors'][0]}")
    if stops:
        print()
        print("| Ctrl-C while | stopped after | said | answers before | rerun sent / rows left | target | met |")
        print("|---|---:|---|---:|---:|---|---|")
        for r in stops:
            rerun = "—" if r["rerun"] is None else f"{r['rerun'][0]} / {r['rerun'][1]}"
            print(
                f"| {r['state']} | {r['stop_s']:.2f} s | {r['said']} | {r['answered_before']} | {rerun} | ≤ 2 s "
                f"| {'yes' if r['met'] else '**no**'} |"
            )


def main(argv: list[str] | None = None) -> bool:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="scenarios at a fifth of their size")
    parser.add_argument("--only", nargs="+", help="scenario or Ctrl-C state names to run", default=None)
    parser.add_argument("--transports", nargs="+", choices=("auto", "litellm"), default=["auto", "litellm"])
    args = parser.parse_args(argv)
    import_litellm()  # its import (seconds) is not what a scenario measures
    scale = 0.2 if args.quick else 1.0
    rows = []
    for scenario in SCENARIOS:
        if args.only and scenario.name not in args.only:
            continue
        for transport in args.transports:
            row = run(scenario, transport, scale)
            print(
                f"{scenario.name:<18} {row['transport']:<9} lost {row['lost']:>3}  wall {row['wall_s']:6.1f} s  "
                f"requests/row {row['per_row']:.2f}  met {row['met']}",
                flush=True,
            )
            rows.append(row)
    stops = []
    for case in INTERRUPTS:
        if args.only and case.name not in args.only:
            continue
        stop = interrupt(case, after_s=6.0)
        print(f"Ctrl-C {case.name:<12} stopped after {stop['stop_s']:.2f} s ({stop['said']})", flush=True)
        stops.append(stop)
    print_tables(rows, stops)
    return all(r["met"] for r in rows + stops)


if __name__ == "__main__":
    sys.exit(0 if main() else 1)
