"""A persistent cache of model calls, keyed on the full request, so repeated or resumed runs call nothing twice."""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from pathlib import Path

from .._paths import user_cache_dir
from ._journal import JOURNALS_AVAILABLE, Journal, recover
from ._request import ChatRequest, Completion

_FLUSH_EVERY_S = 0.5
_FLUSH_EVERY_ROWS = 256
_OPEN_TIMEOUT_S = 60.0


def _open(path: Path) -> sqlite3.Connection:
    """Connect in WAL mode with the table made, waiting out other connections that are doing the same.

    Switching a new file to WAL takes an exclusive lock, and SQLite reports that contention as "database is locked"
    at once instead of waiting its busy timeout; so two caches opening a new file together retry here.
    """
    deadline = time.monotonic() + _OPEN_TIMEOUT_S
    pause = 0.005
    while True:
        conn = sqlite3.connect(path, check_same_thread=False, timeout=_OPEN_TIMEOUT_S, isolation_level=None)
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute("CREATE TABLE IF NOT EXISTS calls (key TEXT PRIMARY KEY, completion TEXT, created REAL)")
            return conn
        except sqlite3.OperationalError as error:
            conn.close()
            if "locked" not in str(error) or time.monotonic() >= deadline:
                raise
            time.sleep(pause)
            pause = min(pause * 2, 0.2)


class CallCache:
    """SQLite file of completions keyed by `ChatRequest.cache_key()`.

    Every answer is appended to this process's journal (`<file>.journals/`) the moment the engine has it, and
    written to SQLite in one short transaction per batch (at least every half second and when a run ends): so
    an answered call survives the death of the process that paid for it (SIGKILL, the OOM killer, a crash), as
    the next cache to open the file, or the next run, copies a dead process's journal into it. Nothing is
    fsync'ed, so a power loss may take the last answers. Several caches (threads, processes, Ray workers) can
    share one file (SQLite WAL). The file holds no API keys.
    """

    def __init__(self, path: str | Path | None = None) -> None:
        self.path = Path(path) if path is not None else user_cache_dir() / "calls.sqlite"
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None
        self._journal: Journal | None = None
        self._pid = os.getpid()
        self._pending: dict[str, str] = {}
        self._last_flush = time.monotonic()

    def __repr__(self) -> str:
        return f"CallCache({str(self.path)!r})"

    def _connection(self) -> sqlite3.Connection:
        if self._pid != os.getpid():
            # A forked child: the connection and the journal are its parent's; open its own (never close those).
            self._conn = self._journal = None
            self._pid = os.getpid()
        if self._conn is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._conn = _open(self.path)
            recover(self.path, self._insert)
        return self._conn

    def recover(self) -> int:
        """Copy into the file the answers that dead processes left in their journals; how many there were.

        Done when the cache is opened and when a run starts using it.
        """
        with self._lock:
            if self._conn is None or self._pid != os.getpid():
                self._connection()  # opening recovers
                return 0
            return recover(self.path, self._insert)

    def get(self, request: ChatRequest) -> Completion | None:
        key = request.cache_key()
        with self._lock:
            blob = self._pending.get(key)
            if blob is None:
                row = self._connection().execute("SELECT completion FROM calls WHERE key = ?", (key,)).fetchone()
                blob = row[0] if row else None
        return Completion.from_cached_json(blob) if blob is not None else None

    def put(self, request: ChatRequest, completion: Completion) -> None:
        """Keep an answer: in the operating system at once (the journal), in the file with the next batch."""
        key, blob = request.cache_key(), completion.to_json()
        with self._lock:
            self._pending[key] = blob
            if not JOURNALS_AVAILABLE:  # pragma: no cover - Windows: no journal, so commit each answer
                self._write_pending()
                return
            self._connection()
            if self._journal is None:
                self._journal = Journal(self.path)
            self._journal.append(key, blob)
            due = len(self._pending) >= _FLUSH_EVERY_ROWS or time.monotonic() - self._last_flush >= _FLUSH_EVERY_S
            if due:
                self._write_pending()

    def flush(self) -> None:
        """Write every buffered entry to the file (a run does when it ends), and delete the emptied journal."""
        with self._lock:
            self._write_pending()
            self._close_journal()

    def _close_journal(self) -> None:
        if self._journal is not None and self._pid == os.getpid():
            self._journal.close()
        self._journal = None

    def _write_pending(self) -> None:
        self._last_flush = time.monotonic()
        if not self._pending:
            return
        self._insert(list(self._pending.items()))
        self._pending.clear()
        if self._journal is not None:
            self._journal.clear()  # committed: a journal holds only what the file does not

    def _insert(self, rows: list[tuple[str, str]]) -> None:
        now = time.time()
        conn = self._connection()
        conn.execute("BEGIN IMMEDIATE")
        try:
            conn.executemany(
                "INSERT OR REPLACE INTO calls (key, completion, created) VALUES (?, ?, ?)",
                [(key, blob, now) for key, blob in rows],
            )
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise

    def __len__(self) -> int:
        self.flush()
        with self._lock:
            return self._connection().execute("SELECT COUNT(*) FROM calls").fetchone()[0]

    def clear(self) -> None:
        """Forget every cached call."""
        with self._lock:
            self._pending.clear()
            if self._journal is not None:
                self._journal.clear()
            self._connection().execute("DELETE FROM calls")

    def close(self) -> None:
        self.flush()
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def __getstate__(self) -> dict[str, object]:
        return {"path": self.path}

    def __setstate__(self, state: dict[str, object]) -> None:
        CallCache.__init__(self, str(state["path"]))
