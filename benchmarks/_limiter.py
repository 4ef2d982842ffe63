"""A provider-style rate limiter in front of a fake chat model, for benchmarks/rate_limits.py (not the tests' server).

    python benchmarks/_limiter.py --rpm 1200 [--tpm 240000] [--headers openai|anthropic|none] [--burst-s 1]
                                  [--latency 0.1] [--port 0]

It prints its base URL (`http://127.0.0.1:PORT/v1`) on one line, then serves until its stdin closes, so it runs in
a process of its own (it does not share the benchmark's GIL) and stops with its parent.

What it enforces, per model name (OpenAI and Anthropic set limits per model): a bucket of requests and one of
tokens, refilled continuously at the per-minute limit / 60 each second and holding `burst_s` seconds of it (a
provider's short-window enforcement: a 60,000 RPM limit is not 60,000 requests in the first second). A request
costs one request and its tokens: about one per four characters of its messages, plus its `max_tokens` (else 16),
as OpenAI counts a request before answering it. When either bucket is short it answers 429 at once with
`retry-after` in whole seconds (rounded up), as OpenAI and Anthropic do. With `--headers openai` every answer, 429
or not, carries `x-ratelimit-limit/remaining/reset-requests` and `-tokens`; with `--headers anthropic` the
`anthropic-ratelimit-requests-*` and `-tokens-*` (reset as an RFC 3339 time); with `none` only the 429s'
`retry-after`. An admitted request is answered after `latency` seconds with a chat completion whose content fits
the request's JSON schema (a `score`, `verdict` or `winner`).

`GET /stats` gives what it saw: requests, answered, refused (429s), tokens admitted; `POST /reset` zeroes them.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import sys
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any

from aiohttp import web

from judgewidgets.testing import fits_schema

TOKEN_CHARS = 4  # characters per token, the count a provider makes before it answers
DEFAULT_ANSWER_TOKENS = 16


@dataclass
class Bucket:
    """Holds up to `capacity`, refilled at `rate` per second."""

    rate: float
    capacity: float
    level: float = 0.0
    at: float = field(default_factory=time.monotonic)

    def __post_init__(self) -> None:
        self.level = self.capacity

    def refill(self, now: float) -> None:
        self.level = min(self.capacity, self.level + (now - self.at) * self.rate)
        self.at = now

    def short_by(self, amount: float) -> float:
        """Seconds until `amount` is there (0: it is)."""
        return max(0.0, (amount - self.level) / self.rate)

    def full_in(self) -> float:
        return max(0.0, (self.capacity - self.level) / self.rate)


@dataclass
class Limits:
    rpm: float | None
    tpm: float | None
    burst_s: float
    headers: str


class Limiter:
    """One request bucket and one token bucket per model."""

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self.buckets: dict[str, tuple[Bucket | None, Bucket | None]] = {}
        self.stats = {"requests": 0, "answered": 0, "refused": 0, "tokens": 0}

    def _buckets(self, model: str) -> tuple[Bucket | None, Bucket | None]:
        found = self.buckets.get(model)
        if found is None:
            rpm, tpm, burst = self.limits.rpm, self.limits.tpm, self.limits.burst_s
            requests = Bucket(rpm / 60, max(1.0, rpm / 60 * burst)) if rpm else None
            tokens = Bucket(tpm / 60, max(1.0, tpm / 60 * burst)) if tpm else None
            found = self.buckets[model] = (requests, tokens)
        return found

    def admit(self, model: str, tokens: int) -> tuple[bool, dict[str, str]]:
        """Whether the request may be answered now, and the headers of its answer."""
        now = time.monotonic()
        requests, budget = self._buckets(model)
        waits = []
        for bucket, amount in ((requests, 1.0), (budget, float(tokens))):
            if bucket is not None:
                bucket.refill(now)
                waits.append(bucket.short_by(min(amount, bucket.capacity)))
        admitted = not any(waits)
        self.stats["requests"] += 1
        if admitted:
            if requests is not None:
                requests.level -= 1
            if budget is not None:
                budget.level -= min(tokens, budget.capacity)
            self.stats["answered"] += 1
            self.stats["tokens"] += tokens
        else:
            self.stats["refused"] += 1
        headers = self._headers(requests, budget)
        if not admitted:
            headers["retry-after"] = str(max(1, math.ceil(max(waits))))
        return admitted, headers

    def _headers(self, requests: Bucket | None, budget: Bucket | None) -> dict[str, str]:
        style = self.limits.headers
        headers: dict[str, str] = {}
        if style == "none":
            return headers
        for kind, bucket, limit in (("requests", requests, self.limits.rpm), ("tokens", budget, self.limits.tpm)):
            if bucket is None or limit is None:
                continue
            remaining = str(max(0, math.floor(bucket.level)))
            if style == "openai":
                headers[f"x-ratelimit-limit-{kind}"] = f"{limit:g}"
                headers[f"x-ratelimit-remaining-{kind}"] = remaining
                headers[f"x-ratelimit-reset-{kind}"] = _go_duration(bucket.full_in())
            else:
                reset = datetime.now(timezone.utc) + timedelta(seconds=bucket.full_in())
                headers[f"anthropic-ratelimit-{kind}-limit"] = f"{limit:g}"
                headers[f"anthropic-ratelimit-{kind}-remaining"] = remaining
                headers[f"anthropic-ratelimit-{kind}-reset"] = reset.isoformat(timespec="seconds").replace(
                    "+00:00", "Z"
                )
        return headers


def _go_duration(seconds: float) -> str:
    """A reset as OpenAI writes it: `120ms`, `1.5s`, `6m0s`."""
    if seconds < 1:
        return f"{round(seconds * 1000)}ms"
    minutes, rest = divmod(seconds, 60)
    return f"{int(minutes)}m{rest:.0f}s" if minutes else f"{rest:.3g}s"


def request_tokens(body: dict[str, Any]) -> int:
    """A request's cost against a token limit: its messages' characters / 4, plus the answer it allows."""
    chars = sum(len(str(m.get("content") or "")) for m in body.get("messages") or [])
    answer = body.get("max_tokens") or body.get("max_completion_tokens") or DEFAULT_ANSWER_TOKENS
    return math.ceil(chars / TOKEN_CHARS) + int(answer)


answer_for = fits_schema()  # a JSON answer that fits the request's schema (a likert score when it names none)


class LimitingServer:
    def __init__(self, limits: Limits, latency: float) -> None:
        self.limiter = Limiter(limits)
        self.latency = latency
        self.served = 0

    def app(self) -> web.Application:
        app = web.Application(client_max_size=16 * 1024**2)
        app.router.add_post("/v1/chat/completions", self.chat)
        app.router.add_get("/stats", self.stats)
        app.router.add_post("/reset", self.reset)
        return app

    async def stats(self, request: web.Request) -> web.Response:
        return web.json_response(self.limiter.stats)

    async def reset(self, request: web.Request) -> web.Response:
        self.limiter.stats = dict.fromkeys(self.limiter.stats, 0)
        self.limiter.buckets.clear()
        return web.Response(status=204)

    async def chat(self, request: web.Request) -> web.Response:
        body = json.loads(await request.read())
        tokens = request_tokens(body)
        admitted, headers = self.limiter.admit(str(body.get("model")), tokens)
        if not admitted:
            error = {
                "message": "Rate limit reached: please try again later.",
                "type": "requests",
                "code": "rate_limit_exceeded",
            }
            return web.json_response({"error": error}, status=429, headers=headers)
        if self.latency:
            await asyncio.sleep(self.latency)
        self.served += 1
        prompt_tokens = tokens - DEFAULT_ANSWER_TOKENS
        payload = {
            "id": f"chatcmpl-limiter-{self.served}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model"),
            "choices": [
                {"index": 0, "message": {"role": "assistant", "content": answer_for(body)}, "finish_reason": "stop"}
            ],
            "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": 8, "total_tokens": prompt_tokens + 8},
        }
        return web.json_response(payload, headers=headers)


async def serve(limits: Limits, latency: float, port: int) -> None:
    server = LimitingServer(limits, latency)
    runner = web.AppRunner(server.app(), access_log=None, handle_signals=False)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", port, backlog=2048)
    await site.start()
    bound = runner.addresses[0][1]
    print(f"http://127.0.0.1:{bound}/v1", flush=True)
    stopped = asyncio.get_running_loop().create_future()
    loop = asyncio.get_running_loop()

    def wait_for_parent() -> None:
        sys.stdin.read()  # returns when the parent closes our stdin or dies
        loop.call_soon_threadsafe(lambda: stopped.done() or stopped.set_result(None))

    threading.Thread(target=wait_for_parent, daemon=True).start()
    await stopped
    await runner.cleanup()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rpm", type=float, default=None, help="requests per minute (none: no request limit)")
    parser.add_argument("--tpm", type=float, default=None, help="tokens per minute (none: no token limit)")
    parser.add_argument("--burst-s", type=float, default=1.0, help="seconds of the limit a bucket holds")
    parser.add_argument("--headers", choices=("openai", "anthropic", "none"), default="openai")
    parser.add_argument("--latency", type=float, default=0.1, help="seconds before an admitted request is answered")
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    limits = Limits(args.rpm, args.tpm, args.burst_s, args.headers)
    asyncio.run(serve(limits, args.latency, args.port))


if __name__ == "__main__":
    main()
