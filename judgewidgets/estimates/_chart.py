"""The chart of a quality estimate: PPI++, labels-only and judge-only intervals side by side."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import altair as alt

    from ._quality import QualityEstimate

_COLOURS = {"ppi": "#1f77b4", "labels only": "#2ca02c", "judge only": "#9e9e9e"}


def quality_chart(estimate: QualityEstimate) -> alt.LayerChart:
    """One row per method: its interval as a bar, its estimate as a point; tooltips give the numbers."""
    import altair as alt

    from .._charts import offline

    data = estimate.to_df()
    methods = list(data["method"])
    base = alt.Chart(data).encode(
        y=alt.Y("method:N", sort=methods, title=None),
        color=alt.Color(
            "method:N",
            sort=methods,
            scale=alt.Scale(domain=methods, range=[_COLOURS[m] for m in methods]),
            legend=None,
        ),
        tooltip=[
            "method",
            alt.Tooltip("estimate:Q", format=".3f"),
            alt.Tooltip("low:Q", format=".3f"),
            alt.Tooltip("high:Q", format=".3f"),
            alt.Tooltip("width:Q", format=".3f"),
            "n",
            "labels",
        ],
    )
    title = f"{estimate.metric}: {estimate.confidence:.0%} intervals"
    bars = base.mark_rule(strokeWidth=4, opacity=0.7).encode(
        x=alt.X("low:Q", title=estimate.metric, scale=alt.Scale(zero=False)), x2="high:Q"
    )
    points = base.mark_point(filled=True, size=80).encode(x="estimate:Q")
    return offline(alt.layer(bars, points).properties(title=title, width=360, height=120))
