"""The fast path against litellm: a 3-judge panel over a loopback server, four clients side by side in one run.

    python benchmarks/fast_transport.py [--items 1000] [--latency 0.05] [--concurrency 256] [--uvloop]

Every run sends the same judge requests (likert template, 3 judges × N items) to one OpenAI-compatible test server
in its own process (so it does not share our GIL), at most `concurrency` at once:

- bare litellm: `asyncio.gather` of `litellm.acompletion` calls, the floor the litellm path stands on;
- our panel on litellm: `LLMPanel(..., transport="litellm")`;
- our panel on the fast path: `LLMPanel(...)` (the default transport picks it for `openai/...` + `api_base`);
- raw aiohttp: one pooled `aiohttp.ClientSession` posting the same bodies, the floor of the fast path;
- lean HTTP/1.1 on asyncio: a 40-line keep-alive client, not shipped: what a client leaner than aiohttp's
  ClientSession could reach on this machine.

The ideal is calls × latency / concurrency. Targets: fast path ≥ 50 % of the ideal and ≥ 5 × bare litellm.
CPU is this process's CPU time per call (the server's is not counted).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time
from collections.abc import Awaitable, Callable

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from _bench import JUDGES, Run, bench_panel, items, litellm_call

import judgewidgets as jw
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


async def bare_litellm(base_url: str, n: int, concurrency: int) -> Run:
    call = litellm_call(base_url, concurrency)

    def batch(k: int) -> Awaitable[object]:
        prompts, responses = items(k)
        return asyncio.gather(*(call(p, r) for _ in JUDGES for p, r in zip(prompts, responses)))

    await batch(50)  # warm up
    return await timed("bare litellm.acompletion", 3 * n, lambda: batch(n))


async def raw_aiohttp(base_url: str, n: int, concurrency: int) -> Run:
    import aiohttp
    import orjson

    template = jw.templates.LIKERT
    url = base_url + "/chat/completions"
    headers = {"Authorization": "Bearer sk-bench", "Content-Type": "application/json"}
    limit = asyncio.Semaphore(concurrency)
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as session:

        async def call(prompt: str, response: str) -> str:
            async with limit:
                body = {"messages": template.messages(prompt, response), "model": "bench-judge", "temperature": 0.0}
                async with session.post(url, data=orjson.dumps(body), headers=headers) as reply:
                    return orjson.loads(await reply.read())["choices"][0]["message"]["content"]

        def batch(k: int) -> Awaitable[object]:
            prompts, responses = items(k)
            return asyncio.gather(*(call(p, r) for _ in JUDGES for p, r in zip(prompts, responses)))

        await batch(50)
        return await timed("raw aiohttp (floor of the fast path)", 3 * n, lambda: batch(n))


class _LeanHTTP(asyncio.Protocol):
    """A bare HTTP/1.1 keep-alive connection (Content-Length answers only): not shipped, a measuring stick for
    what a client leaner than aiohttp's ClientSession could reach."""

    def __init__(self) -> None:
        self.buffer = bytearray()
        self.waiter: asyncio.Future[bytes] | None = None
        self.end: int | None = None
        self.body_at = 0

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        if self.end is None:
            head_end = self.buffer.find(b"\r\n\r\n")
            if head_end < 0:
                return
            head = bytes(self.buffer[:head_end]).lower()
            at = head.index(b"content-length:") + 15
            stop = head.find(b"\r\n", at)
            self.body_at = head_end + 4
            self.end = self.body_at + int(head[at : stop if stop > 0 else None])
        if len(self.buffer) >= self.end and self.waiter is not None:
            body = bytes(self.buffer[self.body_at : self.end])
            del self.buffer[: self.end]
            self.end = None
            self.waiter.set_result(body)

    def connection_lost(self, exc: Exception | None) -> None:
        if self.waiter is not None and not self.waiter.done():
            self.waiter.set_exception(ConnectionError("closed"))


async def lean_http(host: str, port: int, n: int, concurrency: int) -> Run:
    import orjson

    template = jw.templates.LIKERT
    loop = asyncio.get_running_loop()
    idle: list[_LeanHTTP] = []
    limit = asyncio.Semaphore(concurrency)
    head = (
        f"POST /v1/chat/completions HTTP/1.1\r\nHost: {host}:{port}\r\nAuthorization: Bearer sk-bench\r\n"
        "Content-Type: application/json\r\nContent-Length: "
    ).encode()

    async def call(prompt: str, response: str) -> str:
        async with limit:
            body = orjson.dumps(
                {"messages": template.messages(prompt, response), "model": "bench-judge", "temperature": 0.0}
            )
            conn = idle.pop() if idle else (await loop.create_connection(_LeanHTTP, host, port))[1]
            conn.waiter = loop.create_future()
            conn.transport.write(head + str(len(body)).encode() + b"\r\n\r\n" + body)  # type: ignore[attr-defined]
            raw = await conn.waiter
            idle.append(conn)
            return orjson.loads(raw)["choices"][0]["message"]["content"]

    def batch(k: int) -> Awaitable[object]:
        prompts, responses = items(k)
        return asyncio.gather(*(call(p, r) for _ in JUDGES for p, r in zip(prompts, responses)))

    await batch(50)
    run = await timed("lean HTTP/1.1 on asyncio (not shipped)", 3 * n, lambda: batch(n))
    for conn in idle:
        conn.transport.close()  # type: ignore[attr-defined]
    return run


async def our_panel(base_url: str, n: int, concurrency: int, transport: str, name: str) -> tuple[Run, jw.PanelResult]:
    panel = bench_panel(base_url, concurrency, transport=transport)
    prompts, responses = items(n)
    await panel.ascore(prompts[:50], responses[:50], progress=False)  # warm up
    result: list[jw.PanelResult] = []

    async def work() -> None:
        result.append(await panel.ascore(prompts, responses, progress=False))

    return await timed(name, 3 * n, work), result[0]


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

    runs: list[Run] = []
    with OpenAITestServer(latency=args.latency, spawn=True) as server:
        url, n, c = server.base_url, args.items, args.concurrency
        fast, fast_result = run(our_panel(url, n, c, "auto", "our panel, fast path (default)"))
        raw = run(raw_aiohttp(url, n, c))
        lean = run(lean_http(server.host, server.port, n, c))
        runs += [fast, raw, lean]
        if not args.skip_litellm:
            runs.append(run(bare_litellm(url, n, c)))
            slow, slow_result = run(our_panel(url, n, c, "litellm", "our panel, transport='litellm'"))
            runs.append(slow)
    lost = args.items - len(fast_result.to_df())
    failed = int(fast_result.votes["error"].notna().sum())

    loop = "uvloop" if args.uvloop else "asyncio"
    print(
        f"\n{calls} judge calls ({args.items} items × 3 judges), server latency {args.latency * 1000:.0f} ms, "
        f"concurrency {args.concurrency}, {loop} loop; ideal {ideal:,.0f} calls/s\n"
    )
    bare = next((r for r in runs if r.name.startswith("bare litellm")), None)
    print(
        f"{'run':<40}{'calls/s':>9}{'wall s':>8}{'CPU ms/call':>13}{'of ideal':>10}{'× bare litellm':>16}"
        f"{'server busy':>13}"
    )
    for r in sorted(runs, key=lambda r: r.calls_per_s):
        versus = f"{r.calls_per_s / bare.calls_per_s:>16.1f}" if bare else f"{'-':>16}"
        print(
            f"{r.name:<40}{r.calls_per_s:>9,.0f}{r.wall_s:>8.2f}{r.cpu_ms_per_call:>13.3f}"
            f"{r.calls_per_s / ideal:>10.1%}{versus}{r.server_busy:>13.0%}"
        )
    print("\n(server busy: the test server's CPU time over the run's wall time; 100 % = one core saturated)")
    print(f"load average while running: {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
    print(f"fast path / ideal: {fast.calls_per_s / ideal:.2f}  (target >= 0.50)")
    if bare:
        print(f"fast path / bare litellm: {fast.calls_per_s / bare.calls_per_s:.1f}  (target >= 5)")
        print(f"fast path / our panel on litellm: {fast.calls_per_s / slow.calls_per_s:.1f}")
        same = fast_result.to_df().equals(slow_result.to_df())
        print(f"same DataFrame on both paths: {same}")
    print(f"fast path / raw aiohttp: {fast.calls_per_s / raw.calls_per_s:.2f}; rows lost {lost}, failed votes {failed}")
    print(f"raw aiohttp / ideal: {raw.calls_per_s / ideal:.2f}; lean HTTP/1.1 / ideal: {lean.calls_per_s / ideal:.2f}")
    return 0 if lost == 0 and failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
