"""The cascade target picker: a slider over the guaranteed agreement, and what each target buys."""

from __future__ import annotations

from typing import Any

from ..cascade import TargetPickerModel
from ._chart_widget import chart_widget


class CascadeTargetPicker:
    """`CascadeTargetPicker(calibrated_cascade)`: move the target, see the thresholds, coverage and cost change
    (refit on the calibration's labelled judgments, no call); `.cascade` is the cascade at the chosen target."""

    def __init__(self, cascade: Any) -> None:
        import ipywidgets as w

        self.model = TargetPickerModel(cascade)
        targets = self.model.targets
        self.slider = w.FloatSlider(
            value=min(max(self.model.target, targets[0]), targets[-1]),
            min=targets[0],
            max=targets[-1],
            step=0.01,
            description="target",
            readout_format=".0%",
            continuous_update=False,
        )
        self.details = w.HTML()
        self.chart = chart_widget(self.model.chart())
        self.slider.observe(lambda change: self.show(change["new"]), names="value")
        self.widget = w.VBox([self.slider, self.details, self.chart])
        self.widget.add_class("judgewidgets-cascade")
        self.show(self.slider.value)

    def show(self, target: float) -> None:
        self.model.set_target(target)
        self.details.value = self.model.describe()
        self.chart.chart = self.model.chart()

    @property
    def cascade(self) -> Any:
        """The cascade at the chosen target (a copy, refit without a call)."""
        return self.model.picked()

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self.widget)
