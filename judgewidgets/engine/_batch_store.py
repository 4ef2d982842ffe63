"""Where batches are written down: an SQLite file beside the call cache's, so a restarted process resumes them.

A batch is recorded, with the custom_id of every request it carries, before its file is uploaded; its file id
and batch id the moment the provider returns them; its status and counts whenever it is polled; and `collected`
once its answers are in the call cache. A run that meets a request already in an uncollected batch waits for
that batch instead of sending the request again. Each run's recipe (the judge and the arguments it was called
with, pickled without API keys) lets `resume_batch` rebuild the run's result. The file holds no API keys.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._paths import user_cache_dir

__all__ = ["BATCHES_FILE", "BatchRecord", "BatchStore", "default_batch_store"]

BATCHES_FILE = "batches.sqlite"
_TIMEOUT_S = 60.0
_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS runs (run_id TEXT PRIMARY KEY, created_at REAL, recipe BLOB)",
    "CREATE TABLE IF NOT EXISTS batches (local_id TEXT PRIMARY KEY, run_id TEXT, provider TEXT, base_url TEXT, "
    "model TEXT, key_env TEXT, cache_path TEXT, file_id TEXT, batch_id TEXT, status TEXT, n_requests INTEGER, "
    "n_completed INTEGER DEFAULT 0, n_failed INTEGER DEFAULT 0, created_at REAL, collected INTEGER DEFAULT 0)",
    "CREATE TABLE IF NOT EXISTS requests (custom_id TEXT, local_id TEXT, PRIMARY KEY (custom_id, local_id))",
    "CREATE INDEX IF NOT EXISTS requests_by_custom_id ON requests (custom_id)",
)
_COLUMNS = (
    "local_id, run_id, provider, base_url, model, key_env, cache_path, file_id, batch_id, status, n_requests, "
    "n_completed, n_failed, created_at, collected"
)


@dataclass(frozen=True)
class BatchRecord:
    """One batch as written down: where it went, what the provider called it, how far it got."""

    local_id: str
    run_id: str
    provider: str  # "openai" | "anthropic": the protocol
    base_url: str
    model: str
    key_env: str | None
    cache_path: str | None
    file_id: str | None
    batch_id: str | None
    status: str
    n_requests: int
    n_completed: int
    n_failed: int
    created_at: float
    collected: bool


def default_batch_store() -> BatchStore:
    """The store beside the user's call cache (JUDGEWIDGETS_CACHE_DIR)."""
    return BatchStore(user_cache_dir() / BATCHES_FILE)


class BatchStore:
    """The batches file: one connection per store object, WAL, every write its own short transaction."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None

    def __repr__(self) -> str:
        return f"BatchStore({str(self.path)!r})"

    def _connection(self) -> sqlite3.Connection:
        if self._conn is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(self.path, check_same_thread=False, timeout=_TIMEOUT_S, isolation_level=None)
            conn.execute("PRAGMA journal_mode=WAL")
            for statement in _SCHEMA:
                conn.execute(statement)
            self._conn = conn
        return self._conn

    def _write(self, sql: str, rows: Iterable[tuple[Any, ...]]) -> None:
        with self._lock:
            conn = self._connection()
            conn.execute("BEGIN IMMEDIATE")
            try:
                conn.executemany(sql, rows)
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise

    def _read(self, sql: str, args: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        with self._lock:
            return self._connection().execute(sql, args).fetchall()

    # -- runs ---------------------------------------------------------------------------------------------------

    def add_run(self, run_id: str, recipe: bytes | None) -> None:
        self._write("INSERT OR REPLACE INTO runs VALUES (?, ?, ?)", [(run_id, time.time(), recipe)])

    def recipe(self, run_id: str) -> bytes | None:
        rows = self._read("SELECT recipe FROM runs WHERE run_id = ?", (run_id,))
        return rows[0][0] if rows else None

    # -- batches ------------------------------------------------------------------------------------------------

    def add_batch(self, record: BatchRecord, custom_ids: list[str]) -> None:
        """Write a batch and the custom_ids it carries down, in one transaction (before anything is uploaded)."""
        with self._lock:
            conn = self._connection()
            conn.execute("BEGIN IMMEDIATE")
            try:
                conn.execute(f"INSERT INTO batches ({_COLUMNS}) VALUES ({', '.join('?' * 15)})", _row(record))
                conn.executemany(
                    "INSERT OR IGNORE INTO requests VALUES (?, ?)", [(c, record.local_id) for c in custom_ids]
                )
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise

    def update(self, local_id: str, **fields: Any) -> None:
        """Change some fields of a batch (file_id, batch_id, status, n_completed, n_failed, collected)."""
        names = ", ".join(f"{name} = ?" for name in fields)
        self._write(f"UPDATE batches SET {names} WHERE local_id = ?", [(*fields.values(), local_id)])

    def get(self, local_id: str) -> BatchRecord | None:
        rows = self._read(f"SELECT {_COLUMNS} FROM batches WHERE local_id = ?", (local_id,))
        return _record(rows[0]) if rows else None

    def find(self, batch_id: str) -> BatchRecord | None:
        """The batch the provider calls `batch_id` (or whose local id it is)."""
        rows = self._read(f"SELECT {_COLUMNS} FROM batches WHERE batch_id = ? OR local_id = ?", (batch_id, batch_id))
        return _record(rows[0]) if rows else None

    def all(self) -> list[BatchRecord]:
        return [_record(r) for r in self._read(f"SELECT {_COLUMNS} FROM batches ORDER BY created_at")]

    def of_run(self, run_id: str) -> list[BatchRecord]:
        rows = self._read(f"SELECT {_COLUMNS} FROM batches WHERE run_id = ? ORDER BY created_at", (run_id,))
        return [_record(r) for r in rows]

    def custom_ids(self, local_id: str) -> list[str]:
        return [r[0] for r in self._read("SELECT custom_id FROM requests WHERE local_id = ?", (local_id,))]

    def pending(self, custom_ids: Iterable[str]) -> dict[str, str]:
        """custom_id → local id of the uncollected batch that carries it, for those of `custom_ids` one does."""
        found: dict[str, str] = {}
        ids = list(custom_ids)
        for start in range(0, len(ids), 500):
            chunk = ids[start : start + 500]
            rows = self._read(
                "SELECT r.custom_id, r.local_id FROM requests r JOIN batches b ON b.local_id = r.local_id "
                f"WHERE b.collected = 0 AND r.custom_id IN ({', '.join('?' * len(chunk))}) ORDER BY b.created_at",
                tuple(chunk),
            )
            for custom_id, local_id in rows:
                found.setdefault(custom_id, local_id)
        return found

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def __getstate__(self) -> dict[str, Any]:
        return {"path": self.path}

    def __setstate__(self, state: dict[str, Any]) -> None:
        BatchStore.__init__(self, state["path"])


def _row(record: BatchRecord) -> tuple[Any, ...]:
    return (
        record.local_id,
        record.run_id,
        record.provider,
        record.base_url,
        record.model,
        record.key_env,
        record.cache_path,
        record.file_id,
        record.batch_id,
        record.status,
        record.n_requests,
        record.n_completed,
        record.n_failed,
        record.created_at,
        int(record.collected),
    )


def _record(row: tuple[Any, ...]) -> BatchRecord:
    values = list(row)
    values[-1] = bool(values[-1])
    return BatchRecord(*values)
