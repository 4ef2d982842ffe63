"""Run coroutines from synchronous code, also while an event loop is already running.

Jupyter runs an asyncio loop in the kernel's main thread, and uvloop users run theirs; `asyncio.run` refuses
to start inside either. Two strategies are offered:

- ``"thread"`` (the default): a private event loop on one background daemon thread runs the coroutine and the
  caller's thread waits for it. It patches nothing, so it works under uvloop too, and because the loop lives as
  long as the process, clients that litellm caches per loop stay valid across calls. A kernel interrupt
  (KeyboardInterrupt) cancels the running work and is re-raised. The private loop is a uvloop loop when uvloop
  is installed (`pip install 'judgewidgets[fast]'`): against a fast inference server the client's CPU per call
  sets the pace, and uvloop's event loop (libuv, in C) spends less of it than asyncio's.
  `JUDGEWIDGETS_EVENT_LOOP=asyncio` keeps asyncio's loop.
- ``"nest_asyncio"``: patch the caller's running asyncio loop with nest_asyncio and run the coroutine on it.
  Useful when the coroutine must run on the caller's own loop (objects bound to it); impossible under uvloop,
  which cannot be patched.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import importlib.util
import os
import threading
from collections.abc import AsyncIterator, Coroutine
from typing import Any, Literal, TypeVar

from ._errors import ConfigurationError

T = TypeVar("T")

SyncStrategy = Literal["thread", "nest_asyncio"]
EventLoopKind = Literal["uvloop", "asyncio"]

EVENT_LOOP_ENV = "JUDGEWIDGETS_EVENT_LOOP"
_POLL_S = 0.2  # how often the waiting thread looks up from the run (a signal arrives between two looks)
CANCEL_WAIT_S = 1.5  # the most an interrupted run is waited for while it cancels (measured: milliseconds), so
# Ctrl-C reaches the caller within 2 s whatever the run was doing
SIGNAL_WAKE_S = 0.1  # how often a run on the main thread's loop wakes it, so a SIGINT handler runs


def private_loop_kind() -> EventLoopKind:
    """The kind of loop the private thread runs: `JUDGEWIDGETS_EVENT_LOOP` ('uvloop' or 'asyncio') when set,
    else uvloop when it is installed, else asyncio's own."""
    wanted = os.environ.get(EVENT_LOOP_ENV, "").strip().lower()
    if wanted not in ("", "uvloop", "asyncio"):
        raise ConfigurationError(f"{EVENT_LOOP_ENV} must be 'uvloop' or 'asyncio', got {wanted!r}")
    if wanted == "asyncio":
        return "asyncio"
    if importlib.util.find_spec("uvloop") is not None:
        return "uvloop"
    if wanted == "uvloop":
        raise ConfigurationError(f"{EVENT_LOOP_ENV}=uvloop needs uvloop: pip install 'judgewidgets[fast]'")
    return "asyncio"


def new_event_loop(kind: EventLoopKind) -> asyncio.AbstractEventLoop:
    """A new event loop of that kind."""
    if kind == "uvloop":
        import uvloop

        return uvloop.new_event_loop()
    return asyncio.new_event_loop()


class _LoopThread:
    """One event loop running forever on a daemon thread; the process-wide home of sync calls."""

    def __init__(self, kind: EventLoopKind = "asyncio") -> None:
        self.loop = new_event_loop(kind)
        self.thread = threading.Thread(target=self._serve, name="judgewidgets-loop", daemon=True)
        self.thread.start()
        atexit.register(self.shutdown)

    def shutdown(self, timeout: float = 2.0) -> None:
        """Cancel the tasks still pending on the loop and stop it (run at exit). Libraries leave tasks waiting
        there for good (litellm's logging worker waits on its queue); left pending, the interpreter's shutdown
        destroys them with "Task was destroyed but it is pending!" on stderr."""
        if not self.thread.is_alive() or self.loop.is_closed():
            return

        async def cancel_the_rest() -> None:
            pending = [task for task in asyncio.all_tasks() if task is not asyncio.current_task()]
            for task in pending:
                task.cancel()
            await asyncio.gather(*pending, return_exceptions=True)

        with contextlib.suppress(Exception):
            asyncio.run_coroutine_threadsafe(cancel_the_rest(), self.loop).result(timeout)
        with contextlib.suppress(RuntimeError):
            self.loop.call_soon_threadsafe(self.loop.stop)

    def _serve(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.run_forever()

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        if threading.current_thread() is self.thread:
            coro.close()
            raise RuntimeError(
                "a synchronous judgewidgets method was called from inside a coroutine that judgewidgets is "
                "running; use the async twin (e.g. `await judge.ascore(...)`) there"
            )
        finished = threading.Event()
        started: list[asyncio.Task[T]] = []

        def start() -> None:
            task = self.loop.create_task(coro)
            task.add_done_callback(lambda _: finished.set())
            started.append(task)

        self.loop.call_soon_threadsafe(start)
        try:
            while not finished.wait(_POLL_S):  # short waits, so a kernel interrupt (SIGINT) is seen promptly
                pass
        except KeyboardInterrupt:
            # Cancel the run (callbacks run in order: the task exists by then) and wait until it has ended, so
            # its progress bar is closed, its caches flushed and none of its tasks is left on the loop when the
            # interrupt reaches the caller; the calls that finished are in the cache.
            self.loop.call_soon_threadsafe(lambda: started[0].cancel())
            finished.wait(CANCEL_WAIT_S)
            raise
        return started[0].result()


_loop_thread: _LoopThread | None = None
_loop_thread_lock = threading.Lock()


def _background_loop() -> _LoopThread:
    global _loop_thread
    with _loop_thread_lock:
        if _loop_thread is None or not _loop_thread.thread.is_alive():
            _loop_thread = _LoopThread(private_loop_kind())
        return _loop_thread


@contextlib.asynccontextmanager
async def interruptible() -> AsyncIterator[None]:
    """While a run goes on in the main thread's event loop (`await panel.ascore(...)` in a Jupyter cell, a script's
    `asyncio.run`), wake that loop every `SIGNAL_WAKE_S`, so that a SIGINT (the stop button, Ctrl-C) is acted on
    at once. Python runs signal handlers in the main thread only, between two bytecodes; a process-wide signal is
    often delivered to another thread (a kernel has several), and then a loop asleep in `epoll` waiting for slow
    answers would not run the handler (ipykernel's, which cancels the cell) until the next answer arrived:
    measured, `await asyncio.sleep(20)` in a cell took 18.6 s to stop. Elsewhere (the private loop thread) it does
    nothing: the caller's thread waits in short steps there."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    async def wake() -> None:
        while True:
            await asyncio.sleep(SIGNAL_WAKE_S)

    waker = asyncio.get_running_loop().create_task(wake(), name="judgewidgets-signal-wake")
    try:
        yield
    finally:
        waker.cancel()


def run_sync(coro: Coroutine[Any, Any, T], strategy: SyncStrategy = "thread") -> T:
    """Run `coro` to completion from synchronous code, whether or not this thread already runs a loop."""
    if strategy == "thread":
        return _background_loop().run(coro)
    if strategy == "nest_asyncio":
        return _run_nested(coro)
    coro.close()
    raise ConfigurationError(f"unknown sync strategy {strategy!r}; use 'thread' or 'nest_asyncio'")


def _run_nested(coro: Coroutine[Any, Any, T]) -> T:
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    if not isinstance(loop, asyncio.BaseEventLoop) or type(loop).__module__.startswith("uvloop"):
        coro.close()
        raise ConfigurationError(
            f"nest_asyncio cannot patch a {type(loop).__module__}.{type(loop).__name__} loop; "
            "use strategy='thread' (the default) instead"
        )
    import nest_asyncio

    nest_asyncio.apply(loop)
    return loop.run_until_complete(coro)
