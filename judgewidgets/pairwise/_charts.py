"""Altair charts of tournaments (altair is imported only when a chart is drawn)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pandas as pd

if TYPE_CHECKING:
    import altair as alt


# The name of the ratings chart's click selection, which a widget reads back (JupyterChart.selections.<name>).
CANDIDATE = "candidate"


def ratings_chart(ranking: pd.DataFrame, rating: str = "rating") -> alt.LayerChart:
    """Each candidate's rating as a point with its interval as a bar, best at the top; hovering the point or the
    bar gives the numbers, clicking picks the candidate (selection `candidate`; the others fade)."""
    import altair as alt

    from .._charts import offline

    data = ranking.copy()
    order = list(data["candidate"])
    y = alt.Y("candidate:N", sort=order, title=None)
    tooltip = [
        "candidate:N",
        "rank:Q",
        alt.Tooltip("rating:Q", format=".3f"),
        alt.Tooltip("ci_low:Q", format=".3f"),
        alt.Tooltip("ci_high:Q", format=".3f"),
        "wins:Q",
        "losses:Q",
        "ties:Q",
    ]
    pick = alt.selection_point(name=CANDIDATE, fields=["candidate"], on="click")
    faded = alt.condition(pick, alt.value(1.0), alt.value(0.3))
    base = alt.Chart(data)
    bars = base.mark_rule(strokeWidth=6, color="#4c78a8").encode(
        y=y,
        x=alt.X("ci_low:Q", title=f"rating ({rating})", scale=alt.Scale(zero=False)),
        x2="ci_high:Q",
        opacity=faded,
        tooltip=tooltip,
    )
    points = base.mark_point(filled=True, size=90, color="#1f3b5c").encode(
        y=y, x="rating:Q", opacity=faded, tooltip=tooltip
    )
    height = max(120, 24 * len(order))
    chart = (bars.add_params(pick) + points).properties(title="Ratings with intervals", width=320, height=height)
    return offline(chart)


def win_matrix_chart(matrix: pd.DataFrame, order: list[str], highlight: str | None = None) -> alt.LayerChart:
    """Heatmap of the row candidate's share of points against each column candidate (ties count half);
    `highlight` keeps one candidate's row and column bright and fades the rest."""
    import altair as alt

    from .._charts import offline

    long = matrix.rename_axis(index="candidate", columns="opponent").stack(future_stack=True).rename("win_rate")
    data = long.reset_index()
    data["label"] = data["win_rate"].map(lambda v: "" if pd.isna(v) else f"{v:.2f}")
    data["lit"] = True if highlight is None else (data["candidate"] == highlight) | (data["opponent"] == highlight)
    base = alt.Chart(data).encode(
        x=alt.X("opponent:N", sort=order, title="against"),
        y=alt.Y("candidate:N", sort=order, title=None),
    )
    cells = base.mark_rect().encode(
        color=alt.Color("win_rate:Q", scale=alt.Scale(domain=[0, 1], scheme="redblue"), title="win rate"),
        opacity=alt.condition("datum.lit", alt.value(1.0), alt.value(0.2)),
        tooltip=["candidate:N", "opponent:N", alt.Tooltip("win_rate:Q", format=".2f")],
    )
    text = base.mark_text(fontSize=10).encode(text="label:N")
    size = max(140, 34 * len(order))
    title = "Win rate (row vs column)" + (f": {highlight}" if highlight is not None else "")
    return offline((cells + text).properties(title=title, width=size, height=size))


def stability_chart(stability: pd.DataFrame) -> alt.Chart:
    """Kendall τ between the ranking after each number of comparisons and the final ranking."""
    import altair as alt

    from .._charts import offline

    return offline(
        alt.Chart(stability)
        .mark_line(point=True)
        .encode(
            x=alt.X("comparisons:Q", title="comparisons judged (budget spent)"),
            y=alt.Y("kendall_tau:Q", scale=alt.Scale(domain=[-1, 1]), title="Kendall τ with final ranking"),
            tooltip=["comparisons:Q", alt.Tooltip("kendall_tau:Q", format=".3f"), "leader:N"],
        )
        .properties(title="Ranking stability over the budget", width=420, height=180)
    )


_METHOD_COLOURS = {"corrected": "#1f77b4", "judge only": "#9e9e9e", "labels only": "#2ca02c"}


def corrected_chart(long: pd.DataFrame, ranking: pd.DataFrame, confidence: float) -> alt.HConcatChart:
    """Per candidate (best corrected first), the corrected, judge-only and labels-only ratings as points with
    their intervals as bars, side by side; beside it the win rates the same way (points only where defined)."""
    import altair as alt

    from .._charts import offline

    order = list(ranking["candidate"])
    methods = [m for m in _METHOD_COLOURS if long.loc[long["method"] == m, "rating"].notna().any()]
    data = long[long["method"].isin(methods)]
    y = alt.Y("candidate:N", sort=order, title=None)
    offset = alt.YOffset("method:N", sort=methods)
    colour = alt.Color(
        "method:N",
        sort=methods,
        scale=alt.Scale(domain=methods, range=[_METHOD_COLOURS[m] for m in methods]),
        title=None,
    )
    tooltip: list[Any] = [
        "candidate:N",
        "method:N",
        alt.Tooltip("rating:Q", format=".0f"),
        alt.Tooltip("ci_low:Q", format=".0f"),
        alt.Tooltip("ci_high:Q", format=".0f"),
        alt.Tooltip("win_rate:Q", format=".3f"),
        "labelled:Q",
    ]
    base = alt.Chart(data).encode(y=y, yOffset=offset, color=colour, tooltip=tooltip)
    bars = base.mark_rule(strokeWidth=3, opacity=0.8).encode(
        x=alt.X("ci_low:Q", title="rating (Elo scale)", scale=alt.Scale(zero=False)), x2="ci_high:Q"
    )
    points = base.mark_point(filled=True, size=60).encode(x="rating:Q")
    height = max(140, 20 * len(order) * len(methods))
    title = f"Ratings: corrected vs judge only ({confidence:.0%} intervals)"
    ratings = (bars + points).properties(title=title, width=320, height=height)
    wins = ranking.assign(method="corrected")
    judge = ranking.assign(method="judge only", win_rate=ranking["judge_win_rate"])
    win_data = pd.concat([wins, judge], ignore_index=True)
    win_base = alt.Chart(win_data).encode(
        y=y,
        yOffset=alt.YOffset("method:N", sort=["corrected", "judge only"]),
        color=colour,
        tooltip=[
            "candidate:N",
            "method:N",
            alt.Tooltip("win_rate:Q", format=".3f"),
            alt.Tooltip("win_rate_low:Q", format=".3f"),
            alt.Tooltip("win_rate_high:Q", format=".3f"),
        ],
    )
    win_bars = (
        win_base.transform_filter(alt.datum.method == "corrected")
        .mark_rule(strokeWidth=3)
        .encode(
            x=alt.X("win_rate_low:Q", title="win rate (ties half)", scale=alt.Scale(domain=[0, 1])),
            x2="win_rate_high:Q",
        )
    )
    win_points = win_base.mark_point(filled=True, size=60).encode(x="win_rate:Q")
    win_rates = (win_bars + win_points).properties(title="Win rates", width=240, height=height)
    return offline(alt.hconcat(ratings, win_rates))
