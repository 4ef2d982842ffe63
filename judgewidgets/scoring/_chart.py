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


def panel_chart(votes: pd.DataFrame, items: pd.DataFrame, judges: Sequence[str] | None = None) -> alt.HConcatChart:
    """Heatmap of every judge's score on every item, beside boxplots of each judge's scores.

    `votes` is the tidy table of votes (item, judge, score, explanation, error: `PanelResult.votes`), `items`
    has a prompt and a response per item (row i is item i), `judges` orders the columns (default: as they come).
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
    base = alt.Chart(data).encode(
        x=alt.X("judge:N", sort=judges, title="judge"),
        y=alt.Y("item:O", title="item"),
    )
    tooltip = [
        "item:O",
        "judge:N",
        alt.Tooltip("score:Q", format=".2f"),
        "prompt:N",
        "response:N",
        "explanation:N",
        "error:N",
    ]
    heat = base.mark_rect().encode(
        color=alt.Color("score:Q", scale=alt.Scale(domain=[0, 1], scheme="redyellowgreen"), title="score"),
        tooltip=tooltip,
    )
    labels = base.mark_text(fontSize=10).encode(text="score_text:N")
    heatmap = (heat + labels).properties(
        title="Scores by judge and item", width=max(120, 70 * len(judges)), height=height
    )
    spread = alt.Chart(data).encode(
        x=alt.X("judge:N", sort=judges, title="judge"),
        y=alt.Y("score:Q", scale=alt.Scale(domain=[0, 1]), title="score"),
        color=alt.Color("judge:N", sort=judges, legend=None),
    )
    # A tick per score beside the box: a judge that gave every item the same score has a box of no height, which
    # Vega-Lite 5 (what JupyterLab draws with) leaves blank.
    distribution = (spread.mark_boxplot(extent="min-max") + spread.mark_tick(opacity=0.5, thickness=2)).properties(
        title="Score distribution per judge", width=max(120, 60 * len(judges)), height=height
    )
    return offline(alt.hconcat(heatmap, distribution))
