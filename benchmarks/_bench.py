"""What the throughput benchmarks share: the judge model name, the items, the panel, the bare litellm call, Run."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

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
    """Three likert judges on the test server; no cache unless `cache` names a file (every call is made)."""
    return jw.LLMPanel(
        [
            jw.LLMJudge(
                MODEL,
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


def litellm_call(base_url: str, concurrency: int) -> Callable[[str, str], Awaitable[str]]:
    """One judge request through bare `litellm.acompletion` (litellm's retries off), `concurrency` at a time."""
    import litellm

    template = jw.templates.LIKERT
    limit = asyncio.Semaphore(concurrency)

    async def call(prompt: str, response: str) -> str:
        async with limit:
            reply = await litellm.acompletion(
                model=MODEL,
                messages=list(template.messages(prompt, response)),
                api_base=base_url,
                api_key="sk-bench",
                temperature=0.0,
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
