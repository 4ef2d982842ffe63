"""Shared fixtures. Every test runs with a private cache folder, and no test may reach a real provider:
connections to anything but loopback fail loudly.

The user's own call cache (~/.cache/judgewidgets/calls.sqlite) and IPython history are never touched: before any
test module is imported, `$JUDGEWIDGETS_CACHE_DIR` and `$IPYTHONDIR` point into a folder of this session, so
module- and session-scoped fixtures and every subprocess (the browser tests' Jupyter server and its kernels, the
notebook tests' kernels) inherit them; each test then gets a folder of its own. In this process, opening an
SQLite file in the user's cache folder fails loudly. The assembled model weights (models/, 1.1 GB) are shared.
"""

from __future__ import annotations

import atexit
import logging
import os
import shutil
import socket
import sqlite3
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
# The network guard below patches Python's socket module, which uvloop's own sockets bypass: so the sync facade's
# private loop stays on asyncio's loop in tests. tests/test_runner.py runs it on uvloop against loopback, and the
# fast path's HTTP client is tested on both loops.
os.environ.setdefault("JUDGEWIDGETS_EVENT_LOOP", "asyncio")
# The assembled embedded model (1.1 GB) stays in the real user cache while call caches move per test.
from judgewidgets._paths import CACHE_DIR_ENV, MODEL_DIR_ENV, model_dir, user_cache_dir


class _StrandedLitellmWorker(logging.Filter):
    """litellm starts a logging worker task on the loop of the first async call that logs, moves it to each new
    loop (forgetting the old task) and never stops the last one; once such a loop is closed or abandoned, the task
    can neither finish nor be cancelled, and asyncio reports it when the interpreter destroys it at exit ("Task
    was destroyed but it is pending!"). Nothing is lost (its queue is drained per call): drop that one report,
    and only for litellm's worker."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        return not (
            message.startswith("Task was destroyed but it is pending!") and "LoggingWorker._worker_loop" in message
        )


logging.getLogger("asyncio").addFilter(_StrandedLitellmWorker())


os.environ.setdefault(MODEL_DIR_ENV, str(model_dir()))
USER_CACHE_DIR = user_cache_dir().resolve()  # the user's, before it is moved: what the tests must never touch
_SESSION_DIR = Path(tempfile.mkdtemp(prefix="judgewidgets-tests-"))
atexit.register(shutil.rmtree, _SESSION_DIR, ignore_errors=True)
os.environ[CACHE_DIR_ENV] = str(_SESSION_DIR / "cache")  # set, not defaulted: a user's own setting is theirs
os.environ["IPYTHONDIR"] = str(_SESSION_DIR / "ipython")

_LOOPBACK_PREFIXES = ("127.", "::1", "localhost", "0.0.0.0")


def _is_loopback(address: object) -> bool:
    if isinstance(address, tuple) and address:
        host = str(address[0])
        return host.startswith(_LOOPBACK_PREFIXES)
    return isinstance(address, (str, bytes))  # unix sockets


@pytest.fixture(autouse=True, scope="session")
def _no_network() -> Iterator[None]:
    """Refuse every non-loopback connection: a test that would call a real provider fails instead."""
    real_connect = socket.socket.connect
    real_connect_ex = socket.socket.connect_ex

    def guarded_connect(self: socket.socket, address: object) -> object:
        if not _is_loopback(address):
            raise ConnectionRefusedError(f"tests may not reach the network (tried {address!r})")
        return real_connect(self, address)  # type: ignore[arg-type]

    def guarded_connect_ex(self: socket.socket, address: object) -> int:
        if not _is_loopback(address):
            raise ConnectionRefusedError(f"tests may not reach the network (tried {address!r})")
        return real_connect_ex(self, address)  # type: ignore[arg-type]

    socket.socket.connect = guarded_connect  # type: ignore[method-assign]
    socket.socket.connect_ex = guarded_connect_ex  # type: ignore[method-assign]
    try:
        yield
    finally:
        socket.socket.connect = real_connect  # type: ignore[method-assign]
        socket.socket.connect_ex = real_connect_ex  # type: ignore[method-assign]


@pytest.fixture(autouse=True, scope="session")
def _user_cache_untouchable() -> Iterator[None]:
    """Opening an SQLite file in the user's cache folder raises: a call cache that escaped fails its test."""
    real_connect = sqlite3.connect

    def guarded_connect(database: Any, *args: Any, **kwargs: Any) -> sqlite3.Connection:
        if isinstance(database, (str, os.PathLike)) and str(database) != ":memory:":
            path = Path(os.fsdecode(database)).resolve()
            if path.is_relative_to(USER_CACHE_DIR):
                raise PermissionError(f"tests may not touch the user's cache (tried {path})")
        return real_connect(database, *args, **kwargs)

    sqlite3.connect = guarded_connect  # type: ignore[assignment]
    try:
        yield
    finally:
        sqlite3.connect = real_connect


@pytest.fixture
def user_cache_dir_of_the_user() -> Path:
    """The cache folder judgewidgets would use outside the tests."""
    return USER_CACHE_DIR


@pytest.fixture(autouse=True)
def _private_cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Each test gets its own cache folder, so cached calls never leak between tests."""
    folder = tmp_path / "cache"
    monkeypatch.setenv("JUDGEWIDGETS_CACHE_DIR", str(folder))
    return folder


@pytest.fixture(autouse=True)
def _chart_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A chart shown while an IPython shell but no kernel runs (terminal IPython, to the charts) saves itself as a
    file: into the test's own folder, never the system's temporary folder."""
    monkeypatch.setattr("judgewidgets._charts.chart_folder", lambda: tmp_path / "charts")


@pytest.fixture(autouse=True)
def _altair_renderer() -> Iterator[None]:
    """`use_offline_charts()` and `use_file_charts()` switch altair's process-wide renderer: every test gets back
    the renderer it started with."""
    import altair as alt

    renderer = alt.renderers.active
    yield
    if alt.renderers.active != renderer:
        alt.renderers.enable(renderer)


@pytest.fixture(autouse=True)
def _fresh_rate_limits() -> Iterator[None]:
    """What endpoints taught the process's pacers (limits, pauses) stays in the test that taught it: the scripted
    judges of many tests share model names such as "openai/m"."""
    from judgewidgets.engine import rate_limits

    rate_limits.reset()
    yield
    rate_limits.reset()
