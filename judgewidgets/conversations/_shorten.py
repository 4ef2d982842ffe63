"""Shortening a conversation that does not fit the judge's context, by one stated rule.

The opening (any system or developer message and the first user turn) and the latest turns are kept; whole
exchanges in the middle are left out, oldest first, until the request fits. What is left out is one run of
messages that ends just before a user turn (a run of user messages, kept or left out whole), so no tool result loses
its call and the judged turn always keeps the user turn it answers. The judge reads a line in its place saying which
turns are missing, and every vote records it (`JudgedConversation.shortening`). A conversation that still does not
fit once only its opening and latest user turn remain is sent as shortened as it can be; the model's own error then
says it was too long.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from ._render import JudgedConversation, shares_history

Messages = tuple[dict[str, str], ...]
Render = Callable[[Sequence[JudgedConversation]], Messages]


def fit_to_context(
    views: Sequence[JudgedConversation],
    render: Render,
    budget: int | None,
    count: Callable[[Messages], int],
) -> tuple[list[JudgedConversation], Messages]:
    """The views as a request of at most `budget` prompt tokens reads them, and that request (`render` builds it,
    `count` counts it). `budget` None (the model's context is unknown): unchanged. Of two views sharing one
    history, the history is shortened once for both; of two separate conversations, the longer first (of two as
    long, the same one in either order)."""
    shown = list(views)
    messages = render(shown)
    if budget is None or _surely_fits(messages, budget) or count(messages) <= budget:
        return shown, messages
    shared = len(shown) == 2 and shares_history(shown[0], shown[1])
    if len(shown) == 1 or shared:
        return _least_cut(shown, render, budget, count)
    while True:
        cuts = [(k, cut) for k, view in enumerate(shown[:1] if shared else shown) if (cut := _next_cut(view))]
        if not cuts:
            return shown, messages
        # the longer first; of two as long, the same one whichever slot it is in (its content decides, not its order)
        k, cut = max(cuts, key=lambda pair: (_shown_chars(shown[pair[0]]), shown[pair[0]].conversation.to_json()))
        shown = [replace(view, omitted=cut.omitted) for view in shown] if shared else _with(shown, k, cut)
        messages = render(shown)
        if count(messages) <= budget:
            return shown, messages


def _least_cut(
    shown: list[JudgedConversation], render: Render, budget: int, count: Callable[[Messages], int]
) -> tuple[list[JudgedConversation], Messages]:
    """One history (of one view, or shared by two) with the fewest exchanges left out that fits, found by bisection
    (each cut leaves out more than the one before, so the counts only fall): a long transcript is rendered and
    counted a few times, not once per exchange. None fits: the deepest cut."""
    cuts: list[JudgedConversation] = []
    cut = _next_cut(shown[0])
    while cut is not None:
        cuts.append(cut)
        cut = _next_cut(cut)
    if not cuts:
        return shown, render(shown)
    best: tuple[list[JudgedConversation], Messages] | None = None
    low, high = 0, len(cuts) - 1
    while low <= high:
        middle = (low + high) // 2
        candidate = [replace(view, omitted=cuts[middle].omitted) for view in shown]
        messages = render(candidate)
        if count(messages) <= budget:
            best, high = (candidate, messages), middle - 1
        else:
            low = middle + 1
    if best is None:
        deepest = [replace(view, omitted=cuts[-1].omitted) for view in shown]
        return deepest, render(deepest)
    return best


def _surely_fits(messages: Messages, budget: int) -> bool:
    """Whether `messages` fit without counting: a token is at least one byte of UTF-8 (plus a few per message)."""
    return sum(len(m["content"].encode()) + 8 for m in messages) <= budget


def _next_cut(view: JudgedConversation) -> JudgedConversation | None:
    """`view` with one more exchange left out after its opening (None: only the opening and the latest user turn
    are left). A user turn is a run of user messages (a document, then the question about it): a cut starts after
    the first one's last message and ends before a later one's first, never inside one."""
    history = view.history
    turns = [i for i, m in enumerate(history) if m.role == "user" and (i == 0 or history[i - 1].role != "user")]
    if len(turns) < 2:
        return None
    start = turns[0] + 1
    while history[start].role == "user":  # the rest of the first user turn; a later turn starts after a non-user
        start += 1
    end = view.omitted[1] if view.omitted is not None else start
    later = [u for u in turns[1:] if u > end]
    return None if not later else replace(view, omitted=(start, later[0]))


def _shown_chars(view: JudgedConversation) -> int:
    """Characters of the history a judge still reads of `view` (which of two conversations to shorten first)."""
    start, end = view.omitted if view.omitted is not None else (0, 0)
    return sum(len(m.content) for i, m in enumerate(view.history) if not start <= i < end)


def _with(views: list[JudgedConversation], k: int, view: JudgedConversation) -> list[JudgedConversation]:
    return [view if i == k else other for i, other in enumerate(views)]
