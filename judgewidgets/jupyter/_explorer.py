"""Disagreement explorer: a judge × item heatmap; picking an item shows each judge's score and explanation."""

from __future__ import annotations

import contextlib
import html
import warnings
from typing import Any

import pandas as pd

from ._chart_widget import chart_widget


class DisagreementModel:
    """The explorer's logic over a PanelResult: items ranked by disagreement, and each judge's view of one."""

    def __init__(self, result: Any) -> None:
        self.result = result
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # missing votes are shown in the explorer itself
            self.table = result.to_df()

    def ranked_items(self) -> list[int]:
        """Item indices, most disputed first."""
        return self.table["disagreement"].fillna(-1).sort_values(ascending=False, kind="stable").index.tolist()

    def details(self, item: int) -> pd.DataFrame:
        """judge, score, explanation, error for one item."""
        votes = self.result.votes
        rows = votes[votes["item"] == item][["judge", "score", "explanation", "error"]]
        return rows.reset_index(drop=True)

    def label(self, item: int) -> str:
        row = self.table.loc[item]
        prompt = " ".join(str(row["prompt"]).split())
        return f"#{item} · spread {row['disagreement']:.2f} · {prompt[:60]}"


class DisagreementExplorer:
    """`DisagreementExplorer(panel_result)`: click a heatmap cell (or pick from the list) to read the judges."""

    def __init__(self, result: Any) -> None:
        import altair as alt
        import ipywidgets as w

        self.model = DisagreementModel(result)
        chart = result.chart()
        heat = chart.hconcat[0]
        pick = alt.selection_point(name="pick", fields=["item"], on="click")
        heat.layer[0] = heat.layer[0].add_params(pick)
        self.chart = chart_widget(chart)
        self.picker = w.Dropdown(
            options=[(self.model.label(i), i) for i in self.model.ranked_items()],
            description="item",
            layout=w.Layout(width="640px"),
        )
        self.details = w.HTML()
        self.picker.observe(lambda change: self.show(change["new"]), names="value")
        with contextlib.suppress(Exception):  # older altair has no selection traits; the dropdown still works
            self.chart.selections.observe(self._on_select, names=["pick"])
        self.widget = w.VBox([self.chart, self.picker, self.details])
        self.widget.add_class("judgewidgets-explorer")
        if self.picker.options:
            self.show(self.picker.value)

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self.widget)

    def _on_select(self, change: Any) -> None:
        value = getattr(change["new"], "value", None) or []
        if value and "item" in value[0]:
            self.picker.value = int(value[0]["item"])

    def show(self, item: int) -> None:
        row = self.model.table.loc[item]
        rows = "".join(
            f"<tr><td><code>{html.escape(str(d.judge))}</code></td><td>{_score(d.score)}</td>"
            f"<td>{html.escape(str(d.explanation or ''))}</td><td>{html.escape(str(d.error or ''))}</td></tr>"
            for d in self.model.details(item).itertuples()
        )
        self.details.value = (
            f"<p><b>Prompt:</b> {html.escape(str(row['prompt']))}<br>"
            f"<b>Response:</b> {html.escape(str(row['response']))}</p>"
            f"<table><tr><th>judge</th><th>score</th><th>explanation</th><th>error</th></tr>{rows}</table>"
        )


def _score(value: float) -> str:
    return "" if pd.isna(value) else f"{value:.2f}"
