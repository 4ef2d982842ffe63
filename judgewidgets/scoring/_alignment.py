"""LLMJudge as alignment's subject: its signal is its own (uncalibrated) score; it can try the built-in templates,
show labelled items as anchors, take a rewritten instruction and carry a calibration map.

The labelled table holds texts (prompt and response columns) or conversations (`conversation_col`: message lists
or their JSON, one conversation and one label per row, judged under `target`), read by the same `judged_items` as
`LLMJudge.score`."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from .._errors import ConfigurationError, InputError
from .._fence import fence
from .._progress import Progress
from .._records import Item
from .._rows import row_items
from ..alignment import (
    REFLECTION_SYSTEM,
    AsJudged,
    Calibrated,
    FittedRule,
    Labels,
    LevelRule,
    Prompt,
    Rule,
    aalign_members,
    aalign_subject,
    fixed,
)
from ..alignment._calibration import calibration_key
from ..conversations import Target, check_target
from ..conversations._render import judged_material, reply_text, transcript
from ..engine import CallSession
from ..templates import Anchor, Template
from ..templates._builtin import BUILTIN_TEMPLATES
from ._generate import Generator
from ._judge import LLMJudge
from ._panel import LLMPanel

# Built-in templates worth trying when a judge uses one: those whose answers one token tells apart (the 0-100
# scale is answered 0 or 100 only by a small judge).
TRIED_TEMPLATES = ("true_false_uncertain", "true_false", "likert", "instruction_following", "follows_instruction")


@dataclass
class PointwiseSubject:
    """An LLMJudge against pass/fail or score labels: its signal is its (uncalibrated) score."""

    judge: LLMJudge
    frame: pd.DataFrame
    labels: Labels
    columns: dict[str, str]
    templates: Sequence[str | Template] | None = None
    pairwise: bool = False
    conversation_col: str | None = None
    target: str | None = None
    _items: list[Item] = field(default_factory=list)

    def __post_init__(self) -> None:
        prompt, response, reference = (self.columns[k] for k in ("prompt", "response", "reference"))
        wanted = [self.conversation_col] if self.conversation_col else [prompt, response]
        missing = [str(c) for c in wanted if c not in self.frame.columns]
        if missing:
            found = ", ".join(map(str, self.frame.columns))
            raise InputError(f"the labelled table lacks column(s) {', '.join(missing)}; found: {found}")
        if self.conversation_col:  # the target judged now is the one the aligned judge keeps (a template may change)
            self.target = check_target(self.target, self.judge.default_target)
        self._items = row_items(
            self.frame,
            conversation_col=self.conversation_col,
            target=self.target,
            default_target=self.judge.default_target,
            prompt_col=prompt,
            response_col=response,
            reference_col=reference if reference in self.frame.columns else None,
        )
        self.judge = self.judge.with_options(calibration=None)

    def items(self) -> Sequence[Item]:
        return self._items

    def lengths(self) -> np.ndarray:
        return np.array([len(_shown(i)[0]) + len(_shown(i)[1]) + len(i.reference or "") for i in self._items])

    def prompts(self, levers: set[str]) -> list[Prompt]:
        own = self.judge.template
        out = [Prompt("as given", f"the judge as given (template {own.name})", fixed(self.judge))]
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
                        fixed(self.judge.with_options(template=template, anchors=())),
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
        prompt, response = _shown(item)
        return Anchor(prompt=prompt, response=response, score=answer)

    def rules(self, levers: set[str]) -> list[Rule]:
        return [AsJudged(), *([Calibrated()] if "rule" in levers else [])]

    def calls_per_item(self) -> int:
        return 1

    async def signals(
        self, judge: LLMJudge, items: Sequence[Item], session: CallSession, progress: Progress
    ) -> np.ndarray:
        votes = await judge.ajudge(items, session, progress)
        return np.array([v.score for v in votes], dtype=float)

    def instruction(self, judge: LLMJudge) -> str:
        return judge.template.instruction

    def instructed(self, judge: LLMJudge, text: str) -> LLMJudge:
        return judge.with_options(template=judge.template.model_copy(update={"instruction": text}))

    def material(self, row: int) -> str:
        item = self._items[row]
        if item.conversation is not None:
            parts = judged_material(item.conversation)[0]
        else:
            parts = [fence("question", item.prompt), fence("response", item.response)]
        if item.reference:
            parts.append(fence("reference", item.reference))
        return "\n".join(parts)

    def aligned(self, prompt: Prompt, examples: Sequence[int], rule: FittedRule) -> LLMJudge:
        """The judge with the prompt, examples and calibration chosen; the calibration names the items it was
        fitted on."""
        judge: LLMJudge = prompt.build(examples)
        calibration = rule.calibration if isinstance(rule, LevelRule) else None
        if calibration is not None:
            calibration = calibration.model_copy(update={"items": tuple(calibration_key(i) for i in self._items)})
        if self.target is not None:  # aligned on conversations: it judges the same part of them from now on
            return judge.with_options(calibration=calibration, target=self.target)
        return judge.with_options(calibration=calibration)


def _shown(item: Item) -> tuple[str, str]:
    """(question, response) as a labelled example shows the item: its texts; for a conversation's last turn the
    conversation before it (`role: text` paragraphs) and the reply, for a whole one the first user message and the
    transcript."""
    view = item.conversation
    if view is None:
        return item.prompt, item.response
    if view.judged is None:
        return item.prompt, transcript(view.conversation.messages)
    return transcript(view.history), reply_text(view)


def reflector_for(reflector: str | Generator | None) -> Generator | None:
    """The reflector as a Generator asked at temperature 0 with the reflection's system prompt; checked now."""
    if reflector is None:
        return None
    if isinstance(reflector, str):
        built = Generator(reflector, system_prompt=REFLECTION_SYSTEM, temperature=0.0)
    elif isinstance(reflector, Generator):
        built = Generator(
            reflector.model,
            system_prompt=REFLECTION_SYSTEM,
            temperature=0.0,
            settings=reflector.settings,
            **reflector.caller.litellm_kwargs,
        )
    else:
        raise ConfigurationError(f"reflector must be a model string or a jw.Generator, got {type(reflector).__name__}")
    built.caller.check()
    return built


def _subject_maker(
    templates: Sequence[str | Template] | None,
    prompt_col: str,
    response_col: str,
    reference_col: str,
    conversation_col: str | None = None,
    target: Target | None = None,
) -> Callable[[LLMJudge, pd.DataFrame, Labels], PointwiseSubject]:
    columns = {"prompt": prompt_col, "response": response_col, "reference": reference_col}

    def make(judge: LLMJudge, frame: pd.DataFrame, labels: Labels) -> PointwiseSubject:
        return PointwiseSubject(judge, frame, labels, columns, templates, False, conversation_col, target)

    return make


async def aalign_judge(
    judge: LLMJudge,
    labelled: pd.DataFrame,
    label: str = "label",
    *,
    templates: Sequence[str | Template] | None = None,
    prompt_col: str = "prompt",
    response_col: str = "response",
    reference_col: str = "reference",
    conversation_col: str | None = None,
    target: Target | None = None,
    reflector: str | Generator | None = None,
    **options: Any,
) -> LLMJudge:
    """LLMJudge.aalign: `templates` replaces the built-ins tried by the template lever; the columns name the
    labelled table's texts, or `conversation_col` its conversations (message lists or their JSON, one per row)
    judged under `target` ("last_turn" or "whole"; default the judge's `default_target`), which the aligned
    judge then keeps as its own; the rest are `jw.alignment.AlignOptions`."""
    make = _subject_maker(templates, prompt_col, response_col, reference_col, conversation_col, target)
    aligned: LLMJudge = await aalign_subject(
        judge,
        labelled,
        label,
        lambda frame, labels: make(judge, frame, labels),
        pairwise=False,
        scale_of_judge=judge.template.scale,
        reflector=reflector_for(reflector),
        **options,
    )
    return aligned


async def aalign_panel(
    panel: LLMPanel,
    labelled: pd.DataFrame,
    label: str = "label",
    *,
    templates: Sequence[str | Template] | None = None,
    prompt_col: str = "prompt",
    response_col: str = "response",
    reference_col: str = "reference",
    conversation_col: str | None = None,
    target: Target | None = None,
    reflector: str | Generator | None = None,
    **options: Any,
) -> LLMPanel:
    """LLMPanel.aalign: every member aligned, then weighted by held-out agreement when that helps; conversations
    and `target` as `aalign_judge`'s (by default the panel's `default_target`, for every member alike)."""
    if conversation_col and target is None:
        target = panel.default_target
    for name, member in zip(panel.names, panel.judges):
        if not isinstance(member, LLMJudge):
            raise ConfigurationError(f"panel member {name!r} is a {type(member).__name__}: only LLMJudges align")
    members: list[LLMJudge] = [m for m in panel.judges if isinstance(m, LLMJudge)]
    scales = {m.template.scale for m in members}
    aligned, weights, report = await aalign_members(
        members,
        panel.names,
        labelled,
        label,
        _subject_maker(templates, prompt_col, response_col, reference_col, conversation_col, target),
        pairwise=False,
        scale_of_judge=scales.pop() if len(scales) == 1 else None,
        reflector=reflector_for(reflector),
        **options,
    )
    result = LLMPanel(aligned, weights=weights, target=target or panel.target)
    result.names = list(panel.names)
    result.alignment_report = report
    return result
