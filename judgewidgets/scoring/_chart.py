"""The panel chart: where judges disagree (judge × item heatmap) and how each judge scores (distribution)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import pandas as pd

if TYPE_CHECKING:
    import altair as alt


def _shorten(text: str, limit: int = 120) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


# The names of the chart's selections, which a widget reads back (JupyterChart.selections.<name>).
PICK, JUDGE, BRUSH = "pick", "judge", "brush"


def panel_chart(votes: pd.DataFrame, items: pd.DataFrame, judges: Sequence[str] | None = None) -> alt.HConcatChart:
    """Heatmap of every judge's score on every item, beside boxplots of each judge's scores, linked:

    - click a cell (selection `pick`, on the item): that item's row stays bright;
    - click a judge in the legend (selection `judge`): that judge's column and ticks stay bright;
    - drag over the distribution (selection `brush`, on the score): the cells scored in that range stay bright.

    Double-click clears a pick, as in any Vega-Lite chart. `votes` is the tidy table of votes (item, judge, score,
    explanation, error: `PanelResult.votes`), `items` has a prompt and a response per item (row i is item i),
    `judges` orders the columns (default: as they come). Tooltips leave out a field that is empty for every vote.
    """
    import altair as alt

    from .._charts import offline

    shown = pd.DataFrame(
        {
            "item": range(len(items)),
            "prompt": [_shorten(p) for p in items["prompt"]],
            "response": [_shorten(r) for r in items["response"]],
        }
    )
    data = votes.merge(shown, on="item")
    data["explanation"] = data["explanation"].fillna("").map(_shorten)
    data["error"] = data["error"].fillna("")
    data["score_text"] = data["score"].map(lambda s: "" if pd.isna(s) else f"{s:.2f}")
    judges = list(judges) if judges is not None else list(dict.fromkeys(votes["judge"]))
    height = max(120, min(18 * len(items), 600))
    pick = alt.selection_point(name=PICK, fields=["item"], on="click")
    judge = alt.selection_point(name=JUDGE, fields=["judge"], bind="legend")
    brush = alt.selection_interval(name=BRUSH, encodings=["y"])
    # The legend says it answers clicks: JupyterLab draws with Vega-Lite 5.6, whose legends keep an arrow pointer.
    colour = alt.Color("judge:N", sort=judges, title="judge (click to light)", legend=alt.Legend(orient="bottom"))
    base = alt.Chart(data).encode(
        x=alt.X("judge:N", sort=judges, title="judge"),
        y=alt.Y("item:O", title="item"),
    )
    tooltip = ["item:O", "judge:N", alt.Tooltip("score:Q", format=".2f"), "prompt:N", "response:N"]
    tooltip += [f"{field}:N" for field in ("explanation", "error") if data[field].astype(bool).any()]
    heat = base.mark_rect().encode(
        color=alt.Color("score:Q", scale=alt.Scale(domain=[0, 1], scheme="redyellowgreen"), title="score"),
        opacity=alt.condition(pick & judge & brush, alt.value(1.0), alt.value(0.25)),
        tooltip=tooltip,
    )
    labels = base.mark_text(fontSize=10).encode(text="score_text:N")
    heatmap = (heat.add_params(pick) + labels).properties(
        title="Scores by judge and item", width=max(120, 70 * len(judges)), height=height
    )
    spread = alt.Chart(data).encode(
        x=alt.X("judge:N", sort=judges, title="judge"),
        y=alt.Y("score:Q", scale=alt.Scale(domain=[0, 1]), title="score"),
    )
    # A tick per score beside the box: a judge that gave every item the same score has a box of no height, which
    # Vega-Lite 5 (what JupyterLab draws with) leaves blank.
    ticks = spread.mark_tick(thickness=2).encode(
        color=colour, opacity=alt.condition(judge & pick, alt.value(0.8), alt.value(0.15)), tooltip=tooltip
    )
    # The boxes have the judges' colours and no legend; the chart's one legend is the ticks', the view holding the
    # `judge` selection. (With one legend merged from both layers, the merged legend lost the selection's click
    # handlers and clicking a judge did nothing.)
    boxes = spread.mark_boxplot(extent="min-max", opacity=0.5).encode(
        color=alt.Color("judge:N", sort=judges, legend=None)
    )
    distribution = (
        (boxes + ticks.add_params(judge, brush))
        .resolve_legend(color="independent")
        .properties(
            title="Score distribution per judge (drag to pick a range)",
            width=max(120, 60 * len(judges)),
            height=height,
        )
    )
    return offline(alt.hconcat(heatmap, distribution))
