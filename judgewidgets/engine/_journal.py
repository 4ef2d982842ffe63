"""An append-only journal of answered calls, so the cache loses none when its process dies.

The cache writes answers to SQLite in batches (a transaction per answer would cost ~100 µs of a call's time);
between two batches, each answer is also appended to this process's journal with one `write()` (~6 µs), so it
is in the operating system as soon as the engine has it. A process killed by SIGKILL, the OOM killer or a
crash in a native library leaves its journal behind; the next cache that opens the same file (this process or
another) copies the dead journal's answers into SQLite and deletes it. A live journal is told from a dead one
by an exclusive `flock`, which the kernel drops when its owner dies. Nothing is `fsync`ed: the answers survive
the death of the process, not a power loss or a kernel crash (SQLite's own `synchronous=NORMAL` WAL commits
are durable against the same and may lose the last transactions to a power loss).
"""

from __future__ import annotations

import contextlib
import os
import secrets
import weakref
from collections.abc import Callable
from pathlib import Path

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: no flock, so the cache commits every answer instead
    fcntl = None  # type: ignore[assignment]  # typeshed types `fcntl` as a module on every platform

__all__ = ["JOURNALS_AVAILABLE", "Journal", "journal_dir", "recover"]

JOURNALS_AVAILABLE = fcntl is not None
_SUFFIX = ".log"


def journal_dir(database: Path) -> Path:
    """The folder that holds the journals of the caches on `database`."""
    return database.with_name(database.name + ".journals")


def _try_lock(fd: int) -> bool:
    """Take the exclusive lock on `fd` without waiting; False when another open file holds it."""
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


class Journal:
    """This process's journal of one cache: answers appended since the cache's last committed batch."""

    def __init__(self, database: Path) -> None:
        folder = journal_dir(database)
        folder.mkdir(parents=True, exist_ok=True)
        self.pid = os.getpid()
        name = f"{self.pid}-{secrets.token_hex(6)}"
        # Made and locked under a name recovery does not read, then renamed: a recovering cache must never see
        # it unlocked (it would take it for a dead process's journal and delete it).
        unlocked = folder / f"{name}.new"
        self._fd = os.open(unlocked, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_EXCL, 0o600)
        if not _try_lock(self._fd):  # pragma: no cover - a fresh, uniquely named file nobody else opens
            raise OSError(f"cannot lock the call journal {unlocked}")
        self.path = folder / f"{name}{_SUFFIX}"
        os.rename(unlocked, self.path)
        # Dropped without close(): release it and leave its answers for the next cache to recover.
        self._finalizer = weakref.finalize(self, os.close, self._fd)

    def append(self, key: str, blob: str) -> None:
        """Hand one answer to the operating system (`blob` is JSON text: it holds no raw tab or newline)."""
        os.write(self._fd, f"{key}\t{blob}\n".encode())

    def clear(self) -> None:
        """Forget every answer: they are committed to SQLite."""
        os.ftruncate(self._fd, 0)

    def close(self) -> None:
        """Delete the (committed, so empty) journal and release it."""
        with contextlib.suppress(OSError):
            self.path.unlink()
        if self._finalizer.detach() is not None:
            with contextlib.suppress(OSError):
                os.close(self._fd)


def read_rows(data: bytes) -> list[tuple[str, str]]:
    """(key, blob) of every whole line: a last line without its newline was torn by the death of its writer."""
    rows = []
    for line in data.split(b"\n")[:-1]:
        key, tab, blob = line.partition(b"\t")
        if tab and len(key) == 64:
            rows.append((key.decode(), blob.decode()))
    return rows


def recover(database: Path, commit: Callable[[list[tuple[str, str]]], None]) -> int:
    """Hand the answers in each dead process's journal to `commit`, then delete that journal; how many.

    A journal is emptied and deleted only after `commit` returned, so a cache that dies while recovering
    leaves it for the next one.
    """
    folder = journal_dir(database)
    if not JOURNALS_AVAILABLE or not folder.is_dir():
        return 0
    recovered = 0
    for path in folder.glob(f"*{_SUFFIX}"):
        try:
            fd = os.open(path, os.O_RDWR)
        except OSError:  # deleted meanwhile by another recovering cache
            continue
        try:
            if not _try_lock(fd):  # its owner is alive
                continue
            with open(fd, "rb", closefd=False) as file:
                rows = read_rows(file.read())
            if rows:
                commit(rows)
                recovered += len(rows)
            os.ftruncate(fd, 0)  # a recovering cache that opened it meanwhile finds it empty
            with contextlib.suppress(OSError):
                path.unlink()
        finally:
            os.close(fd)
    return recovered
