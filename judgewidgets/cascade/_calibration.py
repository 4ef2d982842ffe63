"""A calibrated cascade's thresholds and the labelled judgments they came from (refit at any target, no calls)."""

from __future__ import annotations

import dataclasses
import html
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import pandas as pd

from ._calibrate import BoolArray, FloatArray, IntArray, StageFit, fit_cascade, route

if TYPE_CHECKING:
    import altair as alt

DEFAULT_TARGETS = tuple(np.round(np.arange(0.50, 0.995, 0.01), 2).tolist())

Material = Literal[
    "texts",
    "conversations/last_turn",
    "conversations/whole",
    "history_replies",
    "conversation_pairs/last_turn",
    "conversation_pairs/whole",
]
"""What a judge reads of each row, which thresholds certified on one kind do not carry to another: texts (prompt
and response, or question and two responses); one conversation per row judged on its last turn or whole; two
replies to a shared history (the history shown once, then each reply); two conversations per row (each whole in
its own fence), judged on their last turns or whole."""

MATERIALS: dict[str, str] = {
    "texts": "texts (not conversations)",
    "conversations/last_turn": "conversations' last turns",
    "conversations/whole": "whole conversations",
    "history_replies": "two replies to a shared history (the history shown once)",
    "conversation_pairs/last_turn": "the last turns of two conversations per row (each in its own fence)",
    "conversation_pairs/whole": "whole conversations, two per row (each in its own fence)",
}


def describe_material(material: str | None) -> str:
    """The kind of material in words, for messages."""
    if material is None:
        return "material not recorded"
    return MATERIALS.get(material, repr(material))


def material_target(material: str | None) -> str | None:
    """The target a kind of material judges its conversations under ("last_turn" / "whole"), None for texts and
    replies to a shared history (always the reply, which is the last turn)."""
    if material is None or "/" not in material:
        return None
    return material.split("/", 1)[1]


def guarantee_text(target: float, delta: float, rows: int, stages: int) -> str:
    """What a calibration promises, in one sentence."""
    split = f", δ split over {stages} stages" if stages > 1 else ""
    return (
        f"agreement with the human labels ≥ {target:.1%} on the items the cascade decides, with probability ≥ "
        f"{1 - delta:.0%} over the draw of the {rows} labelled rows{split}"
    )


@dataclass
class Calibration:
    """Each stage's threshold, certified on labelled rows, and every stage's judgment of those rows.

    `thresholds[j]` is the confidence at or above which stage j's verdict is trusted (None: the stage certified
    nothing at this target and is skipped). The judgments are kept (`confidence`, `agrees`, and what each row
    cost each stage), so `at(target)` and `sweep()` refit the thresholds for other targets without a call.
    Coverage, agreement and costs here are measured on the labelled rows themselves (in-sample): the guarantee
    is only the statement in `guarantee`. `material` is what the judges read of each labelled row (`Material`:
    texts, conversations under a target, replies to a shared history, two conversations under a target); a cascade
    runs on rows of that kind only. None: not recorded (a calibration saved before it was), and nothing is checked.
    """

    stages: list[str]
    target: float
    delta: float
    fits: list[StageFit]
    confidence: FloatArray  # rows × stages; NaN where the stage gave no verdict
    agrees: BoolArray  # rows × stages: the stage's verdict equals the human label
    calls: FloatArray  # rows × stages
    cost_usd: FloatArray  # rows × stages; NaN where the price is unknown
    seconds: FloatArray  # rows × stages
    sources: list[str] = field(default_factory=list)  # where each stage's confidence comes from
    material: Material | None = None  # what the judges read of each row; None: not recorded

    @property
    def thresholds(self) -> list[float | None]:
        return [fit.threshold for fit in self.fits]

    @property
    def rows(self) -> int:
        return int(self.confidence.shape[0])

    @property
    def guarantee(self) -> str:
        return guarantee_text(self.target, self.delta, self.rows, len(self.stages))

    def deciding(self) -> IntArray:
        """The stage (0-based) that decides each labelled row, −1 when it abstains."""
        return route(self.confidence, self.thresholds)

    @property
    def coverage(self) -> float:
        """Share of the labelled rows the cascade decides at these thresholds (in-sample)."""
        return float((self.deciding() >= 0).mean()) if self.rows else 0.0

    def at(self, target: float, delta: float | None = None) -> Calibration:
        """The calibration for another target (and δ), refit on the same judgments: no call is made."""
        delta = self.delta if delta is None else delta
        fits = fit_cascade(self.confidence, self.agrees, target, delta)
        return Calibration(
            self.stages,
            float(target),
            float(delta),
            fits,
            self.confidence,
            self.agrees,
            self.calls,
            self.cost_usd,
            self.seconds,
            list(self.sources),
            self.material,
        )

    def reached(self) -> BoolArray:
        """rows × stages: which stages would judge each labelled row (a stage that certified nothing is skipped)."""
        deciding = self.deciding()
        reached = np.zeros_like(self.agrees)
        for stage, threshold in enumerate(self.thresholds):
            if threshold is not None:
                reached[:, stage] = (deciding < 0) | (deciding >= stage)
        return reached

    def per_item(self) -> dict[str, float]:
        """Expected calls, cost and model seconds per item at these thresholds, and for the last stage alone."""
        reached = self.reached()
        out: dict[str, float] = {}
        for key, values in (("calls", self.calls), ("cost_usd", self.cost_usd), ("seconds", self.seconds)):
            out[key] = float(np.where(reached, values, 0.0).sum(axis=1).mean()) if self.rows else float("nan")
            out[f"last_stage_{key}"] = float(values[:, -1].mean()) if self.rows else float("nan")
        return out

    def table(self) -> pd.DataFrame:
        """One row per stage: threshold, labelled rows reaching it, trusted, share decided, in-sample agreement."""
        deciding = self.deciding()
        rows = []
        for stage, (name, fit) in enumerate(zip(self.stages, self.fits)):
            decided = deciding == stage
            rows.append(
                {
                    "stage": name,
                    "confidence": self.sources[stage] if stage < len(self.sources) else None,
                    "threshold": fit.threshold,
                    "reached": fit.reached,
                    "trusted": fit.trusted,
                    "share": float(decided.mean()) if self.rows else 0.0,
                    "agreement_in_sample": fit.agreement,
                    "calls_per_item": float(self.calls[:, stage].mean()) if self.rows else float("nan"),
                }
            )
        return pd.DataFrame(rows)

    def sweep(self, targets: Sequence[float] = DEFAULT_TARGETS) -> pd.DataFrame:
        """The calibration refit at each target: one row per target and stage (share of the labelled rows that
        stage decides), with the coverage and the calls, cost and seconds per item relative to running the last
        stage on every item (in-sample)."""
        rows = []
        for target in targets:
            fitted = self.at(float(target))
            deciding = fitted.deciding()
            spent = fitted.per_item()
            for stage, name in enumerate(self.stages):
                rows.append(
                    {
                        "target": float(target),
                        "stage": name,
                        "threshold": fitted.thresholds[stage],
                        "share": float((deciding == stage).mean()) if self.rows else 0.0,
                        "coverage": float((deciding >= 0).mean()) if self.rows else 0.0,
                        "relative_calls": relative(spent["calls"], spent["last_stage_calls"]),
                        "relative_cost": relative(spent["cost_usd"], spent["last_stage_cost_usd"]),
                        "relative_seconds": relative(spent["seconds"], spent["last_stage_seconds"]),
                    }
                )
        return pd.DataFrame(rows)

    def chart(self, targets: Sequence[float] = DEFAULT_TARGETS) -> alt.VConcatChart:
        """Coverage as the guaranteed agreement moves, each stage's share of the items, and the relative cost."""
        from ._chart import cascade_chart

        return cascade_chart(self.sweep(targets), self.target)

    def summary(self) -> dict[str, Any]:
        return {
            "target_agreement": self.target,
            "delta": self.delta,
            "labelled_rows": self.rows,
            "thresholds": self.thresholds,
            "coverage_in_sample": self.coverage,
            "guarantee": self.guarantee,
            "material": self.material,
        }

    def _repr_html_(self) -> str:
        head = (
            f"<p><b>Calibrated</b> on {self.rows} labelled rows{_of(self.material)}: {self.guarantee}. "
            f"The labelled rows' coverage at these thresholds: {self.coverage:.1%}.</p>"
        )
        return head + self.table().round(3)._repr_html_()


def _of(material: str | None) -> str:
    return "" if material is None else f" of {html.escape(describe_material(material))}"


def relative(value: float, reference: float) -> float:
    """value / reference, NaN when either is unknown or the reference is 0."""
    return value / reference if reference and not np.isnan(reference) and not np.isnan(value) else float("nan")


_ARRAYS = ("confidence", "agrees", "calls", "cost_usd", "seconds")


def calibration_parts(calibration: Calibration) -> tuple[dict[str, Any], pd.DataFrame, list[dict[str, Any]]]:
    """A calibration as data, to save with a cascade's result: its settings, a table of its labelled rows (one
    column per array and stage: `confidence/0`, `agrees/0`, ...) and each stage's fit."""
    columns = {
        f"{name}/{stage}": getattr(calibration, name)[:, stage]
        for name in _ARRAYS
        for stage in range(len(calibration.stages))
    }
    state = {
        "stages": list(calibration.stages),
        "target": calibration.target,
        "delta": calibration.delta,
        "sources": list(calibration.sources),
        "rows": calibration.rows,
        "material": calibration.material,
    }
    fits = [dataclasses.asdict(fit) for fit in calibration.fits]
    return state, pd.DataFrame(columns), fits


def calibration_from(state: dict[str, Any], rows: pd.DataFrame, fits: list[dict[str, Any]]) -> Calibration:
    """The calibration `calibration_parts` described (saved before `material` was recorded: None)."""
    count = len(state["stages"])

    def array(name: str, dtype: Any) -> Any:
        if not count or not len(rows):
            return np.zeros((int(state.get("rows", 0)), count), dtype=dtype)
        return np.column_stack([rows[f"{name}/{stage}"].to_numpy(dtype=dtype) for stage in range(count)])

    return Calibration(
        list(state["stages"]),
        float(state["target"]),
        float(state["delta"]),
        [StageFit(**fit) for fit in fits],
        array("confidence", float),
        array("agrees", bool),
        array("calls", float),
        array("cost_usd", float),
        array("seconds", float),
        list(state.get("sources") or []),
        state.get("material"),
    )
