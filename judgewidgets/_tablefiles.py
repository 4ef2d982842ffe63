"""Tables as files for the command line: .csv, .jsonl or .parquet read and written, and an output path checked
before any work (the `score` and `compare` commands share them)."""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Callable, Sequence
from pathlib import Path

import pandas as pd

from ._errors import ConfigurationError, InputError

_KINDS = (".csv", ".jsonl", ".parquet")


def _read_jsonl(path: Path) -> pd.DataFrame:
    return pd.read_json(path, lines=True)


_READERS: dict[str, Callable[[Path], pd.DataFrame]] = {
    ".csv": pd.read_csv,
    ".jsonl": _read_jsonl,
    ".parquet": pd.read_parquet,
}


def _check_kind(path: Path, role: str) -> str:
    """The lower-case suffix of an input or output path, or one clear error naming the supported kinds."""
    suffix = path.suffix.lower()
    if suffix not in _KINDS:
        raise InputError(f"cannot {role} {path.name}: use a .csv, .jsonl or .parquet file")
    if suffix == ".parquet" and not any(importlib.util.find_spec(m) for m in ("pyarrow", "fastparquet")):
        raise ConfigurationError(
            f"{role}ing {path.name} needs pyarrow (a dependency of judgewidgets, missing here): pip install pyarrow"
        )
    return suffix


def read_table(path: Path, text: Sequence[str] = ()) -> pd.DataFrame:
    """A DataFrame from .csv, .jsonl or .parquet; anything else is an error naming the supported kinds. The
    `text` columns are read as text: a column of reference answers that are all numbers stays "4", not 4."""
    suffix = _check_kind(path, "read")
    if not path.is_file():
        raise InputError(f"input file not found: {path}")
    try:
        if suffix == ".csv" and text:
            frame = pd.read_csv(path, dtype={column: str for column in text})
        else:
            frame = _READERS[suffix](path)
    except (ValueError, OSError) as exc:
        raise InputError(f"cannot read {path}: {exc}") from exc
    for column in text:
        if column in frame.columns and frame[column].dtype.kind in "biuf":
            frame[column] = [v if pd.isna(v) else str(v) for v in frame[column].tolist()]
    return frame


def check_output(path: Path, source: Path | None = None) -> None:
    """Raise before any call when `path` cannot be written: unknown kind, missing or read-only folder, a folder
    in its place, or the input file itself."""
    _check_kind(path, "write")
    folder = path.parent if str(path.parent) else Path(".")
    if not folder.is_dir():
        raise InputError(f"cannot write {path}: the folder {folder} does not exist")
    if path.is_dir():
        raise InputError(f"cannot write {path}: it is a folder")
    if not os.access(path if path.exists() else folder, os.W_OK):
        raise InputError(f"cannot write {path}: permission denied")
    if source is not None and path.exists() and source.exists() and path.resolve() == source.resolve():
        raise InputError(f"the output {path} is the input file; choose another -o")


def write_table(frame: pd.DataFrame, path: Path) -> None:
    """`frame` written as its path's kind says (.csv, .jsonl or .parquet), without its index."""
    suffix = _check_kind(path, "write")
    if suffix == ".csv":
        frame.to_csv(path, index=False)
    elif suffix == ".jsonl":
        frame.to_json(path, orient="records", lines=True, force_ascii=False)
    else:
        frame.to_parquet(path, index=False)
