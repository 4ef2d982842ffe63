"""The cascade chart: what coverage and cost each guaranteed agreement buys, from a calibration sweep."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pandas as pd

if TYPE_CHECKING:
    import altair as alt


def cascade_chart(sweep: pd.DataFrame, target: float | None = None) -> alt.VConcatChart:
    """Coverage vs the guaranteed agreement (top left), each stage's share of the items (top right) and the
    calls / cost / model seconds relative to the last stage alone (bottom), as the target moves; a rule marks
    `target`. `sweep` is `Calibration.sweep()`: one row per target and stage."""
    import altair as alt

    from .._charts import offline

    x = alt.X("target:Q", title="guaranteed agreement (target)", scale=alt.Scale(zero=False))
    overall = sweep.drop_duplicates("target")[
        ["target", "coverage", "relative_calls", "relative_cost", "relative_seconds"]
    ]
    coverage = (
        alt.Chart(overall)
        .mark_line(point=True)
        .encode(
            x=x,
            y=alt.Y("coverage:Q", title="coverage (labelled rows decided)", scale=alt.Scale(domain=[0, 1])),
            tooltip=[alt.Tooltip("target:Q", format=".2f"), alt.Tooltip("coverage:Q", format=".1%")],
        )
    )
    order = list(dict.fromkeys(sweep["stage"]))
    staged = sweep.assign(stage_index=[order.index(s) for s in sweep["stage"]])
    shares = (
        alt.Chart(staged)
        .mark_area()
        .encode(
            x=x,
            y=alt.Y("share:Q", stack=True, title="share of items decided", scale=alt.Scale(domain=[0, 1])),
            color=alt.Color("stage:N", sort=order, title="decided by"),
            order=alt.Order("stage_index:Q"),
            tooltip=["stage", alt.Tooltip("target:Q", format=".2f"), alt.Tooltip("share:Q", format=".1%")],
        )
    )
    spent = overall.melt(
        id_vars="target",
        value_vars=["relative_calls", "relative_cost", "relative_seconds"],
        var_name="measure",
        value_name="relative",
    ).dropna()
    spent["measure"] = spent["measure"].str.removeprefix("relative_")
    cost = (
        alt.Chart(spent)
        .mark_line(point=True)
        .encode(
            x=x,
            y=alt.Y("relative:Q", title="spent / last stage alone"),
            color=alt.Color("measure:N", title=None),
            tooltip=["measure", alt.Tooltip("target:Q", format=".2f"), alt.Tooltip("relative:Q", format=".2f")],
        )
    )
    layers = [coverage, shares, cost]
    if target is not None:
        rule = (
            alt.Chart(pd.DataFrame({"target": [target]}))
            .mark_rule(strokeDash=[4, 3], color="black")
            .encode(x="target:Q")
        )
        layers = [alt.layer(layer, rule) for layer in layers]
    top = alt.hconcat(layers[0].properties(width=280, height=200), layers[1].properties(width=280, height=200))
    return offline(
        alt.vconcat(top, layers[2].properties(width=620, height=140))
        .resolve_scale(color="independent")
        .properties(title="Trust or escalate: coverage and cost for each guaranteed agreement (calibration rows)")
    )
