"""Tables as Parquet files and values as JSON, exactly: what a saved run's files hold.

Records (rows of pydantic records) are written through pyarrow so that None and NaN stay apart; DataFrames with
pandas, so their index, dtypes and (JSON-able) attrs come back. Nested values (dicts, lists) become JSON text
in their cell, and the columns so written are listed in the table's entry of run.json.

Records may be given as rows (dicts) or as `Columns` (one list per field, as `record_columns` reads them off the
records): the file is the same, and columns skip building a dict per row, which is what makes saving 100,000
votes take a fraction of a second. A column of plain values (text, numbers, booleans, None) goes to pyarrow as
it is; only a column holding anything else is converted value by value.
"""

from __future__ import annotations

import enum
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
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
    if isinstance(value, BaseModel):
        return plain(value.model_dump())
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


_NESTED = (dict, list, tuple, np.ndarray, BaseModel)
_SCALARS = frozenset({str, float, int, bool, type(None)})  # what pyarrow takes as it is


def _nested(value: Any) -> bool:
    return isinstance(value, _NESTED)


@dataclass(frozen=True)
class Columns:
    """Records held column by column: `data` maps each field to one value per row (`length` rows). Written to
    Parquet exactly as the same rows would be (see `write_rows`), without a dict per row."""

    data: Mapping[str, list[Any]]
    length: int

    def rows(self) -> list[dict[str, Any]]:
        """The same records as rows (one dict each)."""
        names = list(self.data)
        return [dict(zip(names, values, strict=True)) for values in zip(*self.data.values(), strict=True)]

    def __len__(self) -> int:
        return self.length


def record_columns(records: Iterable[BaseModel], **columns: Sequence[Any]) -> Columns:
    """Pydantic records as `Columns`: `columns` first, then every field of the records (a nested record as its
    dict, as `model_dump` gives it, once written). Holds what `[{**columns_i, **record_i.model_dump()}]` holds,
    read off the records' attributes column by column."""
    records = list(records)
    data: dict[str, list[Any]] = {name: list(values) for name, values in columns.items()}
    for name, values in data.items():
        if len(values) != len(records):
            raise ValueError(f"column {name!r} has {len(values)} values for {len(records)} records")
    if not records:
        return Columns({}, 0)
    kinds = list(dict.fromkeys(type(r) for r in records))
    fields = list(dict.fromkeys(name for kind in kinds for name in kind.model_fields))
    for name in fields:
        if len(kinds) == 1:
            data[name] = [getattr(r, name) for r in records]
        else:
            data[name] = [getattr(r, name, None) if name in type(r).model_fields else None for r in records]
    return Columns(data, len(records))


def _json_cell(value: Any, ascii_only: bool) -> str | None:
    if value is None:
        return None
    return json.dumps(plain(value), ensure_ascii=ascii_only, default=_json_default)


def _json_cells(values: Sequence[Any], ascii_only: bool) -> list[str | None]:
    """`_json_cell` of each value, with one encoder for the column; a flat dict of text keys and plain values (a
    judge's probabilities) is written as it is, without `plain` (which would return an equal dict)."""
    flat = json.JSONEncoder(ensure_ascii=ascii_only)
    full = json.JSONEncoder(ensure_ascii=ascii_only, default=_json_default)
    return [
        None
        if value is None
        else flat.encode(value)
        if type(value) is dict and all(type(k) is str and type(v) in _SCALARS for k, v in value.items())
        else full.encode(plain(value))
        for value in values
    ]


def _json_array(pa: Any, values: Sequence[Any]) -> Any:
    try:
        return pa.array(_json_cells(values, False), type=pa.string())
    except (UnicodeEncodeError, pa.ArrowException):  # a lone surrogate: escaped, json.loads restores it
        return pa.array(_json_cells(values, True), type=pa.string())


def pyarrow_modules() -> tuple[Any, Any]:
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError as exc:  # pragma: no cover - pyarrow is in the test environment
        raise ImportError(
            "saving and loading runs writes Parquet with pyarrow, a dependency of judgewidgets that is missing here: "
            "pip install pyarrow"
        ) from exc
    return pa, pq


def write_rows(rows: Sequence[Mapping[str, Any]] | Columns, file: Path) -> dict[str, Any]:
    """Records (rows, or `Columns`) as a Parquet file through pyarrow; its entry for run.json."""
    pa, pq = pyarrow_modules()
    if isinstance(rows, Columns):
        data, length = rows.data, rows.length
    else:
        names = list(dict.fromkeys(k for row in rows for k in row))
        data, length = {name: [row.get(name) for row in rows] for name in names}, len(rows)
    arrays, encoded = [], []
    for name, values in data.items():
        kinds = set(map(type, values))
        if not kinds <= _SCALARS:
            if any(issubclass(kind, _NESTED) for kind in kinds):
                arrays.append(_json_array(pa, values))
                encoded.append(name)
                continue
            values = [plain(v) for v in values]  # enums, numpy scalars: as Python's
        try:
            arrays.append(pa.array(values))
        except (UnicodeEncodeError, pa.ArrowException):  # mixed types, or text pyarrow cannot encode
            arrays.append(_json_array(pa, values))
            encoded.append(name)
    table = pa.Table.from_arrays(arrays, names=list(data)) if data else pa.table({})
    pq.write_table(table, file)
    return {"file": file.name, "layout": "records", "rows": length, "json_columns": encoded}


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
