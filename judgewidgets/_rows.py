"""Items of a table that keeps one value per row (a person's label, a cascade's verdict): `judged_items` read from
a DataFrame, with one judgment per row."""

from __future__ import annotations

from typing import Any

from ._errors import InputError
from ._records import Item, judged_items
from .conversations import check_target


def row_items(
    data: Any,
    *,
    conversation_col: str | None = None,
    target: str | None = None,
    default_target: str = "last_turn",
    prompt_col: str = "prompt",
    response_col: str = "response",
    reference_col: str | None = None,
    why: str = "a labelled row holds one label",
) -> list[Item]:
    """One item per row of the DataFrame `data` (`judged_items`' data= form), for callers that keep one value per
    row (a label, a verdict): target "each_turn", which judges every assistant turn of a conversation, is one
    InputError (saying `why`) before any call, like a malformed conversation."""
    if conversation_col and check_target(target, default_target) == "each_turn":
        raise InputError(
            f"{why}, and target 'each_turn' judges every assistant turn of a conversation: use target='last_turn' "
            "or 'whole' (or give each turn its own row, the conversation cut after it)"
        )
    return judged_items(
        data=data,
        conversation_col=conversation_col,
        prompt_col=prompt_col,
        response_col=response_col,
        reference_col=reference_col,
        target=target,
        default_target=default_target,
    )
