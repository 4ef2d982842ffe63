"""`jw.Runs(folder)`: the runs saved in a folder as a table, loaded and compared by name."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from .._errors import SavedRunError
from .._runfiles import META_FILE, read_metadata
from ._compare import RunComparison, compare
from ._load import load

if TYPE_CHECKING:
    from ._widgets import RunsBrowser

LOG_COLUMNS = ["name", "when", "kind", "judges", "models", "items", "cost_usd", "latency_s", "fingerprint"]


class Runs:
    """The saved runs in `folder` (each a subfolder written by `result.save`), e.g. `jw.Runs("evals/")`.

    `table`: one row per run, oldest first: name, when (saved, UTC), kind, judges, models, items, cost_usd,
    latency_s (summed call time), the inputs' fingerprint (equal for runs of the same items), then each run's
    headline metrics (mean_score, pass_rate, win_rate, ...; per-judge ones stay in run.json), and `error` for a
    folder that cannot be read.
    `save(result, name)`, `load(name)` (or `runs[name]`), `compare(before, after)`, and `browser()` to pick and
    compare runs in a notebook. Reading the table opens only each run's run.json.
    """

    def __init__(self, folder: str | os.PathLike[str]) -> None:
        self.folder = Path(folder).expanduser()

    def __repr__(self) -> str:
        return f"Runs({str(self.folder)!r}: {len(self)} runs)"

    def paths(self) -> list[Path]:
        """Every run folder directly inside the folder, by name."""
        if not self.folder.is_dir():
            return []
        return sorted(p for p in self.folder.iterdir() if p.is_dir() and (p / META_FILE).is_file())

    @property
    def names(self) -> list[str]:
        return [p.name for p in self.paths()]

    def __len__(self) -> int:
        return len(self.paths())

    def __iter__(self) -> Iterator[str]:
        return iter(self.names)

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and (self.folder / name / META_FILE).is_file()

    @property
    def table(self) -> pd.DataFrame:
        """The run log (see the class docstring)."""
        rows = [_row(path) for path in self.paths()]
        frame = pd.DataFrame(rows)
        if frame.empty:
            return pd.DataFrame(columns=[*LOG_COLUMNS, "path"])
        frame["when"] = pd.to_datetime(frame["when"], utc=True, errors="coerce")
        metrics = [c for c in frame.columns if c not in {*LOG_COLUMNS, "path", "error"}]
        ordered = [*LOG_COLUMNS, *metrics, *(["error"] if "error" in frame else []), "path"]
        frame = frame.reindex(columns=ordered)
        return frame.sort_values(["when", "name"], kind="stable", na_position="first").reset_index(drop=True)

    def path(self, name: str) -> Path:
        """The folder of the run called `name` (SavedRunError naming the runs there when there is none)."""
        if name not in self:
            known = ", ".join(self.names) or "none"
            raise SavedRunError(f"no saved run {name!r} in {self.folder} (runs: {known})")
        return self.folder / name

    def load(self, name: str) -> Any:
        """The result saved as `name`."""
        return load(self.path(name))

    def __getitem__(self, name: str) -> Any:
        return self.load(name)

    def save(self, result: Any, name: str, *, overwrite: bool = False) -> Path:
        """Save `result` as the run `name` in this folder (`result.save(folder / name)`)."""
        if not isinstance(name, str) or not name or Path(name).name != name or name.startswith("."):
            raise SavedRunError(f"a run name is a plain folder name (no slashes, not hidden), got {name!r}")
        self.folder.mkdir(parents=True, exist_ok=True)
        saved: Path = result.save(self.folder / name, overwrite=overwrite)
        return saved

    def compare(self, before: str, after: str, **options: Any) -> RunComparison:
        """`jw.compare` of two runs of this folder, by name (options as `jw.compare`'s)."""
        return compare(self.path(before), self.path(after), **options)

    def browser(self) -> RunsBrowser:
        """A widget: the run log, two runs to pick, and their comparison with its regressions."""
        from ._widgets import RunsBrowser

        return RunsBrowser(self)

    def _repr_html_(self) -> str:
        table = self.table.drop(columns=["path"])
        head = f"<p><b>{len(table)} saved runs</b> in <code>{self.folder}</code></p>"
        return head + table.to_html(index=False, float_format=lambda v: f"{v:.3f}", na_rep="–")


def _row(path: Path) -> dict[str, Any]:
    """One run's row of the log, from its run.json alone."""
    try:
        meta = read_metadata(path)
    except SavedRunError as exc:
        return {"name": path.name, "error": str(exc), "path": str(path)}
    usage = meta.get("usage") or {}
    inputs = meta.get("inputs") or {}
    row: dict[str, Any] = {
        "name": path.name,
        "when": meta.get("saved_at"),
        "kind": meta.get("kind"),
        "judges": ", ".join(map(str, meta.get("judges") or [])),
        "models": ", ".join(map(str, meta.get("models") or [])),
        "items": inputs.get("items"),
        "cost_usd": usage.get("cost_usd"),
        "latency_s": usage.get("latency_s"),
        "fingerprint": (inputs.get("fingerprint") or "")[:12] or None,
        "path": str(path),
    }
    for key, value in (meta.get("metrics") or {}).items():
        if "/" not in key and key not in row:  # the headline; per-judge metrics stay in run.json
            row[key] = value
    return row
