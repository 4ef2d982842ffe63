"""Instructions rewritten from the disagreements: a stronger model reads the cases where the judge and the person
disagreed (and a few where they agreed) and states the person's standard as a new instruction (reflective prompt
optimisation, after GEPA and MemAlign's distilled guidelines)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .._fence import fence
from .._progress import Progress
from ..engine import CallSession
from ._subject import Reflector

MAX_CASES = 12
MAX_CASE_CHARS = 1200

SYSTEM = (
    "You improve the instruction given to an AI judge so that its verdicts agree with a human reviewer's. You are "
    "shown the judge's current instruction and labelled cases: where the judge disagreed with the reviewer, and "
    "where it agreed. Work out the reviewer's standard from them and write a new instruction that states it in "
    "general terms. Keep the judge's task and answer format; mention no case's particulars; at most 120 words. "
    "Reply with the new instruction only."
)


def reflection_prompt(instruction: str, cases: Sequence[tuple[str, str, str]]) -> str:
    """The reflector's request: the instruction, then each case as (material, the judge's verdict, the label)."""
    blocks = [fence("instruction", instruction)]
    for material, judged, label in cases:
        agreed = "agreed" if judged == label else "DISAGREED"
        blocks.append(f"<case>\n{material}\nJudge's verdict: {judged}\nReviewer's label: {label} ({agreed})\n</case>")
    return "\n".join(blocks)


def pick_cases(rows: np.ndarray, predicted: np.ndarray, truth: np.ndarray, lengths: np.ndarray, seed: int) -> list[int]:
    """Up to MAX_CASES rows among `rows`: the judge's disagreements first (two thirds), then agreements, short
    ones only, seeded."""
    rng = np.random.default_rng(seed)
    short = rows[lengths[rows] <= MAX_CASE_CHARS]
    short = short[rng.permutation(len(short))]
    wrong = [int(r) for r in short if predicted[r] != truth[r]]
    right = [int(r) for r in short if predicted[r] == truth[r]]
    take_wrong = wrong[: (2 * MAX_CASES) // 3]
    return sorted(take_wrong + right[: MAX_CASES - len(take_wrong)])


async def rewrite(
    reflector: Reflector,
    instruction: str,
    cases: Sequence[tuple[str, str, str]],
    session: CallSession,
    progress: Progress,
) -> tuple[str | None, str | None]:
    """(the new instruction, None) or (None, the error): a failed reflection leaves the judge's instruction."""
    [(text, error)] = await reflector.agenerate([reflection_prompt(instruction, cases)], session, progress)
    if text is None:
        return None, error
    text = text.strip().strip('"').strip()
    return (text, None) if text else (None, "reflection: the reflector returned no instruction")
