"""Tables as Parquet files and values as JSON, exactly: what a saved run's files hold.

Records (rows of pydantic records) are written through pyarrow so that None and NaN stay apart; DataFrames with
pandas, so their index, dtypes and (JSON-able) attrs come back. Nested values (dicts, lists) become JSON text
in their cell, and the columns so written are listed in the table's entry of run.json.
"""

from __future__ import annotations

import enum
import json
import math
from collections.abc import Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from pydantic import BaseModel


def plain(value: Any) -> Any:
    """A value as JSON-friendly Python: enums as their values, tuples as lists, numpy scalars as Python's."""
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, np.ndarray):
        return [plain(v) for v in value.tolist()]
    return value


def to_json(value: Any, indent: int | None = None) -> str:
    """JSON text of dump values (numpy values as Python's; NaN written as Python's json writes it)."""
    return json.dumps(value, indent=indent, ensure_ascii=False, default=_json_default)


def _json_default(value: Any) -> Any:
    if isinstance(value, (np.generic, np.ndarray, enum.Enum)):
        return plain(value)
    if isinstance(value, (pd.Timestamp, datetime)):
        return value.isoformat()
    if isinstance(value, (set, frozenset)):
        return sorted(value, key=str)
    if isinstance(value, BaseModel):
        return plain(value.model_dump())
    raise TypeError(f"{type(value).__name__} is not JSON serialisable")


def _json_or_none(value: Any) -> Any:
    """`value` when it can be written as JSON, else None (a frame's attrs that hold objects are not kept)."""
    try:
        to_json(value)
    except (TypeError, ValueError):
        return None
    return value


def _nested(value: Any) -> bool:
    return isinstance(value, (dict, list, tuple, np.ndarray))


def _json_cell(value: Any, ascii_only: bool) -> str | None:
    if value is None:
        return None
    return json.dumps(plain(value), ensure_ascii=ascii_only, default=_json_default)


def _json_array(pa: Any, values: Sequence[Any]) -> Any:
    try:
        return pa.array([_json_cell(v, False) for v in values], type=pa.string())
    except (UnicodeEncodeError, pa.ArrowException):  # a lone surrogate: escaped, json.loads restores it
        return pa.array([_json_cell(v, True) for v in values], type=pa.string())


def pyarrow_modules() -> tuple[Any, Any]:
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError as exc:  # pragma: no cover - pyarrow is in the test environment
        raise ImportError(
            "saving and loading runs writes Parquet, which needs pyarrow: pip install 'judgewidgets[parquet]'"
        ) from exc
    return pa, pq


def write_rows(rows: Sequence[Mapping[str, Any]], file: Path) -> dict[str, Any]:
    pa, pq = pyarrow_modules()
    names = list(dict.fromkeys(k for row in rows for k in row))
    arrays, encoded = [], []
    for name in names:
        values = [row.get(name) for row in rows]
        if any(_nested(v) for v in values):
            arrays.append(_json_array(pa, values))
            encoded.append(name)
            continue
        try:
            arrays.append(pa.array(values))
        except (UnicodeEncodeError, pa.ArrowException):  # mixed types, or text pyarrow cannot encode
            arrays.append(_json_array(pa, values))
            encoded.append(name)
    table = pa.Table.from_arrays(arrays, names=names) if names else pa.table({})
    pq.write_table(table, file)
    return {"file": file.name, "layout": "records", "rows": len(rows), "json_columns": encoded}


def write_frame(frame: pd.DataFrame, file: Path) -> dict[str, Any]:
    pa, _ = pyarrow_modules()
    out = frame.copy()
    attrs = _json_or_none(plain(dict(frame.attrs)))
    out.attrs = {}
    labels = None
    if not all(isinstance(c, str) for c in out.columns) or out.columns.has_duplicates:
        labels = [plain(c) for c in out.columns]
        out.columns = [f"column_{i}" for i in range(out.shape[1])]
    encoded = [c for c in out.columns if out[c].dtype == object and any(_nested(v) for v in out[c].tolist())]
    for column in encoded:
        out[column] = [_json_cell(v, False) for v in out[column].tolist()]
    try:
        out.to_parquet(file)
    except (UnicodeEncodeError, pa.ArrowException, ValueError, TypeError):  # mixed objects: every object column as JSON
        for column in out.columns:
            if out[column].dtype == object and column not in encoded:
                out[column] = [_json_cell(v, True) for v in out[column].tolist()]
                encoded.append(column)
        out.to_parquet(file)
    kept_objects = {str(c): _missing_as(out[c]) for c in out.columns if out[c].dtype == object and c not in encoded}
    return {
        "file": file.name,
        "layout": "frame",
        "rows": len(out),
        "json_columns": [str(c) for c in encoded],
        "object_columns": kept_objects,  # object columns, read back as such (not pandas' str), gaps as they were
        "column_labels": labels,
        "attrs": attrs,
    }


def read_rows(file: Path, entry: Mapping[str, Any]) -> list[dict[str, Any]]:
    _, pq = pyarrow_modules()
    rows = pq.read_table(file).to_pylist()
    for name in entry.get("json_columns") or []:
        for row in rows:
            if row.get(name) is not None:
                row[name] = json.loads(row[name])
    return rows


def _missing_as(column: pd.Series) -> str:
    """How an object column marks a gap: "nan" when only NaN does, else "none" (Parquet keeps one null)."""
    gaps = [v for v in column.tolist() if _missing(v)]
    return "nan" if gaps and all(isinstance(v, float) for v in gaps) else "none"


def _missing(value: Any) -> bool:
    return value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value))


def read_frame(file: Path, entry: Mapping[str, Any]) -> pd.DataFrame:
    pyarrow_modules()
    frame = pd.read_parquet(file)
    for name in entry.get("json_columns") or []:
        values = [None if _missing(v) else json.loads(v) for v in frame[name].tolist()]
        frame[name] = pd.Series(values, index=frame.index, dtype=object)
    for name, gap in dict(entry.get("object_columns") or {}).items():
        if frame[name].dtype != object:
            missing = math.nan if gap == "nan" else None
            values = [missing if _missing(v) else v for v in frame[name].tolist()]
            frame[name] = pd.Series(values, index=frame.index, dtype=object)
    labels = entry.get("column_labels")
    if labels is not None:
        frame.columns = pd.Index([tuple(c) if isinstance(c, list) else c for c in labels])
    frame.attrs = dict(entry.get("attrs") or {})
    return frame
