"""What a cascade run returns: per item the deciding stage (or abstention), and the run's coverage and cost."""

from __future__ import annotations

import html
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from .._saved import Dump, Keepable, column_errors, usage_of_table
from ._calibration import Calibration, calibration_from, calibration_parts

if TYPE_CHECKING:
    import altair as alt

ITEM_COLUMNS = ["stage", "verdict", "confidence", "abstained", "calls", "cost_usd", "seconds"]
JUDGMENT_COLUMNS = [
    "item",
    "stage",
    "verdict",
    "confidence",
    "threshold",
    "trusted",
    "calls",
    "cached",
    "cost_usd",
    "seconds",
    "error",
]


@dataclass
class CascadeResult(Keepable):
    """A cascade's verdicts on a batch.

    `table` (also `to_df()`): the input columns, then per item the deciding `stage` (None when every stage
    escalated: `abstained`), its `verdict` and `confidence`, and what the item cost across the stages that
    judged it (`calls`, `cost_usd`, model `seconds`); with human labels, `agrees`. `judgments`: one row per item
    and stage that judged it. The guarantee is the calibration's (`guarantee`); `agreement` is what the labelled
    items of this run show.
    """

    table: pd.DataFrame
    judgments: pd.DataFrame
    calibration: Calibration
    label_column: str | None = None
    provenance: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    def _dump(self) -> Dump:
        """The table, the judgments and the calibration (its labelled rows and fits); the headline is the
        coverage, the agreement with labels and the calls and cost saved."""
        state, rows, fits = calibration_parts(self.calibration)
        summary = self.summary()
        metrics = {
            key: float(summary[key])
            for key in ("coverage", "agreement", "calls_saved", "cost_usd_saved", "target_agreement", "delta")
        }
        texts = [
            c for c in ("prompt", "response", "question", "response_a", "response_b", "reference") if c in self.table
        ]
        return Dump(
            kind="cascade",
            state={"calibration": state, "label_column": self.label_column},
            tables={"table": self.table, "judgments": self.judgments, "calibration_rows": rows},
            records={"calibration_fits": fits},
            metrics=metrics,
            usage=usage_of_table(self.judgments, calls="calls"),
            judges=list(self.calibration.stages),
            inputs=self.table[texts].to_dict("records") if texts else None,
            provenance=self.provenance,
        )

    @classmethod
    def _restore(cls, dump: Dump) -> CascadeResult:
        calibration = calibration_from(
            dump.state["calibration"], dump.table("calibration_rows"), dump.rows("calibration_fits")
        )
        return cls(
            table=dump.table("table"),
            judgments=dump.table("judgments"),
            calibration=calibration,
            label_column=dump.state.get("label_column"),
            provenance=dump.provenance,
        )

    @property
    def items(self) -> int:
        return len(self.table)

    @property
    def decided(self) -> int:
        return int((~self.table["abstained"]).sum())

    @property
    def coverage(self) -> float:
        """Share of the items a stage decided."""
        return self.decided / self.items if self.items else 0.0

    @property
    def guarantee(self) -> str:
        return self.calibration.guarantee

    @property
    def agreement(self) -> float:
        """Agreement with the human labels over the labelled items the cascade decided (NaN without labels)."""
        agrees = self._decided_labelled()
        return float(agrees.mean()) if len(agrees) else float("nan")

    def _decided_labelled(self) -> pd.Series:
        if "agrees" not in self.table.columns:
            return pd.Series([], dtype=bool)
        decided = self.table[~self.table["abstained"] & self.table["agrees"].notna()]
        return decided["agrees"].astype(bool)

    def to_df(self) -> pd.DataFrame:
        return self.table

    def stages(self) -> pd.DataFrame:
        """One row per stage: threshold, items judged and decided, share of all items, calls, cache hits, cost,
        model seconds and, with labels, the agreement of the items it decided."""
        rows = []
        judgments = self.judgments
        for name, threshold in zip(self.calibration.stages, self.calibration.thresholds):
            mine = judgments[judgments["stage"] == name]
            decided = self.table[self.table["stage"] == name]
            costs = mine["cost_usd"]
            row: dict[str, Any] = {
                "stage": name,
                "threshold": threshold,
                "judged": len(mine),
                "decided": len(decided),
                "share": len(decided) / self.items if self.items else 0.0,
                "calls": int(mine["calls"].sum()),
                "cached": int(mine["cached"].sum()),
                "cost_usd": float(costs.sum()) if costs.notna().all() else float("nan"),
                "seconds": float(mine["seconds"].sum()),
            }
            if "agrees" in self.table.columns:
                labelled = decided["agrees"].dropna()
                row["agreement"] = float(labelled.astype(bool).mean()) if len(labelled) else float("nan")
            rows.append(row)
        return pd.DataFrame(rows)

    def summary(self) -> dict[str, Any]:
        """Coverage, the guarantee, the labelled agreement, and the cost beside running the last stage on every
        item (that stage's calls, cost and seconds per item as measured on the labelled calibration rows)."""
        per_item = self.calibration.per_item()
        costs = self.table["cost_usd"]
        spent = {
            "calls": float(self.table["calls"].sum()),
            "cost_usd": float(costs.sum()) if costs.notna().all() else float("nan"),
            "seconds": float(self.table["seconds"].sum()),
        }
        out: dict[str, Any] = {
            "items": self.items,
            "decided": self.decided,
            "abstained": self.items - self.decided,
            "coverage": self.coverage,
            "target_agreement": self.calibration.target,
            "certified_agreement": self.calibration.target,  # the lower bound the calibration certified
            "delta": self.calibration.delta,
            "guarantee": self.guarantee,
            "labelled_decided": len(self._decided_labelled()),
            "agreement": self.agreement,
        }
        for key, value in spent.items():
            last = per_item[f"last_stage_{key}"] * self.items
            out[key] = value
            out[f"last_stage_alone_{key}"] = last
            # Abstaining on everything spends nothing and delivers nothing: no saving to report then.
            useful = self.decided and last and not np.isnan(last)
            out[f"{key}_saved"] = 1 - value / last if useful else float("nan")
        return out

    def chart(self) -> alt.VConcatChart:
        """The calibration's coverage / guaranteed-agreement chart, its current target marked."""
        return self.calibration.chart()

    def _repr_html_(self) -> str:
        s = self.summary()
        agreement = ""
        if not np.isnan(s["agreement"]):
            agreement = f" Agreement with the labels on the {s['labelled_decided']} labelled items decided: "
            agreement += f"{s['agreement']:.1%}."
        saved = (
            "" if np.isnan(s["calls_saved"]) else f" Calls saved beside the last stage alone: {s['calls_saved']:.0%}."
        )
        head = (
            f"<p><b>Cascade</b>: {s['decided']} of {s['items']} items decided ({s['coverage']:.1%} coverage), "
            f"{s['abstained']} abstained.{agreement}{saved}<br>Guarantee: {html.escape(s['guarantee'])}.</p>"
        )
        return self._noted_html(head + self.stages().round(4)._repr_html_())

    def _call_errors(self) -> list[str | None]:
        return column_errors(self.judgments, "error")

    def __repr__(self) -> str:
        return self._noted_text(f"CascadeResult: {len(self.table)} items\n{self.table!r}")
