"""The data side of a distributed run: reading the input, cutting it into shards, and the shard files on disk.

Shards are contiguous row ranges fixed by the row count and the shard count alone, so a resumed run cuts the same
shards. Each finished shard is written as one file of votes (`shard-00003-of-00040.parquet`), atomically, next to
a `manifest.json` that ties the folder to its input and panel; a run that finds a shard's file skips that shard.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from .._errors import ConfigurationError, InputError
from .._records import Vote

__all__ = ["DEFAULT_SHARD_ROWS", "OutputStore", "Shard", "cut_shards", "load_table", "votes_from_frame"]

DEFAULT_SHARD_ROWS = 1000
_READERS = {".parquet": pd.read_parquet, ".jsonl": lambda p: pd.read_json(p, lines=True), ".csv": pd.read_csv}
_VOTE_FIELDS = list(Vote.model_fields)
# The optional text fields of a vote (NaN after a file round trip → None): the named ones (score_source is a
# Literal) and every field typed `str | None`, read from the model so a new one cannot be forgotten here.
_OPTIONAL_TEXT = tuple(
    dict.fromkeys(
        ["score_source", *(name for name, field in Vote.model_fields.items() if field.annotation == (str | None))]
    )
)
_OPTIONAL_INT = (
    "prompt_tokens",
    "completion_tokens",
    "prompt_cache_read_tokens",
    "prompt_cache_write_tokens",
    "reasoning_tokens",
)


@dataclass(frozen=True)
class Shard:
    """Rows [start, stop) of the input: what one worker judges in one go."""

    index: int
    count: int  # how many shards the run has
    start: int
    prompts: list[str]
    responses: list[str]
    references: list[str | None] | None = None

    @property
    def rows(self) -> int:
        return len(self.prompts)

    @property
    def name(self) -> str:
        return f"shard-{self.index:05d}-of-{self.count:05d}"


def load_table(data: pd.DataFrame | str | os.PathLike[str] | Sequence[str | os.PathLike[str]]) -> pd.DataFrame:
    """The input as one DataFrame: a DataFrame as is; Parquet/JSONL/CSV files (or a folder of them) in order."""
    if isinstance(data, pd.DataFrame):
        return data
    paths = [Path(data)] if isinstance(data, (str, os.PathLike)) else [Path(p) for p in data]
    files: list[Path] = []
    for path in paths:
        if path.is_dir():
            files.extend(sorted(p for p in path.iterdir() if p.suffix.lower() in _READERS))
        elif path.exists():
            files.append(path)
        else:
            raise InputError(f"input file not found: {path}")
    if not files:
        raise InputError(f"no .parquet, .jsonl or .csv files in {', '.join(map(str, paths))}")
    frames = []
    for file in files:
        reader = _READERS.get(file.suffix.lower())
        if reader is None:
            raise InputError(f"cannot read {file.name}: use .parquet, .jsonl or .csv files")
        frames.append(reader(file))
    return pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]


def cut_shards(
    prompts: list[str], responses: list[str], references: list[str | None] | None, shards: int
) -> list[Shard]:
    """`shards` contiguous, near-equal row ranges (the first ones one row longer when rows do not divide)."""
    rows = len(prompts)
    shards = max(1, min(int(shards), rows))
    size, extra = divmod(rows, shards)
    out = []
    start = 0
    for index in range(shards):
        stop = start + size + (1 if index < extra else 0)
        out.append(
            Shard(
                index=index,
                count=shards,
                start=start,
                prompts=prompts[start:stop],
                responses=responses[start:stop],
                references=references[start:stop] if references is not None else None,
            )
        )
        start = stop
    return out


def default_shard_count(rows: int) -> int:
    return max(1, math.ceil(rows / DEFAULT_SHARD_ROWS))


def fingerprint(prompts: list[str], responses: list[str], references: list[str | None] | None, panel: Any) -> str:
    """A digest of the input rows and the panel's judges: a folder of shard files belongs to one pair."""
    digest = hashlib.sha256()
    for judge, name in zip(panel.judges, panel.names):
        digest.update(f"{name}\x1f{judge!r}\x1e".encode())
    for i, (p, r) in enumerate(zip(prompts, responses)):
        ref = references[i] if references is not None else None
        digest.update(f"{p}\x1f{r}\x1f{'' if ref is None else ref}\x1e".encode())
    return digest.hexdigest()


def votes_to_frame(votes: Sequence[Vote]) -> pd.DataFrame:
    """Every field of every vote, one row each."""
    return pd.DataFrame([v.model_dump() for v in votes], columns=_VOTE_FIELDS)


def votes_from_frame(frame: pd.DataFrame) -> list[Vote]:
    """Votes back from `votes_to_frame` (also after a Parquet or JSONL round trip: NaN → None where optional)."""
    votes = []
    for row in frame.to_dict("records"):
        for key in _OPTIONAL_TEXT:
            value = row.get(key)
            row[key] = value if isinstance(value, str) else None
        for key in _OPTIONAL_INT:
            value = row.get(key)
            row[key] = None if value is None or (isinstance(value, float) and math.isnan(value)) else int(value)
        for key in ("cost_usd", "list_cost_usd", "confidence", "uncalibrated_score"):
            value = row.get(key)
            row[key] = None if value is None or (isinstance(value, float) and math.isnan(value)) else float(value)
        row["probabilities"] = _probabilities(row.get("probabilities"))
        row["raw"] = row.get("raw") if isinstance(row.get("raw"), str) else ""
        row["score"] = float("nan") if row.get("score") is None else float(row["score"])
        votes.append(Vote(**row))
    return votes


def _probabilities(value: object) -> dict[str, float] | None:
    """A vote's probabilities after a file round trip (Parquet stores them as a struct with every key)."""
    if not isinstance(value, dict):
        return None
    kept = {str(k): float(v) for k, v in value.items() if isinstance(v, (int, float)) and not math.isnan(v)}
    return kept or None


class OutputStore:
    """The folder of a run: `manifest.json` and one votes file per finished shard, written atomically."""

    def __init__(self, folder: str | os.PathLike[str], file_format: str | None = None) -> None:
        self.folder = Path(folder)
        if file_format is None:
            file_format = "parquet" if _has_pyarrow() else "jsonl"
        if file_format not in ("parquet", "jsonl"):
            raise ConfigurationError(f"output_format must be 'parquet' or 'jsonl', got {file_format!r}")
        if file_format == "parquet" and not _has_pyarrow():
            raise ConfigurationError(
                "Parquet output needs pyarrow (a dependency of judgewidgets; it is missing here): pip install pyarrow"
            )
        self.format = file_format

    def __repr__(self) -> str:
        return f"OutputStore({str(self.folder)!r}, {self.format!r})"

    def path(self, shard: Shard) -> Path:
        return self.folder / f"{shard.name}.{self.format}"

    def prepare(self, manifest: dict[str, Any]) -> dict[str, Any]:
        """Create the folder, or check that the one there belongs to this run; returns the manifest in force."""
        self.folder.mkdir(parents=True, exist_ok=True)
        existing = self.folder / "manifest.json"
        if existing.exists():
            found = json.loads(existing.read_text())
            for key in ("rows", "fingerprint"):
                if found.get(key) != manifest.get(key):
                    raise ConfigurationError(
                        f"{self.folder} holds shards of another run ({key} differs); resume with the same data and "
                        "panel, or write to a new folder"
                    )
            if found.get("format") != self.format:
                raise ConfigurationError(f"{self.folder} holds {found.get('format')} shards, not {self.format}")
            return found
        _write_atomically(existing, json.dumps(manifest, indent=2).encode())
        return manifest

    def finished(self, shard: Shard) -> bool:
        return self.path(shard).exists()

    def write(self, shard: Shard, votes: Sequence[Vote]) -> None:
        frame = votes_to_frame(votes)
        target = self.path(shard)
        temporary = target.with_name(f".{target.name}.{os.getpid()}.tmp")
        if self.format == "parquet":
            frame.to_parquet(temporary, index=False)
        else:
            frame.to_json(temporary, orient="records", lines=True, force_ascii=False)
        os.replace(temporary, target)

    def read(self, shard: Shard) -> list[Vote]:
        path = self.path(shard)
        frame = pd.read_parquet(path) if self.format == "parquet" else pd.read_json(path, lines=True, dtype=False)
        return votes_from_frame(frame)


def _write_atomically(path: Path, data: bytes) -> None:
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    temporary.write_bytes(data)
    os.replace(temporary, path)


def _has_pyarrow() -> bool:
    import importlib.util

    return importlib.util.find_spec("pyarrow") is not None
