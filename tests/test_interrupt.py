"""Interrupting a run for real: Ctrl-C to a script, Jupyter's stop button to a kernel. The run stops at once (not
at the next answer), keeps every answer that arrived (in the cache), leaves no task of its own on any loop, and a
rerun sends only the calls that never finished, counted at the loopback server.

No speed is asserted: the bounds only tell "stopped at once" from "stopped when the slow server next answered"."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from judgewidgets.engine import CallCache
from judgewidgets.testing import FaultPlan, OpenAITestServer, ProviderLimit, json_score

ITEMS = 40
CALLS = 2 * ITEMS  # a panel of two judges asking different questions

SETUP = """
import asyncio, time
import judgewidgets as jw
judges = [
    jw.LLMJudge("openai/t", name=name, template=template, api_base={base!r}, api_key="sk-test", max_concurrency=4,
                cache={cache!r})
    for name, template in (("a", "likert"), ("b", "continuous"))
]
panel = jw.LLMPanel(judges)
prompts = [f"question {{i}}" for i in range({items})]
responses = ["an answer"] * {items}
"""

SCRIPT = (
    SETUP
    + """
import sys
print("started", flush=True)
try:
    if sys.argv[1] == "sync":
        result = panel.score(prompts, responses, progress=False)
    else:
        result = asyncio.run(panel.ascore(prompts, responses, progress=False))
    print("finished", sum(v.cached for v in result.vote_list), sum(v.error is not None for v in result.vote_list))
except KeyboardInterrupt:
    print("interrupted", time.monotonic(), flush=True)
"""
)


def setup(base: str, cache: Path) -> str:
    return SETUP.format(base=base, cache=str(cache), items=ITEMS)


def answered(cache: Path) -> int:
    """How many answers the cache file holds (what an interrupted run kept)."""
    return len(CallCache(cache))


def wait_for_requests(server: OpenAITestServer, count: int) -> None:
    deadline = time.monotonic() + 60
    while server.stats.total < count:
        assert time.monotonic() < deadline, f"the run never sent {count} requests"
        time.sleep(0.01)


# --- a script, Ctrl-C ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["sync", "asyncio.run"])
def test_ctrl_c_mid_run_keeps_the_answers_and_the_rerun_sends_only_the_rest(tmp_path: Path, mode: str) -> None:
    script, cache = tmp_path / "run.py", tmp_path / "calls.sqlite"
    with OpenAITestServer(json_score(4), latency=0.25) as server:
        script.write_text(SCRIPT.format(base=server.base_url, cache=str(cache), items=ITEMS))
        child = subprocess.Popen(
            [sys.executable, str(script), "sync" if mode == "sync" else "async"], stdout=subprocess.PIPE, text=True
        )
        assert child.stdout is not None and child.stdout.readline().strip() == "started"
        wait_for_requests(server, 20)  # four rounds of four answered, four in flight
        sent_at = time.monotonic()
        child.send_signal(signal.SIGINT)
        said = child.stdout.readline().split()
        assert child.wait(30) == 0
        assert said[0] == "interrupted", said
        stopped = float(said[1]) - sent_at
        kept = answered(cache)
        assert 0 < kept < CALLS
        first = server.stats.total
        rerun = subprocess.run(
            [sys.executable, str(script), "sync"], capture_output=True, text=True, check=True, timeout=120
        )
        assert rerun.stdout.split()[-3:] == ["finished", str(kept), "0"]  # the kept answers came from the cache
        assert server.stats.total - first == CALLS - kept, "the rerun sent only the calls that never finished"
    assert stopped < 10, f"{mode}: stopped {stopped:.1f} s after Ctrl-C"  # the next answers were 0.25 s away


def test_ctrl_c_stops_a_script_whose_calls_are_all_waiting_on_a_slow_server(tmp_path: Path) -> None:
    """asyncio.run's own SIGINT handler cancels the run; nothing has answered, so nothing wakes the loop."""
    script, cache = tmp_path / "run.py", tmp_path / "calls.sqlite"
    with OpenAITestServer(json_score(4), latency=120) as server:
        script.write_text(SCRIPT.format(base=server.base_url, cache=str(cache), items=ITEMS))
        child = subprocess.Popen([sys.executable, str(script), "async"], stdout=subprocess.PIPE, text=True)
        assert child.stdout is not None and child.stdout.readline().strip() == "started"
        wait_for_requests(server, 1)  # a new endpoint is probed with one call before more are sent
        time.sleep(0.5)
        sent_at = time.monotonic()
        child.send_signal(signal.SIGINT)
        said = child.stdout.readline().split()
        assert child.wait(30) == 0 and said[0] == "interrupted", said
    assert float(said[1]) - sent_at < 30, "it stopped long before the slow server's first answer (120 s)"


@pytest.mark.parametrize(
    ("state", "faults", "limit"),
    [
        ("a pacer", FaultPlan(), ProviderLimit(rpm=60, headers="none")),
        ("a 30 s retry-after", FaultPlan(rate_limit=1.0, retry_after=30), None),
        ("a 529 backoff", FaultPlan(overloaded_529=1.0), None),
    ],
)
def test_ctrl_c_stops_a_script_waiting_on_a_provider(
    tmp_path: Path, state: str, faults: FaultPlan, limit: ProviderLimit | None
) -> None:
    """Waiting on a rate limit's pace, on a `retry-after` or on an overload's backoff, the run stops at once: the
    waits are sleeps that cancel, in the sync facade's private loop (issue 42: the script did not stop)."""
    script, cache = tmp_path / "run.py", tmp_path / "calls.sqlite"
    with OpenAITestServer(json_score(4), faults=faults, limit=limit) as server:
        script.write_text(SCRIPT.format(base=server.base_url, cache=str(cache), items=ITEMS))
        child = subprocess.Popen([sys.executable, str(script), "sync"], stdout=subprocess.PIPE, text=True)
        assert child.stdout is not None and child.stdout.readline().strip() == "started"
        wait_for_requests(server, 1)  # the first answer (a 429, a 529) sets the endpoint waiting
        time.sleep(1.5)
        sent_at = time.monotonic()
        child.send_signal(signal.SIGINT)
        said = child.stdout.readline().split()
        assert child.wait(30) == 0 and said[0] == "interrupted", (state, said)
    assert float(said[1]) - sent_at < 10, f"waiting on {state}: stopped {float(said[1]) - sent_at:.1f} s after Ctrl-C"


def test_ctrl_c_mid_command_exits_130_and_the_rerun_sends_only_the_rest(tmp_path: Path) -> None:
    """`judgewidgets score`: interrupted, it says so and exits 130 without writing the output; the rerun writes it
    and sends only the calls that never finished."""
    rows, out, cache = tmp_path / "answers.csv", tmp_path / "scored.csv", tmp_path / "cache"
    rows.write_text("prompt,response\n" + "".join(f"question {i},an answer\n" for i in range(ITEMS)))
    env = {**os.environ, "OPENAI_API_KEY": "sk-test", "JUDGEWIDGETS_CACHE_DIR": str(cache)}
    with OpenAITestServer(json_score(4), latency=0.25) as server:
        argv = [sys.executable, "-m", "judgewidgets", "score", str(rows), "--judge", "openai/a", "--judge", "openai/b"]
        argv += ["--api-base", server.base_url, "--max-concurrency", "4", "-o", str(out), "--quiet"]
        child = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        wait_for_requests(server, 20)
        child.send_signal(signal.SIGINT)
        _, said = child.communicate(timeout=30)
        assert child.returncode == 130, said
        assert "interrupted" in said and not out.exists()
        kept = answered(cache / "calls.sqlite")
        assert 0 < kept < CALLS
        first = server.stats.total
        subprocess.run(argv, env=env, capture_output=True, check=True, timeout=120)
        assert server.stats.total - first == CALLS - kept, "the rerun sent only the calls that never finished"
    assert len(out.read_text().splitlines()) == ITEMS + 1


# --- a Jupyter kernel, the stop button ---------------------------------------------------------------------------

jupyter_client = pytest.importorskip("jupyter_client")

CHECK = """
import asyncio
from judgewidgets import _runner

def ours(task):
    \"\"\"Whether any coroutine the task awaits, down its await chain, is judgewidgets' own.\"\"\"
    step = task.get_coro()
    while step is not None:
        code = getattr(step, "cr_code", None) or getattr(step, "gi_code", None)
        if code is not None and "judgewidgets" in code.co_filename:
            return True
        step = getattr(step, "cr_await", None) or getattr(step, "gi_yieldfrom", None)
    return False

async def on_the_private_loop():
    return [repr(t) for t in asyncio.all_tasks() if t is not asyncio.current_task() and ours(t)]

left = [repr(t) for t in asyncio.all_tasks() if ours(t)]
home = _runner._loop_thread
if home is not None:
    left += asyncio.run_coroutine_threadsafe(on_the_private_loop(), home.loop).result(5)
"""


class Kernel:
    """A kernel started as JupyterLab starts one, driven through jupyter_client. Values come back as the reply's
    `user_expressions` (a cell's printed output may reach IOPub after its idle status)."""

    def __init__(self) -> None:
        from jupyter_client.manager import start_new_kernel

        self.manager, self.client = start_new_kernel(kernel_name="python3")

    def run(self, code: str, **expressions: str) -> dict[str, str]:
        """Run a cell that must succeed; the repr of each of `expressions` afterwards."""
        reply = self.reply(self.client.execute(code, user_expressions=expressions))
        assert reply["status"] == "ok", f"{reply['status']} {reply.get('ename')}: {reply.get('evalue')}"
        values = reply["user_expressions"]
        assert all(value["status"] == "ok" for value in values.values()), values
        return {name: value["data"]["text/plain"] for name, value in values.items()}

    def reply(self, msg_id: str, timeout: float = 120) -> dict[str, Any]:
        while True:
            message = self.client.get_shell_msg(timeout=timeout)
            if message["parent_header"].get("msg_id") == msg_id:
                return dict(message["content"])

    def close(self) -> None:
        self.client.stop_channels()
        self.manager.shutdown_kernel(now=True)


@pytest.fixture
def kernel() -> Iterator[Kernel]:
    started = Kernel()
    yield started
    started.close()


CELLS = {
    "sync facade": "result = panel.score(prompts, responses)",
    "await": "result = await panel.ascore(prompts, responses)",
}


@pytest.mark.parametrize("how", list(CELLS))
def test_the_stop_button_mid_run_stops_keeps_the_answers_leaves_no_task_and_the_rerun_sends_the_rest(
    kernel: Kernel, tmp_path: Path, how: str
) -> None:
    cache = tmp_path / "calls.sqlite"
    with OpenAITestServer(json_score(4), latency=0.25, spawn=True) as server:
        kernel.run(setup(server.base_url, cache))
        running = kernel.client.execute(CELLS[how], stop_on_error=False)
        wait_for_requests(server, 20)
        pressed = time.monotonic()
        kernel.manager.interrupt_kernel()
        reply = kernel.reply(running)
        stopped = time.monotonic() - pressed
        assert reply["status"] == "error"
        assert reply["ename"] == ("KeyboardInterrupt" if how == "sync facade" else "CancelledError")
        assert kernel.manager.is_alive()
        assert kernel.run(CHECK, left="left") == {"left": "[]"}, "a task of the run was left on a loop"
        kept = answered(cache)
        assert 0 < kept < CALLS
        first = server.stats.total
        rerun = kernel.run(
            "result = panel.score(prompts, responses, progress=False)",
            cached="sum(v.cached for v in result.vote_list)",
            failed="sum(v.error is not None for v in result.vote_list)",
        )
        assert rerun == {"cached": str(kept), "failed": "0"}, "the kept answers came from the cache"
        assert server.stats.total - first == CALLS - kept, "the rerun sent only the calls that never finished"
    assert stopped < 10, f"{how}: the kernel answered {stopped:.1f} s after the stop button"


def test_the_stop_button_stops_an_awaited_run_whose_calls_all_wait_on_a_slow_server(
    kernel: Kernel, tmp_path: Path
) -> None:
    """Nothing answers for two minutes, so nothing wakes the kernel's loop but the run itself: before it did,
    the interrupt waited for the next answer (an awaited `asyncio.sleep(20)` takes 18.6 s to stop)."""
    with OpenAITestServer(json_score(4), latency=120, spawn=True) as server:
        kernel.run(setup(server.base_url, tmp_path / "calls.sqlite"))
        running = kernel.client.execute(CELLS["await"], stop_on_error=False)
        wait_for_requests(server, 1)  # a new endpoint is probed with one call before more are sent
        time.sleep(0.5)
        pressed = time.monotonic()
        kernel.manager.interrupt_kernel()
        assert kernel.reply(running, timeout=60)["ename"] == "CancelledError"
        stopped = time.monotonic() - pressed
        assert kernel.manager.is_alive()
        assert kernel.run(CHECK, left="left") == {"left": "[]"}
    assert stopped < 30, f"stopped {stopped:.1f} s after the stop button; the first answer was 120 s away"


def test_the_stop_button_mid_judge_magic_says_so_and_running_the_cell_again_sends_the_rest(
    kernel: Kernel, tmp_path: Path
) -> None:
    cache = tmp_path / "cache"
    magic = "%judge --judges openai/a,openai/b --data answers --out r --no-chart"
    with OpenAITestServer(json_score(4), latency=0.25, spawn=True) as server:
        kernel.run(
            "import os\nimport pandas as pd\nos.environ['OPENAI_API_KEY'] = 'sk-test'\n%load_ext judgewidgets\n"
            f"%judge_config --api-base {server.base_url} --concurrency 4 --cache-dir {cache}\n"
            f"answers = pd.DataFrame({{'prompt': [f'question {{i}}' for i in range({ITEMS})], "
            f"'response': ['an answer'] * {ITEMS}}})"
        )
        running = kernel.client.execute(magic, stop_on_error=False)
        wait_for_requests(server, 20)
        kernel.manager.interrupt_kernel()
        reply = kernel.reply(running)
        assert (reply["status"], reply["ename"]) == ("error", "UsageError")
        assert reply["evalue"].startswith("interrupted: the judgments that finished are in the cache")
        assert kernel.manager.is_alive()
        assert kernel.run(CHECK, left="left") == {"left": "[]"}
        kept = answered(cache / "calls.sqlite")
        assert 0 < kept < CALLS
        first = server.stats.total
        assert kernel.run(magic, rows="len(r.items)") == {"rows": str(ITEMS)}
        assert server.stats.total - first == CALLS - kept, "the rerun sent only the calls that never finished"
