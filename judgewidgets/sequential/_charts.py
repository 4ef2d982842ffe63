"""Altair charts of sequential rating: convergence of one item, of a batch, and the parameter effects.

altair is imported inside each function, so importing judgewidgets stays light.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

if TYPE_CHECKING:
    import altair as alt

    from ._result import SequentialResult

_EFFECT_TITLES = {
    "delta": "normalised sd δ = σ/R",
    "confidence": "confidence level 1 − α",
    "K": "precision parameter K",
}


def _convergence_data(result: SequentialResult) -> pd.DataFrame:
    trace = result.trace
    data = trace[trace["counted"]].copy() if len(trace) else trace.copy()
    data["mean_plus_d"] = data["mean"] + result.target_half_width
    data["mean_minus_d"] = data["mean"] - result.target_half_width
    data["target"] = result.target_half_width
    return data.replace([np.inf, -np.inf], np.nan)


def sequential_chart(result: SequentialResult, *, width: int = 520) -> alt.VConcatChart:
    """Top: every rating (coloured by judge), the running mean and its interval band, with dashed rules at the
    current mean ± d. Bottom: the half-width falling to the target d. Redraw it with each update for a live view."""
    import altair as alt

    from .._charts import offline

    data = _convergence_data(result)
    d = result.target_half_width
    x = alt.X("n:Q", title="judgments", scale=alt.Scale(domainMin=0))
    values = data["value"].dropna()
    lows = pd.concat([values, data["low"].dropna()])
    highs = pd.concat([values, data["high"].dropna()])
    low_y = float(lows.min()) if len(lows) else result.scale[0]
    high_y = float(highs.max()) if len(highs) else result.scale[1]
    y_scale = alt.Scale(domain=[max(result.scale[0], low_y - 0.5), min(result.scale[1], high_y + 0.5)], clamp=True)
    base = alt.Chart(data)
    # Hovering a judgment gives the estimate and its interval as they stood after it.
    interval = [alt.Tooltip(f"{field}:Q", format=".3f") for field in ("mean", "low", "high", "half_width")]
    band = base.mark_area(opacity=0.25, color="#4c78a8").encode(
        x=x, y=alt.Y("low:Q", title="rating", scale=y_scale), y2="high:Q"
    )
    mean = base.mark_line(color="#1f3b73").encode(x=x, y=alt.Y("mean:Q", scale=y_scale))
    points = base.mark_circle(size=36, opacity=0.7).encode(
        x=x,
        y=alt.Y("value:Q", scale=y_scale),
        color=alt.Color("judge:N", title="judge"),
        tooltip=[
            "n:Q",
            "judge:N",
            "variant:N",
            alt.Tooltip("value:Q", format=".2f"),
            *interval,
        ],
    )
    final = (
        pd.DataFrame({"y": [result.mean - d, result.mean + d]}) if np.isfinite(result.mean) else pd.DataFrame({"y": []})
    )
    rules = alt.Chart(final).mark_rule(strokeDash=[5, 4], color="#e45756").encode(y=alt.Y("y:Q", scale=y_scale))
    title = f"{result.mean:.2f} ± {result.half_width:.2f} after {result.n} judgments ({result.status})"
    top = (band + mean + points + rules).properties(width=width, height=220, title=title)
    widths = base.mark_line(point=True, color="#4c78a8").encode(
        x=x,
        y=alt.Y("half_width:Q", title="half-width", scale=alt.Scale(type="log")),
        tooltip=["n:Q", *interval],
    )
    target = alt.Chart(pd.DataFrame({"d": [d]})).mark_rule(strokeDash=[5, 4], color="#e45756").encode(y="d:Q")
    bottom = (widths + target).properties(width=width, height=110, title=f"target half-width d = {d:.3f}")
    return offline(alt.vconcat(top, bottom))


def batch_chart(results: Sequence[SequentialResult], *, width: int = 260, columns: int = 3) -> alt.FacetChart:
    """One small convergence panel per item: running mean and interval band."""
    import altair as alt

    from .._charts import offline

    parts = [_convergence_data(r).assign(item=r.item) for r in results]
    data = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=["item", "n", "mean", "low", "high"])
    base = alt.Chart().encode(x=alt.X("n:Q", title="judgments"))
    band = base.mark_area(opacity=0.25).encode(
        y=alt.Y("low:Q", title="rating", scale=alt.Scale(zero=False)), y2="high:Q"
    )
    mean = base.mark_line().encode(y="mean:Q")
    return offline(
        alt.layer(band, mean, data=data)
        .properties(width=width, height=140)
        .facet(facet=alt.Facet("item:N", title="item"), columns=columns)
        .resolve_scale(y="independent")
    )


def parameter_effects_chart(effects: pd.DataFrame, *, width: int = 240) -> alt.VConcatChart:
    """As in the seed: mean judgments against δ, confidence and K (simulation per method; theory ceil((zσ/d)²)
    dashed black), and below each the coverage against the nominal level (dashed grey). Reference lines at
    confidence 0.8, 0.9 and 0.95."""
    import altair as alt

    from .._charts import offline

    top, bottom = [], []
    for parameter, title in _EFFECT_TITLES.items():
        data = effects[effects["parameter"] == parameter]
        if data.empty:
            continue
        x = alt.X("value:Q", title=title, scale=alt.Scale(zero=False))
        sim = data.assign(series=data["method"])[["value", "series", "mean_n", "coverage", "nominal"]]
        theory = data.drop_duplicates("value")[["value", "theory_n"]]
        size = alt.Chart(sim).mark_line(point=True).encode(
            x=x,
            y=alt.Y("mean_n:Q", title="mean judgments"),
            color=alt.Color("series:N", title="method"),
            tooltip=["series:N", "value:Q", alt.Tooltip("mean_n:Q", format=".1f")],
        ) + alt.Chart(theory).mark_line(strokeDash=[5, 4], color="black").encode(
            x=x, y="theory_n:Q", tooltip=["value:Q", alt.Tooltip("theory_n:Q", title="theory ceil((zσ/d)²)")]
        )
        cover = (
            alt.Chart(sim)
            .mark_line(point=True)
            .encode(
                x=x,
                y=alt.Y("coverage:Q", title="coverage", scale=alt.Scale(zero=False)),
                color=alt.Color("series:N", title="method"),
                tooltip=["series:N", "value:Q", alt.Tooltip("coverage:Q", format=".3f")],
            )
        )
        nominal = alt.Chart(sim).mark_line(strokeDash=[5, 4], color="gray").encode(x=x, y="nominal:Q")
        if parameter == "confidence":
            marks = pd.DataFrame({"value": [0.8, 0.9, 0.95]})
            refs = alt.Chart(marks).mark_rule(strokeDash=[2, 3], color="gray").encode(x="value:Q")
            size, cover = size + refs, cover + refs
        top.append(size.properties(width=width, height=180, title=f"judgments vs {title}"))
        bottom.append((cover + nominal).properties(width=width, height=140, title=f"coverage vs {title}"))
    return offline(alt.vconcat(alt.hconcat(*top), alt.hconcat(*bottom)))
