"""A judged conversation as a person reads it in the explorer: who said what, turn by turn, the judged turn marked,
and nothing after it (the judge never read it). Every text is escaped: judged text never becomes markup."""

from __future__ import annotations

import html

import pandas as pd

from ..conversations import JudgedConversation
from ..conversations._render import _message_text, _tool_names

TURN_COLUMNS = ["message", "role", "turn", "text", "judged", "read"]

# A colour per role for the bar beside each message (system and developer alike, tool and function alike).
_ROLE_COLOURS = {
    "system": "#8c8c8c",
    "developer": "#8c8c8c",
    "user": "#3b6fb6",
    "assistant": "#2e8b57",
    "tool": "#8a5cb8",
    "function": "#8a5cb8",
}
_JUDGED_BACKGROUND = "#fff4cc"
_JUDGED_LABEL = (
    "<span class='judgewidgets-judged-label' style='background: #f0b429; color: #222; border-radius: 3px; "
    "padding: 0 5px; margin-left: 6px; font-weight: bold'>judged</span>"
)


def turn_rows(view: JudgedConversation) -> pd.DataFrame:
    """One row per message up to the end of the judged turn (all of them when the whole conversation is judged):
    `message` (its number, from 1), `role`, `turn` (the number of the assistant's turn it belongs to, else None),
    `text` (tool calls and results written out, as the judge reads them), `judged` (part of what is judged: the
    judged turn, or every assistant turn for the whole conversation) and `read` (False for a message left out to
    fit the judge's context)."""
    messages = view.conversation.messages
    spans = view.conversation.replies()
    turn_of = {i: k + 1 for k, (start, end) in enumerate(spans) for i in range(start, end)}
    end = len(messages) if view.judged is None else view.judged[1]
    judged = set(turn_of) if view.judged is None else set(range(*view.judged))
    omitted: tuple[int, int] | None = getattr(view, "omitted", None)  # set when the conversation was shortened
    left_out = set(range(*omitted)) if omitted is not None else set()
    rows = [
        {
            "message": i + 1,
            "role": messages[i].role,
            "turn": turn_of.get(i),
            "text": _message_text(messages[i], _tool_names(messages[:i])),
            "judged": i in judged,
            "read": i not in left_out,
        }
        for i in range(end)
    ]
    return pd.DataFrame(rows, columns=TURN_COLUMNS).astype({"turn": "Int64"})


def turns_html(view: JudgedConversation) -> str:
    """The conversation as HTML, one block per message of `turn_rows` (its role, number and text), the judged
    messages on a yellow ground with a "judged" label, and a line saying how many later messages are left out."""
    rows = turn_rows(view)
    blocks = []
    for row in rows.itertuples(index=False):
        colour = _ROLE_COLOURS.get(str(row.role), "#8c8c8c")
        style = f"border-left: 4px solid {colour}; padding: 3px 8px; margin: 4px 0"
        if row.judged:
            style += f"; background: {_JUDGED_BACKGROUND}"
        if not row.read:
            style += "; opacity: 0.45"
        where = f"message {row.message}" + ("" if pd.isna(row.turn) else f" · assistant turn {row.turn}")
        note = "" if row.read else " · <i>left out to fit the judge's context: the judge did not read it</i>"
        text = html.escape(str(row.text)) if row.text else "<i>(empty)</i>"
        kind = "judgewidgets-message" + (" judgewidgets-judged" if row.judged else "")
        blocks.append(
            f"<div class='{kind}' data-role='{html.escape(str(row.role))}' style='{style}'>"
            f"<div style='font-size: smaller; color: #555'><b style='color: {colour}'>{html.escape(str(row.role))}"
            f"</b> · {where}{_JUDGED_LABEL if row.judged else ''}{note}</div>"
            f"<div style='white-space: pre-wrap'>{text}</div></div>"
        )
    later = len(view.conversation.messages) - len(rows)
    if later:
        blocks.append(
            f"<p style='font-size: smaller; color: #777'>{later} later message{'s' if later > 1 else ''} not shown:"
            " the judge did not read them for this turn.</p>"
        )
    return "<div class='judgewidgets-conversation'>" + "".join(blocks) + "</div>"


def judged_what(view: JudgedConversation) -> str:
    """A heading for the judged part: "conversation 0, assistant turn 2 of 3" or "conversation 0, whole"."""
    if view.judged is None or view.turn is None:
        return f"conversation {view.index}, the whole conversation (every assistant turn judged)"
    return f"conversation {view.index}, assistant turn {view.turn} of {len(view.conversation.replies())}"
