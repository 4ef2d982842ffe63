"""Widgets over runs: a pager through a comparison's regressions, and a browser of a folder of saved runs.

Each is a thin ipywidgets view over a plain model (`RegressionPages`, `RunsBrowserModel`) tested without a
browser.
"""

from __future__ import annotations

import html
import math
from typing import TYPE_CHECKING, Any

import pandas as pd

from .._errors import ConfigurationError

if TYPE_CHECKING:
    from ._compare import RunComparison
    from ._log import Runs


class RegressionPages:
    """A comparison's regressions for one judge, worst first, `page_size` at a time."""

    def __init__(self, comparison: RunComparison, judge: str | None = None, page_size: int = 5) -> None:
        if isinstance(page_size, bool) or not isinstance(page_size, int) or page_size < 1:
            raise ConfigurationError(f"page_size must be a whole number ≥ 1, got {page_size!r}")
        self.comparison = comparison
        self.page_size = page_size
        self.judge = comparison.judges[0]
        self.rows = pd.DataFrame()
        self.page = 0
        self.choose(judge or self.judge)

    @property
    def judges(self) -> list[str]:
        return self.comparison.judges

    @property
    def pages(self) -> int:
        return max(1, math.ceil(len(self.rows) / self.page_size))

    def choose(self, judge: str) -> None:
        """Show `judge`'s regressions, from the first page."""
        self.rows = self.comparison.regressions(judge)
        self.judge = judge
        self.page = 0

    def next(self) -> None:
        self.page = min(self.page + 1, self.pages - 1)

    def previous(self) -> None:
        self.page = max(self.page - 1, 0)

    def current(self) -> pd.DataFrame:
        """The regressions on this page."""
        start = self.page * self.page_size
        return self.rows.iloc[start : start + self.page_size]

    def status(self) -> str:
        count = len(self.rows)
        return f"{self.judge}: {count} regression{'s' if count != 1 else ''} · page {self.page + 1} of {self.pages}"

    def html(self) -> str:
        """The page's items: rank, score before → after, the input, both responses and explanations."""
        if self.rows.empty:
            return f"<p>No item got worse for <b>{html.escape(self.judge)}</b>.</p>"
        names = self.comparison.names
        cards = []
        for rank, row in enumerate(self.current().to_dict("records"), self.page * self.page_size + 1):
            cards.append(
                "<div style='border-left:3px solid #d9534f;padding:4px 8px;margin:6px 0'>"
                f"<b>#{rank}</b> {row['before']:.2f} → {row['after']:.2f} ({row['delta']:+.2f})<br>"
                f"<b>Input:</b> {_escape(row.get('input'))}<br>"
                f"<b>{html.escape(names[0])}:</b> {_escape(row.get('response_before'))}"
                f"{_explained(row.get('explanation_before'))}<br>"
                f"<b>{html.escape(names[1])}:</b> {_escape(row.get('response_after'))}"
                f"{_explained(row.get('explanation_after'))}</div>"
            )
        return "".join(cards)


def _escape(value: Any) -> str:
    return html.escape(str(value)) if value is not None else "<i>none</i>"


def _explained(value: Any) -> str:
    return f" <i>— {html.escape(value)}</i>" if isinstance(value, str) and value else ""


class RegressionPager:
    """`comparison.pager()`: the regressions worst first, a page at a time, one judge at a time."""

    def __init__(self, comparison: RunComparison, judge: str | None = None, page_size: int = 5) -> None:
        import ipywidgets as w

        self.model = RegressionPages(comparison, judge, page_size)
        self.judge = w.Dropdown(options=self.model.judges, value=self.model.judge, description="judge")
        self.previous = w.Button(description="◀ worse", layout=w.Layout(width="90px"))
        self.next = w.Button(description="better ▶", layout=w.Layout(width="90px"))
        self.status = w.Label()
        self.page = w.HTML()
        self.judge.observe(lambda change: self._choose(change["new"]), names="value")
        self.previous.on_click(lambda _: self._move(self.model.previous))
        self.next.on_click(lambda _: self._move(self.model.next))
        self.widget = w.VBox([w.HBox([self.judge, self.previous, self.next, self.status]), self.page])
        self.widget.add_class("judgewidgets-regressions")
        self._show()

    def _choose(self, judge: str) -> None:
        self.model.choose(judge)
        self._show()

    def _move(self, step: Any) -> None:
        step()
        self._show()

    def _show(self) -> None:
        self.status.value = self.model.status()
        self.page.value = self.model.html()
        self.previous.disabled = self.model.page == 0
        self.next.disabled = self.model.page >= self.model.pages - 1

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self.widget)


class RunsBrowserModel:
    """The run log's table, and the comparison of two of its runs."""

    def __init__(self, runs: Runs) -> None:
        self.runs = runs
        self.table = runs.table
        self.comparison: RunComparison | None = None

    @property
    def names(self) -> list[str]:
        return [str(n) for n in self.table["name"]] if len(self.table) else []

    def defaults(self) -> tuple[str | None, str | None]:
        """The two latest runs (before, after)."""
        names = self.names
        if len(names) < 2:
            return (names[0] if names else None), None
        return names[-2], names[-1]

    def refresh(self) -> None:
        self.table = self.runs.table

    def compare(self, before: str, after: str) -> RunComparison:
        self.comparison = self.runs.compare(before, after)
        return self.comparison


class RunsBrowser:
    """`runs.browser()`: the saved runs as a table; pick two and compare them (the summary with its intervals, and
    the regressions, worst first)."""

    def __init__(self, runs: Runs) -> None:
        import ipywidgets as w

        self.model = RunsBrowserModel(runs)
        self.pager: RegressionPager | None = None
        before, after = self.model.defaults()
        self.table = w.HTML()
        self.before = w.Dropdown(options=self.model.names, value=before, description="before")
        self.after = w.Dropdown(options=self.model.names, value=after, description="after")
        self.button = w.Button(description="Compare", button_style="primary")
        self.refresh_button = w.Button(description="Refresh")
        self.result = w.VBox()
        self.button.on_click(lambda _: self.compare())
        self.refresh_button.on_click(lambda _: self.refresh())
        self.widget = w.VBox(
            [self.table, w.HBox([self.before, self.after, self.button, self.refresh_button]), self.result]
        )
        self.widget.add_class("judgewidgets-runs")
        self._show_table()

    def _show_table(self) -> None:
        shown = self.model.table.drop(columns=["path"], errors="ignore")
        self.table.value = shown.to_html(index=False, float_format=lambda v: f"{v:.3f}", na_rep="–")

    def refresh(self) -> None:
        self.model.refresh()
        self.before.options = self.after.options = self.model.names
        self._show_table()

    def compare(self) -> None:
        import ipywidgets as w

        if self.before.value is None or self.after.value is None:
            self.result.children = (w.HTML("<p>Pick two runs to compare.</p>"),)
            return
        try:
            comparison = self.model.compare(self.before.value, self.after.value)
        except ValueError as exc:  # InputError, SavedRunError: say why in place
            self.result.children = (w.HTML(f"<p><b>Cannot compare:</b> {html.escape(str(exc))}</p>"),)
            return
        self.pager = comparison.pager()
        self.result.children = (w.HTML(comparison._repr_html_()), self.pager.widget)

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self.widget)
