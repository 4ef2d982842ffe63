"""The kinds of label a person can give: pass/fail, a score on a scale, or a pairwise preference."""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Any

from .._errors import InputError

__all__ = ["KINDS", "LabelKind", "LabelValue"]

LabelValue = str | int | float

KINDS = ("pass_fail", "score", "pairwise")
# The most buttons a score scale gets; a wider (or fractional) scale is typed.
_MAX_SCORE_BUTTONS = 11
_TYPED = {
    "pass_fail": {"p": "pass", "pass": "pass", "f": "fail", "fail": "fail"},
    "pairwise": {"a": "A", "b": "B", "t": "tie", "tie": "tie"},
}


@dataclass(frozen=True)
class LabelKind:
    """One kind of label: which values it takes, how they are typed, and which get a button.

    `pass_fail` takes "pass" / "fail" (typed p / f), `pairwise` takes "A" / "B" / "tie" (typed a / b / t), and
    `score` a number on `scale` (inclusive; whole numbers only when both ends are ints), typed as the number; a
    score kind built without a scale (what a label store checks when it was given none) takes any finite number.
    """

    name: str
    scale: tuple[float, float] | None = None

    @classmethod
    def of(cls, kind: str, scale: tuple[float, float] | None = None) -> LabelKind:
        """The kind named `kind`; InputError for an unknown name or an impossible scale."""
        if kind not in KINDS:
            raise InputError(f"unknown label kind {kind!r}: use one of {', '.join(KINDS)}")
        if kind != "score":
            return cls(kind)
        low, high = scale if scale is not None else (1, 5)
        if not all(_is_number(v) and math.isfinite(v) for v in (low, high)) or not low < high:
            raise InputError(f"a score scale is (low, high) with low < high, got {scale!r}")
        return cls(kind, (low, high))

    @property
    def whole(self) -> bool:
        """Whether scores are whole numbers: both ends of the scale are ints ((1, 5); (0.0, 1.0) is not)."""
        return self.scale is not None and all(isinstance(v, numbers.Integral) for v in self.scale)

    @property
    def options(self) -> list[LabelValue]:
        """The labels that get a button, in order (a wide or fractional score scale gets none: it is typed)."""
        if self.name == "pass_fail":
            return ["pass", "fail"]
        if self.name == "pairwise":
            return ["A", "B", "tie"]
        if self.scale is None:
            return []
        low, high = (int(v) for v in self.scale)
        return list(range(low, high + 1)) if self.whole and high - low < _MAX_SCORE_BUTTONS else []

    def shortcut(self, label: LabelValue) -> str:
        """What to type for `label`."""
        if self.name == "score":
            return str(label)
        return next(key for key, value in _TYPED[self.name].items() if value == label and len(key) == 1)

    def describe(self) -> str:
        """The labels this kind takes, for messages and the typing hint."""
        if self.scale is not None:
            low, high = (int(v) if self.whole else v for v in self.scale)
            return f"a {'whole ' if self.whole else ''}number from {low} to {high}"
        if self.name == "score":
            return "a number"
        return " / ".join(f"{label} ({self.shortcut(label)})" for label in self.options)

    def check(self, label: Any) -> LabelValue:
        """`label` in its canonical form ("pass", "A", 4); InputError when this kind cannot take it."""
        if self.name == "score":
            if _is_number(label) and math.isfinite(label):
                value = float(label)
                if self.scale is None:
                    return int(label) if isinstance(label, numbers.Integral) else value
                low, high = self.scale
                if low <= value <= high and (value.is_integer() or not self.whole):
                    return int(value) if self.whole else value
        elif isinstance(label, str):
            canonical = _TYPED[self.name].get(label.strip().lower())
            if canonical is not None and label.strip().lower() == canonical.lower():
                return canonical
        raise InputError(f"label {label!r} is not a {self.name} label: give {self.describe()}")

    def parse(self, text: str) -> LabelValue | None:
        """The label `text` types ("p", "fail", "4", "t"), or None when it types none."""
        typed = text.strip().lower()
        if self.name != "score":
            return _TYPED[self.name].get(typed)
        try:
            return self.check(float(typed))
        except (ValueError, InputError):
            return None


def _is_number(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)
