"""`RayRunner`: shards as Ray tasks, each running the async engine against the shared endpoints.

Each task judges one shard with `panel.ascore` in its own event loop (so the fast path keeps one connection pool
per worker), writes the shard's file, and returns its votes. The driver keeps `workers` tasks in flight,
resubmits a shard whose worker died (Ray's own task retries are off, so every retry is counted and bounded
here), and turns the workers' progress reports into one bar. A task that raises (a bug, bad configuration) is
not retried: it would fail again.

The call cache is the engine's SQLite `CallCache`: the panel carries only its path, each worker opens its own
connection, and SQLite's WAL mode lets the workers of one host read and write the file at once. A retried
shard therefore finds the calls its dead worker finished. SQLite's WAL needs the writers on one host: across
hosts, give each node a local cache path; finished shards are still never judged again (their files are
skipped), and a retried shard re-judges at most its own rows.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

from .._errors import ConfigurationError, ShardFailedError
from .._progress import NoProgress, Progress
from .._records import Vote
from ._runners import ascore_shard
from ._shards import OutputStore, Shard

if TYPE_CHECKING:
    from ..scoring._panel import LLMPanel

__all__ = ["RayRunner", "import_ray"]

logger = logging.getLogger("judgewidgets.distributed")

DEFAULT_SHARD_RETRIES = 3
_PROGRESS_EVERY_S = 0.25


def import_ray() -> Any:
    """Ray, or an ImportError that names the extra to install."""
    try:
        import ray
    except ImportError as exc:
        raise ImportError("engine='ray' needs Ray, an optional dependency: pip install 'judgewidgets[ray]'") from exc
    return ray


class RayRunner:
    """Judges shards as Ray tasks on the cluster `ray.init` connects to.

    address: passed to `ray.init` when Ray is not initialised yet (None: `RAY_ADDRESS`, else a local cluster);
    an existing connection is used as is and never shut down.
    workers: shards in flight at once (default: the cluster's CPUs); each runs the panel's full concurrency.
    max_retries: resubmissions of one shard after its worker died.
    num_cpus: CPUs a shard task reserves.
    """

    def __init__(
        self,
        address: str | None = None,
        *,
        workers: int | None = None,
        max_retries: int = DEFAULT_SHARD_RETRIES,
        num_cpus: float = 1.0,
        init_options: dict[str, Any] | None = None,
    ) -> None:
        if workers is not None and workers < 1:
            raise ConfigurationError(f"workers must be >= 1, got {workers}")
        if max_retries < 0:
            raise ConfigurationError(f"max_retries must be >= 0, got {max_retries}")
        self.address = address
        self.workers = workers
        self.max_retries = max_retries
        self.num_cpus = num_cpus
        self.init_options = dict(init_options or {})

    def __repr__(self) -> str:
        return f"RayRunner(address={self.address!r}, workers={self.workers}, max_retries={self.max_retries})"

    def _connect(self) -> Any:
        ray = import_ray()
        if not ray.is_initialized():
            ray.init(address=self.address, **self.init_options)
        return ray

    def run(
        self, panel: LLMPanel, shards: Sequence[Shard], store: OutputStore | None, progress: Progress
    ) -> Iterator[tuple[Shard, list[Vote]]]:
        if not shards:
            return
        ray = self._connect()
        from ray.exceptions import RayError, RayTaskError

        workers = self.workers or max(1, int(ray.cluster_resources().get("CPU", 1) // max(self.num_cpus, 1e-9)))
        task = ray.remote(_score_shard_task).options(num_cpus=self.num_cpus, max_retries=0)
        # Workers report their calls to a counter actor, which the bar polls without waiting on it (the actor's
        # process takes seconds to start). Nobody watching: no actor, no reports.
        counter = None if isinstance(progress, NoProgress) else ray.remote(num_cpus=0)(_ProgressCounter).remote()
        panel_ref = ray.put(panel)
        calls_per_row = len(panel.judges)
        queue = deque(shards)
        pending: dict[Any, Shard] = {}
        deaths: dict[int, int] = {}
        shown = finished = 0
        asked = None  # the counter's answer on its way
        try:
            while queue or pending:
                while queue and len(pending) < workers:
                    shard = queue.popleft()
                    pending[task.remote(panel_ref, shard, store, counter)] = shard
                ready, _ = ray.wait(list(pending), num_returns=1, timeout=_PROGRESS_EVERY_S)
                for ref in ready:
                    shard = pending.pop(ref)
                    try:
                        votes = ray.get(ref)
                    except RayTaskError as exc:  # the shard's own code raised: it would raise again
                        raise exc.as_instanceof_cause() from None
                    except RayError as exc:  # the worker, its node or the result was lost: judge it again
                        deaths[shard.index] = deaths.get(shard.index, 0) + 1
                        if deaths[shard.index] > self.max_retries:
                            raise ShardFailedError(
                                f"{shard.name}: its worker died {deaths[shard.index]} times; last: {exc}"
                            ) from exc
                        logger.warning("%s: worker lost (%s); retrying", shard.name, type(exc).__name__)
                        if counter is not None:
                            counter.report.remote(shard.index, 0)
                        queue.appendleft(shard)
                        continue
                    finished += shard.rows * calls_per_row
                    if counter is not None:
                        counter.report.remote(shard.index, shard.rows * calls_per_row)
                    yield shard, votes
                if counter is not None:
                    asked = asked or counter.total.remote()
                    if ray.wait([asked], timeout=0)[0]:
                        done, asked = ray.get(asked), None
                        if done != shown:
                            progress.advance(done - shown)
                            shown = done
            progress.advance(finished - shown)
        finally:
            for ref in pending:
                ray.cancel(ref, force=True)
            if counter is not None:
                ray.kill(counter)


def _score_shard_task(panel: LLMPanel, shard: Shard, store: OutputStore | None, counter: Any) -> list[Vote]:
    """Runs in a Ray worker: judge the shard in a fresh event loop, write its file, return its votes."""
    reporter = _RemoteProgress(counter, shard.index) if counter is not None else NoProgress()
    try:
        votes = asyncio.run(ascore_shard(panel, shard, reporter))
    finally:
        reporter.close()
    if store is not None:
        store.write(shard, votes)
    return votes


class _ProgressCounter:
    """A Ray actor holding each shard's finished calls (absolute counts, so a retried shard starts at 0)."""

    def __init__(self) -> None:
        self.done: dict[int, int] = {}

    def report(self, shard: int, done: int) -> None:
        self.done[shard] = done

    def total(self) -> int:
        return sum(self.done.values())


class _RemoteProgress:
    """A worker's Progress: counts calls and reports the count to the driver's counter a few times a second."""

    def __init__(self, counter: Any, shard: int) -> None:
        self.counter = counter
        self.shard = shard
        self.done = 0
        self._sent_at = 0.0

    def advance(self, n: int = 1) -> None:
        self.done += n
        now = time.monotonic()
        if now - self._sent_at >= _PROGRESS_EVERY_S:
            self._sent_at = now
            self.counter.report.remote(self.shard, self.done)

    def close(self) -> None:
        self.counter.report.remote(self.shard, self.done)
