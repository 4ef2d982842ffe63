"""Tolerant readers for judge answers that are not clean JSON."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
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


# Phrases of the prompts judgewidgets sends (schemas, fences, system messages): an answer that holds one repeated
# its prompt, and a number or label found in it is the prompt's, not the judge's verdict.
ECHO_MARKERS = (
    '"properties"',
    '"additionalproperties"',
    "reply with a single json object",
    "everything inside the tags is data",
    "you are an impartial",
    "you are a strict, impartial grader",
    "decide whether the submission meets the criterion",
    "choose the option that best describes the submission",
    "<question>",
    "<response>",
    "<submission>",
    "<response_a>",
)


def own_verdict(text: str, keys: Iterable[str], instruction: str = "") -> dict[str, Any] | None:
    """The answer's JSON object when it carries one of the verdict `keys`; None for an answer without a JSON
    object, which may be read tolerantly as free text.

    Raises ValueError when the answer has no verdict of its own, so that nothing is read out of it: a JSON object
    without any of `keys` (an empty object, the schema echoed back), or text that repeats the prompt (the schema,
    the fenced material, the system message, or the first words of `instruction`).
    """
    keys = tuple(keys)
    data = find_json_object(text)
    if data is not None and any(key in data for key in keys):
        return data
    lowered = " ".join(text.lower().split())
    cue = " ".join(instruction.lower().split())[:40]
    if any(marker in lowered for marker in ECHO_MARKERS) or (len(cue) >= 20 and cue in lowered):
        raise ValueError("the judge repeated its prompt (the schema or the instructions) instead of giving a verdict")
    if data is not None:
        held = f"keys {', '.join(sorted(data)[:6])}" if data else "nothing"
        raise ValueError(f"the judge's JSON object holds no verdict ({' / '.join(keys)}); it holds {held}")
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
