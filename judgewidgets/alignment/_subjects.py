"""What aligning asks of each kind of judge: its items from a labelled table, the prompts worth trying, its signal
per item, the examples it can show, and the aligned copy it becomes."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np
import pandas as pd

from .._errors import ConfigurationError, InputError
from .._progress import Progress
from .._records import Item, build_items
from ..engine import CallSession
from ..pairwise import PairExample, PairwiseJudge
from ..pairwise._batch import pairs_from
from ..pairwise._records import PairItem, Winner
from ..scoring import LLMJudge
from ..templates import Anchor, Template
from ..templates._builtin import BUILTIN_TEMPLATES
from ._labels import Labels
from ._rules import AsJudged, Calibrated, FittedPairRule, FittedRule, LevelRule, PairRule, Rule

# Built-in templates worth trying when a judge uses one: those whose answers one token tells apart (the 0-100
# scale is answered 0 or 100 only by a small judge).
TRIED_TEMPLATES = ("true_false_uncertain", "true_false", "likert", "instruction_following", "follows_instruction")


@dataclass(frozen=True)
class Prompt:
    """One way of asking: a name, what it changes, and the judge it builds from a set of example rows."""

    name: str
    description: str
    build: Callable[[Sequence[int]], Any]
    uses_examples: bool = False


class Subject(Protocol):
    """A judge kind as alignment sees it."""

    pairwise: bool

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


@dataclass
class PointwiseSubject:
    """An LLMJudge against pass/fail or score labels: its signal is its (uncalibrated) score."""

    judge: LLMJudge
    frame: pd.DataFrame
    labels: Labels
    columns: dict[str, str]
    templates: Sequence[str | Template] | None = None
    pairwise: bool = False
    _items: list[Item] = field(default_factory=list)

    def __post_init__(self) -> None:
        prompt, response, reference = (self.columns[k] for k in ("prompt", "response", "reference"))
        missing = [c for c in (prompt, response) if c not in self.frame.columns]
        if missing:
            found = ", ".join(map(str, self.frame.columns))
            raise InputError(f"the labelled table lacks column(s) {', '.join(missing)}; found: {found}")
        refs = self.frame[reference].tolist() if reference in self.frame.columns else None
        self._items = build_items(self.frame[prompt].tolist(), self.frame[response].tolist(), refs)
        self.judge = self.judge.with_options(calibration=None)

    def items(self) -> Sequence[Item]:
        return self._items

    def lengths(self) -> np.ndarray:
        return np.array([len(i.prompt) + len(i.response) + len(i.reference or "") for i in self._items])

    def prompts(self, levers: set[str]) -> list[Prompt]:
        own = self.judge.template
        out = [Prompt("as given", f"the judge as given (template {own.name})", _fixed(self.judge))]
        if "template" in levers:
            names = self.templates
            if names is None:
                names = TRIED_TEMPLATES if own.name in BUILTIN_TEMPLATES and BUILTIN_TEMPLATES[own.name] == own else ()
            for template in names:
                name = template if isinstance(template, str) else template.name
                if name == own.name:
                    continue
                out.append(
                    Prompt(
                        f"template {name}",
                        f"template {name}",
                        _fixed(self.judge.with_options(template=template, anchors=())),
                    )
                )
        return out

    def example_prompt(self, base: Prompt) -> Prompt:
        judge = base.build(())

        def build(rows: Sequence[int]) -> LLMJudge:
            return judge.with_options(
                anchors=tuple(judge.anchors) + tuple(self._anchor(judge.template, r) for r in rows)
            )

        return Prompt(f"{base.name} + examples", f"{base.description}, with labelled examples", build, True)

    def _anchor(self, template: Template, row: int) -> Anchor:
        item = self._items[row]
        target = float(self.labels.targets[row])
        values = template.option_values()
        if values:
            answer: float | str = min(values, key=lambda k: (abs(values[k] - target), -values[k]))
            if template.choices is None:
                answer = float(answer)
        else:
            low, high = template.scale or (0.0, 1.0)
            answer = round(low + target * (high - low))
        return Anchor(prompt=item.prompt, response=item.response, score=answer)

    def rules(self, levers: set[str]) -> list[Rule]:
        return [AsJudged(), *([Calibrated()] if "rule" in levers else [])]

    def calls_per_item(self) -> int:
        return 1

    async def signals(
        self, judge: LLMJudge, items: Sequence[Item], session: CallSession, progress: Progress
    ) -> np.ndarray:
        votes = await judge.ajudge(items, session, progress)
        return np.array([v.score for v in votes], dtype=float)

    def aligned(self, prompt: Prompt, examples: Sequence[int], rule: FittedRule) -> LLMJudge:
        judge: LLMJudge = prompt.build(examples)
        calibration = rule.calibration if isinstance(rule, LevelRule) else None
        return judge.with_options(calibration=calibration)


@dataclass
class PairwiseSubject:
    """A PairwiseJudge against A / B / tie labels: its signal is P(a better) (1 / 0.5 / 0 for a bare verdict)."""

    judge: PairwiseJudge
    frame: pd.DataFrame
    labels: Labels
    pairwise: bool = True
    _items: list[PairItem] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._items, _ = pairs_from(self.frame, None, None, None)
        self.judge = self.judge.with_options(lean=0.0, examples=())

    def items(self) -> Sequence[PairItem]:
        return self._items

    def lengths(self) -> np.ndarray:
        return np.array([len(i.question) + len(i.response_a) + len(i.response_b) for i in self._items])

    def prompts(self, levers: set[str]) -> list[Prompt]:
        return [Prompt("as given", f"the judge as given (method {self.judge.method})", _fixed(self.judge))]

    def example_prompt(self, base: Prompt) -> Prompt:
        judge = base.build(())

        def build(rows: Sequence[int]) -> PairwiseJudge:
            return judge.with_options(examples=[self._example(r) for r in rows])

        return Prompt(f"{base.name} + examples", f"{base.description}, with labelled examples", build, True)

    def _example(self, row: int) -> PairExample:
        item = self._items[row]
        winner: Winner = ("A", "B", "tie")[int(self.labels.codes[row])]
        return PairExample(
            question=item.question,
            response_a=item.response_a,
            response_b=item.response_b,
            winner=winner,
            reference=item.reference,
        )

    def rules(self, levers: set[str]) -> list[Rule]:
        own = AsJudged(tie_margin=self.judge.tie_margin)
        return [own, *([FittedPairRule()] if "rule" in levers else [])]

    def calls_per_item(self) -> int:
        return 2 if self.judge.swap or self.judge.method == "pointwise" else 1

    async def signals(
        self, judge: PairwiseJudge, items: Sequence[PairItem], session: CallSession, progress: Progress
    ) -> np.ndarray:
        results = await judge.acompare_items(items, session, progress)
        coded = {"A": 1.0, "B": 0.0, "tie": 0.5}
        return np.array(
            [r.p_a_better if r.p_a_better is not None else coded.get(r.winner or "", np.nan) for r in results],
            dtype=float,
        )

    def aligned(self, prompt: Prompt, examples: Sequence[int], rule: FittedRule) -> PairwiseJudge:
        judge: PairwiseJudge = prompt.build(examples)
        if isinstance(rule, PairRule):
            return judge.with_options(lean=rule.lean, tie_margin=rule.tie_margin)
        return judge


def subject_for(
    judge: Any, frame: pd.DataFrame, labels: Labels, columns: dict[str, str], templates: Any
) -> PointwiseSubject | PairwiseSubject:
    if isinstance(judge, PairwiseJudge):
        return PairwiseSubject(judge, frame, labels)
    if isinstance(judge, LLMJudge):
        return PointwiseSubject(judge, frame, labels, columns, templates)
    raise ConfigurationError(
        f"cannot align a {type(judge).__name__}; align an LLMJudge, LLMPanel, PairwiseJudge or PairwisePanel"
    )


def _fixed(judge: Any) -> Callable[[Sequence[int]], Any]:
    """A prompt's builder that shows no examples: the same judge whatever rows are given."""

    def build(rows: Sequence[int]) -> Any:
        return judge

    return build
