"""Verdict scales of a pairwise judge: A / B / tie, and Arena-Hard's five levels A>>B, A>B, A=B, B>A, B>>A.

A label names slots as the judge saw them (A is the response shown first). Each label means a winning slot
("A", "B" or "tie") and a margin (0 tie, 1 better, 2 much better). Reading is tolerant: JSON, Arena-Hard's
``[[A>>B]]``, "A<B", "Response B is better", "tie" are all understood on either scale.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from .._errors import ConfigurationError

Slot = Literal["A", "B", "tie"]

# Compact lowercase spellings (spaces, brackets, quotes removed) → (winning slot, margin).
_SPELLINGS: dict[str, tuple[Slot, int]] = {
    "a>>b": ("A", 2),
    "a>b": ("A", 1),
    "a=b": ("tie", 0),
    "b=a": ("tie", 0),
    "b>a": ("B", 1),
    "b>>a": ("B", 2),
    "b<<a": ("A", 2),
    "b<a": ("A", 1),
    "a<b": ("B", 1),
    "a<<b": ("B", 2),
    "a": ("A", 1),
    "b": ("B", 1),
    "c": ("tie", 0),  # early Arena-Hard and MT-Bench prompts: [[C]] for a tie
    "tie": ("tie", 0),
    "draw": ("tie", 0),
    "equal": ("tie", 0),
    "same": ("tie", 0),
    "neither": ("tie", 0),
    "both": ("tie", 0),
}
for _prefix in ("response", "assistant", "output", "answer", "model"):
    _SPELLINGS[f"{_prefix}a"] = ("A", 1)
    _SPELLINGS[f"{_prefix}b"] = ("B", 1)

_BRACKETED = re.compile(r"\[\[\s*([^\[\]]{1,30}?)\s*\]\]")
_KEYED = re.compile(
    r"\b(?:verdict|winner|decision)\s*(?:is|:|=)?\W{0,4}((?:[ab]\s*(?:>>|<<|>|<|=)\s*[ab])|tie|[ab])\b",
    re.IGNORECASE,
)
_COMPARISON = re.compile(r"(?<![\w-])([ab]\s*(?:>>|<<|>|<|=)\s*[ab])(?![\w-])", re.IGNORECASE)
_PROSE = re.compile(
    r"\b(?:response|assistant|output|answer)\s*\(?([ab])\)?\s+is\s+(much\s+|significantly\s+|slightly\s+)?"
    r"(?:better|superior|preferred|stronger)",
    re.IGNORECASE,
)


def _compact(text: str) -> str:
    return re.sub(r"[\s\[\]()\"'`*.:]", "", text.lower())


@dataclass(frozen=True)
class Scale:
    """A verdict scale: its labels (each a winning slot and a margin) and how the judge is told about them."""

    name: str
    labels: dict[str, tuple[Slot, int]]
    description: str

    def label_for(self, slot: Slot, margin: int) -> str:
        """This scale's label for a slot and margin (the nearest margin it has)."""
        fitting = [label for label, (s, _) in self.labels.items() if s == slot]
        return min(fitting, key=lambda label: abs(self.labels[label][1] - margin))

    def read(self, value: object) -> str | None:
        """The label a short verdict names ("A>>B", "b", "[[Tie]]", "Response A"), or None."""
        if not isinstance(value, str):
            return None
        meaning = _SPELLINGS.get(_compact(value))
        if meaning is None:
            return None
        return self.label_for(*meaning)

    def search(self, text: str) -> str | None:
        """The label a free-text answer gives: ``[[...]]``, 'verdict: ...', the last 'A>B', 'Response A is better'."""
        for bracketed in _BRACKETED.finditer(text):
            label = self.read(bracketed.group(1))
            if label is not None:
                return label
        match = _KEYED.search(text)
        if match:
            label = self.read(match.group(1))
            if label is not None:
                return label
        comparisons = _COMPARISON.findall(text)
        if comparisons:  # the last one written is the conclusion
            label = self.read(comparisons[-1])
            if label is not None:
                return label
        match = _PROSE.search(text)
        if match:
            return self.label_for("A" if match.group(1).lower() == "a" else "B", 2 if match.group(2) else 1)
        return self.read(text)


AB_TIE = Scale(
    name="ab_tie",
    labels={"A": ("A", 1), "B": ("B", 1), "tie": ("tie", 0)},
    description='"A" if response A is better, "B" if response B is better, "tie" if they are equally good.',
)
FIVE_LEVEL = Scale(
    name="five_level",
    labels={"A>>B": ("A", 2), "A>B": ("A", 1), "A=B": ("tie", 0), "B>A": ("B", 1), "B>>A": ("B", 2)},
    description=(
        '"A>>B" if A is significantly better, "A>B" if A is slightly better, "A=B" if they are relatively the '
        'same, "B>A" if B is slightly better, "B>>A" if B is significantly better.'
    ),
)
SCALES = {scale.name: scale for scale in (AB_TIE, FIVE_LEVEL)}


def get_scale(scale: str | Scale) -> Scale:
    if isinstance(scale, Scale):
        return scale
    if scale not in SCALES:
        raise ConfigurationError(f"unknown verdict scale {scale!r}; use one of {', '.join(SCALES)}")
    return SCALES[scale]


def swap_slot(slot: Slot) -> Slot:
    """The same verdict with the slots exchanged: maps a swapped order's winner back to the pair's own a/b."""
    return "B" if slot == "A" else "A" if slot == "B" else "tie"
