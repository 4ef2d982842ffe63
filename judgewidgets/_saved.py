"""What every result kind shares to be kept: `save()` and `log_to_mlflow()`, and the helpers its `_dump` uses.

A result class extends `Keepable` (or `KeptFrame`, for a result that is a DataFrame) and implements the
`Saveable` protocol (`_dump`, `_restore`); see `_runfiles` for the folder it is written to.

A result kind that records its calls' errors says where (`_call_errors`); `Keepable` then starts its HTML and text
with "N of M calls failed: ..." (`_failures.calls_failed_line`, the one rule), and a run method hands the result
it returns to `reported`, which warns the same line (CallsFailedWarning).
"""

from __future__ import annotations

import html
import math
import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import pandas as pd
from pydantic import BaseModel

from ._failures import calls_failed_line, not_run_count, warn_calls_failed
from ._provenance import provenance
from ._runfiles import Dump, write
from ._tables import Columns, plain, record_columns
from .engine import Usage

__all__ = [
    "Columns",
    "Dump",
    "Keepable",
    "KeptFrame",
    "column_errors",
    "failed_html",
    "mean_or_nan",
    "not_run_count",
    "not_run_note",
    "noted_html",
    "plain",
    "provenance",
    "record_columns",
    "record_rows",
    "reported",
    "usage_of",
    "usage_of_table",
]


K = TypeVar("K", bound="Keepable")


class Keepable:
    """`save` and `log_to_mlflow` for a result class that implements `Saveable`, and the line that says how many
    of its calls failed (`calls_failed`), at the top of its HTML and text."""

    def _call_errors(self) -> Iterable[str | None]:
        """One entry per call the run recorded: its error, None when answered. A kind that records none: empty."""
        return ()

    @property
    def calls_failed(self) -> str:
        """`3 of 8 calls failed: <the most common error>`, or "" when every call was answered (calls the budget
        did not run are not failures). Warned after the run (CallsFailedWarning) and shown above the table."""
        return calls_failed_line(self._call_errors())

    def _noted_html(self, body: str) -> str:
        """`body` (the result's HTML) under the calls-failed line, when some calls failed."""
        return failed_html(self.calls_failed) + body

    def _noted_text(self, body: str) -> str:
        """`body` (the result's text) under the calls-failed line, when some calls failed."""
        line = self.calls_failed
        return f"{line}\n{body}" if line else body

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
    implement `_dump` and `_restore`; its HTML and text start with the calls-failed line when calls failed."""

    def __repr__(self) -> str:
        return self._noted_text(super().__repr__())

    def _repr_html_(self) -> str | None:
        body = super()._repr_html_()
        return None if body is None else self._noted_html(body)

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
    """A result's table as HTML, under the line saying how many of its calls failed and the one saying how many the
    budget did not run."""
    errors = list(errors)
    failed = calls_failed_line(errors)
    note = not_run_note(errors, what)
    budget = f"<p><b>{note}</b>; a rerun with a larger budget pays only for them.</p>" if note else ""
    return failed_html(failed) + budget + (table._repr_html_() or "")


def column_errors(frame: pd.DataFrame, *columns: str) -> list[str | None]:
    """The errors a table records in `columns` (those it has), one per cell: the text, None where there is none."""
    return [e if isinstance(e, str) and e else None for c in columns if c in frame.columns for e in frame[c]]


def failed_html(line: str) -> str:
    """The calls-failed line as the paragraph a result's HTML starts with ("" for no line)."""
    if not line:
        return ""
    return f'<p class="judgewidgets-calls-failed" style="color:#b00"><b>{html.escape(line)}</b></p>'


def reported(result: K) -> K:
    """`result`, once its run has warned how many of its calls failed (CallsFailedWarning; nothing when none did).
    Every run method returns its result through here, so a script, `%%judge` and the builder all warn the same."""
    warn_calls_failed(result.calls_failed)
    return result


def mean_or_nan(values: Iterable[float | None]) -> float:
    """The mean of the numbers that are there (None and NaN left out), NaN when none is."""
    kept = [float(v) for v in values if v is not None and not (isinstance(v, float) and math.isnan(v))]
    return sum(kept) / len(kept) if kept else math.nan
