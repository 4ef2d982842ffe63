"""The per-turn chart of a conversation judgment made with `target="each_turn"`: conversations as rows, the
assistant's turns as columns, each cell coloured by the turn's score (a panel's consensus, or one judge's, picked
from a list under the chart)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

import pandas as pd

from .._errors import InputError
from .._records import Item

if TYPE_CHECKING:
    import altair as alt

# The chart's selections, which a widget reads back: the clicked cell's item, and the scores shown (a panel's).
TURN_PICK, SHOWN = "pick", "shown"
CONSENSUS = "consensus"


def per_turn_items(items: Sequence[Item]) -> list[int]:
    """The positions of the items of a per-turn judgment: InputError, saying what to do instead, unless every item
    judges one assistant turn of a conversation and every assistant turn of each conversation is judged (what
    `target="each_turn"` makes)."""
    turns: dict[int, set[int]] = {}
    expected: dict[int, int] = {}
    positions = []
    for position, item in enumerate(items):
        view = item.conversation
        if view is None or view.turn is None or view.judged is None:
            what = "prompts and responses" if view is None else "whole conversations (target='whole')"
            raise InputError(
                f"a per-turn chart needs one judgment per assistant turn, and item {position} judges {what}: "
                "judge the conversations with target='each_turn'"
            )
        turns.setdefault(view.index, set()).add(view.turn)
        expected[view.index] = len(view.conversation.replies())
        positions.append(position)
    if not positions:
        raise InputError("a per-turn chart needs one judgment per assistant turn, and this result has no items")
    for index, judged in sorted(turns.items()):
        if judged != set(range(1, expected[index] + 1)):
            shown = ", ".join(map(str, sorted(judged)))
            raise InputError(
                f"a per-turn chart needs every assistant turn judged, and of conversation {index}'s "
                f"{expected[index]} turns only {'turn' if len(judged) == 1 else 'turns'} {shown} "
                f"{'was' if len(judged) == 1 else 'were'} (target='last_turn'?): judge the conversations "
                "with target='each_turn'"
            )
    return positions


def turn_scores(items: Sequence[Item], votes: pd.DataFrame, consensus: Sequence[float] | None = None) -> pd.DataFrame:
    """The table the chart draws: one row per judged turn and score shown (item, conversation, turn, judge, score,
    error), each judge's votes and, for a panel, its `consensus` per item (its error says how many judges
    failed)."""
    per_turn_items(items)
    frames = [votes[["item", "judge", "score", "error"]]]
    if consensus is not None:
        failed = votes.assign(failed=votes["error"].notna()).groupby("item")["failed"].agg(["sum", "size"])
        notes = [
            f"{int(failed.loc[i, 'sum'])} of {int(failed.loc[i, 'size'])} judges failed"
            if i in failed.index and failed.loc[i, "sum"]
            else None
            for i in range(len(items))
        ]
        frames.insert(
            0, pd.DataFrame({"item": range(len(items)), "judge": CONSENSUS, "score": consensus, "error": notes})
        )
    table = pd.concat(frames, ignore_index=True)
    where = {i: (item.conversation.index, item.conversation.turn) for i, item in enumerate(items) if item.conversation}
    table["conversation"] = [where[i][0] for i in table["item"]]
    table["turn"] = [where[i][1] for i in table["item"]]
    table["score"] = table["score"].astype(float)
    return table[["item", "conversation", "turn", "judge", "score", "error"]]


def turn_chart(
    items: Sequence[Item], votes: pd.DataFrame, consensus: Sequence[float] | None = None, shown: str | None = None
) -> alt.LayerChart:
    """Heatmap of conversations (rows) × the assistant's turns (columns), coloured by each turn's score; a
    tooltip gives the last user message before the turn and the turn itself. `votes` is the tidy table of votes
    (item, judge, score, error); a panel passes its `consensus` per item too, and the chart then has a list under
    it to colour by the consensus or by one judge (`shown`: the one shown first; default the consensus). Click a
    cell (selection `pick`, on the item) to light its turn. A failed judgment is a grey cell."""
    import altair as alt

    from .._charts import offline
    from ._chart import _shorten

    data = turn_scores(items, votes, consensus)
    choices = list(dict.fromkeys(data["judge"]))
    start = shown if shown is not None else choices[0]
    if start not in choices:
        raise InputError(f"no judge {start!r} in this result; pick one of {', '.join(map(repr, choices))}")
    data["user"] = [_shorten(items[i].prompt) for i in data["item"]]
    data["reply"] = [_shorten(items[i].response, 300) for i in data["item"]]
    data["error"] = data["error"].fillna("")
    data["score_text"] = [("failed" if math.isnan(s) else f"{s:.2f}") for s in data["score"]]
    data["colour"] = data["score"].fillna(0.0)
    conversations = data["conversation"].nunique()
    turns = int(data["turn"].max())
    pick = alt.selection_point(name=TURN_PICK, fields=["item"], on="click")
    tooltip = [
        "conversation:O",
        "turn:O",
        "judge:N",
        alt.Tooltip("score:Q", format=".2f"),
        alt.Tooltip("user:N", title="last user message"),
        alt.Tooltip("reply:N", title="the turn"),
    ]
    if data["error"].astype(bool).any():
        tooltip.append("error:N")
    base = alt.Chart(data).encode(
        x=alt.X("turn:O", title="assistant turn", axis=alt.Axis(labelAngle=0)),
        y=alt.Y("conversation:O", title="conversation"),
    )
    heat = base.mark_rect(stroke="white").encode(
        color=alt.condition(
            "isValid(datum.score)",
            # a field with no missing value: Vega-Lite leaves out a mark whose colour field is missing
            alt.Color("colour:Q", scale=alt.Scale(domain=[0, 1], scheme="redyellowgreen"), title="score"),
            alt.value("#d0d0d0"),
        ),
        opacity=alt.condition(pick, alt.value(1.0), alt.value(0.3)),
        tooltip=tooltip,
    )
    labels = base.mark_text(fontSize=10).encode(text="score_text:N", tooltip=tooltip)
    layered = heat.add_params(pick) + labels
    if len(choices) > 1:
        which = alt.param(name=SHOWN, value=start, bind=alt.binding_select(options=choices, name="colour by "))
        layered = layered.add_params(which).transform_filter(alt.datum.judge == which)
        title = alt.TitleParams(
            {"expr": f"'Scores per assistant turn: ' + {SHOWN}"},  # the title follows the list
            subtitle="colour by the consensus or one judge: the list under the chart",
            anchor="start",
        )
    else:
        layered = layered.transform_filter(alt.datum.judge == start)
        title = alt.TitleParams(f"Scores per assistant turn: {start}", anchor="start")
    chart = layered.properties(title=title, width=max(160, 48 * turns), height=max(60, min(24 * conversations, 600)))
    return offline(chart)
