"""A judge's probabilities over its possible answers, read from the token stream of its reply.

The judge answers with a JSON object such as ``{"score": 4}`` or ``{"verdict": "correct"}``. At the first token
of that value the model weighed every answer it could give; the top alternatives there (the `top_logprobs` of
that token) are its distribution over the answers. The value is located in the text the tokens themselves spell,
never in `message.content`: a server may trim the reply it reports (llama.cpp drops a leading ```json fence from
the content but keeps its tokens), and an offset into the trimmed text lands on the wrong token.

A reply that continues an assistant prefill (``{"score": `` sent as the last message, so the next token is the
answer) is read with the prefill in front of its tokens.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

__all__ = [
    "answer_probabilities",
    "expected_value",
    "label_probabilities",
    "prefix_free",
    "stream_text",
    "unique_prefix",
    "value_alternatives",
]

Logprobs = Sequence[Mapping[str, Any]]


def stream_text(logprobs: Logprobs) -> str:
    """The text the tokens spell, in order."""
    return "".join(str(token.get("token") or "") for token in logprobs)


def value_alternatives(
    logprobs: Logprobs | None, keys: Sequence[str], prefill: str = ""
) -> list[tuple[str, float]] | None:
    """(text, probability) of each alternative at the first token of the last `keys` value in the reply.

    The texts start where the value starts (an opening quote or a space merged into the token is removed).
    None when there are no logprobs or the reply never reaches such a value.
    """
    if not logprobs:
        return None
    key_pattern = re.compile(r'"(?:' + "|".join(re.escape(k) for k in keys) + r')"\s*:\s*"?')
    text = prefill + stream_text(logprobs)
    matches = list(key_pattern.finditer(text))
    if not matches:
        return None
    value_start = matches[-1].end()
    if value_start < len(prefill):
        return None  # the value lies inside the prefill: nothing was weighed there
    offset = len(prefill)
    for token in logprobs:
        token_text = str(token.get("token") or "")
        end = offset + len(token_text)
        if end > value_start:
            prefix = text[offset:value_start]
            return _alternatives(token, prefix)
        offset = end
    return None


def _alternatives(token: Mapping[str, Any], prefix: str) -> list[tuple[str, float]]:
    """The token's alternatives with `prefix` (the part of the token before the value) removed."""
    listed = token.get("top_logprobs") or [{"token": token.get("token"), "logprob": token.get("logprob")}]
    out: list[tuple[str, float]] = []
    for alternative in listed:
        logprob = alternative.get("logprob")
        text = str(alternative.get("token") or "")
        if logprob is None or not math.isfinite(float(logprob)):
            continue
        if prefix:
            if not text.startswith(prefix):
                continue  # this alternative leaves the value's position: it names no answer
            text = text[len(prefix) :]
        out.append((text, math.exp(float(logprob))))
    return out


def answer_probabilities(
    alternatives: Sequence[tuple[str, float]] | None, match: Callable[[str], str | None]
) -> tuple[dict[str, float], float] | None:
    """({answer: probability}, coverage) over the alternatives `match` maps to an answer, renormalised.

    `coverage` is the probability the valid answers had before renormalising (how much of the judge's mass
    went to answers at all). None when no alternative names an answer.
    """
    if not alternatives:
        return None
    mass: dict[str, float] = {}
    for text, probability in alternatives:
        cleaned = text.strip().strip('"').strip()
        answer = match(cleaned) if cleaned else None
        if answer is not None:
            mass[answer] = mass.get(answer, 0.0) + probability
    total = sum(mass.values())
    if total <= 0:
        return None
    return {answer: p / total for answer, p in mass.items()}, min(total, 1.0)


def expected_value(probabilities: Mapping[str, float], values: Mapping[str, float]) -> float:
    """Σ p(answer) · value(answer)."""
    return float(sum(p * values[answer] for answer, p in probabilities.items()))


def prefix_free(labels: Sequence[str]) -> bool:
    """Whether no label starts another ("1" starts "10"), so one token can tell them apart."""
    return not any(a != b and b.lower().startswith(a.lower()) for a in labels for b in labels)


def unique_prefix(text: str, labels: Sequence[str]) -> str | None:
    """The one label `text` starts (any case): a token "in" names "incorrect" among correct / incorrect."""
    lowered = text.lower()
    matches = [label for label in labels if label.lower().startswith(lowered)]
    return matches[0] if len(matches) == 1 else None


def label_probabilities(
    logprobs: Logprobs | None, key: str, labels: Sequence[str], prefill: str = ""
) -> dict[str, float] | None:
    """{label: probability} at the first token of the `key` value, each alternative read as the one label it
    starts; None without logprobs or when no alternative names a label."""
    found = answer_probabilities(value_alternatives(logprobs, (key,), prefill), lambda t: unique_prefix(t, labels))
    return found[0] if found is not None else None
