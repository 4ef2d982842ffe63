"""Fake pairwise judges for tests: transports that read which response sits in which slot."""

from __future__ import annotations

import json
import re
from collections.abc import Callable

from judgewidgets.testing import ScriptedTransport
from tests.fakes import user_text


def slots(request) -> tuple[str, str]:  # type: ignore[no-untyped-def]
    """The texts shown in slot A and slot B of a pairwise judge request."""
    text = user_text(request) if request.messages[-1]["role"] == "user" else request.messages[1]["content"]
    first = re.search(r"<response_a>\n(.*?)\n</response_a>", text, re.S)
    second = re.search(r"<response_b>\n(.*?)\n</response_b>", text, re.S)
    assert first and second, text
    return first.group(1), second.group(1)


def answer(verdict: str, confidence: float | None = None, **extra: str) -> str:
    data: dict[str, object] = {**extra, "verdict": verdict}
    if confidence is not None:
        data["confidence"] = confidence
    return json.dumps(data)


def prefers(quality: Callable[[str], float], confidence: float = 0.9) -> ScriptedTransport:
    """A judge that picks the slot whose text has the higher quality (tie when equal)."""

    def reply(request, attempt):  # type: ignore[no-untyped-def]
        a, b = slots(request)
        qa, qb = quality(a), quality(b)
        return answer("A" if qa > qb else "B" if qb > qa else "tie", confidence)

    return ScriptedTransport(reply)
