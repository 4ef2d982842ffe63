"""The shard runner role: where shards are judged. `LocalRunner` judges them here, one after another."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from .._progress import Progress
from .._records import Vote
from .._runner import run_sync
from ._shards import OutputStore, Shard

if TYPE_CHECKING:
    from ..scoring._panel import LLMPanel

__all__ = ["LocalRunner", "ShardRunner", "ascore_shard"]


@runtime_checkable
class ShardRunner(Protocol):
    """Judges shards somewhere and yields each one with its votes as it finishes (in any order).

    A runner writes each finished shard to `store` (when given) before yielding it, advances `progress` by one
    per judge call, and retries a shard whose worker died, so no row is lost.
    """

    def run(
        self, panel: LLMPanel, shards: Sequence[Shard], store: OutputStore | None, progress: Progress
    ) -> Iterator[tuple[Shard, list[Vote]]]: ...


async def ascore_shard(panel: LLMPanel, shard: Shard, progress: Progress) -> list[Vote]:
    """The panel's votes on one shard, numbered by their row in the whole input."""
    result = await panel.ascore(shard.prompts, shard.responses, shard.references, progress=progress)
    return [vote.model_copy(update={"item": vote.item + shard.start}) for vote in result.vote_list]


class LocalRunner:
    """Judges the shards in this process, one after another: resumable single-machine runs, and tests."""

    def __repr__(self) -> str:
        return "LocalRunner()"

    def run(
        self, panel: LLMPanel, shards: Sequence[Shard], store: OutputStore | None, progress: Progress
    ) -> Iterator[tuple[Shard, list[Vote]]]:
        for shard in shards:
            votes = run_sync(ascore_shard(panel, shard, progress))
            if store is not None:
                store.write(shard, votes)
            yield shard, votes
