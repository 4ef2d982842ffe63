"""Every answered call survives the death of the process that paid for it: a scoring process is killed with SIGKILL
(mid-run, and while slow calls hang after a burst), and the rerun on the same cache repeats no answered call, only
those that were in flight; on both transports. (Ray's shared cache: tests/distributed/test_ray.py.)"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from judgewidgets.engine import CallCache, ChatRequest, Completion
from judgewidgets.engine._journal import journal_dir
from judgewidgets.testing import FaultPlan, OpenAITestServer

_ROOT = Path(__file__).resolve().parents[2]

# The scoring job the killed process runs: one judge, `rows` items, a cache file, a transport.
_CHILD = """
import json, sys
import judgewidgets as jw
base_url, cache, transport, rows, hung, concurrency = sys.argv[1:7]
rows, hung, concurrency = int(rows), int(hung), int(concurrency)
responses = [f"answer {i}" + (" [[fault-once:timeout]]" if i >= rows - hung else "") for i in range(rows)]
judge = jw.LLMJudge(
    "openai/test", api_base=base_url, api_key="sk-test", cache=cache, transport=transport,
    max_concurrency=concurrency, timeout=600,
)
result = judge.score([f"question {i}" for i in range(rows)], responses, progress=False)
votes = result.vote_list
print(json.dumps({"cached": sum(v.cached for v in votes), "failed": sum(v.error is not None for v in votes)}))
"""


def _start(server: OpenAITestServer, cache: Path, transport: str, rows: int, hung: int, concurrency: int):  # type: ignore[no-untyped-def]
    env = {**os.environ, "PYTHONPATH": str(_ROOT), "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    args = [server.base_url, str(cache), transport, str(rows), str(hung), str(concurrency)]
    return subprocess.Popen(
        [sys.executable, "-c", _CHILD, *args], cwd=_ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )


def _wait_for(condition: Callable[[], bool], timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("timed out waiting for the scoring process")
        time.sleep(0.02)


def _rerun(server: OpenAITestServer, cache: Path, transport: str, rows: int, hung: int) -> dict[str, int]:
    server.reset_stats()
    child = _start(server, cache, transport, rows, hung, 8)
    out, err = child.communicate(timeout=300)
    assert child.returncode == 0, err.decode()[-3000:]
    return json.loads(out.decode().strip().splitlines()[-1])


@pytest.mark.parametrize("transport", ["litellm", "fast"])
def test_sigkill_mid_run_repeats_only_the_calls_in_flight(transport: str, tmp_path: Path) -> None:
    rows, concurrency = 240, 4
    cache = tmp_path / "calls.sqlite"
    with OpenAITestServer(latency=0.03) as server:
        child = _start(server, cache, transport, rows, 0, concurrency)
        _wait_for(lambda: server.stats.total >= 80)  # well past the first batched commit
        child.send_signal(signal.SIGKILL)
        child.wait()
        sent = server.stats.total  # requests that reached the server: answered, or in flight at the kill
        assert sent < rows, "the run finished before the kill"
        left_a_journal = bool(list(journal_dir(cache).glob("*.log")))
        summary = _rerun(server, cache, transport, rows, 0)
        repeated = server.stats.total - (rows - sent)
    assert summary["failed"] == 0
    assert 0 <= repeated <= concurrency, f"{repeated} answered calls were paid for again"
    assert left_a_journal, "the killed process left its journal"
    assert summary["cached"] >= sent - concurrency
    assert not list(journal_dir(cache).glob("*.log")), "the rerun took the journal in and closed its own"


@pytest.mark.parametrize("transport", ["litellm", "fast"])
def test_sigkill_while_slow_calls_hang_after_a_burst_keeps_the_burst(transport: str, tmp_path: Path) -> None:
    """30 calls answer at once, 4 hang; the process is killed 2 s later, when no further call has finished."""
    rows, hung = 34, 4
    cache = tmp_path / "calls.sqlite"
    with OpenAITestServer(faults=FaultPlan(hang_seconds=120)) as server:
        child = _start(server, cache, transport, rows, hung, rows)
        _wait_for(lambda: server.stats.total >= rows)
        time.sleep(2.0)
        assert child.poll() is None, "the hung calls should still be waiting"
        child.send_signal(signal.SIGKILL)
        child.wait()
        summary = _rerun(server, cache, transport, rows, hung)  # a hung request answers when it is sent again
        assert server.stats.total == hung, f"the rerun paid for {server.stats.total - hung} answered calls again"
    assert summary == {"cached": rows - hung, "failed": 0}


def test_a_dead_journal_is_recovered_once_and_a_live_one_is_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "calls.sqlite"
    request = ChatRequest("openai/x", ({"role": "user", "content": "hi"},))
    other = ChatRequest("openai/x", ({"role": "user", "content": "bye"},))
    live = CallCache(path)
    live.put(request, Completion(content="kept in the journal"))  # not committed yet: < 256 rows, < 0.5 s
    reader = CallCache(path)
    assert reader.get(request) is None  # a live process's journal is its own until it commits
    assert reader.recover() == 0

    # The writer dies without flushing (its journal is closed by the kernel, as by SIGKILL).
    code = (
        "import os, sys\n"
        "from judgewidgets.engine import CallCache, ChatRequest, Completion\n"
        "c = CallCache(sys.argv[1])\n"
        "c.put(ChatRequest('openai/x', ({'role': 'user', 'content': 'bye'},)), Completion(content='paid for'))\n"
        "os.kill(os.getpid(), 9)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(_ROOT)}
    subprocess.run([sys.executable, "-c", code, str(path)], cwd=_ROOT, env=env, check=False)
    assert reader.recover() == 1
    hit = reader.get(other)
    assert hit is not None and hit.content == "paid for" and hit.cached
    assert reader.recover() == 0  # deleted once recovered
    live.close()
    assert CallCache(path).get(request) is not None  # committed on close; its empty journal removed
    assert not list(journal_dir(path).glob("*.log"))


def test_a_torn_last_line_is_skipped(tmp_path: Path) -> None:
    from judgewidgets.engine._journal import read_rows

    key = "a" * 64
    rows = read_rows(f'{key}\t{{"content": "x"}}\n{key[:10]}\t{{"cont'.encode())
    assert rows == [(key, '{"content": "x"}')]
