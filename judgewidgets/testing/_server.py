"""`OpenAITestServer`: a real OpenAI-compatible HTTP server on 127.0.0.1, for tests that must not pay.

By default it runs on a private event loop in a background thread, so it works from sync tests, async tests
and Jupyter alike (the caller's loop is never borrowed, so a blocking call cannot starve it). With
`spawn=True` it runs in a child process (`python -m judgewidgets.testing`), so a benchmark's client does
not share its GIL with the server.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import pickle
import queue
import subprocess
import sys
import tempfile
import threading
import urllib.request
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType
from typing import IO, Any

from ..engine._litellm import keep_litellm_offline
from ._app import RESET_PATH, STATS_PATH, ChatService, ServerConfig, start_site
from ._faults import FaultPlan
from ._limits import ProviderLimit
from ._responders import Responder, hashed_score
from ._stats import ServerStats

__all__ = ["OpenAITestServer"]

_STOP_TIMEOUT = 10.0


class OpenAITestServer:
    """A loopback OpenAI-compatible chat completions server with injectable faults.

    Use it as a context manager (`with` or `async with`), or call `start()` and `stop()`. Point a client at
    `base_url`: for litellm, `model="openai/<anything>", api_base=server.base_url, api_key="sk-test"`.
    """

    def __init__(
        self,
        responder: Responder | None = None,
        *,
        latency: float = 0.0,
        jitter: float = 0.0,
        faults: FaultPlan | None = None,
        record: int = 100,
        models: Sequence[str] = ("test",),
        api_key: str | None = None,
        limit: ProviderLimit | None = None,
        spawn: bool = False,
        host: str = "127.0.0.1",
        port: int = 0,
        startup_timeout: float = 60.0,
    ) -> None:
        """Configure, but do not start, a server.

        responder: `(request_body) -> content`; default `hashed_score()`. Must pickle when `spawn=True`.
        latency, jitter: every answer waits `latency + uniform(0, jitter)` seconds.
        faults: the seeded random fault plan; none by default. Directives in prompts work regardless.
        record: how many of the last requests `stats.requests` keeps.
        models: what `GET /v1/models` lists (any model name is accepted by the chat route).
        spawn: serve from a child process instead of a background thread.
        port: 0 lets the OS pick a free one.
        api_key: when given, a request carrying another key (bearer token, `api-key` or `x-api-key` header) gets
            a 401 whose message repeats the key it sent, in full: a server that leaks what a client must hide.
        limit: a provider-style rate limit per model (`ProviderLimit`): 429s with `retry-after`, and the limit
            headers of OpenAI or Anthropic on every answer.
        """
        if latency < 0 or jitter < 0:
            raise ValueError("latency and jitter must be >= 0")
        if record < 0:
            raise ValueError("record must be >= 0")
        self.config = ServerConfig(
            responder=responder if responder is not None else hashed_score(),
            latency=latency,
            jitter=jitter,
            faults=faults if faults is not None else FaultPlan(),
            record=record,
            models=tuple(models),
            api_key=api_key,
            limit=limit,
        )
        self.spawn = spawn
        self.host = host
        self._requested_port = port
        self._startup_timeout = startup_timeout
        self._port: int | None = None
        # Thread mode.
        self._service: ChatService | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        # Process mode.
        self._process: subprocess.Popen[bytes] | None = None
        self._stderr: IO[bytes] | None = None

    # -- addresses ---------------------------------------------------------------------------------------

    @property
    def port(self) -> int:
        """The bound port; the server must be started."""
        if self._port is None:
            raise RuntimeError("the OpenAITestServer is not running; use `with` or call start()")
        return self._port

    @property
    def url(self) -> str:
        """The server's root, e.g. `http://127.0.0.1:54321`."""
        return f"http://{self.host}:{self.port}"

    @property
    def base_url(self) -> str:
        """The OpenAI base URL, `http://127.0.0.1:PORT/v1`: litellm's `api_base`, openai's `base_url`."""
        return f"{self.url}/v1"

    @property
    def running(self) -> bool:
        """Whether the server was started and not yet stopped."""
        return self._port is not None

    def __repr__(self) -> str:
        where = self.base_url if self.running else "not running"
        mode = "process" if self.spawn else "thread"
        return f"OpenAITestServer({where}, {mode})"

    # -- lifecycle ---------------------------------------------------------------------------------------

    def start(self) -> OpenAITestServer:
        """Start serving and return self once the port accepts connections."""
        if self.running:
            raise RuntimeError("this OpenAITestServer is already running")
        if self.spawn:
            self._start_process()
        else:
            self._start_thread()
        return self

    def stop(self) -> None:
        """Stop serving; requests still hanging are cut off. Safe to call twice."""
        if self.spawn:
            self._stop_process()
        else:
            self._stop_thread()
        self._port = None

    def __enter__(self) -> OpenAITestServer:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    async def __aenter__(self) -> OpenAITestServer:
        # Starting and stopping block briefly (a thread join, a process start), so keep them off the loop.
        return await asyncio.to_thread(self.start)

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await asyncio.to_thread(self.stop)

    # -- stats -------------------------------------------------------------------------------------------

    @property
    def stats(self) -> ServerStats:
        """A snapshot of what the server has seen since it started or since `reset_stats()`."""
        if self._service is not None:
            return self._service.stats.snapshot()
        with self._local_open(STATS_PATH) as response:
            return ServerStats.model_validate_json(response.read())

    def reset_stats(self) -> None:
        """Zero the counters and forget the recorded requests."""
        if self._service is not None:
            self._service.stats.reset()
            return
        with self._local_open(RESET_PATH, method="POST"):
            pass

    def _local_open(self, path: str, method: str = "GET") -> Any:
        # No proxy: the server is on loopback whatever the environment says.
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        return opener.open(urllib.request.Request(self.url + path, method=method), timeout=10)

    # -- thread mode -------------------------------------------------------------------------------------

    def _start_thread(self) -> None:
        service = ChatService(self.config)
        ready: queue.Queue[int | BaseException] = queue.Queue()
        loop = asyncio.new_event_loop()
        thread = threading.Thread(
            target=self._run_loop, args=(loop, service, ready), name="OpenAITestServer", daemon=True
        )
        thread.start()
        outcome = ready.get(timeout=self._startup_timeout)
        if isinstance(outcome, BaseException):
            thread.join()
            raise RuntimeError(f"the OpenAITestServer could not start: {outcome!r}") from outcome
        self._service, self._loop, self._thread, self._port = service, loop, thread, outcome

    def _run_loop(
        self, loop: asyncio.AbstractEventLoop, service: ChatService, ready: queue.Queue[int | BaseException]
    ) -> None:
        asyncio.set_event_loop(loop)
        try:
            try:
                runner, port = loop.run_until_complete(start_site(service, self.host, self._requested_port))
            except BaseException as exc:
                ready.put(exc)
                return
            ready.put(port)
            loop.run_forever()
            loop.run_until_complete(runner.cleanup())
            # Whatever still waits (a hanging fault) is cut off, as asyncio.run would.
            pending = asyncio.all_tasks(loop)
            for task in pending:
                task.cancel()
            loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
            loop.run_until_complete(loop.shutdown_asyncgens())
        finally:
            loop.close()

    def _stop_thread(self) -> None:
        loop, thread = self._loop, self._thread
        if loop is None or thread is None:
            return
        loop.call_soon_threadsafe(loop.stop)
        thread.join(_STOP_TIMEOUT)
        self._service = self._loop = self._thread = None

    # -- process mode ------------------------------------------------------------------------------------

    def _start_process(self) -> None:
        responder = self.config.responder
        if "__main__" in (getattr(responder, "__module__", None), type(responder).__module__):
            raise TypeError(
                "spawn=True cannot use a responder defined in __main__ (the server process has another "
                "__main__): move it to an importable module"
            )
        try:
            config = pickle.dumps(self.config)
        except Exception as exc:
            raise TypeError(
                "spawn=True needs a picklable responder: use the shipped ones (fixed, json_score, ...) or a "
                "class or function defined at module level of an importable module, not a lambda or closure"
            ) from exc
        env = dict(os.environ)
        keep_litellm_offline(env)
        # The child must import this very judgewidgets, however this process found it.
        package_root = str(Path(__file__).resolve().parents[2])
        env["PYTHONPATH"] = os.pathsep.join(p for p in (package_root, env.get("PYTHONPATH")) if p)
        command = [sys.executable, "-m", "judgewidgets.testing", "--from-parent", "--host", self.host]
        command += ["--port", str(self._requested_port)]
        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115 -- kept open while the child runs
        process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._stderr, env=env)
        self._process = process
        assert process.stdin is not None and process.stdout is not None
        # sys.path first, so the child can import the module that defines a custom responder.
        with contextlib.suppress(OSError):  # a child that died at once is reported below, with its stderr
            process.stdin.write(pickle.dumps((list(sys.path), config)))
            process.stdin.flush()
        lines: queue.Queue[bytes] = queue.Queue()
        stdout = process.stdout
        assert stdout is not None  # started with stdout=PIPE
        threading.Thread(target=lambda: lines.put(stdout.readline()), daemon=True).start()
        try:
            line = lines.get(timeout=self._startup_timeout)
        except queue.Empty:
            line = b""
        if not line.startswith(b"http://"):
            message = self._read_stderr()
            self._stop_process()
            raise RuntimeError(f"the OpenAITestServer process did not start:\n{message}")
        self._port = int(line.strip().rsplit(b":", 1)[1].split(b"/")[0])

    def _read_stderr(self) -> str:
        if self._stderr is None:
            return ""
        self._stderr.seek(0)
        return self._stderr.read().decode(errors="replace")

    def _stop_process(self) -> None:
        process = self._process
        if process is None:
            return
        # Closing stdin is the child's signal to stop; it also stops if this process dies.
        if process.stdin is not None:
            with contextlib.suppress(OSError):
                process.stdin.close()
        try:
            process.wait(_STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        if process.stdout is not None:  # only once the child is gone: a reader may still wait on it
            process.stdout.close()
        if self._stderr is not None:
            self._stderr.close()
        self._process = self._stderr = None
