"""Which part of each conversation is judged (`target`), as the views every judge kind reads.

- ``"last_turn"``: the assistant's last turn, read in the context of every message before it (MT-Bench's setting
  for the second turn). The conversation must end with the assistant's turn.
- ``"whole"``: the assistant's part in the whole conversation (task completed, consistency, knowledge retention,
  role adherence, the user's frustration).
- ``"each_turn"``: every turn of the assistant, each in the context of the messages before it (never after): one
  judgment per turn, and an aggregate per conversation.

A turn of the assistant is a run of assistant messages with the tool results between them (what it did between
two messages of the user).
"""

from __future__ import annotations

from collections.abc import Sequence

from .._errors import InputError
from ._messages import Conversation, conversation_name
from ._render import TARGETS, JudgedConversation, Target


def check_target(target: str | None, default: str = "last_turn", error: type[Exception] = InputError) -> Target:
    """`target`, or `default` when None; `error` (InputError for a call's, ConfigurationError for a judge's) for
    anything that is not a target."""
    chosen = default if target is None else target
    if chosen not in TARGETS:
        raise error(f"unknown target {target!r}; use one of {', '.join(TARGETS)}")
    return chosen  # type: ignore[return-value]  # checked against TARGETS just above


def judged_views(
    conversations: Sequence[Conversation], target: Target, batch: str | None = None
) -> list[JudgedConversation]:
    """What is judged of every conversation under `target`, in order; InputError (naming the conversation, and
    the argument it came in: `batch`) for a conversation with nothing to judge under it."""
    views: list[JudgedConversation] = []
    for index, conversation in enumerate(conversations):
        replies = conversation.replies()
        where = conversation_name(index, batch)
        if not replies:
            raise InputError(f"{where} has no assistant message: nothing to judge")
        if target == "whole":
            views.append(JudgedConversation(conversation, index))
        elif target == "last_turn":
            start, end = replies[-1]
            if end != len(conversation):
                raise InputError(
                    f"{where} ends with a {conversation.messages[-1].role} message, not the assistant's "
                    "turn: nothing to judge with target='last_turn' (drop the last message, or use target='whole')"
                )
            views.append(JudgedConversation(conversation, index, (start, end), len(replies)))
        else:
            views.extend(JudgedConversation(conversation, index, span, k + 1) for k, span in enumerate(replies))
    return views


def last_user_text(view: JudgedConversation) -> str:
    """The text of the last user message before the judged turn (the first user message for the whole
    conversation; "" when there is none): what a table shows as the item's prompt."""
    messages = view.conversation.messages if view.judged is None else view.history
    users = [m.content for m in messages if m.role == "user"]
    if not users:
        return ""
    return users[0] if view.judged is None else users[-1]
