"""A run folder: one result kept on disk, Parquet for its tables and JSON for what describes it.

```
runs/v1/
  run.json         format and version, kind, when it was saved, package versions, what made it (each judge's
                   settings, no secrets), a fingerprint of the inputs, usage (seconds, tokens, dollars, attempts),
                   headline metrics, and the few values the result needs besides its tables
  votes.parquet    one Parquet file per table: pandas, pyarrow, DuckDB and Polars read them as they are
  ...
```

Every result kind is `Saveable`: `_dump()` gives its records and tables as a `Dump`, and the classmethod
`_restore(dump)` rebuilds the same class from one, so a loaded result has every method the original had.
`jw.load` (in `runs/`) maps the kind written in run.json to its class in one explicit table: nothing registers
itself at import. A run.json of an older format version is brought up to date by `MIGRATIONS` (none yet: this
is the first), one of a newer version is refused with a message saying to upgrade.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import platform
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path
from types import MappingProxyType
from typing import Any, Protocol, runtime_checkable

import pandas as pd

from ._errors import SavedRunError
from ._provenance import models_in
from ._tables import Columns, plain, read_frame, read_rows, to_json, write_frame, write_rows
from ._version import __version__
from .engine._request import _ambient_secrets, redact

FORMAT = "judgewidgets-run"
FORMAT_VERSION = 1
META_FILE = "run.json"
# Migrations of run.json from one format version to the next ({version: upgrade to version + 1}); none yet, as
# version 1 is the first. A version with no path to FORMAT_VERSION is refused with a message saying so.
MIGRATIONS: Mapping[int, Any] = MappingProxyType({})
_PACKAGES = ("pandas", "numpy", "pyarrow", "pydantic", "litellm")


@dataclass
class Dump:
    """A result as data: what `save` writes and `load` reads back.

    `state`: the JSON values the result needs besides its tables. `tables`: DataFrames, written with pandas (index
    and dtypes kept). `records`: rows of pydantic records (dicts, or `Columns` for many), written through pyarrow
    so None and NaN stay apart; nested values (dicts, lists) become JSON text; read back, records are rows.
    `metrics`, `usage`, `judges` and `inputs` (the item texts, in order) describe the run in run.json, for the run
    log and MLflow, without loading it."""

    kind: str
    state: dict[str, Any] = field(default_factory=dict)
    tables: dict[str, pd.DataFrame] = field(default_factory=dict)
    records: Mapping[str, list[dict[str, Any]] | Columns] = field(default_factory=dict)
    metrics: dict[str, float] = field(default_factory=dict)
    usage: dict[str, Any] = field(default_factory=dict)
    judges: list[str] = field(default_factory=list)
    inputs: list[dict[str, Any]] | None = None
    provenance: dict[str, Any] = field(default_factory=dict)
    meta: dict[str, Any] = field(default_factory=dict)  # run.json as read (set by `read`)

    def table(self, name: str) -> pd.DataFrame:
        if name not in self.tables:
            raise SavedRunError(f"the saved {self.kind} run has no table {name!r} (found: {sorted(self.tables)})")
        return self.tables[name]

    def rows(self, name: str) -> list[dict[str, Any]]:
        if name not in self.records:
            raise SavedRunError(f"the saved {self.kind} run has no records {name!r} (found: {sorted(self.records)})")
        rows = self.records[name]
        return rows.rows() if isinstance(rows, Columns) else rows


@runtime_checkable
class Saveable(Protocol):
    """A result that can be kept: it dumps itself as data and its class rebuilds it from that data."""

    def _dump(self) -> Dump: ...

    @classmethod
    def _restore(cls, dump: Dump) -> Any: ...


def fingerprint(inputs: Sequence[Mapping[str, Any]] | None) -> str | None:
    """A SHA-256 over the items' texts in order (missing fields left out): equal inputs, equal fingerprints."""
    if inputs is None:
        return None
    digest = hashlib.sha256()
    encoder = json.JSONEncoder(sort_keys=True, ensure_ascii=False)  # json.dumps(..., sort_keys=True, ...)'s own
    for row in inputs:
        present = {k: str(v) for k, v in row.items() if v is not None and not (isinstance(v, float) and math.isnan(v))}
        digest.update(encoder.encode(present).encode("utf-8", "surrogatepass"))
        digest.update(b"\n")
    return digest.hexdigest()


def write(result: Any, path: str | os.PathLike[str], *, overwrite: bool = False) -> Path:
    """Write `result` (a Saveable) to the folder `path`, atomically: every file is written to a hidden folder
    beside it, which then takes its place. See `Keepable.save`."""
    if not isinstance(result, Saveable):
        raise SavedRunError(f"a {type(result).__name__} cannot be saved: it is not a judgewidgets result")
    target = Path(path).expanduser()
    check_target(target, overwrite)
    dump = result._dump()
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.saving-", dir=target.parent))
    try:
        files: dict[str, Any] = {}
        clash = set(dump.tables) & set(dump.records)
        if clash:
            raise SavedRunError(f"table names used twice in one dump: {sorted(clash)}")
        for name, frame in dump.tables.items():
            files[name] = write_frame(frame, staging / f"{name}.parquet")
        for name, rows in dump.records.items():
            files[name] = write_rows(rows, staging / f"{name}.parquet")
        meta = metadata_of(result, dump, target.name, files)
        (staging / META_FILE).write_text(to_json(meta, indent=2), encoding="utf-8")
        _put_in_place(staging, target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return target


def check_target(target: Path, overwrite: bool) -> None:
    """SavedRunError when a run cannot be saved at `target`: a file there, a saved run (unless `overwrite`), or a
    folder holding other files."""
    if not target.exists():
        return
    if not target.is_dir():
        raise SavedRunError(f"cannot save into {target}: it is a file; give a folder path (e.g. runs/v1)")
    meta = target / META_FILE
    if meta.exists():
        if not overwrite:
            raise SavedRunError(
                f"{target} already holds a saved run ({_describe_saved(meta)}): pass overwrite=True to replace it, "
                "or save under another name"
            )
        return
    if any(target.iterdir()):
        raise SavedRunError(f"cannot save into {target}: the folder holds other files; give a new or empty folder")


def _describe_saved(meta: Path) -> str:
    try:
        data = json.loads(meta.read_text(encoding="utf-8"))
        return f"{data.get('kind')}, saved {data.get('saved_at')}"
    except (OSError, ValueError):
        return "unreadable run.json"


def _put_in_place(staging: Path, target: Path) -> None:
    if not target.exists():
        staging.rename(target)
        return
    old = Path(tempfile.mkdtemp(prefix=f".{target.name}.replaced-", dir=target.parent))
    old.rmdir()
    target.rename(old)
    try:
        staging.rename(target)
    except BaseException:
        old.rename(target)
        raise
    shutil.rmtree(old, ignore_errors=True)


def metadata_of(result: Any, dump: Dump, name: str, files: Mapping[str, Any]) -> dict[str, Any]:
    """run.json's content; every known secret value in it (the environment's and litellm's keys) is masked."""
    cls = type(result)
    meta = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "kind": dump.kind,
        "class": f"{cls.__module__}.{cls.__qualname__}",
        "name": name,
        "saved_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "versions": versions(),
        "judges": list(dump.judges),
        "models": models_in(dump.provenance),
        "made_by": dump.provenance,
        "inputs": {
            "items": len(dump.inputs) if dump.inputs is not None else None,
            "fingerprint": fingerprint(dump.inputs),
        },
        "usage": dump.usage,
        "metrics": {k: _finite_or_none(v) for k, v in dump.metrics.items()},
        "state": dump.state,
        "tables": dict(files),
    }
    secrets = list(_ambient_secrets())
    if not secrets:
        return meta
    return json.loads(redact(to_json(meta), secrets))


def versions() -> dict[str, str | None]:
    """judgewidgets', Python's and the main libraries' versions (None where a library is not installed)."""
    found: dict[str, str | None] = {"judgewidgets": __version__, "python": platform.python_version()}
    for package in _PACKAGES:
        try:
            found[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            found[package] = None
    return found


def _finite_or_none(value: Any) -> Any:
    value = plain(value)
    return None if isinstance(value, float) and not math.isfinite(value) else value


def read_metadata(path: str | os.PathLike[str]) -> dict[str, Any]:
    """run.json of the saved run at `path`, checked and brought up to this format version."""
    folder = Path(path).expanduser()
    meta_file = folder / META_FILE
    if not meta_file.exists():
        why = "no such folder" if not folder.exists() else f"no {META_FILE} in it"
        raise SavedRunError(f"{folder} is not a saved judgewidgets run ({why}); save one with result.save(path)")
    try:
        meta = json.loads(meta_file.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise SavedRunError(f"{meta_file} cannot be read as JSON: {exc}") from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise SavedRunError(f"{meta_file} does not describe a judgewidgets run (its format is not {FORMAT!r})")
    return _upgraded(meta, meta_file)


def _upgraded(meta: dict[str, Any], where: Path) -> dict[str, Any]:
    version = meta.get("format_version")
    if isinstance(version, bool) or not isinstance(version, int):
        raise SavedRunError(f"{where} has no valid format_version (got {version!r})")
    if version > FORMAT_VERSION:
        raise SavedRunError(
            f"{where} was saved in run format {version} by judgewidgets {_saved_by(meta)}; this judgewidgets "
            f"({__version__}) reads formats up to {FORMAT_VERSION}: upgrade judgewidgets to load it"
        )
    while version < FORMAT_VERSION:
        upgrade = MIGRATIONS.get(version)
        if upgrade is None:
            raise SavedRunError(
                f"{where} was saved in run format {version}, which this judgewidgets ({__version__}) cannot read: "
                f"it reads format {FORMAT_VERSION} and has no upgrade from {version}"
            )
        meta = upgrade(meta)
        version += 1
        meta["format_version"] = version
    return meta


def _saved_by(meta: Mapping[str, Any]) -> str:
    versions = meta.get("versions")
    return str(versions.get("judgewidgets")) if isinstance(versions, Mapping) else "unknown"


def read(path: str | os.PathLike[str]) -> Dump:
    """The Dump of the saved run at `path` (its kind in `dump.kind`, run.json in `dump.meta`)."""
    folder = Path(path).expanduser()
    meta = read_metadata(folder)
    kind = meta.get("kind")
    if not isinstance(kind, str):
        raise SavedRunError(f"{folder / META_FILE} names no result kind")
    for key, shape in (("state", Mapping), ("metrics", Mapping), ("usage", Mapping), ("judges", list)):
        if meta.get(key) is not None and not isinstance(meta[key], shape):
            raise SavedRunError(f"{folder / META_FILE} has a {key!r} this judgewidgets cannot read: it was changed")
    dump = Dump(
        kind=kind,
        state=dict(meta.get("state") or {}),
        metrics=dict(meta.get("metrics") or {}),
        usage=dict(meta.get("usage") or {}),
        judges=list(meta.get("judges") or []),
        provenance=meta.get("made_by") or {},
        meta=meta,
    )
    tables = meta.get("tables") or {}
    if not isinstance(tables, Mapping) or not all(isinstance(e, Mapping) for e in tables.values()):
        raise SavedRunError(f"{folder / META_FILE} lists its tables in a shape this judgewidgets cannot read")
    records: dict[str, list[dict[str, Any]] | Columns] = {}
    for name, entry in tables.items():
        file = folder / str(entry.get("file", ""))
        if not entry.get("file") or not file.is_file():
            raise SavedRunError(f"the saved run {folder} lacks its table {name!r} ({file.name}): was it copied whole?")
        try:
            if entry.get("layout") == "records":
                records[name] = read_rows(file, entry)
            else:
                dump.tables[name] = read_frame(file, entry)
        except Exception as exc:  # pyarrow's ArrowInvalid, OSError, a JSON cell that is not JSON, ...
            raise SavedRunError(
                f"the saved run {folder} has a table {name!r} ({file.name}) that cannot be read: the file is "
                f"truncated, damaged or not the one saved ({type(exc).__name__}: {_first_line(exc)}); save the run "
                "again, or copy the folder whole"
            ) from exc
    dump.records = records
    return dump


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0][:200] if text else "no message"
