"""Rate limits as providers enforce them: a 3-judge panel with nothing configured, against a limiting server.

    python benchmarks/rate_limits.py [--quick] [--only NAME ...] [--transports auto litellm] [--latency 0.1]

Each scenario starts benchmarks/_limiter.py (a provider-style limiter of its own, in its own process: a bucket of
requests and one of tokens per minute, a second of burst, 429 with `retry-after` in whole seconds, limit headers
on or off) and judges with a fresh panel of three judges on one model (likert, true_false_uncertain and continuous,
no cache, no rpm=/tpm=), on the fast path ("auto") and on litellm. It prints the rows lost, the wall time against
the limit's bound (calls / requests per second, or tokens / tokens per second, whichever binds), the 429s per call,
and how long the calls waited on the limit, beside what issue 33 measured before pacing and Inspect AI 0.3.285's
figures on the same kind of server (quoted from ../shared/JUDGING.md). `--quick` halves every scenario (about 4
minutes for both transports); the full run takes about 9.

Targets (issue 33): no row lost; wall ≤ 1.15 × the bound (≤ 1.2 × at 120 RPM and when tokens bind); 429s ≤ 10 %
of calls when the server sends its limit headers, ≤ 35 % when it sends only `retry-after`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import time
import urllib.request
import warnings
from pathlib import Path
from typing import Any, NamedTuple

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import judgewidgets as jw
from judgewidgets.engine._litellm import import_litellm

HERE = Path(__file__).resolve().parent
MODEL = "openai/limited-judge"
TEMPLATES = ("likert", "true_false_uncertain", "continuous")


class Scenario(NamedTuple):
    name: str
    label: str
    items: int
    rpm: float | None = None
    tpm: float | None = None
    headers: str = "openai"
    prompt_chars: int = 0
    target_wall: float = 1.15
    before: str = ""  # issue 33's measurement before pacing: lost / calls, wall × bound, 429s
    inspect: str = ""  # Inspect AI 0.3.285 on the same kind of server (JUDGING.md)

    @property
    def target_429s(self) -> float:
        return 0.10 if self.headers != "none" else 0.35


SCENARIOS = (
    Scenario(
        "1200-headers",
        "1,200 RPM, x-ratelimit headers",
        200,
        rpm=1200,
        before="356/600 lost, 0.48×, 2.0 429s/call",
        inspect="0 lost, 1.17×",
    ),
    Scenario(
        "1200-bare",
        "1,200 RPM, bare 429 + retry-after",
        200,
        rpm=1200,
        headers="none",
        before="374/600 lost, 0.48×, 2.0 429s/call",
        inspect="0 lost, 1.17×",
    ),
    Scenario(
        "120-headers",
        "120 RPM, x-ratelimit headers",
        34,
        rpm=120,
        target_wall=1.2,
        before="92/102 lost, 0.16×, 2.8 429s/call",
        inspect="0 lost, 1.29×",
    ),
    Scenario("120-bare", "120 RPM, bare 429 + retry-after", 34, rpm=120, headers="none", target_wall=1.2),
    Scenario("50-anthropic", "50 RPM, anthropic-ratelimit headers", 20, rpm=50, headers="anthropic", target_wall=1.2),
    Scenario(
        "240k-tpm",
        "240,000 TPM, 2,000-character prompts",
        100,
        tpm=240_000,
        prompt_chars=2000,
        target_wall=1.2,
        before="260/300 lost, 0.20×, 2.8 429s/call",
    ),
)


class Limiter:
    """benchmarks/_limiter.py in a child process, for one scenario."""

    def __init__(self, scenario: Scenario, latency: float) -> None:
        command = [sys.executable, str(HERE / "_limiter.py"), "--headers", scenario.headers]
        command += ["--latency", str(latency)]
        if scenario.rpm:
            command += ["--rpm", str(scenario.rpm)]
        if scenario.tpm:
            command += ["--tpm", str(scenario.tpm)]
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        assert self.process.stdout is not None
        self.base_url = self.process.stdout.readline().decode().strip()
        if not self.base_url.startswith("http://"):
            self.close()
            raise RuntimeError("the limiting server did not start")

    def stats(self) -> dict[str, int]:
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        with opener.open(self.base_url.removesuffix("/v1") + "/stats", timeout=10) as response:
            return dict(json.loads(response.read()))

    def close(self) -> None:
        if self.process.stdin is not None:
            self.process.stdin.close()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def items(scenario: Scenario, n: int) -> tuple[list[str], list[str]]:
    prompts = [f"Question {i}: what is {i} + {i}?" for i in range(n)]
    responses = [f"The answer is {2 * i}." for i in range(n)]
    if scenario.prompt_chars:  # the question padded to the stated length (a long source document, say)
        filler = "Context: the sum of two equal numbers is twice either of them. "
        prompts = [
            (p + " " + filler * (scenario.prompt_chars // len(filler) + 1))[: scenario.prompt_chars] for p in prompts
        ]
    return prompts, responses


def panel(base_url: str, transport: str) -> jw.LLMPanel:
    """Three judges on one model, as a user writes them: nothing about limits, no cache (every call is made)."""
    return jw.LLMPanel(
        [
            jw.LLMJudge(
                MODEL, template=t, name=t, api_base=base_url, api_key="sk-limited", cache=False, transport=transport
            )  # type: ignore[arg-type]
            for t in TEMPLATES
        ]
    )


async def run(scenario: Scenario, transport: str, scale: float, latency: float) -> dict[str, Any]:
    n = max(4, round(scenario.items * scale))
    prompts, responses = items(scenario, n)
    server = Limiter(scenario, latency)
    try:
        jw.engine.rate_limits.reset()  # a first contact: nothing learned in this process
        judges = panel(server.base_url, transport)
        started = time.perf_counter()
        result = await judges.ascore(prompts, responses, progress=False)
        wall = time.perf_counter() - started
        stats = server.stats()
    finally:
        server.close()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        votes = result.votes
    failed = votes[votes["score"].isna()]
    lost = int(failed["item"].nunique())
    calls = n * len(TEMPLATES)
    bounds = []
    if scenario.rpm:
        bounds.append(calls / (scenario.rpm / 60))
    if scenario.tpm:
        bounds.append(stats["tokens"] / (scenario.tpm / 60))
    bound = max(bounds)
    pacer = jw.engine.rate_limits.pacers[0] if jw.engine.rate_limits.pacers else None
    return {
        "scenario": scenario.label,
        "transport": "fast path" if transport == "auto" else transport,
        "calls": calls,
        "lost": lost,
        "errors": sorted({str(e)[:80] for e in failed["error"]})[:2],
        "wall_s": wall,
        "bound_s": bound,
        "wall_x": wall / bound,
        "refused": stats["refused"],
        "refused_per_call": stats["refused"] / calls,
        "waited_s": result.usage.waited_s,
        "learned": None if pacer is None else pacer.source,
        "pace": "—" if pacer is None else pace_of(pacer),
        "met": lost == 0 and wall / bound <= scenario.target_wall and stats["refused"] / calls <= scenario.target_429s,
        "target": f"≤ {scenario.target_wall:g}×, ≤ {scenario.target_429s:.0%} 429s",
        "before": scenario.before,
        "inspect": scenario.inspect,
    }


def pace_of(pacer: jw.engine.EndpointPacer) -> str:
    """The pace the pacer ended at: requests per minute, and the token limit when one is known."""
    rpm = pacer.requests_per_minute()
    parts = [f"{rpm:,.0f} calls/min"] if rpm else []
    if pacer.tpm:
        parts.append(f"{pacer.tpm:,.0f} tokens/min")
    return ", ".join(parts) or "not limited"


def print_table(rows: list[dict[str, Any]]) -> None:
    print()
    print(
        "| limit | transport | calls | lost | wall vs bound | 429s per call | waited (call-s) | pace learned from "
        "| target | met | before (issue 33) | Inspect AI 0.3.285 |"
    )
    print("|---|---|---:|---:|---:|---:|---:|---|---|---|---|---|")
    for r in rows:
        wall = f"{r['wall_x']:.2f}× ({r['wall_s']:.1f} / {r['bound_s']:.1f} s)"
        print(
            f"| {r['scenario']} | {r['transport']} | {r['calls']} | {r['lost']} | {wall} | {r['refused_per_call']:.2f} "
            f"| {r['waited_s']:,.0f} | {r['learned'] or '—'} | {r['target']} | {'yes' if r['met'] else '**no**'} "
            f"| {r['before'] or '—'} | {r['inspect'] or '—'} |"
        )
    lost = [r for r in rows if r["lost"]]
    for r in lost:
        print(f"lost rows in {r['scenario']} ({r['transport']}): {r['errors']}")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="every scenario at half its size")
    parser.add_argument("--scale", type=float, default=None, help="scenario sizes times this (default 1, --quick 0.5)")
    parser.add_argument("--only", nargs="+", choices=[s.name for s in SCENARIOS], help="run just these scenarios")
    parser.add_argument("--transports", nargs="+", choices=("auto", "litellm"), default=["auto", "litellm"])
    parser.add_argument("--latency", type=float, default=0.1, help="seconds the server takes to answer")
    args = parser.parse_args(argv)
    if args.scale is None:
        args.scale = 0.5 if args.quick else 1.0
    return args


async def main(argv: list[str] | None = None) -> list[dict[str, Any]]:
    args = parse_args(argv)
    import_litellm()  # its import (seconds) is not what a scenario measures
    chosen = [s for s in SCENARIOS if not args.only or s.name in args.only]
    rows = []
    for scenario in chosen:
        for transport in args.transports:
            row = await run(scenario, transport, args.scale, args.latency)
            print(
                f"{row['scenario']:<40} {row['transport']:<9} lost {row['lost']:>3}  wall {row['wall_x']:.2f}× "
                f"({row['wall_s']:.1f} s / {row['bound_s']:.1f} s)  429s/call {row['refused_per_call']:.2f}  "
                f"pace {row['pace']} from {row['learned']}",
                flush=True,
            )
            rows.append(row)
    print_table(rows)
    return rows


if __name__ == "__main__":
    outcome = asyncio.run(main())
    sys.exit(0 if all(r["met"] for r in outcome) else 1)
