"""Tolerant readers for judge answers that are not clean JSON."""

from __future__ import annotations

import json
import re
from typing import Any

_NUMBER = re.compile(r"(?<![\w.])[-+]?\d+(?:\.\d+)?")
_KEYED_NUMBER = re.compile(
    r"(?:score|rating|grade|verdict)\s*(?:is|of|=|:)?\s*\**\s*([-+]?\d+(?:\.\d+)?)", re.IGNORECASE
)
_FRACTION = re.compile(r"([-+]?\d+(?:\.\d+)?)\s*(?:/|out of)\s*\d+", re.IGNORECASE)


def find_json_object(text: str) -> dict[str, Any] | None:
    """The first JSON object in `text` (also inside ``` fences or surrounding prose), or None."""
    text = text.strip()
    if text.startswith("{"):
        try:
            data = json.loads(text)
            return data if isinstance(data, dict) else None
        except json.JSONDecodeError:
            pass
    decoder = json.JSONDecoder()
    for match in re.finditer(r"\{", text):
        try:
            data, _ = decoder.raw_decode(text, match.start())
        except json.JSONDecodeError:
            continue
        if isinstance(data, dict):
            return data
    return None


def first_number(text: str, low: float, high: float) -> float | None:
    """The score a free-text answer gives: 'Score: 4', '4/5', or the first number inside [low, high]."""
    for pattern in (_KEYED_NUMBER, _FRACTION):
        match = pattern.search(text)
        if match:
            value = float(match.group(1))
            if low <= value <= high:
                return value
    for match in _NUMBER.finditer(text):
        value = float(match.group(0))
        if low <= value <= high:
            return value
    return None


def match_label(text: str, choices: dict[str, float], aliases: dict[str, str]) -> str | None:
    """The choice label a free-text verdict names; the longest phrase wins ('incorrect' over 'correct')."""
    phrases = {label.lower(): label for label in choices}
    phrases.update({alias.lower(): label for alias, label in aliases.items()})
    lowered = text.strip().lower().strip(" .!\"'*`")
    if lowered in phrases:
        return phrases[lowered]
    best: tuple[int, int, str] | None = None  # (position, -length, label)
    for phrase, label in phrases.items():
        for match in re.finditer(r"(?<![\w-])" + re.escape(phrase) + r"(?![\w-])", lowered):
            key = (match.start(), -len(phrase), label)
            if best is None or key < best:
                best = key
            break
    return best[2] if best else None
