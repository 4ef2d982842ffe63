"""Batch judging from the user's side: `batch=True` on run methods, and the batches a cache knows about.

`@batchable` wraps a run method's async twin: when it is called with `batch=True` it writes down (pickled,
without API keys) how it was called, so `resume_batch` can make the same call again after a restart; the
batches themselves are followed by the engine (`engine/_batch.py`).
"""

from __future__ import annotations

import functools
import pickle
from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, TypeVar, cast

import pandas as pd

from ._errors import ConfigurationError
from ._runner import run_sync
from .engine._batch import Batching, BatchRetry, recipe_bytes
from .engine._batch_api import ANTHROPIC_VERSION, BatchAPI
from .engine._batch_store import BatchRecord, BatchStore, default_batch_store

__all__ = [
    "BatchRetry",
    "Batching",
    "abatch_recipe",
    "aresume_batch",
    "batchable",
    "batches",
    "cancel_batch",
    "resume_batch",
]

F = TypeVar("F", bound=Callable[..., Awaitable[Any]])

# How the outermost batched run method of this task was called (pickled; None: it holds a key or does not
# pickle). Set only while that method runs.
_RECIPE: ContextVar[tuple[bytes | None] | None] = ContextVar("judgewidgets_batch_recipe", default=None)


def batchable(method: F) -> F:
    """Mark an async run method whose calls `batch=True` can send through the batch APIs: the call is written
    down for `resume_batch` (see the module)."""

    @functools.wraps(method)
    async def run(self: Any, *args: Any, **kwargs: Any) -> Any:
        if not kwargs.get("batch") or _RECIPE.get() is not None:
            return await method(self, *args, **kwargs)
        token = _RECIPE.set((recipe_bytes(self, method.__name__, args, kwargs),))
        try:
            return await method(self, *args, **kwargs)
        finally:
            _RECIPE.reset(token)

    return cast(F, run)


def abatch_recipe() -> bytes | None:
    """The recipe of the batched run method now running (None outside one, or when it could not be written)."""
    recipe = _RECIPE.get()
    return recipe[0] if recipe is not None else None


def _store(path: str | Path | None) -> BatchStore:
    if path is None:
        return default_batch_store()
    path = Path(path)
    return BatchStore(path / "batches.sqlite" if path.is_dir() else path)


def _record(batch_id: str, path: str | Path | None) -> tuple[BatchStore, BatchRecord]:
    store = _store(path)
    record = store.find(batch_id)
    if record is None:
        raise ConfigurationError(f"no batch {batch_id!r} in {store.path} (jw.batches() lists the batches it knows)")
    return store, record


def batches(path: str | Path | None = None) -> pd.DataFrame:
    """The batches written down in the batches file beside the call cache (`path`: another cache directory or
    batches file): batch_id, provider, model, status, n_requests, n_completed, n_failed, created_at, run_id, path."""
    store = _store(path)
    rows = [
        {
            "batch_id": r.batch_id,
            "provider": r.provider,
            "model": r.model,
            "status": r.status,
            "n_requests": r.n_requests,
            "n_completed": r.n_completed,
            "n_failed": r.n_failed,
            "created_at": datetime.fromtimestamp(r.created_at, timezone.utc),
            "run_id": r.run_id,
            "collected": r.collected,
            "path": str(store.path),
        }
        for r in store.all()
    ]
    store.close()
    columns = ["batch_id", "provider", "model", "status", "n_requests", "n_completed", "n_failed", "created_at"]
    return pd.DataFrame(rows, columns=[*columns, "run_id", "collected", "path"])


async def aresume_batch(batch_id: str, path: str | Path | None = None) -> Any:
    """Async twin of `resume_batch`."""
    store, record = _record(batch_id, path)
    recipe = store.recipe(record.run_id)
    store.close()
    if recipe is None:
        raise ConfigurationError(
            f"batch {batch_id!r} was submitted by a call judgewidgets could not write down (its arguments held an "
            "API key, which is never written to disk, or did not pickle): run the same cell again, with "
            "batch=True, to pick the batch up"
        )
    owner, method, args, kwargs = pickle.loads(recipe)
    return await getattr(owner, method)(*args, **kwargs)


def resume_batch(batch_id: str, path: str | Path | None = None) -> Any:
    """The result of the run that submitted `batch_id` (any of its batches), made again: its answered requests
    come from the call cache, those still in a batch from that batch once it ends, nothing is paid twice."""
    return run_sync(aresume_batch(batch_id, path))


def cancel_batch(batch_id: str, path: str | Path | None = None, *, api_key: str | None = None) -> str:
    """Cancel a batch at the provider (its answered requests stay billed and readable); the status it reports.
    The key is `api_key`, else the provider's environment variable."""
    import os

    store, record = _record(batch_id, path)
    if record.batch_id is None:
        raise ConfigurationError(f"batch {batch_id!r} was never created at the provider: nothing to cancel")
    key = api_key or (os.environ.get(record.key_env) if record.key_env else None)
    if record.provider == "anthropic":
        headers = {"anthropic-version": ANTHROPIC_VERSION, **({"x-api-key": key} if key else {})}
    else:
        headers = {"Authorization": f"Bearer {key}"} if key else {}
    state = run_sync(BatchAPI(record.provider, record.base_url, headers).cancel(record.batch_id))  # type: ignore[arg-type]
    store.update(record.local_id, status=state.status)
    store.close()
    return state.status
