"""Records that cross the engine's boundary: one item to judge, and one judge's vote on it; checked batches of
items from texts, from conversations, or from a DataFrame's columns."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import ConfigDict, Field

from ._errors import InputError
from .conversations import (
    JudgedConversation,
    Target,
    check_target,
    judged_views,
    parse_conversation,
    parse_conversations,
)
from .conversations._render import reply_text, transcript
from .conversations._targets import last_user_text
from .engine import Usage
from .engine._request import unencodable

ScoreSource = Literal["probabilities", "answer"]


@dataclass(frozen=True)
class Item:
    """One thing to judge: the prompt, the response, and optionally a reference answer and context.

    An item made from a conversation carries it (`conversation`: the messages and which turn is judged); the judge
    reads the conversation, and `prompt` / `response` are what a table shows of it (the last user message and the
    judged reply, or the first user message and the transcript for the whole conversation)."""

    prompt: str
    response: str
    reference: str | None = None
    context: str | None = None
    conversation: JudgedConversation | None = None


class Vote(Usage):
    """One judge's verdict on one item, with what it cost (its Usage). `score` is NaN and `error` set when it
    failed."""

    model_config = ConfigDict(frozen=True)

    item: int = Field(description="Position of the item in the batch.")
    judge: str = Field(description="Name of the judge that voted.")
    score: float = Field(description="Normalised score in [0, 1]; NaN when the judge failed.")
    raw: str = Field("", description="The judge's answer as it came back.")
    explanation: str | None = Field(None, description="The judge's reasoning, when asked for.")
    error: str | None = Field(
        None, description="Why the vote is missing, prefixed 'infrastructure:', 'input:' or 'parse:'."
    )
    score_source: ScoreSource | None = Field(
        None,
        description="'probabilities': the expected score under the judge's probabilities over its answers; "
        "'answer': the answer it wrote (asked for none, or none came back: see `fallback`).",
    )
    fallback: str | None = Field(None, description="Why probabilities were asked for but not used.")
    probabilities: dict[str, float] | None = Field(
        None, description="The judge's probability of each possible answer (renormalised over valid answers)."
    )
    confidence: float | None = Field(
        None, description="Probability of the judge's most likely answer (from `probabilities`), in [0, 1]."
    )
    uncalibrated_score: float | None = Field(
        None, description="The judge's own score when an aligned judge's calibration mapped it onto `score`."
    )
    shortened: str | None = Field(
        None,
        description="Which turns of a conversation too long for the judge's context were left out (None: read whole).",
    )
    reference_source: str | None = Field(
        None,
        description="For a judge that commits first, the reference it graded against: 'given' (yours: it always "
        "wins), 'judge' (its own model answered the question first) or 'solver:NAME' (another solver did); None "
        "when the judge does not commit first.",
    )
    made_reference: str | None = Field(
        None, description="The answer made first (commit-first) that the judge graded against; None when none was."
    )


def item_row(item: Item) -> dict[str, Any]:
    """An item as a row of plain values (what a saved run keeps): its texts, and for a conversation's item the
    messages as JSON, the judged span, the conversation's position and the turn's number."""
    row: dict[str, Any] = {
        "prompt": item.prompt,
        "response": item.response,
        "reference": item.reference,
        "context": item.context,
    }
    view = item.conversation
    if view is not None:
        row["conversation"] = view.conversation.to_json()
        row["conversation_index"] = view.index
        row["judged_start"] = None if view.judged is None else view.judged[0]
        row["judged_end"] = None if view.judged is None else view.judged[1]
        row["turn"] = view.turn
    return row


def item_from_row(row: Mapping[str, Any]) -> Item:
    """The item `item_row` wrote."""
    view = None
    if isinstance(row.get("conversation"), str):
        start, end = _whole_or_int(row.get("judged_start")), _whole_or_int(row.get("judged_end"))
        view = JudgedConversation(
            parse_conversation(row["conversation"]),
            int(row.get("conversation_index") or 0),
            None if start is None or end is None else (start, end),
            _whole_or_int(row.get("turn")),
        )
    return Item(row["prompt"], row["response"], row.get("reference"), row.get("context"), view)


def _whole_or_int(value: Any) -> int | None:
    """An integer cell as read back (None, NaN for a missing one in a float column)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    return int(value)


def check_encodable(name: str, position: int | None, text: str) -> None:
    """InputError naming the row when `text` cannot be sent as UTF-8 (it would fail its call)."""
    problem = unencodable(text)
    if problem is not None:
        where = f"{name} at position {position}" if position is not None else name
        raise InputError(f"{where} {problem}")


def _as_text_list(name: str, values: Any, *, optional: bool = False) -> list[str | None] | None:
    if values is None:
        return None
    if isinstance(values, str):
        values = [values]
    try:
        values = list(values)
    except TypeError:
        raise InputError(f"{name} must be a list of strings, got {type(values).__name__}") from None
    bad = []
    for i, value in enumerate(values):
        missing = value is None or (isinstance(value, float) and math.isnan(value))
        if missing and optional:
            values[i] = None
            continue
        if missing or not isinstance(value, str):
            bad.append(i)
        elif not bad:
            check_encodable(name, i, value)
    if bad:
        shown = ", ".join(map(str, bad[:10])) + (" ..." if len(bad) > 10 else "")
        raise InputError(f"{name} must hold strings; missing (None/NaN) or non-text values at positions {shown}")
    return values


def build_items(
    prompts: Sequence[str] | str,
    responses: Sequence[str] | str,
    references: Sequence[str | None] | str | None = None,
    contexts: Sequence[str | None] | str | None = None,
) -> list[Item]:
    """Check a batch and pair it up; every problem raises one InputError before any call is made."""
    prompt_list = _as_text_list("prompts", prompts)
    response_list = _as_text_list("responses", responses)
    reference_list = _as_text_list("references", references, optional=True)
    context_list = _as_text_list("contexts", contexts, optional=True)
    assert prompt_list is not None and response_list is not None
    if not prompt_list:
        raise InputError("nothing to judge: prompts is empty")
    lengths = {"prompts": len(prompt_list), "responses": len(response_list)}
    if reference_list is not None:
        lengths["references"] = len(reference_list)
    if context_list is not None:
        lengths["contexts"] = len(context_list)
    if len(set(lengths.values())) > 1:
        raise InputError("lengths differ: " + ", ".join(f"{k}={v}" for k, v in lengths.items()))
    return [
        Item(
            prompt=str(p),  # checked: no prompt or response is missing
            response=str(r),
            reference=reference_list[i] if reference_list is not None else None,
            context=context_list[i] if context_list is not None else None,
        )
        for i, (p, r) in enumerate(zip(prompt_list, response_list))
    ]


def build_conversation_items(
    conversations: Any,
    target: Target = "last_turn",
    references: Sequence[str | None] | str | None = None,
    contexts: Sequence[str | None] | str | None = None,
) -> list[Item]:
    """Items judging `target` of every conversation (one per conversation; one per assistant turn for
    "each_turn"), with a reference and context per conversation; one InputError before any call for a malformed
    conversation, a target with nothing to judge, or mismatched lengths."""
    parsed = parse_conversations(conversations)
    reference_list = _as_text_list("references", references, optional=True)
    context_list = _as_text_list("contexts", contexts, optional=True)
    for name, values in (("references", reference_list), ("contexts", context_list)):
        if values is not None and len(values) != len(parsed):
            raise InputError(f"lengths differ: conversations={len(parsed)}, {name}={len(values)}")
    if target == "each_turn" and reference_list is not None and any(r is not None for r in reference_list):
        raise InputError("a reference answers one judged turn: give references with target='last_turn' or 'whole'")
    items = []
    for view in judged_views(parsed, target):
        messages = view.conversation.messages
        items.append(
            Item(
                prompt=last_user_text(view),
                response=transcript(messages) if view.judged is None else reply_text(view),
                reference=reference_list[view.index] if reference_list is not None else None,
                context=context_list[view.index] if context_list is not None else None,
                conversation=view,
            )
        )
    return items


def judged_items(
    prompts: Any = None,
    responses: Any = None,
    references: Any = None,
    *,
    conversations: Any = None,
    data: Any = None,
    conversation_col: str | None = None,
    prompt_col: str = "prompt",
    response_col: str = "response",
    reference_col: str | None = None,
    target: str | None = None,
    default_target: str | None = None,
) -> list[Item]:
    """The checked items of a judging call, from whichever input it was given: `prompts` and `responses`;
    `conversations` (judged under `target`, else `default_target`, else the last turn); or a DataFrame `data`
    with a `conversation_col` (message lists or their JSON) or prompt and response columns."""
    if data is not None:
        if prompts is not None or responses is not None or conversations is not None:
            raise InputError("give data= with column names, or the texts / conversations themselves, not both")
        columns = list(getattr(data, "columns", []))
        wanted = [conversation_col] if conversation_col else [prompt_col, response_col]
        for column in [*wanted, *([reference_col] if reference_col else [])]:
            if column not in columns:
                raise InputError(f"data has no column {column!r}; its columns: {', '.join(map(str, columns))}")
        if references is None and reference_col:
            references = data[reference_col].tolist()
        if conversation_col:
            conversations = data[conversation_col].tolist()
        else:
            prompts, responses = data[prompt_col].tolist(), data[response_col].tolist()
    if conversations is not None:
        if prompts is not None or responses is not None:
            raise InputError("give conversations, or prompts and responses, not both")
        return build_conversation_items(conversations, check_target(target, default_target or "last_turn"), references)
    if target is not None:
        raise InputError("target= applies to conversations; give conversations= or data= with conversation_col=")
    if prompts is None or responses is None:
        raise InputError("nothing to judge: give prompts and responses, conversations=, or data=")
    return build_items(prompts, responses, references)
