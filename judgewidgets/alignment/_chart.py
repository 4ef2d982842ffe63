"""The alignment chart: held-out agreement before and after with intervals, beside the learning curve."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pandas as pd

if TYPE_CHECKING:
    import altair as alt

    from ._report import AlignmentReport


def report_chart(report: AlignmentReport) -> alt.HConcatChart:
    """Left: accuracy and κ before / after, each with its bootstrap interval. Right: held-out accuracy as the
    rules are fitted on more labels."""
    import altair as alt

    from .._charts import offline

    rows = []
    for _, r in report.table.iterrows():
        for metric in ("accuracy", "kappa"):
            rows.append(
                {
                    "when": r["rule"],
                    "metric": "Cohen's κ" if metric == "kappa" else "accuracy",
                    "value": r[metric],
                    "low": r[f"{metric}_low"],
                    "high": r[f"{metric}_high"],
                    "n": r["n"],
                }
            )
    data = pd.DataFrame(rows)
    base = alt.Chart(data).encode(
        y=alt.Y("when:N", sort=["before", "after"], title=None),
        color=alt.Color("when:N", sort=["before", "after"], scale=alt.Scale(range=["#9e9e9e", "#1f77b4"]), legend=None),
    )
    tooltip = [
        "when",
        "metric",
        alt.Tooltip("value:Q", format=".3f"),
        alt.Tooltip("low:Q", format=".3f", title="interval low"),
        alt.Tooltip("high:Q", format=".3f", title="interval high"),
        alt.Tooltip("n:Q", title="held-out labels"),
    ]
    points = base.mark_point(filled=True, size=90).encode(
        x=alt.X("value:Q", title=None, scale=alt.Scale(domain=[-0.2, 1])), tooltip=tooltip
    )
    bars = base.mark_rule(strokeWidth=2).encode(x="low:Q", x2="high:Q", tooltip=tooltip)
    agreement = (
        alt.layer(bars, points)
        .properties(width=260, height=60)
        .facet(row=alt.Row("metric:N", title=None))
        .properties(title=f"Held-out agreement with {report.kind} labels ({report.folds}-fold cross-fitting)")
    )
    curve = (
        alt.Chart(report.learning_curve)
        .mark_line(point=True)
        .encode(
            x=alt.X("labels:Q", title="labels the rules were fitted on"),
            y=alt.Y("accuracy:Q", title="held-out accuracy", scale=alt.Scale(domain=[0, 1]), axis=alt.Axis(format="%")),
            tooltip=["labels", alt.Tooltip("accuracy:Q", format=".1%"), "draws"],
        )
        .properties(width=240, height=180, title="Learning curve")
    )
    return offline(alt.hconcat(agreement, curve))
