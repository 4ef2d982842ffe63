"""A chart that redraws in place while sequential judgments arrive (altair's JupyterChart, via anywidget)."""

from __future__ import annotations

import threading
import time
from typing import Any

from ._chart_widget import chart_widget

_MIN_INTERVAL_S = 0.25


class LiveConvergence:
    """Pass `update` as `on_update=` to `SequentialRater.rate`; display `widget` before rating.

    Redraws at most four times a second (the last snapshot, a finished result, is always drawn).
    """

    def __init__(self, min_interval: float = _MIN_INTERVAL_S) -> None:
        import ipywidgets as widgets

        self.status = widgets.HTML("<i>waiting for the first judgments…</i>")
        self.chart: Any = None
        self.widget = widgets.VBox([self.status])
        self.min_interval = min_interval
        self._last = 0.0
        self._lock = threading.Lock()
        self.updates = 0

    def update(self, snapshot: Any) -> None:
        """Redraw from a SequentialResult snapshot (called after every judgment, from any thread)."""
        finished = getattr(snapshot, "status", "running") != "running"
        now = time.monotonic()
        with self._lock:
            if not finished and now - self._last < self.min_interval:
                return
            self._last = now
            chart = snapshot.chart()
            if self.chart is None:
                self.chart = chart_widget(chart)
                self.widget.children = (self.status, self.chart)
            else:
                self.chart.chart = chart
            self.updates += 1
        half = getattr(snapshot, "half_width", float("nan"))
        self.status.value = (
            f"<b>{getattr(snapshot, 'status', 'running')}</b>: n = {getattr(snapshot, 'n', 0)}, "
            f"mean = {getattr(snapshot, 'mean', float('nan')):.3f} ± {half:.3f}"
        )
