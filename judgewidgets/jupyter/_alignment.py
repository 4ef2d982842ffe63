"""AlignmentView: an alignment report in tabs — the summary and chart, the candidates tried, the folds, the
confusion tables and the disagreements left to read. A thin view: everything it shows is the report's."""

from __future__ import annotations

import html
from typing import Any

import pandas as pd

from ._chart_widget import chart_widget

TEXT_SHOWN = 160  # characters of a long text shown in the disagreements table (the whole text on hover)


def disagreements_html(frame: pd.DataFrame) -> str:
    """The disagreements as an HTML table: long texts cut with the whole text in their tooltip."""
    if frame.empty:
        return "<p>The aligned judge agrees with every held-out label.</p>"
    frame = frame.drop(columns=[c for c in ("item", "who", "when") if c in frame.columns])  # the store's bookkeeping
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in frame.columns)
    rows = []
    for _, row in frame.iterrows():
        cells = []
        for value in row:
            text = f"{value:.3f}" if isinstance(value, float) else str(value)
            shown = text if len(text) <= TEXT_SHOWN else text[:TEXT_SHOWN] + "…"
            cells.append(f'<td title="{html.escape(text)}">{html.escape(shown)}</td>')
        rows.append("<tr>" + "".join(cells) + "</tr>")
    return f'<table class="judgewidgets-table"><tr>{head}</tr>{"".join(rows)}</table>'


class AlignmentView:
    """Tabs over an AlignmentReport (or a judge carrying one): what aligning changed, measured on held-out labels."""

    def __init__(self, report: Any) -> None:
        import ipywidgets as w

        self.report = getattr(report, "alignment_report", None) or report
        r = self.report
        summary = w.VBox([w.HTML(f"<p>{html.escape(r.summary())}</p>"), chart_widget(r.chart())])
        levers = w.HTML(r.levers.round(3).to_html(index=False))
        folds = w.HTML(r.per_fold.round(3).to_html(index=False))
        confusion = w.HTML(
            "".join(
                f"<p><b>{when}</b> (rows: the person's label)</p>{table.to_html()}"
                for when, table in r.confusion.items()
            )
        )
        disagreements = w.HTML(disagreements_html(r.disagreements))
        self.tabs = w.Tab(children=[summary, levers, folds, confusion, disagreements])
        for i, title in enumerate(("summary", "candidates", "folds", "confusion", "disagreements")):
            self.tabs.set_title(i, title)
        self.tabs.add_class("judgewidgets-alignment")
        self.widget = self.tabs

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self.widget)
