"""One run scope for every batch entry point: its call session, its progress bar, and closing both."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass

from ._constants import PACING_STATUS_INTERVAL_S
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
    progress bar (`True` a tqdm bar, `False` none, or your own Progress). A bar that can show a status is told
    when a rate limit holds the run back. On the way out, however the run ends (an error, a kernel interrupt),
    the bar is closed and every cache the run wrote to is flushed."""
    run = Run(session if session is not None else CallSession(), make_progress(progress, total, description))
    status = getattr(run.progress, "status", None)
    watcher = asyncio.get_running_loop().create_task(_report_pacing(run.session, status)) if callable(status) else None
    try:
        yield run
    finally:
        if watcher is not None:
            watcher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await watcher
        run.progress.close()
        run.session.flush()


async def _report_pacing(session: CallSession, status: Callable[[str | None], None]) -> None:
    """Tell the bar, whenever it changes, how the run's endpoints hold it back."""
    shown: str | None = None
    while True:
        await asyncio.sleep(PACING_STATUS_INTERVAL_S)
        text = session.holding_back()
        if text != shown:
            status(text)
            shown = text
