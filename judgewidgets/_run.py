"""One run scope for every batch entry point: its call session, its progress bar, and closing both."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass

from ._progress import Progress, make_progress
from .engine import CallSession


@dataclass(frozen=True)
class Run:
    """What a batch's calls share: the session (concurrency limits, transports, in-flight answers, caches) and
    the progress bar told about every finished call."""

    session: CallSession
    progress: Progress


@asynccontextmanager
async def run_scope(
    progress: bool | Progress = False,
    total: int = 0,
    description: str = "",
    *,
    session: CallSession | None = None,
) -> AsyncIterator[Run]:
    """A run of `total` calls: a new session (or the caller's `session`, for a run inside another run) and a
    progress bar (`True` a tqdm bar, `False` none, or your own Progress). On the way out, however the run
    ends (an error, a kernel interrupt), the bar is closed and every cache the run wrote to is flushed."""
    run = Run(session if session is not None else CallSession(), make_progress(progress, total, description))
    try:
        yield run
    finally:
        run.progress.close()
        run.session.flush()
