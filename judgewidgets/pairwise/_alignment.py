"""PairwiseJudge as alignment's subject: its signal is P(a better) (1 / 0.5 / 0 for a bare verdict); it can show
decided pairs as examples, score each response under another template, take a rewritten criterion and carry a
lean, a tie margin and the chance that the person agrees with each verdict (its confidence, calibrated).

The labelled table holds question, response_a, response_b, or conversations as `compare_many` reads them: a
`history` column with two replies (response_a, response_b), or conversation_a and conversation_b (their last turns,
or `target="whole"`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from .._fence import fence
from .._progress import Progress
from ..alignment import (
    AsJudged,
    FittedPairRule,
    FittedRule,
    Labels,
    PairRule,
    Prompt,
    Rule,
    aalign_members,
    aalign_subject,
    fixed,
)
from ..alignment._calibration import calibration_key
from ..conversations._render import JudgedConversation, pair_blocks, shares_history, transcript
from ..engine import CallSession
from ..scoring import Generator
from ..scoring._alignment import reflector_for
from ..templates import Template
from ._batch import pairs_from
from ._judge import DEFAULT_CRITERION, PairwiseJudge
from ._panel import PairwisePanel
from ._records import PairExample, PairItem, Winner

# A pairwise judge that scores each response alone (method "pointwise") may score it under these.
PAIRWISE_POINTWISE_TEMPLATES = ("follows_instruction", "instruction_following", "likert")


@dataclass
class PairwiseSubject:
    """A PairwiseJudge against A / B / tie labels: its signal is P(a better) (1 / 0.5 / 0 for a bare verdict)."""

    judge: PairwiseJudge
    frame: pd.DataFrame
    labels: Labels
    templates: Sequence[str | Template] | None = None
    pairwise: bool = True
    target: str | None = None
    _items: list[PairItem] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._items, _ = pairs_from(self.frame, None, None, None, target=self.target)
        self.judge = self.judge.with_options(lean=0.0, examples=(), calibration=None)

    def items(self) -> Sequence[PairItem]:
        return self._items

    def lengths(self) -> np.ndarray:
        return np.array([len(i.question) + len(i.response_a) + len(i.response_b) for i in self._items])

    def prompts(self, levers: set[str]) -> list[Prompt]:
        out = [Prompt("as given", f"the judge as given (method {self.judge.method})", fixed(self.judge))]
        if "template" in levers and self.judge.method == "pointwise":
            own = self.judge.pointwise_judge.template.name
            for template in self.templates if self.templates is not None else PAIRWISE_POINTWISE_TEMPLATES:
                name = template if isinstance(template, str) else template.name
                if name != own:
                    judge = self.judge.with_options(pointwise_template=template)
                    out.append(Prompt(f"template {name}", f"each response scored under {name}", fixed(judge)))
        return out

    def example_prompt(self, base: Prompt) -> Prompt:
        judge = base.build(())

        def build(rows: Sequence[int]) -> PairwiseJudge:
            return judge.with_options(examples=[self._example(r) for r in rows])

        return Prompt(f"{base.name} + examples", f"{base.description}, with labelled examples", build, True)

    def _example(self, row: int) -> PairExample:
        item = self._items[row]
        winner: Winner = ("A", "B", "tie")[int(self.labels.codes[row])]
        question, response_a, response_b = _shown(item)
        return PairExample(
            question=question,
            response_a=response_a,
            response_b=response_b,
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

    def instruction(self, judge: PairwiseJudge) -> str:
        if judge.method == "pointwise":
            return judge.pointwise_judge.template.instruction
        return judge.instruction or DEFAULT_CRITERION

    def instructed(self, judge: PairwiseJudge, text: str) -> PairwiseJudge:
        if judge.method == "pointwise":
            template = judge.pointwise_judge.template
            return judge.with_options(pointwise_template=template.model_copy(update={"instruction": text}))
        return judge.with_options(instruction=text)

    def material(self, row: int) -> str:
        item = self._items[row]
        if item.conversation_a is not None and item.conversation_b is not None:
            return "\n".join(pair_blocks(item.conversation_a, item.conversation_b))
        return "\n".join(
            [
                fence("question", item.question),
                fence("response_a", item.response_a),
                fence("response_b", item.response_b),
            ]
        )

    def aligned(self, prompt: Prompt, examples: Sequence[int], rule: FittedRule) -> PairwiseJudge:
        """The judge with the prompt, examples and rule chosen; a judge that reads probabilities also carries the
        rule's agreement calibration (a bare verdict's stated confidence is left as the judge gives it)."""
        judge: PairwiseJudge = prompt.build(examples)
        if isinstance(rule, PairRule):
            calibration = rule.agreement if judge.method != "verdict" else None
            if calibration is not None:
                calibration = calibration.model_copy(update={"items": tuple(calibration_key(i) for i in self._items)})
            return judge.with_options(lean=rule.lean, tie_margin=rule.tie_margin, calibration=calibration)
        return judge


def _shown(item: PairItem) -> tuple[str, str, str]:
    """(question, response a, response b) as a decided example shows a pair: its texts; for two replies to one
    history the conversation so far (`role: text` paragraphs) and the replies; for two conversations each one's
    transcript up to its judged turn (or whole)."""
    a, b = item.conversation_a, item.conversation_b
    if a is None or b is None:
        return item.question, item.response_a, item.response_b
    if shares_history(a, b):
        return transcript(a.history), item.response_a, item.response_b
    return item.question, _transcript(a), _transcript(b)


def _transcript(view: JudgedConversation) -> str:
    messages = view.conversation.messages
    return transcript(messages if view.judged is None else messages[: view.judged[1]])


def _subject(
    judge: PairwiseJudge, frame: pd.DataFrame, labels: Labels, templates: Any, target: str | None = None
) -> PairwiseSubject:
    return PairwiseSubject(judge, frame, labels, templates, True, target)


async def aalign_pairwise(
    judge: PairwiseJudge,
    labelled: pd.DataFrame,
    label: str = "label",
    *,
    templates: Sequence[str | Template] | None = None,
    target: str | None = None,
    reflector: str | Generator | None = None,
    **options: Any,
) -> PairwiseJudge:
    """PairwiseJudge.aalign: A / B / tie labels on a table of question, response_a, response_b, or of
    conversations (history with response_a and response_b; or conversation_a and conversation_b, judged under
    `target`); `templates` are the pointwise templates tried (the pointwise method); the rest are
    `jw.alignment.AlignOptions`."""
    aligned: PairwiseJudge = await aalign_subject(
        judge,
        labelled,
        label,
        lambda frame, labels: _subject(judge, frame, labels, templates, target),
        pairwise=True,
        reflector=reflector_for(reflector),
        **options,
    )
    return aligned


async def aalign_pairwise_panel(
    panel: PairwisePanel,
    labelled: pd.DataFrame,
    label: str = "label",
    *,
    templates: Sequence[str | Template] | None = None,
    target: str | None = None,
    reflector: str | Generator | None = None,
    **options: Any,
) -> PairwisePanel:
    """PairwisePanel.aalign: every member aligned, then a weighted vote by held-out agreement when that helps
    (conversations and `target` as `aalign_pairwise`'s)."""
    aligned, weights, report = await aalign_members(
        panel.judges,
        panel.names,
        labelled,
        label,
        lambda judge, frame, labels: _subject(judge, frame, labels, templates, target),
        pairwise=True,
        reflector=reflector_for(reflector),
        **options,
    )
    result = PairwisePanel(aligned, vote="weighted", weights=weights)
    result.names = list(panel.names)
    result.alignment_report = report
    return result
