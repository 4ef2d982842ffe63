"""What aligning asks of each kind of judge (the `Subject` role): its items from a labelled table, the prompts
worth trying, its signal per item, the examples and instructions it can be given, and the aligned copy it becomes.
Each judge kind implements it beside itself (scoring/, pairwise/), so this package depends on none of them."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from .._progress import Progress
from ..engine import CallSession
from ._rules import FittedRule, Rule


@dataclass(frozen=True)
class Prompt:
    """One way of asking: a name, what it changes, and the judge it builds from a set of example rows."""

    name: str
    description: str
    build: Callable[[Sequence[int]], Any]
    uses_examples: bool = False


class Subject(Protocol):
    """A judge kind as alignment sees it."""

    @property
    def pairwise(self) -> bool: ...

    def items(self) -> Sequence[Any]: ...

    def lengths(self) -> np.ndarray: ...

    def prompts(self, levers: set[str]) -> list[Prompt]: ...

    def example_prompt(self, base: Prompt) -> Prompt: ...

    def rules(self, levers: set[str]) -> list[Rule]: ...

    def calls_per_item(self) -> int: ...

    async def signals(
        self, judge: Any, items: Sequence[Any], session: CallSession, progress: Progress
    ) -> np.ndarray: ...

    def aligned(self, prompt: Prompt, examples: Sequence[int], rule: FittedRule) -> Any: ...

    def instruction(self, judge: Any) -> str: ...

    def instructed(self, judge: Any, text: str) -> Any: ...

    def material(self, row: int) -> str: ...


class Reflector(Protocol):
    """A model that writes text (a `jw.Generator`): what rewrites a judge's instructions."""

    @property
    def model(self) -> str: ...

    async def agenerate(
        self, prompts: Sequence[str], session: CallSession, progress: Progress
    ) -> list[tuple[str | None, str | None]]: ...


def fixed(judge: Any) -> Callable[[Sequence[int]], Any]:
    """A prompt's builder that shows no examples: the same judge whatever rows are given."""

    def build(rows: Sequence[int]) -> Any:
        return judge

    return build
