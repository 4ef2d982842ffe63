"""A persistent cache of model calls, keyed on the full request, so repeated or resumed runs call nothing twice."""

from __future__ import annotations

import sqlite3
import threading
import time
from pathlib import Path

from .._paths import user_cache_dir
from ._request import ChatRequest, Completion

_FLUSH_EVERY_S = 0.5
_FLUSH_EVERY_ROWS = 256


class CallCache:
    """SQLite file of completions keyed by `ChatRequest.cache_key()`.

    New entries are buffered and written in one short transaction at least every half second and when a run
    ends, so an interrupted run keeps what it finished and several caches (threads, processes, Ray workers)
    can share one file (SQLite WAL). The file holds no API keys.
    """

    def __init__(self, path: str | Path | None = None) -> None:
        self.path = Path(path) if path is not None else user_cache_dir() / "calls.sqlite"
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None
        self._pending: dict[str, str] = {}
        self._last_flush = time.monotonic()

    def __repr__(self) -> str:
        return f"CallCache({str(self.path)!r})"

    def _connection(self) -> sqlite3.Connection:
        if self._conn is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(self.path, check_same_thread=False, timeout=60, isolation_level=None)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute("CREATE TABLE IF NOT EXISTS calls (key TEXT PRIMARY KEY, completion TEXT, created REAL)")
            self._conn = conn
        return self._conn

    def get(self, request: ChatRequest) -> Completion | None:
        key = request.cache_key()
        with self._lock:
            blob = self._pending.get(key)
            if blob is None:
                row = self._connection().execute("SELECT completion FROM calls WHERE key = ?", (key,)).fetchone()
                blob = row[0] if row else None
        return Completion.from_cached_json(blob) if blob is not None else None

    def put(self, request: ChatRequest, completion: Completion) -> None:
        with self._lock:
            self._pending[request.cache_key()] = completion.to_json()
            due = len(self._pending) >= _FLUSH_EVERY_ROWS or time.monotonic() - self._last_flush >= _FLUSH_EVERY_S
            if due:
                self._write_pending()

    def flush(self) -> None:
        """Write every buffered entry to disk."""
        with self._lock:
            self._write_pending()

    def _write_pending(self) -> None:
        self._last_flush = time.monotonic()
        if not self._pending:
            return
        now = time.time()
        rows = [(key, blob, now) for key, blob in self._pending.items()]
        conn = self._connection()
        conn.execute("BEGIN IMMEDIATE")
        try:
            conn.executemany("INSERT OR REPLACE INTO calls (key, completion, created) VALUES (?, ?, ?)", rows)
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        self._pending.clear()

    def __len__(self) -> int:
        self.flush()
        with self._lock:
            return self._connection().execute("SELECT COUNT(*) FROM calls").fetchone()[0]

    def clear(self) -> None:
        """Forget every cached call."""
        with self._lock:
            self._pending.clear()
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
        self.__init__(state["path"])  # type: ignore[misc, arg-type]
