"""Percentile bootstrap confidence intervals, resampling items (rows) jointly across arrays.

Resample indices are drawn in fixed-size chunks from one seeded generator, so a given seed, data size and
number of resamples always gives the same resamples, whether the metric is called once per resample or once
per chunk (`vectorized=True`).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from .._errors import ConfigurationError, InputError
from ._data import to_array

# Resample indices are generated and evaluated in chunks of about this many cells, to bound memory.
CHUNK_CELLS = 2_000_000


class BootstrapCI(NamedTuple):
    """A metric's value on the data and its percentile bootstrap interval."""

    estimate: float
    low: float
    high: float


def check_bootstrap_options(n: Any, confidence: Any) -> None:
    """ConfigurationError unless `n` is a positive integer and `confidence` lies strictly between 0 and 1."""
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ConfigurationError(f"n (the number of bootstrap resamples) must be a positive integer, got {n!r}")
    if isinstance(confidence, bool) or not isinstance(confidence, (int, float)) or not 0 < confidence < 1:
        raise ConfigurationError(f"confidence must lie strictly between 0 and 1, got {confidence!r}")


def resample_indices(n_items: int, n: int, seed: int | None, width: int = 0) -> Iterator[np.ndarray]:
    """Chunks of bootstrap row indices, shape (chunk, n_items), n rows in all.

    `width` is the number of cells the caller builds per resample, when larger than `n_items` (k × k tables).
    """
    rng = np.random.default_rng(seed)
    per_chunk = max(1, CHUNK_CELLS // max(n_items, width, 1))
    done = 0
    while done < n:
        size = min(per_chunk, n - done)
        yield rng.integers(0, n_items, size=(size, n_items))
        done += size


def percentile_interval(samples: np.ndarray, confidence: float) -> tuple[np.ndarray, np.ndarray]:
    """Lower and upper percentile bounds over the first axis, ignoring NaN resamples (NaN when all are)."""
    tail = (1.0 - confidence) / 2.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        low, high = np.nanquantile(np.asarray(samples, dtype=float), [tail, 1.0 - tail], axis=0)
    return low, high


def bootstrap_ci(
    metric: Callable[..., Any],
    *arrays: Any,
    n: int = 1000,
    confidence: float = 0.95,
    seed: int | None = 0,
    vectorized: bool = False,
) -> BootstrapCI:
    """The metric on the data, and a percentile bootstrap interval from `n` resamples of the items.

    All arrays are resampled with the same row indices, so pairs (judge, truth) stay together. Each resample
    is passed to `metric` as the same kind of object it was given (pandas objects keep their columns).
    With `vectorized=True`, `metric` is instead called on numpy arrays with an extra leading resample axis and
    must return one value per resample, e.g. `lambda p, t: (p == t).mean(axis=-1)` — much faster.

    Resamples where the metric is NaN (e.g. κ of a resample with one label) are left out of the percentiles;
    the interval is NaN when all are. Arrays are taken as they are: drop missing values first if the metric
    does not.
    """
    check_bootstrap_options(n, confidence)
    if not arrays:
        raise InputError("bootstrap_ci needs at least one array to resample")
    data = [a if isinstance(a, (pd.Series, pd.DataFrame, np.ndarray)) else to_array(a, "array") for a in arrays]
    lengths = {len(a) for a in data}
    if len(lengths) > 1:
        raise InputError(f"arrays to resample differ in length: {[len(a) for a in data]}")
    n_items = lengths.pop()
    if n_items == 0:
        raise InputError("arrays to resample are empty")
    estimate = float(metric(*data))
    samples: list[np.ndarray] = []
    if vectorized:
        plain = [a.to_numpy() if isinstance(a, (pd.Series, pd.DataFrame)) else a for a in data]
        for idx in resample_indices(n_items, n, seed):
            values = np.asarray(metric(*(a[idx] for a in plain)), dtype=float).reshape(-1)
            if len(values) != len(idx):
                raise ConfigurationError(
                    f"a vectorized metric must return one value per resample ({len(idx)}), got shape {values.shape}"
                )
            samples.append(values)
    else:
        for idx in resample_indices(n_items, n, seed):
            samples.append(np.array([float(metric(*(_take(a, rows) for a in data))) for rows in idx]))
    low, high = percentile_interval(np.concatenate(samples), confidence)
    return BootstrapCI(estimate, float(low), float(high))


def _take(array: Any, rows: np.ndarray) -> Any:
    if isinstance(array, (pd.Series, pd.DataFrame)):
        return array.iloc[rows]
    return array[rows]
