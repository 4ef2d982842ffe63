"""Scores of conversations: the columns that say which conversation and turn a row judged, and the aggregate per
conversation of a per-turn ("each_turn") judgment."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import pandas as pd

from .._records import Item


def conversation_columns(items: Sequence[Item]) -> dict[str, list[Any]]:
    """`conversation` (its position in the batch) and `turn` (the judged turn's number among the assistant's;
    None for the whole conversation) when the items come from conversations, else nothing."""
    views = [i.conversation for i in items]
    if not views or any(v is None for v in views):
        return {}
    return {"conversation": [v.index for v in views if v], "turn": [v.turn for v in views if v]}


def conversation_table(items: Sequence[Item], scores: Sequence[float]) -> pd.DataFrame:
    """One row per conversation: how many turns were judged, the mean, lowest and last turn's score, and the
    number of the lowest-scored turn (the first among equals). Scores of failed judgments (NaN) are left out."""
    rows: dict[int, list[tuple[int | None, float]]] = {}
    for item, score in zip(items, scores):
        if item.conversation is not None:
            rows.setdefault(item.conversation.index, []).append((item.conversation.turn, float(score)))
    records = []
    for index in sorted(rows):
        turns = rows[index]
        scored = [(t, s) for t, s in turns if not math.isnan(s)]
        lowest = min(scored, key=lambda ts: ts[1]) if scored else (None, math.nan)
        records.append(
            {
                "conversation": index,
                "turns": len(turns),
                "failed": len(turns) - len(scored),
                "mean": sum(s for _, s in scored) / len(scored) if scored else math.nan,
                "min": lowest[1],
                "last": turns[-1][1],
                "lowest_turn": lowest[0],
            }
        )
    columns = ["conversation", "turns", "failed", "mean", "min", "last", "lowest_turn"]
    return pd.DataFrame(records, columns=columns)
