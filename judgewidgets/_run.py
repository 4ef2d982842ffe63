"""One run scope for every batch entry point: its call session, its budget, its progress bar, and closing them."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Callable, Iterable
from contextlib import asynccontextmanager, nullcontext
from dataclasses import dataclass

from ._batching import abatch_recipe
from ._constants import PACING_STATUS_INTERVAL_S
from ._progress import Progress, make_progress
from ._provenance import describe, models_in
from ._runner import interruptible
from .engine import CallSession
from .engine._batch import Batcher, Batching, BatchRetry, batching_of, check_batchable
from .engine._budget import Budget, check_max_cost, check_prices

logger = logging.getLogger("judgewidgets")


@dataclass(frozen=True)
class Run:
    """What a batch's calls share: the session (concurrency limits, transports, in-flight answers, caches, the
    budget) and the progress bar told about every finished call."""

    session: CallSession
    progress: Progress


def run_budget(max_cost_usd: object, makers: Iterable[object] = ()) -> Budget | None:
    """The budget of a run (None without `max_cost_usd`), checked before any call: ConfigurationError for a value
    that is not a number of dollars >= 0, or when litellm has no price for a model of `makers` (the judges,
    panels, graders or generators the run calls; found in their settings)."""
    limit = check_max_cost(max_cost_usd)
    if limit is None:
        return None
    check_prices(model for maker in makers for model in models_in(describe(maker)))
    return Budget(limit)


@asynccontextmanager
async def run_scope(
    progress: bool | Progress = False,
    total: int = 0,
    description: str = "",
    *,
    session: CallSession | None = None,
    max_cost_usd: float | None = None,
    makers: Iterable[object] = (),
    batch: bool | Batching | None = False,
    batch_retry: BatchRetry | None = None,
) -> AsyncIterator[Run]:
    """A run of `total` calls: a new session (or the caller's `session`, for a run inside another run, which
    keeps that run's budget) and a progress bar (`True` a tqdm bar, `False` none, or your own Progress). A bar that
    can show a status is told when a rate limit holds the run back. `max_cost_usd` is the run's budget (see
    `engine._budget`), checked with the prices of `makers`' models before anything starts. On the way out, however
    the run ends (an error, a kernel interrupt), the bar is closed and every cache the run wrote to is flushed; a
    run the budget cut short says how many calls it did not run. `batch` (`True` or a `Batching`) sends the run's
    calls through the providers' batch APIs (`engine._batch`); a model without one is refused here, before any
    call; `batch_retry` says what becomes of requests a batch left unanswered ("live", the default, or "batch")."""
    own = session is None
    batching = batching_of(batch, batch_retry)
    makers = list(makers)
    if batching is not None:
        check_batchable(models_in(describe(makers)))
    if not own:
        check_max_cost(max_cost_usd)
    else:
        session = CallSession(budget=run_budget(max_cost_usd, makers))
    assert session is not None
    batcher = None
    if own and batching is not None:
        batcher = session.batcher = Batcher(batching, abatch_recipe())
    run = Run(session, make_progress(progress, total, description))
    status = getattr(run.progress, "status", None)
    watcher = asyncio.get_running_loop().create_task(_report_pacing(run.session, status)) if callable(status) else None
    interrupted = False
    try:
        async with interruptible() if own else nullcontext():
            try:
                yield run
            except (asyncio.CancelledError, KeyboardInterrupt):
                interrupted = True
                raise
    finally:
        if watcher is not None:
            watcher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await watcher
        if batcher is not None:
            await batcher.aclose(interrupted)
        run.progress.close()
        run.session.flush()
    budget = run.session.budget
    if own and budget is not None and budget.reached:
        logger.warning(budget.note())


async def _report_pacing(session: CallSession, status: Callable[[str | None], None]) -> None:
    """Tell the bar, whenever it changes, how the run's endpoints hold it back."""
    shown: str | None = None
    while True:
        await asyncio.sleep(PACING_STATUS_INTERVAL_S)
        batches = session.batcher.describe() if session.batcher is not None else None
        text = "; ".join(part for part in (session.holding_back(), batches) if part) or None
        if text != shown:
            status(text)
            shown = text
