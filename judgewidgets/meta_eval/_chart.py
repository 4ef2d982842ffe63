"""The meta-evaluation chart: the measured judge's accuracy per set beside the published judges'."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pandas as pd

if TYPE_CHECKING:
    import altair as alt


def meta_chart(table: pd.DataFrame, judge: str) -> alt.FacetChart:
    """One panel per set: a bar per judge (accuracy), the measured judge in its own colour, a coin's 50 %."""
    import altair as alt

    from .._charts import offline

    data = table[["judge", "dataset", "subset", "accuracy", "positional_agreement", "source"]].copy()
    data["set"] = (
        data["dataset"].str.replace("llmbar", "LLMBar").str.replace("pandalm", "PandaLM")
        + " "
        + data["subset"].str.replace("Adversarial-", "Adv. ")
    )
    data["who"] = data["judge"].where(data["source"] == "measured", "published judges")
    bars = (
        alt.Chart()
        .mark_bar()
        .encode(
            x=alt.X("accuracy:Q", title="accuracy (mean over both orders)", scale=alt.Scale(domain=[0, 1])),
            y=alt.Y("judge:N", sort="-x", title=None),
            color=alt.Color("who:N", title=None, scale=alt.Scale(range=["#d62728", "#9e9e9e"])),
            tooltip=[
                "judge",
                "set",
                alt.Tooltip("accuracy:Q", format=".1%"),
                alt.Tooltip("positional_agreement:Q", format=".1%"),
                "source",
            ],
        )
    )
    coin = alt.Chart().mark_rule(strokeDash=[4, 3], color="black").encode(x=alt.datum(0.5))
    return offline(
        alt.layer(bars, coin, data=data)
        .properties(width=220, height=110)
        .facet(facet=alt.Facet("set:N", title=None), columns=3)
        .properties(title=f"{judge} beside the published judges (dashed: a coin)")
    )
