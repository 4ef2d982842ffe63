"""Picking a cascade's target agreement: what each target buys on the labelled rows, without a call.

The logic of the `CascadeTargetPicker` widget, as a plain object tested without a browser.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import pandas as pd

from .._errors import ConfigurationError
from ._bounds import _check_level
from ._calibration import DEFAULT_TARGETS, Calibration, relative

if TYPE_CHECKING:
    import altair as alt

    from ._cascade import Cascade


class TargetPickerModel:
    """A calibrated cascade refit at any target: thresholds, coverage, each stage's share and the cost relative
    to the last stage alone (all on the labelled rows), and the cascade at the chosen target (`picked()`)."""

    def __init__(self, cascade: Cascade, targets: Sequence[float] = DEFAULT_TARGETS) -> None:
        if cascade.calibration is None:
            raise ConfigurationError("calibrate the cascade first: the picker refits its labelled judgments")
        self.cascade = cascade
        self.calibration: Calibration = cascade.calibration
        self.targets = sorted(float(t) for t in targets)
        self.sweep = self.calibration.sweep(self.targets)
        self.current = self.calibration
        self.target = self.calibration.target

    def set_target(self, target: float) -> Calibration:
        """Refit at `target` (no call); returns that calibration."""
        self.target = _check_level("target_agreement", target)
        self.current = self.calibration.at(self.target)
        return self.current

    def summary(self) -> dict[str, Any]:
        spent = self.current.per_item()
        shares = self.current.table().set_index("stage")["share"].to_dict()
        return {
            "target_agreement": self.target,
            "delta": self.current.delta,
            "thresholds": dict(zip(self.current.stages, self.current.thresholds)),
            "coverage": self.current.coverage,
            "shares": shares,
            "relative_calls": relative(spent["calls"], spent["last_stage_calls"]),
            "relative_cost": relative(spent["cost_usd"], spent["last_stage_cost_usd"]),
            "relative_seconds": relative(spent["seconds"], spent["last_stage_seconds"]),
            "guarantee": self.current.guarantee,
        }

    def describe(self) -> str:
        """The summary as HTML."""
        s = self.summary()
        stages = "".join(
            f"<tr><td>{html.escape(name)}</td><td>{_threshold(s['thresholds'][name])}</td>"
            f"<td>{s['shares'][name]:.1%}</td></tr>"
            for name in self.current.stages
        )
        cost = (
            ""
            if pd.isna(s["relative_calls"])
            else f"; calls per item {s['relative_calls']:.0%} of the last stage alone"
        )
        return (
            f"<p><b>Target {s['target_agreement']:.0%}</b>: the labelled rows' coverage {s['coverage']:.1%}{cost}.<br>"
            f"Guarantee: {html.escape(s['guarantee'])}.</p>"
            f"<table><tr><th>stage</th><th>trust at confidence ≥</th><th>share decided</th></tr>{stages}</table>"
        )

    def chart(self) -> alt.VConcatChart:
        from ._chart import cascade_chart

        return cascade_chart(self.sweep, self.target)

    def picked(self) -> Cascade:
        """The cascade at the chosen target (a copy; the original keeps its own)."""
        return self.cascade.with_target(self.target)


def _threshold(value: float | None) -> str:
    return "— (trusts nothing: skipped)" if value is None else f"{value:.3f}"
