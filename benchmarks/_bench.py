"""What the throughput benchmarks share: the judge model name, the items, the panel, the bare litellm call, Run."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import judgewidgets as jw

MODEL = "openai/bench-judge"
JUDGES = ("judge_a", "judge_b", "judge_c")


@dataclass
class Run:
    name: str
    calls: int
    wall_s: float
    cpu_s: float
    server_cpu_s: float = 0.0

    @property
    def calls_per_s(self) -> float:
        return self.calls / self.wall_s

    @property
    def cpu_ms_per_call(self) -> float:
        return 1000 * self.cpu_s / self.calls

    @property
    def server_busy(self) -> float:
        return self.server_cpu_s / self.wall_s


def items(n: int) -> tuple[list[str], list[str]]:
    return [f"Question {i}: what is {i} + {i}?" for i in range(n)], [f"The answer is {2 * i}." for i in range(n)]


def bench_panel(
    base_url: str,
    concurrency: int,
    transport: str | jw.engine.Transport | None = None,
    retry: jw.RetryPolicy | None = None,
    cache: str | bool = False,
) -> jw.LLMPanel:
    """Three likert judges on the test server; no cache unless `cache` names a file (every call is made).

    Each judge names its own model, as a real panel does: three judges sending identical requests would be
    answered once (the engine shares identical cached requests in flight), which is not the work measured here.
    """
    return jw.LLMPanel(
        [
            jw.LLMJudge(
                f"{MODEL}-{name}",
                name=name,
                template="likert",
                api_base=base_url,
                api_key="sk-bench",
                cache=cache,
                max_concurrency=concurrency,
                retry=retry,
                transport=transport,  # type: ignore[arg-type]
            )
            for name in JUDGES
        ]
    )


def judge_requests() -> Callable[[str, str], dict[str, Any]]:
    """The body our panel's judges send for an item (messages and every parameter, logprobs included), so the
    floors do the same work as the panel they are compared with."""
    judge = bench_panel("http://127.0.0.1:1/v1", 1).judges[0]
    sent = {k: v for k, v in judge.request_params().items() if k not in ("api_base", "api_key")}
    params = {"model": MODEL.removeprefix("openai/"), **sent}

    def body(prompt: str, response: str) -> dict[str, Any]:
        return {"messages": list(judge.template.messages(prompt, response, explanations=judge.explanations)), **params}

    return body


def litellm_call(base_url: str, concurrency: int) -> Callable[[str, str], Awaitable[str]]:
    """One judge request through bare `litellm.acompletion` (litellm's retries off), `concurrency` at a time."""
    import litellm

    limit = asyncio.Semaphore(concurrency)
    judge_request = judge_requests()

    async def call(prompt: str, response: str) -> str:
        body = judge_request(prompt, response)
        async with limit:
            reply = await litellm.acompletion(
                **{**body, "model": MODEL},
                api_base=base_url,
                api_key="sk-bench",
                num_retries=0,
                max_retries=0,
            )
            return reply.choices[0].message.content

    return call


async def settle_litellm_logging() -> None:
    """Wait until litellm's background logging of the calls made so far is done: called inside a litellm run's
    timing, it charges that work to the run that caused it, instead of leaving a backlog that litellm carries onto
    the next run's event loop (where it would slow, and be charged to, whatever runs next)."""
    from litellm.litellm_core_utils import logging_worker

    worker = getattr(logging_worker, "GLOBAL_LOGGING_WORKER", None)
    if worker is not None and hasattr(worker, "flush"):
        await worker.flush()
