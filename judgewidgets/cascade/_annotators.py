"""Simulated annotators (Jung et al.): one judge asked in several wordings; the share that agree is a confidence.

A judge's probability of its own verdict is often overconfident; several differently worded copies of it
disagree exactly where it is unsure, and their vote share is a confidence that tends to be better calibrated
(the paper measured this on its judges). Each wording is its own request, so a stage of k annotators costs k
times one judge.
"""

from __future__ import annotations

from collections.abc import Sequence

from .._errors import ConfigurationError
from ..pairwise._judge import PairwiseJudge
from ..pairwise._panel import PairwisePanel
from ..scoring._judge import LLMJudge
from ..scoring._panel import LLMPanel

PAIRWISE_WORDINGS: tuple[str, ...] = (
    "Decide which response better answers the question. The better one does what the question asks, exactly "
    "and correctly; length, tone and polish do not count unless the question asks for them.",
    "You are a careful teacher grading two answers to the same task. First check which answer follows every "
    "instruction of the task; if both do, prefer the one that is more correct and more useful.",
    "Imagine you asked this question yourself. Which response would you rather receive? Prefer the one that "
    "fully and honestly gives you what you asked for; a response that ignores part of the request loses.",
)
POINTWISE_PERSONAS: tuple[str, ...] = (
    "Judge as a careful expert who checks every claim.",
    "Judge as a strict teacher who checks that every instruction was followed.",
    "Judge as the person who asked, who wants a correct and useful answer.",
)


def simulated_annotators(
    judge: PairwiseJudge | LLMJudge, wordings: Sequence[str] | None = None
) -> PairwisePanel | LLMPanel:
    """A panel of `judge` asked in several wordings, for a cascade stage whose confidence is the vote share.

    Pairwise judges get each wording as their `instruction` (the criterion); pointwise judges get it put before
    their template's own instruction. Defaults: three built-in wordings (`PAIRWISE_WORDINGS`,
    `POINTWISE_PERSONAS`). Use an odd number, so that a two-way split cannot be even.
    """
    if isinstance(wordings, str):
        wordings = [wordings]
    base = getattr(judge, "display_name", "judge")
    if isinstance(judge, PairwiseJudge):
        texts = list(wordings) if wordings is not None else list(PAIRWISE_WORDINGS)
        _check(texts)
        return PairwisePanel(
            [judge.with_options(instruction=text, name=f"{base} · wording {k + 1}") for k, text in enumerate(texts)]
        )
    if isinstance(judge, LLMJudge):
        texts = list(wordings) if wordings is not None else list(POINTWISE_PERSONAS)
        _check(texts)
        template = judge.template
        variants = [
            judge.with_options(
                template=template.model_copy(update={"instruction": f"{text} {template.instruction}"}),
                name=f"{base} · wording {k + 1}",
            )
            for k, text in enumerate(texts)
        ]
        return LLMPanel(variants)
    raise ConfigurationError(
        f"simulated annotators are built from a PairwiseJudge or LLMJudge, got {type(judge).__name__}"
    )


def _check(texts: list[str]) -> None:
    if len(texts) < 2:
        raise ConfigurationError("simulated annotators need at least two wordings (a vote of one is always unanimous)")
    if any(not isinstance(t, str) or not t.strip() for t in texts):
        raise ConfigurationError("every wording must be a non-empty string")
    if len(set(texts)) != len(texts):
        raise ConfigurationError("the wordings must differ (identical requests are answered once)")
