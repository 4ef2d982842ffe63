"""The fast path against litellm: a 3-judge panel over a loopback server, the clients side by side in one run.

    python benchmarks/fast_transport.py [--items 1000] [--latency 0.05] [--concurrency 256] [--uvloop]

Every run sends the same judge requests (likert template, 3 judges × N items) to one OpenAI-compatible test server
in its own process (so it does not share our GIL), at most `concurrency` at once:

- our panel, fast path, `panel.score()`: the sync facade as users call it, from a plain script; it runs the
  engine on its private loop, which is uvloop when uvloop is installed (`judgewidgets[fast]`);
- the same with the persistent call cache on (a fresh file, so every call misses and every answer is kept);
- our panel, fast path, `await panel.ascore()` inside `asyncio.run` (the default transport picks the fast path
  for `openai/...` + `api_base`), on judgewidgets' own HTTP/1.1 client;
- the same on the fast path's other client, aiohttp (`OpenAIHTTPTransport(client="aiohttp")`);
- the fast path's HTTP client alone (`HTTPPool`, no engine): the floor our panel stands on;
- raw aiohttp: one pooled `aiohttp.ClientSession` posting the same bodies;
- bare litellm: `asyncio.gather` of `litellm.acompletion` calls, the floor the litellm path stands on;
- our panel on litellm: `LLMPanel(..., transport="litellm")`.

The ideal is concurrency / latency calls per second. Targets: fast path ≥ 50 % of the ideal and ≥ 5 × bare
litellm. CPU is this process's CPU time per call (the server's is not counted; "server busy" shows it).
`--uvloop` runs the `asyncio.run` rows on uvloop instead.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from _bench import JUDGES, Run, bench_panel, items, judge_requests, litellm_call, settle_litellm_logging

import judgewidgets as jw
from judgewidgets._runner import private_loop_kind
from judgewidgets.engine import AutoTransport, OpenAIHTTPTransport, Transport
from judgewidgets.testing import OpenAITestServer


def server_cpu_s() -> float:
    """CPU seconds used so far by the spawned test server (our child running `-m judgewidgets.testing`)."""
    total = 0.0
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as cmd, open(f"/proc/{entry}/stat") as stat:
                if b"judgewidgets.testing" not in cmd.read():
                    continue
                fields = stat.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == os.getpid():  # field 4, the parent pid
            total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime
    return total


async def timed(name: str, calls: int, work: Callable[[], Awaitable[object]]) -> Run:
    server, cpu, wall = server_cpu_s(), time.process_time(), time.perf_counter()
    await work()
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    return Run(name, calls, wall, cpu, server_cpu_s() - server)


def batch(call: Callable[[str, str], Awaitable[str]], k: int) -> Awaitable[object]:
    """Every judge's request on the first `k` items, all at once (`call` keeps its own concurrency limit)."""
    prompts, responses = items(k)
    return asyncio.gather(*(call(p, r) for _ in JUDGES for p, r in zip(prompts, responses)))


async def bare_litellm(base_url: str, n: int, concurrency: int) -> Run:
    call = litellm_call(base_url, concurrency)

    async def work() -> None:
        await batch(call, n)
        await settle_litellm_logging()

    await batch(call, 50)  # warm up
    await settle_litellm_logging()
    return await timed("bare litellm.acompletion", 3 * n, work)


async def raw_aiohttp(base_url: str, n: int, concurrency: int) -> Run:
    import aiohttp
    import orjson

    url = base_url + "/chat/completions"
    headers = {"Authorization": "Bearer sk-bench", "Content-Type": "application/json"}
    limit = asyncio.Semaphore(concurrency)
    judge_request = judge_requests()
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as session:

        async def call(prompt: str, response: str) -> str:
            async with limit:
                body = judge_request(prompt, response)
                async with session.post(url, data=orjson.dumps(body), headers=headers) as reply:
                    return orjson.loads(await reply.read())["choices"][0]["message"]["content"]

        await batch(call, 50)
        return await timed("raw aiohttp (floor of the fast path)", 3 * n, lambda: batch(call, n))


async def http_pool(base_url: str, n: int, concurrency: int) -> Run:
    import orjson

    from judgewidgets.engine._http_pool import HTTPPool

    url = base_url + "/chat/completions"
    headers = {"Authorization": "Bearer sk-bench"}
    limit = asyncio.Semaphore(concurrency)
    judge_request = judge_requests()
    pool = HTTPPool({"Content-Type": "application/json"})

    async def call(prompt: str, response: str) -> str:
        async with limit:
            body = judge_request(prompt, response)
            reply = await pool.post(url, orjson.dumps(body), headers, timeout=600)
            return orjson.loads(reply.body)["choices"][0]["message"]["content"]

    await batch(call, 50)
    run = await timed("HTTPPool alone (the fast path's client)", 3 * n, lambda: batch(call, n))
    await pool.aclose()
    return run


async def our_panel(
    base_url: str, n: int, concurrency: int, transport: str | Transport, name: str
) -> tuple[Run, jw.PanelResult]:
    panel = bench_panel(base_url, concurrency, transport=transport)
    prompts, responses = items(n)
    await panel.ascore(prompts[:50], responses[:50], progress=False)  # warm up
    await settle_litellm_logging()
    result: list[jw.PanelResult] = []

    async def work() -> None:
        result.append(await panel.ascore(prompts, responses, progress=False))
        await settle_litellm_logging()  # a no-op on the fast path, which does not go through litellm

    return await timed(name, 3 * n, work), result[0]


def our_panel_sync(base_url: str, n: int, concurrency: int, cache: str | None = None) -> tuple[Run, jw.PanelResult]:
    """`panel.score()` from this plain thread: the sync facade runs it on its private loop.

    With `cache` (a fresh file) every call misses and is kept: one journal append per answer, a batched SQLite
    commit every 256 answers or half second. The warm-up judges other texts, so the timed run has no hit.
    """
    panel = bench_panel(base_url, concurrency, cache=cache or False)
    prompts, responses = items(n)
    panel.score([f"{p} (warm-up)" for p in prompts[:50]], responses[:50], progress=False)
    result: list[jw.PanelResult] = []

    async def work() -> None:
        result.append(await asyncio.to_thread(panel.score, prompts, responses, progress=False))

    kept = ", persistent cache on" if cache else ""
    name = f"our panel, fast path{kept}, panel.score() [{private_loop_kind()}]"
    run = asyncio.run(timed(name, 3 * n, work))
    if cache:
        assert sum(v.cached for v in result[0].vote_list) == 0, "the timed run must miss the cache on every call"
        assert len(jw.CallCache(cache)) == 3 * (n + 50), "every answer was kept"
    return run, result[0]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--items", type=int, default=1000)
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--concurrency", type=int, default=256)
    parser.add_argument("--uvloop", action="store_true", help="run the clients on uvloop instead of asyncio's loop")
    parser.add_argument("--skip-litellm", action="store_true", help="only the fast path and raw aiohttp")
    args = parser.parse_args()
    run = asyncio.run
    if args.uvloop:
        import uvloop

        run = uvloop.run
    calls = 3 * args.items
    ideal = args.concurrency / args.latency
    load_before = os.getloadavg()[0]

    loop = "uvloop" if args.uvloop else "asyncio"
    runs: list[Run] = []
    with OpenAITestServer(latency=args.latency, spawn=True) as server:
        url, n, c = server.base_url, args.items, args.concurrency
        sync, sync_result = our_panel_sync(url, n, c)
        with tempfile.TemporaryDirectory() as folder:
            cached, _ = our_panel_sync(url, n, c, cache=os.path.join(folder, "calls.sqlite"))
        fast, fast_result = run(our_panel(url, n, c, "auto", f"our panel, fast path, ascore() [{loop}]"))
        on_aiohttp = AutoTransport(fast=OpenAIHTTPTransport(client="aiohttp"))
        via_aiohttp, _ = run(our_panel(url, n, c, on_aiohttp, f"our panel, fast path on aiohttp [{loop}]"))
        pool = run(http_pool(url, n, c))
        raw = run(raw_aiohttp(url, n, c))
        runs += [sync, cached, fast, via_aiohttp, pool, raw]
        if not args.skip_litellm:
            runs.append(run(bare_litellm(url, n, c)))
            slow, slow_result = run(our_panel(url, n, c, "litellm", f"our panel, transport='litellm' [{loop}]"))
            runs.append(slow)
    lost = 2 * args.items - len(fast_result.to_df()) - len(sync_result.to_df())
    failed = int(fast_result.votes["error"].notna().sum() + sync_result.votes["error"].notna().sum())

    print(
        f"\n{calls} judge calls ({args.items} items × 3 judges), server latency {args.latency * 1000:.0f} ms, "
        f"concurrency {args.concurrency}; ideal {ideal:,.0f} calls/s; load average before: {load_before:.2f}\n"
    )
    bare = next((r for r in runs if r.name.startswith("bare litellm")), None)
    print(
        f"{'run':<50}{'calls/s':>9}{'wall s':>8}{'CPU ms/call':>13}{'of ideal':>10}{'× bare litellm':>16}"
        f"{'server busy':>13}"
    )
    for r in sorted(runs, key=lambda r: r.calls_per_s):
        versus = f"{r.calls_per_s / bare.calls_per_s:>16.1f}" if bare else f"{'-':>16}"
        print(
            f"{r.name:<50}{r.calls_per_s:>9,.0f}{r.wall_s:>8.2f}{r.cpu_ms_per_call:>13.3f}"
            f"{r.calls_per_s / ideal:>10.1%}{versus}{r.server_busy:>13.0%}"
        )
    print("\n(server busy: the test server's CPU time over the run's wall time; 100 % = one core saturated)")
    print(f"load average while running: {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
    print(
        f"persistent cache on: {cached.calls_per_s / ideal:.2f} of ideal (target >= 0.70), "
        f"{cached.calls_per_s / sync.calls_per_s:.2f} of the same run without a cache"
    )
    for r in (sync, fast):
        print(f"{r.name}: {r.calls_per_s / ideal:.2f} of ideal (target >= 0.50)", end="")
        print(f", {r.calls_per_s / bare.calls_per_s:.1f} x bare litellm (target >= 5)" if bare else "")
    if bare:
        print(f"fast path (ascore) / our panel on litellm: {fast.calls_per_s / slow.calls_per_s:.1f}")
        same = fast_result.to_df().equals(slow_result.to_df()) and sync_result.to_df().equals(slow_result.to_df())
        print(f"same DataFrame on both paths: {same}")
    print(
        f"fast path (ascore) / raw aiohttp: {fast.calls_per_s / raw.calls_per_s:.2f}; rows lost {lost}, failed {failed}"
    )
    return 0 if lost == 0 and failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
