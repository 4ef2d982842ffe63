"""People's labels as numbers a judge's output can be fitted to: pass/fail, a score on a scale, or A / B / tie."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import pandas as pd

from .._errors import ConfigurationError, InputError

LabelKind = Literal["pass_fail", "score", "pairwise"]

_PASS = {"pass", "passed", "yes", "y", "true", "correct", "good", "1", "1.0", "p"}
_FAIL = {"fail", "failed", "no", "n", "false", "incorrect", "bad", "0", "0.0", "f"}
_PAIRWISE = {"a": "A", "b": "B", "tie": "tie", "model_a": "A", "model_b": "B", "draw": "tie", "tie (bothbad)": "tie"}
PAIRWISE_CLASSES = ("A", "B", "tie")


@dataclass(frozen=True)
class Labels:
    """Checked labels: `kind`, the classes as a person gave them (`classes`, in order: fail/pass, the scale's
    levels, or A/B/tie), each item's class index (`codes`) and, for pass/fail and scores, the target in [0, 1]
    that a calibrated judge score should match (`targets`)."""

    kind: LabelKind
    classes: tuple[Any, ...]
    codes: np.ndarray
    targets: np.ndarray
    scale: tuple[float, float] | None = None

    def __len__(self) -> int:
        return len(self.codes)

    @property
    def ordinal(self) -> bool:
        return self.kind == "score"

    def level_values(self) -> np.ndarray:
        """Each class's target in [0, 1] (pass/fail and scores): what a calibrated score is compared with."""
        if self.kind == "pass_fail":
            return np.array([0.0, 1.0])
        if self.kind == "score":
            assert self.scale is not None
            low, high = self.scale
            return (np.asarray(self.classes, dtype=float) - low) / (high - low)
        return np.array([1.0, 0.0, 0.5])  # A, B, tie as P(a better)


def read_labels(
    values: pd.Series | Sequence[Any],
    kind: LabelKind,
    scale: tuple[float, float] | None = None,
    *,
    min_labels: int = 10,
) -> Labels:
    """Labels checked for alignment: each value one of the kind's classes, enough of them, and more than one
    class; every problem an InputError naming it, before any call is made."""
    series = pd.Series(list(values), dtype=object)
    missing = series.map(_missing)
    if missing.any():
        rows = ", ".join(map(str, series.index[missing][:10]))
        raise InputError(f"labels are missing at positions {rows}: drop unlabelled rows before aligning")
    if len(series) < min_labels:
        raise InputError(
            f"{len(series)} labels are too few to align and measure on held-out labels; give at least {min_labels}"
        )
    if kind == "pass_fail":
        codes = series.map(_pass_fail).to_numpy()
        classes: tuple[Any, ...] = ("fail", "pass")
        targets = codes.astype(float)
    elif kind == "pairwise":
        codes = series.map(_pairwise).to_numpy()
        classes = PAIRWISE_CLASSES
        targets = np.array([1.0, 0.0, 0.5])[codes.astype(int)] if len(codes) else np.array([])
    elif kind == "score":
        numbers = series.map(_number).to_numpy(dtype=float)
        if scale is None:
            raise ConfigurationError("score labels need their scale, e.g. scale=(1, 5)")
        low, high = float(scale[0]), float(scale[1])
        outside = [v for v in numbers if not low <= v <= high]
        if outside:
            raise InputError(f"labels {sorted(set(outside))[:5]} lie outside the scale {scale}")
        levels = np.unique(numbers)
        codes = np.searchsorted(levels, numbers)
        classes = tuple(float(v) for v in levels)
        targets = (numbers - low) / (high - low)
    else:
        raise ConfigurationError(f"unknown label kind {kind!r}; use 'pass_fail', 'score' or 'pairwise'")
    codes = codes.astype(int)
    if len(np.unique(codes)) < 2:
        raise InputError(
            f"every label is {classes[codes[0]]!r}: a judge cannot be aligned to, nor measured against, a single "
            "class; label some items of the other kind too"
        )
    return Labels(kind, classes, codes, targets, (float(scale[0]), float(scale[1])) if scale else None)


def infer_kind(values: pd.Series | Sequence[Any], pairwise: bool) -> LabelKind:
    """pairwise for a pairwise judge or A / B / tie labels; score when the labels are numbers other than 0 and 1;
    else pass_fail (whose reader names any label that is not pass or fail)."""
    present = [v for v in values if not _missing(v)]
    texts = {str(v).strip().lower() for v in present}
    if pairwise or (texts and texts <= set(_PAIRWISE)):
        return "pairwise"
    numbers = [v for v in present if not isinstance(v, bool) and isinstance(v, (int, float, np.number))]
    if present and len(numbers) == len(present) and not texts <= {"0", "1", "0.0", "1.0"}:
        return "score"
    return "pass_fail"


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def _pass_fail(value: Any) -> int:
    text = str(value).strip().lower()
    if isinstance(value, bool):
        return int(value)
    if text in _PASS:
        return 1
    if text in _FAIL:
        return 0
    raise InputError(f"label {value!r} is not pass or fail (pass/fail, yes/no, true/false, 1/0)")


def _pairwise(value: Any) -> int:
    text = str(value).strip().lower()
    if text not in _PAIRWISE:
        raise InputError(f"label {value!r} is not a pairwise verdict: use 'A', 'B' or 'tie'")
    return PAIRWISE_CLASSES.index(_PAIRWISE[text])


def _number(value: Any) -> float:
    if isinstance(value, bool):
        raise InputError(f"label {value!r} is not a score")
    try:
        return float(value)
    except (TypeError, ValueError):
        raise InputError(f"label {value!r} is not a score on the scale") from None
