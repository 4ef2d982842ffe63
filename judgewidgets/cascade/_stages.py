"""A cascade's stages: one judge or panel each, giving per item a verdict, a confidence and what it cost.

Every judge is reached only through its public batch entry point (`acompare_items`, the pairwise-judge role
tournaments and meta-evaluation use; `ascore` for pointwise judges and panels) and read from its result records,
so the judges' internals can change under the cascade.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

import pandas as pd

from .._errors import ConfigurationError, InputError
from .._records import build_items
from .._rows import row_items
from .._run import Run
from ..alignment._calibration import calibration_key
from ..conversations import check_target
from ..engine._usage import Usage, known_sum
from ..pairwise._batch import pairs_from
from ..pairwise._judge import PairwiseJudge
from ..pairwise._panel import PairwisePanel
from ..pairwise._scales import AB_TIE
from ._calibration import Material

Kind = Literal["pairwise", "pointwise"]
PAIRWISE_LABELS: tuple[str, ...] = tuple(AB_TIE.labels)  # "A", "B", "tie"


@dataclass(frozen=True)
class StageVerdict:
    """One stage's judgment of one item: the verdict and its confidence (None: nothing to trust), and the cost."""

    verdict: str | None
    confidence: float | None
    calls: int
    cached: int
    cost_usd: float | None
    seconds: float
    error: str | None = None


class Stage(Protocol):
    """The stage role: a named judge that gives every item a verdict from `labels` with a confidence."""

    name: str
    kind: Kind
    judge: Any

    def labels(self) -> tuple[str, ...]: ...

    def confidence_source(self) -> str: ...

    def check(self) -> None: ...

    def progress_units(self, n_items: int) -> int: ...

    async def ajudge(self, items: Sequence[Any], run: Run) -> list[StageVerdict]: ...


def spent(records: Sequence[Usage], calls_per_record: int = 1) -> dict[str, Any]:
    """What the calls behind one stage verdict cost: calls, cache hits, dollars and model seconds (of the calls
    actually made), from the Usage of each vote or order verdict behind it."""
    return {
        "calls": calls_per_record * len(records),
        "cached": calls_per_record * sum(r.cached for r in records),
        "cost_usd": known_sum(r.cost_usd for r in records),
        "seconds": float(sum(r.latency_s for r in records if not r.cached)),
    }


def read_items(
    kind: Kind,
    data: Any,
    conversation_col: str | None = None,
    target: str | None = None,
    default_target: str = "last_turn",
) -> tuple[list[Any], pd.DataFrame]:
    """The items of a batch and the table they came from (kept beside the results); InputError when unusable.

    Pairwise: a DataFrame with question, response_a, response_b, or conversations as `compare_many` reads them
    (history with response_a and response_b; conversation_a and conversation_b, under `target`); optional
    reference. Pointwise: a DataFrame with prompt and response, or a `conversation_col` of conversations (message
    lists or their JSON) judged under `target` (else `default_target`), one per row; optional reference.
    """
    if not isinstance(data, pd.DataFrame):
        raise InputError(f"give the items as a pandas DataFrame, got {type(data).__name__}")
    if kind == "pairwise":
        if conversation_col:
            raise InputError(
                "conversation_col= names the conversations of pointwise stages; pairwise stages read the columns "
                "history (with response_a, response_b) or conversation_a and conversation_b"
            )
        return pairs_from(data, None, None, None, target=target)
    if conversation_col:
        if conversation_col not in data.columns:
            raise InputError(
                f"the DataFrame has no column {conversation_col!r} (conversation_col); found: "
                f"{', '.join(map(str, data.columns))}"
            )
        check_target(target, default_target)  # an unknown target is an InputError before the rows are read
        items = row_items(
            data,
            conversation_col=conversation_col,
            target=target,
            default_target=default_target,
            reference_col="reference" if "reference" in data.columns else None,
            why="a cascade gives each row one verdict",
        )
        return items, data.reset_index(drop=True)
    if target is not None:
        raise InputError("target= applies to conversations: name their column with conversation_col=")
    missing = [c for c in ("prompt", "response") if c not in data.columns]
    if missing:
        raise InputError(
            f"the DataFrame lacks column(s) {', '.join(missing)}; a pointwise cascade reads prompt, response "
            f"(optional reference); found: {', '.join(map(str, data.columns))}"
        )
    references = data["reference"].tolist() if "reference" in data.columns else None
    items = build_items(data["prompt"].tolist(), data["response"].tolist(), references)
    return items, data.reset_index(drop=True)


class PairwiseStage:
    """A PairwiseJudge (confidence: the probability its winner is better; for an aligned judge, the chance that
    the person agrees, which its calibration gives) or a PairwisePanel (the vote share). The confidence is read
    from the judge's results as they are: the calibration is the judge's, applied once, where it decides."""

    kind: Kind = "pairwise"

    def __init__(self, judge: PairwiseJudge | PairwisePanel, name: str) -> None:
        self.judge = judge
        self.name = name

    def labels(self) -> tuple[str, ...]:
        return PAIRWISE_LABELS

    def confidence_source(self) -> str:
        """Where the confidence comes from; ConfigurationError when the judge gives none."""
        judge = self.judge
        if isinstance(judge, PairwisePanel):
            if len(judge.judges) < 2:
                raise ConfigurationError(
                    f"stage {self.name!r}: a panel of one judge has no vote share to be confident with; give "
                    "two or more (differently worded) judges, or the judge itself"
                )
            return f"vote share of {len(judge.judges)} judges"
        if judge.method == "verdict":
            return "the judge's stated confidence"
        calibrated = judge.calibration is not None
        # The probability and pointwise methods read probabilities from logprobs; without them a probability
        # judge has no confidence and a pointwise one only certain scores (the same setting decides both).
        if not judge.caller.uses_probabilities():
            raise ConfigurationError(
                f"stage {self.name!r}: {judge.display_name} (method={judge.method!r}) reads its confidence from "
                "logprobs, and this model is set up without them; use method='verdict' (stated confidence), a "
                "model that returns logprobs, or a PairwisePanel (vote share)"
            )
        if calibrated:
            return "P(the person agrees), the judge's probabilities calibrated by its alignment"
        return "P(winner is better), from the judge's probabilities"

    def check(self) -> None:
        self.judge.check()

    def progress_units(self, n_items: int) -> int:
        return n_items * (len(self.judge.judges) if isinstance(self.judge, PairwisePanel) else 1)

    async def ajudge(self, items: Sequence[Any], run: Run) -> list[StageVerdict]:
        results = await self.judge.acompare_items(list(items), run.session, run.progress)
        judges = self.judge.judges if isinstance(self.judge, PairwisePanel) else [self.judge]
        # The pointwise method without swapping records both responses' calls on one order's verdict.
        per_verdict = 2 if all(j.method == "pointwise" and not j.swap for j in judges) else 1
        out = []
        for result in results:
            out.append(
                StageVerdict(
                    verdict=result.winner,
                    confidence=result.confidence if result.winner is not None else None,
                    error=result.error,
                    **spent(result.verdicts, per_verdict),
                )
            )
        return out


def fitted_on(judge: Any) -> set[str]:
    """Keys of the labelled items an aligned judge's calibration (or its panel members') was fitted on."""
    members = getattr(judge, "judges", None)
    keys: set[str] = set()
    for member in members if isinstance(members, Sequence) else [judge]:
        keys.update(getattr(getattr(member, "calibration", None), "items", ()) or ())
    return keys


def material_of(kind: Kind, data: pd.DataFrame, items: Sequence[Any]) -> Material | None:
    """What the judges read of each row of a batch `read_items` read: texts, one conversation under its target,
    two replies to a shared history (the `history` column), or two conversations under their target (None: no
    rows, nothing read)."""
    if not items:
        return None
    first = items[0]
    if kind == "pointwise":
        view = getattr(first, "conversation", None)
        if view is None:
            return "texts"
        return "conversations/whole" if view.judged is None else "conversations/last_turn"
    view = getattr(first, "conversation_a", None)
    if view is None:
        return "texts"
    if "history" in data.columns:
        return "history_replies"
    return "conversation_pairs/whole" if view.judged is None else "conversation_pairs/last_turn"


def judged_by(stages: Sequence[Stage]) -> str:
    """What of a conversation pointwise stages judge when a call does not say: the target their judges agree on
    (each judge's or panel's `default_target`), else the last turn."""
    own = {str(getattr(stage.judge, "default_target", None) or "last_turn") for stage in stages}
    return own.pop() if len(own) == 1 else "last_turn"


def check_unseen(stages: Sequence[Stage], items: Sequence[Any]) -> None:
    """InputError when a stage's calibration was fitted on some of the labelled rows: its confidence was shaped by
    their labels, so testing it on them would certify what it was fitted to, not what it does on new items."""
    keys = [calibration_key(item) for item in items]
    for stage in stages:
        seen = fitted_on(stage.judge)
        if not seen:
            continue
        rows = [i for i, key in enumerate(keys) if key in seen]
        if rows:
            raise InputError(
                f"stage {stage.name!r} was aligned on {len(rows)} of these {len(keys)} labelled rows (rows "
                f"{', '.join(map(str, rows[:10]))}{', ...' if len(rows) > 10 else ''}): its calibrated confidence "
                "was fitted to their labels, and a threshold certified on them would not hold on new items. "
                "Calibrate the cascade on labelled rows the alignment did not use (align on one part of your "
                "labels, calibrate on another)"
            )


def make_stage(judge: Any, name: str, pass_threshold: float | None) -> Stage:
    """The stage for a judge; ConfigurationError for anything that is not a judge or panel a cascade can use."""
    from ..scoring._judge import LLMJudge
    from ..scoring._panel import LLMPanel
    from ._pointwise import PointwiseStage

    if isinstance(judge, (PairwiseJudge, PairwisePanel)):
        return PairwiseStage(judge, name)
    if isinstance(judge, (LLMJudge, LLMPanel)):
        return PointwiseStage(judge, name, pass_threshold)
    raise ConfigurationError(
        f"stage {name!r} is a {type(judge).__name__}; a cascade's stages are PairwiseJudge / PairwisePanel "
        "(pairs) or LLMJudge / LLMPanel (single responses)"
    )


def display_name(judge: Any) -> str:
    """A readable name for a judge or panel."""
    name = getattr(judge, "display_name", None) or getattr(judge, "name", None)
    if name:
        return str(name)
    judges = getattr(judge, "judges", None)
    return f"panel of {len(judges)}" if judges is not None else type(judge).__name__
