"""What every result kind shares to be kept: `save()` and `log_to_mlflow()`, and the helpers its `_dump` uses.

A result class extends `Keepable` (or `KeptFrame`, for a result that is a DataFrame) and implements the
`Saveable` protocol (`_dump`, `_restore`); see `_runfiles` for the folder it is written to.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import pandas as pd
from pydantic import BaseModel

from ._failures import not_run_count
from ._provenance import provenance
from ._runfiles import Dump, write
from ._tables import Columns, plain, record_columns
from .engine import Usage

__all__ = [
    "Columns",
    "Dump",
    "Keepable",
    "KeptFrame",
    "mean_or_nan",
    "not_run_count",
    "not_run_note",
    "noted_html",
    "plain",
    "provenance",
    "record_columns",
    "record_rows",
    "usage_of",
    "usage_of_table",
]


class Keepable:
    """`save` and `log_to_mlflow` for a result class that implements `Saveable`."""

    def save(self, path: str | os.PathLike[str], *, overwrite: bool = False) -> Path:
        """Write this result to the folder `path` (Parquet tables and run.json); `jw.load(path)` reads it back.

        An existing saved run there is replaced only with `overwrite=True`; a folder holding other files is never
        written into. Returns the folder."""
        return write(self, path, overwrite=overwrite)

    def log_to_mlflow(self, run_name: str | None = None, **options: Any) -> str:
        """Log this result as an MLflow run into the tracking URI and experiment you have set: the judges'
        settings as params, the headline metrics and usage as metrics, the saved run, the per-item table and
        the chart as artifacts. Returns the run id. Needs `pip install 'judgewidgets[mlflow]'`; see
        `judgewidgets._mlflow.log_result` for the options."""
        from ._mlflow import log_result

        return log_result(self, run_name=run_name, **options)


class KeptFrame(Keepable, pd.DataFrame):
    """A result that is a DataFrame (a pipeline's table, a batch of pairwise comparisons): it behaves as any
    DataFrame, and derived frames keep the class; `provenance` lives in `attrs["provenance"]`. Subclasses
    implement `_dump` and `_restore`."""

    @property
    def _constructor(self) -> type[KeptFrame]:
        return type(self)

    @property
    def provenance(self) -> dict[str, Any]:
        """The settings of what made this table (no secrets)."""
        value = self.attrs.get("provenance")
        return value if isinstance(value, dict) else {}

    def plain_frame(self, *drop_attrs: str) -> pd.DataFrame:
        """The table as a plain DataFrame, without the attrs named (and without the provenance)."""
        out = pd.DataFrame(self).copy()
        out.attrs = {k: v for k, v in self.attrs.items() if k not in {"provenance", *drop_attrs}}
        return out


def record_rows(records: Iterable[BaseModel], **columns: Sequence[Any]) -> list[dict[str, Any]]:
    """One row per pydantic record (its fields, nested values kept for JSON), `columns` put first."""
    rows = []
    for i, record in enumerate(records):
        row = {name: plain(values[i]) for name, values in columns.items()}
        row.update(plain(record.model_dump()))
        rows.append(row)
    return rows


def usage_of(records: Iterable[Usage]) -> dict[str, Any]:
    """What the calls behind some records cost together (latency, tokens, dollars, cached, attempts)."""
    return Usage.total(records).model_dump()


def usage_of_table(frame: pd.DataFrame, calls: str | None = None) -> dict[str, Any]:
    """The same summary from a table with usage columns (latency_s or seconds, tokens, cost_usd, cached,
    waited_s; the attempts are the `calls` column's sum, else one per row)."""

    def total(column: str) -> float | None:
        if column not in frame.columns:
            return None
        values = pd.to_numeric(frame[column], errors="coerce")
        return None if values.isna().any() else float(values.sum())

    latency = total("latency_s") if "latency_s" in frame.columns else total("seconds")
    return {
        "latency_s": latency or 0.0,
        "prompt_tokens": _int_or_none(total("prompt_tokens")),
        "completion_tokens": _int_or_none(total("completion_tokens")),
        "cost_usd": total("cost_usd"),
        "cached": bool(frame["cached"].astype(bool).all()) if "cached" in frame.columns and len(frame) else False,
        "attempts": int(pd.to_numeric(frame[calls]).sum()) if calls and calls in frame.columns else len(frame),
        "waited_s": total("waited_s") or 0.0,
    }


def _int_or_none(value: float | None) -> int | None:
    return None if value is None else int(value)


def not_run_note(errors: Iterable[str | None], what: str = "votes") -> str:
    """`3 of 12 votes not run: the budget (max_cost_usd) was reached`, or "" when the budget stopped none."""
    errors = list(errors)
    skipped = not_run_count(errors)
    if not skipped:
        return ""
    return f"{skipped} of {len(errors)} {what} not run: the budget (max_cost_usd) was reached"


def noted_html(table: pd.DataFrame, errors: Iterable[str | None], what: str = "votes") -> str:
    """A result's table as HTML, under a line saying how many of its calls the budget did not run."""
    note = not_run_note(errors, what)
    return (f"<p><b>{note}</b>; a rerun with a larger budget pays only for them.</p>" if note else "") + (
        table._repr_html_() or ""
    )


def mean_or_nan(values: Iterable[float | None]) -> float:
    """The mean of the numbers that are there (None and NaN left out), NaN when none is."""
    kept = [float(v) for v in values if v is not None and not (isinstance(v, float) and math.isnan(v))]
    return sum(kept) / len(kept) if kept else math.nan
