"""One client per event loop: opened lazily in the running loop, closed when that loop shuts down.

Connections belong to the loop that opened them, and a judge object is used from several loops (the sync
facade's private loop, a notebook's loop, each `asyncio.run`). `PerLoop` keeps one client per loop, and closes
it while its loop still runs: the first step of an async generator registers it with the loop's asyncgen hooks,
so the loop's `shutdown_asyncgens()` (which `asyncio.run` and `uvloop.run` call) runs its `finally`. A client
whose loop is gone is closed without a loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import weakref
from collections.abc import AsyncGenerator, Callable
from typing import Any, Generic, Protocol, TypeVar

__all__ = ["LoopClient", "PerLoop"]


class LoopClient(Protocol):
    """What `PerLoop` needs of a client."""

    @property
    def closed(self) -> bool: ...

    async def aclose(self) -> None: ...

    def close_now(self) -> None: ...


C = TypeVar("C", bound=LoopClient)
# Each loop's client (one PerLoop's clients are all of its C) and the generator that closes it at loop shutdown.
_Entries = dict[asyncio.AbstractEventLoop, tuple[Any, AsyncGenerator[None, None]]]


class PerLoop(Generic[C]):
    """The clients `factory` opens, one per event loop."""

    def __init__(self, factory: Callable[[], C]) -> None:
        self._factory = factory
        self._lock = threading.Lock()
        self._entries: _Entries = {}
        self._current: tuple[asyncio.AbstractEventLoop | None, C | None] = (None, None)  # one read is atomic
        self._closing: set[asyncio.Task[None]] = set()  # close tasks in flight (loops keep weak references)
        weakref.finalize(self, _close_all, self._entries, self._closing)

    def __len__(self) -> int:
        return len(self._entries)

    def clients(self) -> list[C]:
        """The open clients, one per loop."""
        return [client for client, _ in self._entries.values()]

    def current(self) -> C | None:
        """This loop's client when it is open (the cheap check every call makes), else None."""
        loop, client = self._current  # one read: another thread's loop may swap it
        if loop is asyncio.get_running_loop() and client is not None and not client.closed:
            return client
        return None

    async def get(self) -> C:
        """This loop's client, opened on first use."""
        client = self.current()
        if client is not None:
            return client
        loop = asyncio.get_running_loop()
        with self._lock:
            for other in [other for other in self._entries if other.is_closed()]:
                _close_quietly(self._entries.pop(other)[0])
            entry = self._entries.get(loop)
            fresh = entry is None or entry[0].closed
            if fresh:
                opened = self._factory()
                entry = self._entries[loop] = (opened, _close_at_shutdown(opened, self._entries, loop))
        assert entry is not None
        if fresh:
            await entry[1].__anext__()
        client = entry[0]
        self._current = (loop, client)
        return client

    async def aclose(self) -> None:
        """Close this loop's client (a later `get()` in this loop opens a new one)."""
        loop = asyncio.get_running_loop()
        with self._lock:
            entry = self._entries.pop(loop, None)
        if self._current[0] is loop:
            self._current = (None, None)
        if entry is not None:
            await entry[0].aclose()
            await entry[1].aclose()


async def _close_at_shutdown(
    client: LoopClient, entries: _Entries, loop: asyncio.AbstractEventLoop
) -> AsyncGenerator[None, None]:
    try:
        yield
    finally:
        if entries.get(loop, (None,))[0] is client:
            entries.pop(loop, None)
        if not client.closed:
            await client.aclose()


def _close_quietly(client: LoopClient) -> None:
    with contextlib.suppress(Exception):
        if not client.closed:
            client.close_now()


def _close_all(entries: _Entries, closing: set[asyncio.Task[None]]) -> None:
    """When the owner goes away: close its clients, in their own loops when those still run."""
    for loop, (client, _) in list(entries.items()):
        if loop.is_closed() or not loop.is_running():
            _close_quietly(client)
        else:
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(_schedule_close, client, closing)
    entries.clear()


def _schedule_close(client: LoopClient, closing: set[asyncio.Task[None]]) -> None:
    if not client.closed:
        task = asyncio.ensure_future(client.aclose())
        closing.add(task)
        task.add_done_callback(closing.discard)
