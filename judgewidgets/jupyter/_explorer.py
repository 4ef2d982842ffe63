"""Disagreement explorer: a judge × item heatmap; clicking a cell (or picking an item from the list) shows the item's
texts and every judge's score, raw answer, explanation and error; clicking a judge in the legend lights its column
and sums it up; dragging over the score distribution lists the items scored in that range. An item judged from a
conversation is shown as its turns (who said what, the judged turn marked), and a per-turn judgment
(`target="each_turn"`) gets a conversations × turns heatmap whose cells pick the turn."""

from __future__ import annotations

import contextlib
import html
import warnings
from typing import Any

import pandas as pd

from .._errors import InputError
from ..scoring._turn_chart import per_turn_items
from ._chart_widget import chart_widget
from ._turns import TURN_COLUMNS, judged_what, turn_rows, turns_html


class DisagreementModel:
    """The explorer's logic over a PanelResult: items ranked by disagreement, and each judge's view of one."""

    def __init__(self, result: Any) -> None:
        self.result = result
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # missing votes are shown in the explorer itself
            self.table = result.to_df()
        self.per_turn = _is_per_turn(result)
        """Whether the result is a per-turn judgment of conversations (it then has `turn_chart()`)."""

    def ranked_items(self) -> list[int]:
        """Item indices, most disputed first."""
        return self.table["disagreement"].fillna(-1).sort_values(ascending=False, kind="stable").index.tolist()

    def details(self, item: int) -> pd.DataFrame:
        """judge, score, raw (the answer as it came back), explanation, error for one item, and `shortened` (which
        turns a judge left out of a conversation too long for its context) when any judge had to."""
        votes = self.result.votes
        columns = ["judge", "score", "raw", "explanation", "error"]
        rows = votes[votes["item"] == item][columns + (["shortened"] if "shortened" in votes else [])]
        return rows.reset_index(drop=True)

    def scored_between(self, low: float, high: float, judge: str | None = None) -> pd.DataFrame:
        """The votes (item, judge, score) with a score in [low, high], of one judge or all; most disputed items
        first. What a drag over the score distribution selects."""
        votes = self.result.votes
        chosen = votes[votes["score"].between(min(low, high), max(low, high))]
        if judge is not None:
            chosen = chosen[chosen["judge"] == judge]
        order = {item: rank for rank, item in enumerate(self.ranked_items())}
        chosen = chosen.assign(_rank=chosen["item"].map(order)).sort_values(["_rank", "judge"], kind="stable")
        return chosen[["item", "judge", "score"]].reset_index(drop=True)

    def judge_summary(self, judge: str) -> dict[str, Any]:
        """One judge at a glance, what a click on it in the legend shows: its mean score, how many items it scored
        and failed, and the item where it stands furthest from the other judges' mean (None with one judge)."""
        votes = self.result.votes
        mine = votes[votes["judge"] == judge]
        if mine.empty:
            raise InputError(f"no judge {judge!r} in this result; there are {sorted(set(votes['judge']))}")
        scores = mine.set_index("item")["score"]
        others = votes[votes["judge"] != judge].groupby("item")["score"].mean()
        gap = (scores - others.reindex(scores.index)).abs().dropna()
        furthest = int(gap.idxmax()) if len(gap) else None
        return {
            "judge": judge,
            "mean": float(scores.mean()) if scores.notna().any() else float("nan"),
            "scored": int(scores.notna().sum()),
            "failed": int(mine["error"].notna().sum()),
            "furthest_item": furthest,
            "furthest_score": None if furthest is None else float(scores[furthest]),
            "others_mean": None if furthest is None else float(others[furthest]),
        }

    def turns(self, item: int) -> pd.DataFrame:
        """The item's conversation as rows (message, role, turn, text, judged, read: see `turn_rows`), up to the
        end of the judged turn; empty for an item that is not from a conversation."""
        view = self.result.items[item].conversation
        return turn_rows(view) if view is not None else pd.DataFrame(columns=TURN_COLUMNS)

    def conversation_html(self, item: int) -> str:
        """The item's conversation as escaped HTML, one block per message with its role, the judged turn marked;
        "" for an item that is not from a conversation."""
        view = self.result.items[item].conversation
        if view is None:
            return ""
        return f"<p><b>{html.escape(judged_what(view))}</b></p>{turns_html(view)}"

    def label(self, item: int) -> str:
        row = self.table.loc[item]
        prompt = " ".join(str(row["prompt"]).split())
        view = self.result.items[item].conversation
        if view is not None:
            where = f"conversation {view.index}" + (f", turn {view.turn}" if view.turn is not None else "")
            prompt = f"{where}: {prompt}"
        return f"#{item} · spread {row['disagreement']:.2f} · {prompt[:60]}"


class DisagreementExplorer:
    """`DisagreementExplorer(panel_result)`: click a heatmap cell (or pick from the list) to read the judges; click
    a judge in the legend to light its column and read its summary (click it again, or beside the legend, to
    clear); drag over the score distribution to list the scores in that range (the lit judge's only, when one
    is). For a per-turn judgment of conversations, `turn_chart` (conversations × turns) comes first, and
    clicking one of its cells shows that turn."""

    def __init__(self, result: Any) -> None:
        import ipywidgets as w

        from ..scoring._chart import BRUSH, JUDGE, PICK
        from ..scoring._turn_chart import TURN_PICK

        self.model = DisagreementModel(result)
        self.chart = chart_widget(result.chart())  # carries the pick and brush selections (scoring/_chart.py)
        self.picker = w.Dropdown(
            options=[(self.model.label(i), i) for i in self.model.ranked_items()],
            description="item",
            layout=w.Layout(width="640px"),
        )
        self.details = w.HTML()
        self.in_range = w.HTML()
        self.judge_line = w.HTML()
        self.lit_judge: str | None = None  # the judge picked in the legend
        self._range: tuple[float, float] | None = None  # the brushed score range
        self.picker.observe(lambda change: self.show(change["new"]), names="value")
        with contextlib.suppress(Exception):  # older altair has no selection traits; the dropdown still works
            self.chart.selections.observe(self._on_pick, names=[PICK])
            self.chart.selections.observe(self._on_brush, names=[BRUSH])
            self.chart.selections.observe(self._on_judge, names=[JUDGE])
        self.turn_chart: Any = None  # the per-turn heatmap's widget, for a per-turn judgment
        if self.model.per_turn:
            self.turn_chart = chart_widget(result.turn_chart())
            with contextlib.suppress(Exception):
                self.turn_chart.selections.observe(self._on_pick, names=[TURN_PICK])
        views = [self.chart, self.judge_line, self.in_range, self.picker, self.details]
        self.widget = w.VBox([self.turn_chart, *views] if self.turn_chart is not None else views)
        self.widget.add_class("judgewidgets-explorer")
        if self.picker.options:
            self.show(self.picker.value)

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self.widget)

    def _on_pick(self, change: Any) -> None:
        value = getattr(change["new"], "value", None) or []
        if value and "item" in value[0]:
            self.picker.value = int(value[0]["item"])

    def _on_brush(self, change: Any) -> None:
        bounds = (getattr(change["new"], "value", None) or {}).get("score")
        if bounds:
            self.show_range(*bounds)
        else:
            self.show_range(None, None)

    def _on_judge(self, change: Any) -> None:
        value = getattr(change["new"], "value", None) or []
        self.show_judge(str(value[0]["judge"]) if value and "judge" in value[0] else None)

    def show_judge(self, judge: str | None) -> None:
        """Light `judge` (what clicking it in the legend does): its summary above the list, and a brushed range
        lists its scores only. None clears it."""
        self.lit_judge = judge
        if judge is None:
            self.judge_line.value = ""
        else:
            s = self.model.judge_summary(judge)
            failed = f", {s['failed']} failed" if s["failed"] else ", none failed"
            furthest = (
                ""
                if s["furthest_item"] is None
                else f"; furthest from the other judges on item #{s['furthest_item']} "
                f"({_score(s['furthest_score'])} against their {_score(s['others_mean'])})"
            )
            self.judge_line.value = (
                f"<p><b>{html.escape(judge)}</b> (lit in the chart): mean score {_score(s['mean'])} over "
                f"{s['scored']} items{failed}{furthest}</p>"
            )
        if self._range is not None:
            self.show_range(*self._range)

    def show_range(self, low: float | None, high: float | None) -> None:
        """List the scores in [low, high] (the lit judge's only, when one is; None clears the list)."""
        if low is None or high is None:
            self._range = None
            self.in_range.value = ""
            return
        self._range = (low, high)
        chosen = self.model.scored_between(low, high, judge=self.lit_judge)
        rows = "".join(
            _row(
                str(r.item),
                f"<code>{html.escape(str(r.judge))}</code>",
                _score(r.score),
                html.escape(self.model.label(r.item).split(" · ", 2)[-1]),
            )
            for r in chosen.itertuples()
        )
        whose = f" by {html.escape(self.lit_judge)}" if self.lit_judge is not None else ""
        self.in_range.value = (
            f"<p><b>{len(chosen)} score{_plural(len(chosen))}{whose} in "
            f"[{min(low, high):.2f}, {max(low, high):.2f}]</b></p>"
            f"{_TABLE}{_head('item', 'judge', 'score', 'prompt')}{rows}</table>"
        )

    def show(self, item: int) -> None:
        row = self.model.table.loc[item]
        rows = "".join(
            _row(
                f"<code>{html.escape(str(d.judge))}</code>",
                _score(d.score),
                f"<code>{html.escape(str(d.raw or ''))}</code>",
                html.escape(str(d.explanation or "")),
                html.escape(str(d.error or "")),
            )
            for d in self.model.details(item).itertuples()
        )
        reference = row.get("reference")
        # an item from a conversation shows its turns in place of the prompt and response
        texts = self.model.conversation_html(item) or (
            f"<p><b>Prompt:</b> {html.escape(str(row['prompt']))}<br>"
            f"<b>Response:</b> {html.escape(str(row['response']))}</p>"
        )
        self.details.value = (
            texts
            + (f"<p><b>Reference:</b> {html.escape(reference)}</p>" if isinstance(reference, str) else "")
            + f"{_TABLE}{_head('judge', 'score', 'answer', 'explanation', 'error')}{rows}</table>"
        )


# The widget's HTML has no table style of its own: without padding, neighbouring headers read as one
# ("explanation error"). Each cell keeps a gap on its right and the header a rule under it.
_TABLE = "<table class='judgewidgets-votes' style='border-collapse: collapse'>"
_CELL = "padding: 2px 14px 2px 0; text-align: left; vertical-align: top"


def _head(*names: str) -> str:
    """A header row of the widget's tables, one cell per name."""
    cells = "".join(f"<th style='{_CELL}; border-bottom: 1px solid #bbb'>{html.escape(n)}</th>" for n in names)
    return f"<tr>{cells}</tr>"


def _row(*cells: str) -> str:
    """A row of the widget's tables from cells already escaped."""
    return "<tr>" + "".join(f"<td style='{_CELL}'>{cell}</td>" for cell in cells) + "</tr>"


def _is_per_turn(result: Any) -> bool:
    """Whether `result` judged every assistant turn of its conversations, one item per turn."""
    try:
        per_turn_items(result.items)
    except InputError:
        return False
    return True


def _score(value: float) -> str:
    return "" if pd.isna(value) else f"{value:.2f}"


def _plural(count: int) -> str:
    return "" if count == 1 else "s"
