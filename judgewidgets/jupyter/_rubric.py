"""Rubric view: the judge × criterion agreement heatmap; clicking a criterion lists every vote on it."""

from __future__ import annotations

import contextlib
import html
from typing import Any

import pandas as pd

from .._errors import InputError
from ._chart_widget import chart_widget

_COLUMNS = ["item", "submission", "judge", "outcome", "explanation", "error"]


class RubricModel:
    """The rubric view's logic over a GradingResult (`grader.grade_many(...)`): one criterion's votes."""

    def __init__(self, result: Any) -> None:
        self.result = result
        self.names = [c.name for c in result.criteria]

    def votes(self, criterion: str) -> pd.DataFrame:
        """Every judge's vote on `criterion`, item by item: item, submission, judge, outcome (the verdict or the
        option chosen; "(failed)" where the call failed), explanation and error."""
        if criterion not in self.names:
            raise InputError(f"no criterion {criterion!r} in this rubric; there are {self.names}")
        votes = self.result.votes_df()
        if votes.empty:
            return pd.DataFrame(columns=_COLUMNS)
        mine = votes[votes["criterion"] == criterion]
        outcome = mine["verdict"].fillna(mine["selected_label"]).fillna("(failed)").where(mine["error"].isna())
        return pd.DataFrame(
            {
                "item": mine["item"],
                "submission": [self.result.submissions[i] for i in mine["item"]],
                "judge": mine["judge_id"],
                "outcome": outcome.fillna("(failed)"),
                "explanation": mine["explanation"].fillna(""),
                "error": mine["error"].fillna(""),
            }
        ).reset_index(drop=True)


class RubricView:
    """`RubricView(grading_result)`: the agreement heatmap; click a cell to read every vote on its criterion."""

    def __init__(self, result: Any) -> None:
        import ipywidgets as w

        from ..rubrics._charts import CRITERION

        self.model = RubricModel(result)
        self.chart = chart_widget(result.agreement_chart())
        self.votes = w.HTML()
        with contextlib.suppress(Exception):  # older altair has no selection traits
            self.chart.selections.observe(self._on_pick, names=[CRITERION])
        self.widget = w.VBox([self.chart, self.votes])
        self.widget.add_class("judgewidgets-rubric")

    def _on_pick(self, change: Any) -> None:
        value = getattr(change["new"], "value", None) or []
        self.show(str(value[0]["criterion"]) if value and "criterion" in value[0] else None)

    def show(self, criterion: str | None) -> None:
        """List every vote on `criterion` (None clears the list)."""
        if criterion is None:
            self.votes.value = ""
            return
        votes = self.model.votes(criterion)
        counts = ", ".join(f"{n} {html.escape(str(o))}" for o, n in votes["outcome"].value_counts().items())
        self.votes.value = f"<p><b>{html.escape(criterion)}</b>: {len(votes)} votes ({counts})</p>" + votes.to_html(
            index=False, na_rep=""
        )

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self.widget)
