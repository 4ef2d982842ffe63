"""Probability-weighted scores (G-Eval): the expected score under the judge's distribution over its answers."""

from __future__ import annotations

import math
import re
from typing import Any

from .templates import Template

_VALUE_AT = re.compile(r'"(?:score|verdict)"\s*:\s*"?')


def weighted_score(template: Template, content: str, logprobs: list[dict[str, Any]] | None) -> float | None:
    """Σ p(answer)·score(answer) over the alternatives at the answer token, or None when it cannot be read.

    The token that carries the verdict (or score digits) is located in the JSON answer; its top alternatives
    that name a valid answer are renormalised and averaged.
    """
    options = template.option_values()
    if not logprobs or not options:
        return None
    match = _VALUE_AT.search(content)
    if match is None:
        return None
    value_start = match.end()
    offset = 0
    for token in logprobs:
        text = token.get("token") or ""
        end = offset + len(text)
        if end > value_start:
            prefix = content[offset:value_start] if offset < value_start else ""
            return _expectation(template, options, token, prefix)
        offset = end
    return None


def _expectation(template: Template, options: dict[str, float], token: dict[str, Any], prefix: str) -> float | None:
    alternatives = token.get("top_logprobs") or [{"token": token.get("token"), "logprob": token.get("logprob")}]
    mass: dict[str, float] = {}
    for alt in alternatives:
        text = alt.get("token") or ""
        logprob = alt.get("logprob")
        if logprob is None:
            continue
        if prefix and text.startswith(prefix):
            text = text[len(prefix) :]
        label = _option_for(template, options, text.strip().strip('"'))
        if label is not None:
            mass[label] = mass.get(label, 0.0) + math.exp(logprob)
    total = sum(mass.values())
    if total <= 0:
        return None
    return sum(p * options[label] for label, p in mass.items()) / total


def _option_for(template: Template, options: dict[str, float], text: str) -> str | None:
    if not text:
        return None
    if template.choices is None:
        return text if text in options else None
    lowered = text.lower()
    candidates = [label for label in options if label.lower().startswith(lowered)]
    return candidates[0] if len(candidates) == 1 else None
