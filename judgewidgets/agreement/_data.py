"""Turning user data into what the metrics count: vectors, rating tables, label orders, integer codes.

Every metric in this subpackage goes through these helpers, so NaN handling, label ordering and error messages
are the same everywhere. Missing values are whatever `pandas.isna` calls missing (NaN, None, pd.NA).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from .._errors import ConfigurationError, InputError

Labels = Sequence[Hashable] | None


def to_array(values: Any, name: str = "values") -> np.ndarray:
    """`values` as a numpy array; lists are read the way pandas reads them (so ["a", None] keeps None missing)."""
    if isinstance(values, (pd.Series, pd.Index, pd.DataFrame)):
        arr = values.to_numpy()
    elif isinstance(values, np.ndarray):
        arr = values
    elif isinstance(values, (str, bytes)) or np.isscalar(values):
        raise InputError(f"{name} must be a sequence of values, got the single value {values!r}")
    else:
        values = list(values)
        nested = bool(values) and all(isinstance(v, (list, tuple, np.ndarray)) for v in values)
        if nested:
            arr = pd.DataFrame(values).to_numpy()
        else:
            arr = pd.Series(values, dtype=None if values else object).to_numpy()
    return _normalise(arr)


def _normalise(arr: np.ndarray) -> np.ndarray:
    """Numbers as float/int arrays; strings and mixed values as object arrays (never numpy 'U' strings)."""
    if arr.dtype.kind in "iuf":
        return arr
    if arr.dtype.kind != "O":
        return arr.astype(object)
    missing = pd.isna(arr)
    present = arr[~missing]
    if present.size and all(_is_number(v) for v in present):
        if not missing.any() and all(isinstance(v, (int, np.integer)) for v in present):
            return arr.astype(np.int64)
        out = np.full(arr.shape, np.nan)
        out[~missing] = present.astype(float)
        return out
    return arr


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, (bool, np.bool_))


def is_numeric(arr: np.ndarray) -> bool:
    """Whether an array from `to_array` holds numbers (not labels such as strings or booleans)."""
    return arr.dtype.kind in "iuf"


def as_vector(values: Any, name: str) -> np.ndarray:
    """A 1-D array of `values`; InputError when it is not one-dimensional."""
    arr = to_array(values, name)
    if arr.ndim == 2 and arr.shape[1] == 1:
        arr = arr[:, 0]
    if arr.ndim != 1:
        raise InputError(f"{name} must be one-dimensional, got shape {arr.shape}")
    return arr


def paired(a: Any, b: Any, names: tuple[str, str] = ("a", "b")) -> tuple[np.ndarray, np.ndarray]:
    """The two vectors matched by position, keeping only pairs where neither value is missing.

    Raises InputError when the lengths differ or no complete pair is left.
    """
    x, y = as_vector(a, names[0]), as_vector(b, names[1])
    if len(x) != len(y):
        raise InputError(f"{names[0]} and {names[1]} differ in length ({len(x)} vs {len(y)})")
    keep = ~(pd.isna(x) | pd.isna(y))
    if not keep.any():
        raise InputError(
            f"no pair of {names[0]} and {names[1]} has both values present ({len(x)} pairs, all with a missing value)"
            if len(x)
            else f"{names[0]} and {names[1]} are empty"
        )
    return _normalise(x[keep]), _normalise(y[keep])


def ratings_matrix(ratings: Any) -> tuple[np.ndarray, list[Hashable]]:
    """An items × raters array and the raters' names (DataFrame columns, or rater_1.. for arrays)."""
    arr = to_array(ratings, "ratings")
    if arr.ndim != 2:
        raise InputError(f"ratings must be a 2-D items × raters table, got shape {arr.shape}")
    if arr.shape[1] < 2:
        raise InputError(f"ratings must have at least 2 raters (columns), got {arr.shape[1]}")
    if arr.shape[0] == 0:
        raise InputError("ratings has no items (rows)")
    if isinstance(ratings, pd.DataFrame):
        names = list(ratings.columns)
    else:
        names = [f"rater_{i + 1}" for i in range(arr.shape[1])]
    return arr, names


def check_labels(labels: Labels) -> list[Hashable] | None:
    """The explicit label order, validated: non-empty, no missing values, no duplicates."""
    if labels is None:
        return None
    if isinstance(labels, (str, bytes)):
        raise ConfigurationError(f"labels must be a sequence of labels, got the string {labels!r}")
    out = list(labels)
    if not out:
        raise ConfigurationError("labels is empty; give the labels in order, or leave it None")
    if any(pd.isna(v) for v in out):
        raise ConfigurationError("labels contains a missing value (NaN/None)")
    if len(pd.unique(np.asarray(out, dtype=object))) != len(out):
        raise ConfigurationError(f"labels contains duplicates: {out!r}")
    return out


def categories(values: np.ndarray, labels: Labels = None) -> list[Hashable]:
    """The ordered label set: `labels` when given (every value must be one of them), else the sorted union.

    `values` may be any shape and may hold missing values, which are ignored. Whole floats become ints, so a
    column of 1, 2, 3 with a NaN (which pandas stores as floats) still has the labels 1, 2, 3.
    """
    flat = values.ravel()
    observed = pd.unique(flat[~pd.isna(flat)])
    explicit = check_labels(labels)
    if explicit is not None:
        known = pd.Index(explicit, dtype=object)
        unknown = [v for v in observed if v not in known]
        if unknown:
            raise InputError(f"values {unknown[:5]!r} are not among labels {explicit!r}")
        return explicit
    try:
        ordered = sorted(observed)
    except TypeError as error:
        kinds = sorted({type(v).__name__ for v in observed})
        raise InputError(f"labels of different types ({', '.join(kinds)}) cannot be ordered; pass labels=[...]") from (
            error
        )
    if all(_is_number(v) and float(v).is_integer() for v in ordered):
        return [int(v) for v in ordered]  # 1.0, 2.0 from a column with NaN read as the labels 1, 2
    return ordered


def has_order(cats: Sequence[Hashable], labels: Labels) -> bool:
    """Whether the label order means something: given explicitly, or the labels are numbers or booleans."""
    return labels is not None or all(_is_number(v) or isinstance(v, (bool, np.bool_)) for v in cats)


def require_order(cats: Sequence[Hashable], labels: Labels, what: str) -> None:
    """ConfigurationError when `what` needs a label order and the labels are strings with no `labels` given."""
    if not has_order(cats, labels):
        raise ConfigurationError(f"{what} needs ordered labels; these are strings, so pass labels=[...] lowest first")


def all_numbers(cats: Sequence[Hashable]) -> bool:
    """Whether every label is a number (booleans are not)."""
    return all(_is_number(v) for v in cats)


def encode(values: np.ndarray, cats: Sequence[Hashable]) -> np.ndarray:
    """Integer positions of `values` in `cats` (same shape; -1 for missing values)."""
    flat = values.ravel()
    missing = pd.isna(flat)
    codes = np.full(flat.shape, -1, dtype=np.int64)
    index = pd.Index(list(cats), dtype=object)
    found = index.get_indexer(pd.Index(list(flat[~missing]), dtype=object))
    if (found < 0).any():
        unknown = pd.unique(np.asarray(flat[~missing][found < 0], dtype=object))
        raise InputError(f"values {list(unknown[:5])!r} are not among labels {list(cats)!r}")
    codes[~missing] = found
    return codes.reshape(values.shape)


def numeric_labels(cats: Sequence[Hashable], what: str) -> np.ndarray:
    """The labels as floats, for distances on values; InputError when they are not numbers."""
    if not all(_is_number(v) for v in cats):
        shown = [v for v in cats if not _is_number(v)][:5]
        raise InputError(f"{what} needs numeric values, got labels such as {shown!r}")
    return np.asarray(cats, dtype=float)


def pair_tables(codes_a: np.ndarray, codes_b: np.ndarray, k: int) -> np.ndarray:
    """Joint count tables of two code arrays: shape (..., k, k), rows from `codes_a`, columns from `codes_b`.

    The last axis of the codes runs over items; any leading axes (bootstrap resamples) are kept.
    """
    lead = codes_a.shape[:-1]
    blocks = int(np.prod(lead)) if lead else 1
    offsets = (np.arange(blocks) * k * k).reshape(*lead, 1) if lead else 0
    flat = (codes_a * k + codes_b + offsets).ravel()
    return np.bincount(flat, minlength=blocks * k * k).reshape(*lead, k, k)


def category_counts(codes: np.ndarray, k: int) -> np.ndarray:
    """Items × categories counts of an items × raters code table (-1 = missing is not counted)."""
    n_items = codes.shape[0]
    rows = np.broadcast_to(np.arange(n_items)[:, None], codes.shape)
    present = codes >= 0
    flat = rows[present] * k + codes[present]
    return np.bincount(flat, minlength=n_items * k).reshape(n_items, k)
