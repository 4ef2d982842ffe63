import asyncio
import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

import judgewidgets as jw
from judgewidgets._runner import run_sync
from judgewidgets.testing import fixed


async def answer() -> int:
    await asyncio.sleep(0)
    return 42


def test_plain_script() -> None:
    assert run_sync(answer()) == 42


def test_inside_a_running_loop() -> None:
    async def cell() -> int:
        return run_sync(answer())

    assert asyncio.run(cell()) == 42


def test_inside_uvloop() -> None:
    uvloop = pytest.importorskip("uvloop")

    async def cell() -> int:
        return run_sync(answer())

    assert uvloop.run(cell()) == 42


def test_nest_asyncio_strategy_runs_on_the_callers_loop() -> None:
    async def on_which_loop() -> asyncio.AbstractEventLoop:
        return asyncio.get_running_loop()

    async def cell() -> bool:
        loop = asyncio.get_running_loop()
        return run_sync(on_which_loop(), strategy="nest_asyncio") is loop

    assert asyncio.run(cell())


def test_nest_asyncio_cannot_patch_uvloop() -> None:
    uvloop = pytest.importorskip("uvloop")

    async def cell() -> int:
        return run_sync(answer(), strategy="nest_asyncio")

    with pytest.raises(jw.ConfigurationError, match="cannot patch"):
        uvloop.run(cell())


def test_sync_call_from_inside_engine_work_is_refused_clearly() -> None:
    async def nested() -> int:
        return run_sync(answer())

    with pytest.raises(RuntimeError, match="use the async twin"):
        run_sync(nested())


def test_exceptions_propagate() -> None:
    async def boom() -> None:
        raise KeyError("x")

    with pytest.raises(KeyError):
        run_sync(boom())


def test_unknown_strategy() -> None:
    with pytest.raises(jw.ConfigurationError, match="unknown sync strategy"):
        run_sync(answer(), strategy="magic")  # type: ignore[arg-type]


def test_private_loop_kind(monkeypatch: pytest.MonkeyPatch) -> None:
    from judgewidgets._runner import EVENT_LOOP_ENV, private_loop_kind

    monkeypatch.delenv(EVENT_LOOP_ENV, raising=False)
    installed = importlib.util.find_spec("uvloop") is not None
    assert private_loop_kind() == ("uvloop" if installed else "asyncio")
    monkeypatch.setenv(EVENT_LOOP_ENV, "asyncio")
    assert private_loop_kind() == "asyncio"
    monkeypatch.setenv(EVENT_LOOP_ENV, "trio")
    with pytest.raises(jw.ConfigurationError, match=EVENT_LOOP_ENV):
        private_loop_kind()


def test_private_uvloop_thread_runs_a_panel() -> None:
    """What `panel.score()` does where uvloop is installed: the panel runs on the private uvloop loop."""
    pytest.importorskip("uvloop")
    from judgewidgets._runner import _LoopThread
    from judgewidgets.testing import OpenAITestServer

    async def on_which_loop() -> str:
        return type(asyncio.get_running_loop()).__module__

    thread = _LoopThread("uvloop")
    try:
        assert thread.run(on_which_loop()).startswith("uvloop")
        with OpenAITestServer(fixed('{"score": 5}')) as server:
            panel = jw.LLMPanel(
                [
                    jw.LLMJudge("openai/a", template="likert", api_base=server.base_url, api_key="sk-t", cache=False),
                    jw.LLMJudge("openai/b", template="likert", api_base=server.base_url, api_key="sk-t", cache=False),
                ]
            )
            for _ in range(2):  # the second run reuses the first run's connections on the same loop
                result = thread.run(panel.ascore(["q"] * 20, ["a"] * 20, progress=False))
                assert result.to_df()["avg"].tolist() == pytest.approx([1.0] * 20, abs=0.03)
    finally:
        thread.loop.call_soon_threadsafe(thread.loop.stop)
        thread.thread.join(5)


@pytest.mark.parametrize("kind", ["asyncio", "uvloop"])
def test_tasks_left_pending_on_the_private_loop_end_quietly_at_exit(kind: str) -> None:
    """litellm's logging worker waits on the private loop forever; at exit it is cancelled, not destroyed
    pending (which printed "Task was destroyed but it is pending! ... LoggingWorker._worker_loop")."""
    script = """
import asyncio
from judgewidgets._runner import run_sync

kept = {}

async def start_a_worker():
    queue = asyncio.Queue()
    kept["queue"], kept["task"] = queue, asyncio.get_running_loop().create_task(queue.get())

run_sync(start_a_worker())
print("scored")
"""
    root = Path(__file__).resolve().parents[1]
    if kind == "uvloop":
        pytest.importorskip("uvloop")
    env = {**os.environ, "PYTHONPATH": str(root), "JUDGEWIDGETS_EVENT_LOOP": kind}
    for _ in range(3):  # shutdown's order of destruction varies; without the cancellation every run printed it
        done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=60)
        assert (done.returncode, done.stdout, done.stderr) == (0, "scored\n", "")
