"""Charts of rubric grading: verdict distributions, judge agreement, confusion against ground truth."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pandas as pd

if TYPE_CHECKING:
    import altair as alt

    from ._result import GradingResult


def verdict_chart(result: GradingResult) -> alt.Chart:
    import altair as alt

    from .._charts import offline

    votes = result.votes_df()
    votes["outcome"] = votes["verdict"].fillna(votes["selected_label"]).fillna("(failed)")
    votes.loc[votes["error"].notna(), "outcome"] = "(failed)"
    counts = votes.groupby(["criterion", "judge_id", "outcome"], as_index=False).size()
    return offline(
        alt.Chart(counts)
        .mark_bar()
        .encode(
            x=alt.X("size:Q", stack="normalize", title="share of votes"),
            y=alt.Y("judge_id:N", title=None),
            color=alt.Color("outcome:N", title="outcome"),
            row=alt.Row("criterion:N", title=None, header=alt.Header(labelAngle=0, labelAlign="left")),
            tooltip=["criterion", "judge_id", "outcome", "size"],
        )
        .properties(width=320, title="Votes per criterion and judge")
    )


# The name of the agreement chart's click selection, which a widget reads back (JupyterChart.selections.<name>).
CRITERION = "criterion"


def agreement_chart(result: GradingResult) -> alt.Chart:
    """Judge × criterion heatmap of agreement with the ensemble outcome; clicking a cell picks its criterion
    (selection `criterion`; the other rows fade)."""
    import altair as alt

    from .._charts import offline

    rows = []
    for index, criterion in enumerate(result.criteria):
        table = result._outcome_table(index)
        for judge in result.judge_ids:
            both = table[["ensemble", judge]].dropna()
            share = float((both["ensemble"] == both[judge]).mean()) if len(both) else float("nan")
            rows.append({"criterion": criterion.name, "judge": judge, "agreement": share, "n": len(both)})
    data = pd.DataFrame(rows)
    base = alt.Chart(data).encode(x=alt.X("judge:N", title="judge"), y=alt.Y("criterion:N", title=None))
    pick = alt.selection_point(name=CRITERION, fields=["criterion"], on="click")
    heat = base.mark_rect().encode(
        color=alt.Color("agreement:Q", scale=alt.Scale(domain=[0, 1], scheme="blues"), title="agreement"),
        opacity=alt.condition(pick, alt.value(1.0), alt.value(0.3)),
        tooltip=["criterion", "judge", alt.Tooltip("agreement:Q", format=".2f"), "n"],
    )
    text = base.mark_text().encode(
        text=alt.Text("agreement:Q", format=".2f"),
        color=alt.condition(alt.datum.agreement > 0.6, alt.value("white"), alt.value("black")),
    )
    return offline(heat.add_params(pick) + text).properties(
        title="Agreement of each judge with the ensemble outcome", width=alt.Step(56), height=alt.Step(28)
    )


def confusion_chart(result: GradingResult, criterion: str) -> alt.Chart:
    import altair as alt

    from .._charts import offline
    from .._errors import InputError

    if result.ground_truth is None:
        raise InputError("no ground truth: pass ground_truth=... to grade_many")
    names = [c.name for c in result.criteria]
    if criterion not in names:
        raise InputError(f"unknown criterion {criterion!r}; the rubric has {names}")
    index = names.index(criterion)
    data = pd.DataFrame(
        {"truth": result.ground_truth[criterion], "predicted": result._outcome_table(index)["ensemble"]}
    ).dropna()
    counts = data.groupby(["truth", "predicted"], as_index=False).size()
    base = alt.Chart(counts).encode(x=alt.X("predicted:N", title="judged"), y=alt.Y("truth:N", title="ground truth"))
    return offline(
        base.mark_rect().encode(color=alt.Color("size:Q", title="items"), tooltip=["truth", "predicted", "size"])
        + base.mark_text(color="black").encode(text="size:Q")
    ).properties(title=f"{criterion}: judged vs ground truth")
