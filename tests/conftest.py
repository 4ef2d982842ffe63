"""Shared fixtures. Every test runs with a private cache folder, and no test may reach a real provider:
connections to anything but loopback fail loudly."""

from __future__ import annotations

import os
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
# The network guard below patches Python's socket module, which uvloop's own sockets bypass: so the sync facade's
# private loop stays on asyncio's loop in tests. tests/test_runner.py runs it on uvloop against loopback, and the
# fast path's HTTP client is tested on both loops.
os.environ.setdefault("JUDGEWIDGETS_EVENT_LOOP", "asyncio")
# The assembled embedded model (1.1 GB) stays in the real user cache while call caches move per test.
from judgewidgets._paths import MODEL_DIR_ENV, model_dir

os.environ.setdefault(MODEL_DIR_ENV, str(model_dir()))

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


@pytest.fixture(autouse=True)
def _private_cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Each test gets its own cache folder, so cached calls never leak between tests."""
    folder = tmp_path / "cache"
    monkeypatch.setenv("JUDGEWIDGETS_CACHE_DIR", str(folder))
    return folder
