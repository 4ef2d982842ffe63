"""Judges for the distributed tests; importable by Ray workers (they unpickle them by reference)."""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import Sequence
from pathlib import Path

from judgewidgets import Item, Vote


class LengthJudge:
    """A judge that needs no model: the score is the response's length modulo 5, on [0, 1]."""

    weight = 1.0

    def __init__(self, name: str = "length") -> None:
        self.name = name

    async def ajudge(self, items: Sequence[Item], session: object, progress: object) -> list[Vote]:
        votes = [Vote(item=i, judge=self.name, score=(len(item.response) % 5) / 4) for i, item in enumerate(items)]
        progress.advance(len(votes))  # type: ignore[attr-defined]
        return votes


class KillOnceJudge(LengthJudge):
    """Kills its worker process once, in the shard holding a response that contains `trigger`.

    It first lets the panel's other judges finish their calls and flushes the shared call cache, so the retried
    shard finds every finished call there. `marker` is created when it strikes, so it strikes only once.
    """

    def __init__(self, marker: str | Path, trigger: str = "KILL", name: str = "killer") -> None:
        super().__init__(name)
        self.marker = str(marker)
        self.trigger = trigger

    async def ajudge(self, items: Sequence[Item], session: object, progress: object) -> list[Vote]:
        if any(self.trigger in item.response for item in items):
            try:
                os.close(os.open(self.marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
            except FileExistsError:
                pass
            else:
                await asyncio.sleep(1.0)  # the other judges' calls finish meanwhile
                self.die(session)
        return await super().ajudge(items, session, progress)

    def die(self, session: object) -> None:
        session.flush()  # type: ignore[attr-defined]
        os._exit(1)


class SigkillOnceJudge(KillOnceJudge):
    """Like KillOnceJudge, but its worker dies by SIGKILL without flushing anything, as the OOM killer kills: the
    retried shard must find the finished calls in the journal the dead worker left beside the shared cache."""

    def die(self, session: object) -> None:
        os.kill(os.getpid(), signal.SIGKILL)
