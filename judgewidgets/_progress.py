"""Progress reporting for batches: a tqdm bar (a widget in notebooks, text in terminals) or nothing."""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Any, Protocol, TypeVar

T = TypeVar("T")


class Progress(Protocol):
    """Told about every finished call of a batch.

    A Progress may also have `status(text: str | None)`: the run then tells it, about twice a second, when a
    provider's rate limit holds the run back and at what pace (None once it no longer does).
    """

    def advance(self, n: int = 1) -> None: ...

    def close(self) -> None: ...


class NoProgress:
    def advance(self, n: int = 1) -> None:
        pass

    def close(self) -> None:
        pass


class TqdmProgress:
    """tqdm.auto: an ipywidgets bar in Jupyter, a text bar elsewhere; redraws at most ten times a second."""

    def __init__(self, total: int, description: str) -> None:
        from tqdm.auto import tqdm

        self._bar: Any = tqdm(total=total, desc=description, mininterval=0.1, leave=True, dynamic_ncols=True)

    def advance(self, n: int = 1) -> None:
        self._bar.update(n)

    def status(self, text: str | None) -> None:
        """Say after the bar how the provider holds the run back ("gpt-4o-mini: rate limit, 480 calls/min")."""
        self._bar.set_postfix_str(text or "", refresh=True)

    def close(self) -> None:
        self._bar.close()


async def counted(progress: Progress, work: Awaitable[T]) -> T:
    """Await `work`, then count it as finished. A cancelled call (a kernel interrupt) is not counted, so the bar of
    an interrupted run shows how much really finished."""
    result = await work
    progress.advance()
    return result


def make_progress(progress: bool | Progress, total: int, description: str) -> Progress:
    """A Progress for a batch of `total` calls: `True` gives a tqdm bar, `False` none, or pass your own."""
    if progress is True:
        return TqdmProgress(total, description)
    if progress is False or progress is None:
        return NoProgress()
    return progress
