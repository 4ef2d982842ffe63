"""Cascade: trust a cheap judge where it is confident enough, escalate the rest, abstain when no one is.

Jung, Brahman & Choi, "Trust or Escalate: LLM Judges with Provable Guarantees for Human Agreement" (ICLR 2025,
arXiv 2407.18370): calibrate on human-labelled rows a confidence threshold per judge by fixed-sequence testing
with an exact binomial bound; at run time each item goes to the cheapest judge first and moves on while the
judge's confidence is below its threshold.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from .._errors import ConfigurationError, InputError
from .._progress import Progress
from .._run import run_scope
from .._runner import run_sync
from .._saved import provenance, reported
from ..engine import CallSession
from ._bounds import _check_level, minimum_rows
from ._calibrate import fit_cascade
from ._calibration import Calibration, Material, describe_material, material_target
from ._cost import CascadeCostEstimate, estimate_cascade
from ._pointwise import FAIL, PASS
from ._result import ITEM_COLUMNS, JUDGMENT_COLUMNS, CascadeResult
from ._stages import (
    Kind,
    Stage,
    StageVerdict,
    check_unseen,
    display_name,
    judged_by,
    make_stage,
    material_of,
    read_items,
)


class Cascade:
    """Judges from cheapest to strongest; each item's verdict comes from the first judge confident enough.

    ```python
    cascade = jw.Cascade([jw.PairwiseJudge("local"), jw.PairwiseJudge("openai/gpt-4o")], target_agreement=0.9)
    cascade.calibrate(labelled_pairs)          # question, response_a, response_b, label ("A" | "B" | "tie")
    result = cascade.run(new_pairs)            # result.table, result.summary(), result.chart()
    ```

    Stages are all pairwise (`PairwiseJudge`, `PairwisePanel`; verdict "A", "B" or "tie") or all pointwise
    (`LLMJudge`, `LLMPanel` on prompt/response rows; verdict the answer label, or "pass"/"fail" at
    `pass_threshold`). A judge's confidence is its probability of its verdict; a panel's is the share of its
    judges that gave it (the paper's "simulated annotators": `jw.cascade.simulated_annotators`). An aligned judge
    (`judge.align(labelled)`) carries a calibration, and its confidence is then its calibrated chance that the
    person agrees with the verdict; calibrate the cascade on labelled rows the alignment did not use (an
    InputError says so otherwise).

    Rows may be conversations, as the stages read them: for pointwise stages a column of message lists (or their
    JSON) named by `conversation_col=`, one conversation per row, judged under `target=` ("last_turn" or "whole";
    by default the stages' own); for pairwise stages the columns history (with response_a, response_b) or
    conversation_a and conversation_b. The calibration records what the judges read of each row (`material`:
    texts, conversations under a target, replies to a shared history, or two conversations under a target), and
    `run` and `estimate_cost` judge that: its target by default, and rows of another kind are an InputError before
    any call, in any cascade the calibration is given to (the thresholds hold for the judgments they were
    certified on). A calibration saved before the material was recorded checks nothing.

    **What is guaranteed.** Suppose the labelled rows given to `calibrate` and the items later given to `run`
    are independent draws from the same population, and the judges behave the same on both (same models,
    prompts and settings). Then, with probability at least 1 − `delta` over the draw of the labelled rows, a
    verdict the cascade gives agrees with the human label with probability at least `target_agreement`
    (P(verdict = human label | the cascade decided) ≥ target). Abstained items get no verdict and no claim.
    `delta` is split evenly over the stages (Bonferroni), so the statement holds for every stage's verdicts at
    once. It is a statement about the population of items: the agreement measured on a finite batch scatters
    around it. Every test is an exact binomial test, valid at any sample size (no normal approximation). Two
    steps follow the paper rather than the textbook fixed-sequence argument, which wants candidates fixed before
    the data: the candidate thresholds are the confidences seen on the labelled rows, and a later stage is
    certified on the labelled rows its predecessors escalated, treated as a fresh sample of the escalated items
    (the earlier thresholds were chosen on the same rows). `jw.cascade.simulate` checks the guarantee with
    judges that err on the same hard items and with a second judge good exactly where the first is bad. Labels
    from other annotators, a different population, or judges changed after calibration void the guarantee.
    """

    def __init__(
        self,
        judges: Sequence[Any],
        target_agreement: float = 0.9,
        delta: float = 0.1,
        *,
        pass_threshold: float | None = None,
        names: Sequence[str] | None = None,
    ) -> None:
        self.target_agreement = _check_level("target_agreement", target_agreement)
        self.delta = _check_level("delta", delta)
        if pass_threshold is not None and (
            isinstance(pass_threshold, bool)
            or not isinstance(pass_threshold, (int, float))
            or not 0.0 <= pass_threshold <= 1.0
        ):
            raise ConfigurationError(f"pass_threshold must be a normalised score in [0, 1], got {pass_threshold!r}")
        self.pass_threshold = None if pass_threshold is None else float(pass_threshold)
        if isinstance(judges, (str, bytes)) or not isinstance(judges, Sequence):
            raise ConfigurationError(f"give the judges as a list, cheapest first; got {type(judges).__name__}")
        judges = list(judges)
        if not judges:
            raise ConfigurationError("a cascade needs at least one judge")
        stage_names = list(names) if names is not None else _unique([display_name(j) for j in judges])
        if len(stage_names) != len(judges):
            raise ConfigurationError(f"{len(stage_names)} names given for {len(judges)} judges")
        if len(set(stage_names)) != len(stage_names):
            raise ConfigurationError(f"stage names must be unique, got {stage_names}")
        self.judges = judges
        self.stages: list[Stage] = [make_stage(j, n, self.pass_threshold) for j, n in zip(judges, stage_names)]
        kinds = {stage.kind for stage in self.stages}
        if len(kinds) > 1:
            listed = ", ".join(f"{s.name} ({s.kind})" for s in self.stages)
            raise ConfigurationError(f"a cascade's stages must all judge pairs or all judge single responses: {listed}")
        self.kind: Kind = self.stages[0].kind
        if self.kind == "pairwise" and self.pass_threshold is not None:
            raise ConfigurationError("pass_threshold is for pointwise judges; pairwise verdicts are A, B or tie")
        self.labels: tuple[str, ...] = self.stages[0].labels()
        for stage in self.stages[1:]:
            if set(stage.labels()) != set(self.labels):
                raise ConfigurationError(
                    f"every stage must answer with the same labels: {self.stages[0].name} uses "
                    f"{', '.join(self.labels)}, {stage.name} {', '.join(stage.labels())}"
                )
        self.sources = [stage.confidence_source() for stage in self.stages]
        self.calibration: Calibration | None = None

    @property
    def names(self) -> list[str]:
        return [stage.name for stage in self.stages]

    def __repr__(self) -> str:
        state = "not calibrated" if self.calibration is None else f"thresholds={self.calibration.thresholds}"
        return (
            f"Cascade({self.names}, target_agreement={self.target_agreement}, delta={self.delta}, {self.kind}, {state})"
        )

    def minimum_labelled_rows(self) -> int:
        """The fewest labelled rows that can certify the target at all (every one agreeing), δ split by stage."""
        return minimum_rows(self.target_agreement, self.delta / len(self.stages))

    def with_target(self, target_agreement: float, delta: float | None = None) -> Cascade:
        """A copy aiming at another target (and δ), refit on the calibration's judgments: no call is made."""
        delta = self.delta if delta is None else delta
        copy = Cascade(self.judges, target_agreement, delta, pass_threshold=self.pass_threshold, names=self.names)
        if self.calibration is not None:
            copy.calibration = self.calibration.at(copy.target_agreement, copy.delta)
        return copy

    # --- reading rows ----------------------------------------------------------------------------------------

    def _read(
        self, data: Any, conversation_col: str | None, target: str | None, calibration: Calibration | None = None
    ) -> tuple[list[Any], pd.DataFrame, Material | None]:
        """(the items, their table, what the judges read of each row) of a batch; given a `calibration`, rows are
        judged as its labelled rows were (its target by default), and rows of another kind are an InputError."""
        if calibration is not None:
            target = _calibrated_target(self.kind, calibration, data, conversation_col, target)
        items, frame = read_items(self.kind, data, conversation_col, target, judged_by(self.stages))
        material = material_of(self.kind, frame, items)
        if calibration is not None:
            _check_material(calibration.material, material)
        return items, frame, material

    # --- checking input --------------------------------------------------------------------------------------

    def _labels_of(self, frame: pd.DataFrame, label: str, *, required: bool) -> list[str | None] | None:
        """The human labels in `label`, normalised to the stages' label set; InputError naming the bad rows.

        Calibration (`required`) needs a label on every row; a run may have some rows unlabelled (None)."""
        if label not in frame.columns:
            if not required:
                return None
            raise InputError(
                f"no label column {label!r} in the labelled rows (columns: {', '.join(map(str, frame.columns))}); "
                "calibration needs a human label per row"
            )
        values = frame[label].tolist()
        missing = [i for i, v in enumerate(values) if v is None or (isinstance(v, float) and math.isnan(v))]
        if missing and required:
            raise InputError(f"column {label!r} has no label at rows {_positions(missing)}; drop those rows first")
        absent = set(missing)
        normalised = [None if i in absent else self._label(v) for i, v in enumerate(values)]
        unknown = sorted({repr(v) for i, (v, n) in enumerate(zip(values, normalised)) if n is None and i not in absent})
        if unknown:
            raise InputError(
                f"labels {', '.join(unknown)} in column {label!r} are not among the judges' verdicts "
                f"({', '.join(self.labels)})"
                + ("; pass/fail labels may be given as True/False or 1/0" if self.pass_threshold is not None else "")
            )
        return normalised

    def _label(self, value: Any) -> str | None:
        if self.pass_threshold is not None:
            if isinstance(value, (bool, np.bool_)):
                return PASS if value else FAIL
            if isinstance(value, (int, np.integer, float)) and value in (0, 1):
                return PASS if value == 1 else FAIL
            text = str(value).strip().lower()
            return text if text in (PASS, FAIL) else None
        if isinstance(value, (int, np.integer)) or (isinstance(value, float) and value.is_integer()):
            text = str(int(value))
        else:
            text = str(value)
        return text if text in self.labels else None

    # --- calibrating -----------------------------------------------------------------------------------------

    def calibrate(
        self,
        labelled: pd.DataFrame,
        label: str = "label",
        *,
        conversation_col: str | None = None,
        target: str | None = None,
        progress: bool | Progress = True,
    ) -> Calibration:
        """Run every stage on the labelled rows and certify a threshold per stage; works inside Jupyter.

        `labelled` has the rows `run` takes plus a column of human labels (`label`); its rows may be conversations
        (`conversation_col`, `target`: see the class). Raises InputError before any call when a label is missing or
        not a verdict the judges can give, when a conversation is malformed, when there are too few rows to
        certify the target even if every verdict agreed (`minimum_labelled_rows()`), or when an aligned stage was
        aligned on some of these rows.
        """
        return run_sync(
            self.acalibrate(labelled, label, conversation_col=conversation_col, target=target, progress=progress)
        )

    async def acalibrate(
        self,
        labelled: pd.DataFrame,
        label: str = "label",
        *,
        conversation_col: str | None = None,
        target: str | None = None,
        progress: bool | Progress = True,
    ) -> Calibration:
        """Async twin of `calibrate`."""
        items, frame, material = self._read(labelled, conversation_col, target)
        labels = self._labels_of(frame, label, required=True)
        assert labels is not None and None not in labels
        needed = self.minimum_labelled_rows()
        if len(items) < needed:
            raise InputError(
                f"{len(items)} labelled rows cannot certify {self.target_agreement:.1%} agreement at δ = "
                f"{self.delta:g} ({len(self.stages)} stage(s), δ/{len(self.stages)} each): even if every verdict "
                f"agreed, that needs at least {needed} rows. Label more rows, lower target_agreement, or raise delta"
            )
        check_unseen(self.stages, items)
        for stage in self.stages:
            stage.check()
        rows, count = len(items), len(self.stages)
        confidence = np.full((rows, count), np.nan)
        agrees = np.zeros((rows, count), dtype=bool)
        calls, cost, seconds = np.zeros((rows, count)), np.zeros((rows, count)), np.zeros((rows, count))
        for j, stage in enumerate(self.stages):
            verdicts = await self._judge(stage, items, progress, "calibrating")
            for i, v in enumerate(verdicts):
                if v.verdict is not None and v.confidence is not None:
                    confidence[i, j] = v.confidence
                agrees[i, j] = v.verdict is not None and v.verdict == labels[i]
                calls[i, j], seconds[i, j] = v.calls, v.seconds
                cost[i, j] = np.nan if v.cost_usd is None else v.cost_usd
            if np.isnan(confidence[:, j]).all():
                errors = sorted({v.error for v in verdicts if v.error})
                raise ConfigurationError(
                    f"stage {stage.name!r} gave no confident verdict on any of the {rows} labelled rows"
                    + (f"; errors: {'; '.join(errors[:3])}" if errors else "")
                )
        fits = fit_cascade(confidence, agrees, self.target_agreement, self.delta)
        self.calibration = Calibration(
            self.names,
            self.target_agreement,
            self.delta,
            fits,
            confidence,
            agrees,
            calls,
            cost,
            seconds,
            list(self.sources),
            material,
        )
        return self.calibration

    async def _judge(
        self,
        stage: Stage,
        items: list[Any],
        progress: bool | Progress,
        doing: str,
        session: CallSession | None = None,
    ) -> list[StageVerdict]:
        """One stage's verdicts on `items`, with a progress bar of its own (in a run's `session` when given)."""
        units = stage.progress_units(len(items))
        async with run_scope(progress, units, f"{doing}: {stage.name}", session=session) as run:
            return await stage.ajudge(items, run)

    # --- running ---------------------------------------------------------------------------------------------

    def run(
        self,
        data: pd.DataFrame,
        *,
        label: str | None = None,
        conversation_col: str | None = None,
        target: str | None = None,
        progress: bool | Progress = True,
        max_cost_usd: float | None = None,
    ) -> CascadeResult:
        """Judge every item through the cascade; works inside Jupyter.

        Items start at the first stage; an item moves on while the stage's confidence is below its threshold
        (or it gave no verdict), and abstains after the last. A stage that certified nothing is skipped. When
        the data has human labels (column `label`, default "label" if present), the result reports the
        agreement on the decided items. Rows are judged as the calibration's were (`Calibration.material`): rows
        of conversations (`conversation_col`) under its target, which `target` may only repeat; rows of another
        kind are an InputError before any call. `max_cost_usd` is the run's budget, over every stage: no call
        starts that could take the spend past it; a stage's verdict not run has the error `budget: ...` and the
        item goes on as if the stage had not been sure (so it abstains at the end when no stage decided).
        """
        return run_sync(
            self.arun(
                data,
                label=label,
                conversation_col=conversation_col,
                target=target,
                progress=progress,
                max_cost_usd=max_cost_usd,
            )
        )

    async def arun(
        self,
        data: pd.DataFrame,
        *,
        label: str | None = None,
        conversation_col: str | None = None,
        target: str | None = None,
        progress: bool | Progress = True,
        max_cost_usd: float | None = None,
    ) -> CascadeResult:
        """Async twin of `run`."""
        calibration = self._calibrated()
        items, frame, _ = self._read(data, conversation_col, target, calibration)
        column = label or "label"
        labels = self._labels_of(frame, column, required=label is not None)
        for stage in self.stages:
            stage.check()
        n = len(items)
        decided: list[tuple[str, StageVerdict] | None] = [None] * n
        spent = np.zeros((n, 3))  # calls, cost, seconds
        unknown_cost = np.zeros(n, dtype=bool)
        judgments: list[dict[str, Any]] = []
        open_items = list(range(n))
        async with run_scope(max_cost_usd=max_cost_usd, makers=[self]) as run:
            for stage, threshold in zip(self.stages, calibration.thresholds):
                if threshold is None or not open_items:
                    continue
                verdicts = await self._judge(stage, [items[i] for i in open_items], progress, "cascade", run.session)
                still_open = []
                for i, v in zip(open_items, verdicts):
                    trusted = v.verdict is not None and v.confidence is not None and v.confidence >= threshold
                    judgments.append(
                        {
                            "item": i,
                            "stage": stage.name,
                            "verdict": v.verdict,
                            "confidence": v.confidence,
                            "threshold": threshold,
                            "trusted": trusted,
                            "calls": v.calls,
                            "cached": v.cached,
                            "cost_usd": v.cost_usd,
                            "seconds": v.seconds,
                            "error": v.error,
                        }
                    )
                    spent[i] += (v.calls, v.cost_usd or 0.0, v.seconds)
                    unknown_cost[i] |= v.cost_usd is None
                    if trusted:
                        decided[i] = (stage.name, v)
                    else:
                        still_open.append(i)
                open_items = still_open
        table = frame.copy()
        outcome = pd.DataFrame(
            {
                "stage": [d[0] if d else None for d in decided],
                "verdict": [d[1].verdict if d else None for d in decided],
                "confidence": [d[1].confidence if d else np.nan for d in decided],
                "abstained": [d is None for d in decided],
                "calls": spent[:, 0].astype(int),
                "cost_usd": np.where(unknown_cost, np.nan, spent[:, 1]),
                "seconds": spent[:, 2],
            },
            columns=ITEM_COLUMNS,
        )
        table = pd.concat([table.drop(columns=[c for c in ITEM_COLUMNS if c in table.columns]), outcome], axis=1)
        if labels is not None:
            table["agrees"] = [
                None if d is None or lab is None else d[1].verdict == lab for d, lab in zip(decided, labels)
            ]
        return reported(
            CascadeResult(
                table=table,
                judgments=pd.DataFrame(judgments, columns=JUDGMENT_COLUMNS),
                calibration=calibration,
                label_column=column if labels is not None else None,
                provenance=provenance(self),
            )
        )

    def _calibrated(self) -> Calibration:
        if self.calibration is None:
            raise ConfigurationError(
                "calibrate the cascade on human-labelled rows first (cascade.calibrate(labelled_df)): without "
                "thresholds there is nothing to guarantee"
            )
        return self.calibration

    # --- cost ------------------------------------------------------------------------------------------------

    def estimate_cost(
        self, data: pd.DataFrame, *, conversation_col: str | None = None, target: str | None = None
    ) -> CascadeCostEstimate:
        """Tokens, calls and dollars the cascade would spend on `data`, without a call.

        Before calibration every item is assumed to reach every stage (the most it can cost); after, each
        stage's share of the items is the share of the labelled rows that reached it. Conversations
        (`conversation_col`, `target`) are counted as the judges would read them; after calibration, as `run`
        would judge them (rows of another kind than the calibration's are an InputError).
        """
        items, _, _ = self._read(data, conversation_col, target, self.calibration)
        reach = None
        if self.calibration is not None:
            reach = self.calibration.reached().mean(axis=0).tolist() if self.calibration.rows else None
        return estimate_cascade(self.stages, items, reach)


def _unique(names: list[str]) -> list[str]:
    """Names made unique by numbering repeats: "local", "local #2"."""
    out: list[str] = []
    for name in names:
        candidate, k = name, 2
        while candidate in out:
            candidate, k = f"{name} #{k}", k + 1
        out.append(candidate)
    return out


def _calibrated_target(
    kind: Kind, calibration: Calibration, data: Any, conversation_col: str | None, target: str | None
) -> str | None:
    """`target`, else for rows of conversations with a choice of target the one the calibration judged."""
    conversations = bool(conversation_col) or (
        kind == "pairwise" and isinstance(data, pd.DataFrame) and "conversation_a" in data.columns
    )
    calibrated = material_target(calibration.material)
    return calibrated if target is None and conversations and calibrated is not None else target


def _check_material(calibrated: str | None, material: str | None) -> None:
    """InputError when rows would be judged on other material than the calibration's labelled rows were (nothing
    to check when the calibration did not record it, or there are no rows)."""
    if calibrated is None or material is None or material == calibrated:
        return
    raise InputError(
        f"the cascade was calibrated on {describe_material(calibrated)} and these rows would be judged as "
        f"{describe_material(material)}: its thresholds hold for the judgments they were certified on; run it on "
        "rows of the same kind (and target), or calibrate it on labelled rows of this kind"
    )


def _positions(indices: list[int]) -> str:
    return ", ".join(map(str, indices[:10])) + (" ..." if len(indices) > 10 else "")
