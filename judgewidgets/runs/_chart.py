"""The comparison chart: each item's score before and after (slope charts), above each judge's change."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import pandas as pd

if TYPE_CHECKING:
    import altair as alt

    from ._compare import RunComparison

_COLOURS = {"worse": "#d9534f", "same": "#9e9e9e", "better": "#4c9a2a"}


def _short(value: Any, limit: int = 120) -> str:
    if not isinstance(value, str):
        return ""
    text = " ".join(value.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def slope_data(comparison: RunComparison, judge: str) -> pd.DataFrame:
    """Two rows per scored item (its score before and after), with the texts a tooltip shows."""
    names = comparison.names
    items = comparison.items[(comparison.items["judge"] == judge) & (comparison.items["change"] != "unscored")]
    rows = []
    for item in items.to_dict("records"):
        for run, score, response, explanation in (
            (names[0], item["before"], item["response_before"], item["explanation_before"]),
            (names[1], item["after"], item["response_after"], item["explanation_after"]),
        ):
            rows.append(
                {
                    "key": item["key"],
                    "run": run,
                    "score": score,
                    "change": item["change"],
                    "delta": item["delta"],
                    "input": _short(item["input"]),
                    "response": _short(response),
                    "explanation": _short(explanation),
                }
            )
    return pd.DataFrame(rows, columns=["key", "run", "score", "change", "delta", "input", "response", "explanation"])


def comparison_chart(comparison: RunComparison, judges: Sequence[str]) -> alt.VConcatChart:
    """A slope chart per judge (lines from before to after, coloured by the item's change) above the change in
    the main metric per judge with its paired interval."""
    import altair as alt

    from .._charts import offline

    names = list(comparison.names)
    colour = alt.Color("change:N", scale=alt.Scale(domain=list(_COLOURS), range=list(_COLOURS.values())), title="item")
    tooltip = [
        "run:N",
        alt.Tooltip("score:Q", format=".2f"),
        alt.Tooltip("delta:Q", format="+.2f", title="change"),
        "input:N",
        "response:N",
        "explanation:N",
    ]
    slopes = []
    for judge in judges:
        base = alt.Chart(slope_data(comparison, judge)).encode(
            x=alt.X("run:N", sort=names, title=None, axis=alt.Axis(labelAngle=0)),
            y=alt.Y("score:Q", scale=alt.Scale(domain=[0, 1]), title="score"),
            detail="key:N",
            color=colour,
        )
        lines = base.mark_line(opacity=0.45)
        points = base.mark_point(filled=True, size=40).encode(tooltip=tooltip)
        slopes.append((lines + points).properties(title=judge, width=160, height=220))
    summary = comparison.summary[comparison.summary["metric"] == comparison.metric].copy()
    summary["judge"] = summary["judge"].astype(str)
    interval_tooltip = [
        "judge:N",
        alt.Tooltip("before:Q", format=".3f"),
        alt.Tooltip("after:Q", format=".3f"),
        alt.Tooltip("change:Q", format="+.3f"),
        alt.Tooltip("low:Q", format="+.3f"),
        alt.Tooltip("high:Q", format="+.3f"),
        alt.Tooltip("p_value:Q", format=".3g", title="sign test p"),
        "better:Q",
        "worse:Q",
    ]
    y = alt.Y("judge:N", sort=list(summary["judge"]), title=None)
    rules = (
        alt.Chart(summary)
        .mark_rule(strokeWidth=2)
        .encode(y=y, x=alt.X("low:Q", title=f"change in {comparison.metric} (after − before)"), x2="high:Q")
    )
    dots = (
        alt.Chart(summary)
        .mark_point(filled=True, size=80)
        .encode(
            y=y,
            x="change:Q",
            color=alt.condition("datum.change < 0", alt.value(_COLOURS["worse"]), alt.value(_COLOURS["better"])),
            tooltip=interval_tooltip,
        )
    )
    zero = alt.Chart(pd.DataFrame({"zero": [0.0]})).mark_rule(strokeDash=[4, 4], color="black").encode(x="zero:Q")
    level = f"{comparison.settings['confidence']:.0%}"
    intervals = (rules + dots + zero).properties(
        title=f"Change with its {level} paired-bootstrap interval",
        width=max(300, 180 * len(slopes)),
        height=30 * len(summary) + 20,
    )
    return offline(alt.vconcat(alt.hconcat(*slopes), intervals))
