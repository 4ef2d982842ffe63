"""A durable store of a person's labels: an append-only JSON Lines file, each label written as it is given.

Every label is one line, appended with a single `write()` on a file opened `O_APPEND`, under an exclusive
`flock`, then `fsync`ed before `add()` returns: a kernel restart, a crash or a SIGKILL loses no label that was
given, and two notebooks (or processes) appending to one file never interleave their lines. A line cut off by a
writer's death (or a power loss) is skipped with a warning, and the next append starts on a fresh line; so is a
record whose label its own kind cannot take (a "maybe" among pass/fail labels, written by hand or by an older
version), so one bad line never keeps a store from opening. Reading takes the latest record of each item:
labelling again replaces a label, and a "clear" record removes it. Readers hold a shared lock, so they never see
half a line being written. Every label is checked against its kind before it is written.
"""

from __future__ import annotations

import contextlib
import getpass
import hashlib
import json
import math
import os
import threading
import warnings
import weakref
from collections.abc import Callable, Hashable, Iterator, Mapping
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Literal

import pandas as pd
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from .._errors import InputError
from ._kinds import KINDS, LabelKind, LabelValue

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: no flock; appends are single O_APPEND writes, unlocked
    fcntl = None  # type: ignore[assignment]  # typeshed types `fcntl` as a module on every platform

__all__ = [
    "LabelRecord",
    "LabelStore",
    "LabelsView",
    "Listeners",
    "content_key",
    "default_who",
    "item_key",
    "open_store",
]

LABEL_COLUMNS = ["item", "label", "who", "when"]
_READ_CHUNK = 1 << 20


class Listeners:
    """Callbacks to call when something changed; a bound method is held weakly, so a widget that is gone is
    neither kept alive nor called."""

    def __init__(self) -> None:
        self._entries: list[weakref.ref[Any] | Callable[..., None]] = []

    def add(self, callback: Callable[..., None]) -> None:
        if hasattr(callback, "__self__") and hasattr(callback, "__func__"):
            self._entries.append(weakref.WeakMethod(callback))
        else:
            self._entries.append(callback)

    def call(self, *args: Any) -> None:
        alive = []
        for entry in self._entries:
            callback = entry() if isinstance(entry, weakref.ref) else entry
            if callback is not None:
                alive.append(entry)
                callback(*args)
        self._entries = alive


class LabelRecord(BaseModel):
    """One line of a label store: a person's label of one item (or, with `action="clear"`, its removal)."""

    model_config = ConfigDict(frozen=True)

    item: str = Field(description="The item's stable key: a hash of its content, or the data's own id.")
    label: LabelValue | None = Field(None, description="The label given; None on a 'clear' record.")
    kind: str = Field(description="The kind of label: 'pass_fail', 'score' or 'pairwise'.")
    who: str = Field(description="Who gave it (by default the operating-system user).")
    when: str = Field(description="When, in UTC, ISO 8601.")
    note: str | None = Field(None, description="The person's note on the item, if any.")
    action: Literal["label", "clear"] = Field("label", description="'clear' removes the item's label.")
    plan: str | None = Field(None, description="The id of the label plan that drew the item (None: chosen by hand).")
    probability: float | None = Field(
        None, description="The probability the plan drew the item with (what an active estimate weights it by)."
    )


def content_key(**fields: Any) -> str:
    """A stable key for an item from its content (prompt, response(s), reference): the same texts give the same
    key whatever their order in the data or the names of their columns. Missing fields (None, NaN) are left
    out, so a frame without a reference column keys like one whose references are empty."""
    present = {name: str(value) for name, value in fields.items() if not _missing(value)}
    blob = json.dumps(present, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(blob.encode()).hexdigest()[:20]


def item_key(item: Any) -> str:
    """The content key of a judged item (an Item of prompt and response, or a PairItem of question and responses
    a and b), the same a LabelQueue gives the same texts: how a label, or a calibration, names the item it was
    given on."""
    if hasattr(item, "response_a"):
        return content_key(
            prompt=item.question, response_a=item.response_a, response_b=item.response_b, reference=item.reference
        )
    return content_key(prompt=item.prompt, response=item.response, reference=item.reference)


def default_who() -> str:
    """The operating-system user, or "unknown" where there is none (some containers)."""
    try:
        return getpass.getuser()
    except (KeyError, OSError, ImportError):
        return "unknown"


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


@contextlib.contextmanager
def _locked(fd: int, exclusive: bool) -> Iterator[None]:
    """Hold the file's lock (exclusive to write, shared to read); released when the block ends or the process
    dies."""
    if fcntl is None:  # pragma: no cover - Windows
        yield
        return
    fcntl.flock(fd, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
    try:
        yield
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)


class LabelStore:
    """A person's labels, kept in `path` (JSON Lines, append-only) or, with `path=None`, in memory.

    `kind` (when given) is the kind of label this store holds: a file holding labels of another kind is refused
    (InputError), and `add` records it. `scale` (for score labels) is the scale `add` checks them against. `who`
    is written on every label (default: the operating-system user). `labels` is a DataFrame of the current label
    of each item (`latest()`: the same as records); every read first takes in what other writers of the file
    appended meanwhile. Lines that hold no usable record are skipped with a warning: `skipped` has their line
    numbers, `problems` says why. `subscribe(callback)` calls `callback(record)` after each label or clear written
    through this store (a widget showing it redraws).
    """

    def __init__(
        self,
        path: str | os.PathLike[str] | None,
        *,
        kind: str | None = None,
        who: str | None = None,
        scale: tuple[float, float] | None = None,
    ) -> None:
        self.path = None if path is None else Path(path).expanduser()
        if kind is not None and kind not in KINDS:
            raise InputError(f"unknown label kind {kind!r}: use one of {', '.join(KINDS)}")
        self.kind = kind
        self.scale = None if scale is None else LabelKind.of("score", scale).scale
        self.who = who or default_who()
        self.skipped: list[int] = []  # line numbers (from 1) of the lines that held no record
        self.problems: list[str] = []  # why each skipped line was skipped
        self._listeners = Listeners()
        self._records: list[LabelRecord] = []
        self._latest: dict[str, LabelRecord] = {}
        self._offset = 0  # bytes read so far: every whole line before it
        self._lines = 0  # whole lines read so far
        self._torn_at: int | None = None  # offset of a cut-off last line already warned about
        self._mutex = threading.Lock()
        if self.path is not None and self.path.is_dir():
            raise InputError(f"the label store {self.path} is a folder: give a file name such as labels.jsonl")
        self.refresh()
        if kind is not None:
            _refuse_other_kinds(self, kind)

    def __repr__(self) -> str:
        where = "in memory" if self.path is None else str(self.path)
        return f"LabelStore({where}, {len(self.latest())} items labelled)"

    # --- writing -----------------------------------------------------------------------------------------

    def add(
        self,
        item: str,
        label: LabelValue,
        *,
        note: str | None = None,
        kind: str | None = None,
        who: str | None = None,
        plan: str | None = None,
        probability: float | None = None,
    ) -> LabelRecord:
        """Record `label` for `item`, durably (on disk, fsync'd) before returning; it replaces any earlier one.

        The label is checked against its kind first (InputError, nothing written: "maybe" is no pass/fail label).
        `plan` and `probability` say which label plan drew the item and with what probability (None: by hand)."""
        chosen = self._kind(kind)
        checked = self._label_kind(chosen).check(label)
        if probability is not None and not (
            isinstance(probability, (int, float)) and not isinstance(probability, bool) and 0 < probability <= 1
        ):
            raise InputError(f"probability is the chance the plan drew the item, in (0, 1]; got {probability!r}")
        if (plan is None) != (probability is None):
            raise InputError("a drawn label records both the plan and its probability (or neither, by hand)")
        return self._write(
            LabelRecord(
                item=item,
                label=checked,
                kind=chosen,
                who=who or self.who,
                when=_now(),
                note=note,
                plan=plan,
                probability=None if probability is None else float(probability),
            )
        )

    def clear(self, item: str, *, kind: str | None = None, who: str | None = None) -> LabelRecord:
        """Remove `item`'s label (an explicit "clear" record: the history stays in the file)."""
        record = LabelRecord(item=item, kind=self._kind(kind), who=who or self.who, when=_now(), action="clear")
        return self._write(record)

    def _kind(self, kind: str | None) -> str:
        chosen = kind or self.kind
        if chosen is None:
            raise InputError("say which kind of label this is: LabelStore(path, kind=...) or add(..., kind=...)")
        if chosen not in KINDS:
            raise InputError(f"unknown label kind {chosen!r}: use one of {', '.join(KINDS)}")
        if self.kind is not None and chosen != self.kind:
            raise InputError(f"this store holds {self.kind} labels, not {chosen}: use another file for them")
        return chosen

    def _label_kind(self, kind: str) -> LabelKind:
        """The kind to check a label against: score labels on the store's scale when it has one, else any
        finite number."""
        if kind == "score":
            return LabelKind.of("score", self.scale) if self.scale is not None else LabelKind("score", None)
        return LabelKind.of(kind)

    def subscribe(self, callback: Callable[[LabelRecord], None]) -> None:
        """Call `callback(record)` after each label or clear written through this store. A bound method is held
        weakly (a widget that is gone is not kept alive by its store)."""
        self._listeners.add(callback)

    def _write(self, record: LabelRecord) -> LabelRecord:
        line = (record.model_dump_json(exclude_defaults=True) + "\n").encode()
        if self.path is not None:
            self._append(line)
        with self._mutex:
            if self.path is None:
                self._take(record)
        self.refresh()  # reads this record back, with any other writer's before it
        self._listeners.call(record)
        return record

    def _append(self, line: bytes) -> None:
        """One write of one whole line under the exclusive lock, then fsync; a cut-off last line (its writer
        died) is ended first, so this record starts on a line of its own."""
        assert self.path is not None
        created = not self.path.exists()
        if created:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            with _locked(fd, exclusive=True):
                size = os.fstat(fd).st_size
                if size:
                    os.lseek(fd, size - 1, os.SEEK_SET)
                    if os.read(fd, 1) != b"\n":
                        line = b"\n" + line
                written = os.write(fd, line)
                if written != len(line):  # a full disk: the line is cut off, and the next append ends it
                    raise OSError(f"only {written} of {len(line)} bytes of a label reached {self.path}")
                os.fsync(fd)
        finally:
            os.close(fd)
        if created:
            _sync_folder(self.path.parent)

    # --- reading -----------------------------------------------------------------------------------------

    def refresh(self) -> None:
        """Read what was appended since the last read (by this store or any other writer of the file)."""
        if self.path is None:
            return
        try:
            fd = os.open(self.path, os.O_RDONLY)
        except FileNotFoundError:
            with self._mutex:
                self._reset()
            return
        try:
            with _locked(fd, exclusive=False):
                size = os.fstat(fd).st_size
                with self._mutex:
                    if size < self._offset:  # truncated or replaced: read it again from the start
                        self._reset()
                    start = self._offset
                if size == start:
                    return
                os.lseek(fd, start, os.SEEK_SET)
                chunks = []
                while chunk := os.read(fd, _READ_CHUNK):
                    chunks.append(chunk)
        finally:
            os.close(fd)
        with self._mutex:
            if start == self._offset:  # no other thread read it meanwhile
                self._parse(b"".join(chunks))

    def _parse(self, data: bytes) -> None:
        """Take every whole line of `data` (read from `self._offset`); a cut-off last line is left unread."""
        position = self._offset
        *whole, tail = data.split(b"\n")
        for raw in whole:
            self._lines += 1
            if raw.strip():
                try:
                    record = LabelRecord.model_validate_json(raw)
                except ValidationError:
                    if position != self._torn_at:  # not the cut-off line already warned about
                        self._skip(f"line {self._lines} of {self.path} is not a label record (cut off by a crash?)")
                else:
                    problem = self._unfit(record)
                    if problem is None:
                        self._take(record)
                    else:
                        self._skip(f"line {self._lines} of {self.path}: {problem}")
            position += len(raw) + 1
        self._offset = position
        if tail and position != self._torn_at:
            self._torn_at = position
            self._skip(f"the last line of {self.path} was cut off (its writer died while writing it)", self._lines + 1)

    def _unfit(self, record: LabelRecord) -> str | None:
        """Why a record read from the file cannot be taken (its kind unknown, or a label its kind cannot take),
        or None."""
        if record.kind not in KINDS:
            return f"label kind {record.kind!r} is not one of {', '.join(KINDS)}"
        if record.action == "clear":
            return None
        try:
            self._label_kind(record.kind).check(record.label)
        except InputError:
            return f"label {record.label!r} for item {record.item} is not a {record.kind} label"
        return None

    def _skip(self, what: str, line: int | None = None) -> None:
        self.skipped.append(self._lines if line is None else line)
        self.problems.append(what)
        warnings.warn(f"{what}: skipped", RuntimeWarning, stacklevel=5)  # the caller of a read

    def _take(self, record: LabelRecord) -> None:
        self._records.append(record)
        self._latest.pop(record.item, None)  # a new label moves the item last
        if record.action == "label":
            self._latest[record.item] = record

    def _reset(self) -> None:
        self._records, self._latest, self.skipped, self.problems = [], {}, [], []
        self._offset, self._lines, self._torn_at = 0, 0, None

    def records(self) -> list[LabelRecord]:
        """Every record in the file, in the order written (labels replaced or cleared later included)."""
        self.refresh()
        with self._mutex:
            return list(self._records)

    def latest(self) -> dict[str, LabelRecord]:
        """Each labelled item's current label record, oldest first."""
        self.refresh()
        with self._mutex:
            return dict(self._latest)

    def get(self, item: str) -> LabelRecord | None:
        """`item`'s current label record, or None when it has none."""
        self.refresh()
        with self._mutex:
            return self._latest.get(item)

    def kinds(self) -> set[str]:
        """The kinds of label in the store."""
        return {r.kind for r in self.records()}

    def __len__(self) -> int:
        return len(self.latest())

    def __contains__(self, item: object) -> bool:
        return isinstance(item, str) and self.get(item) is not None

    @property
    def labels(self) -> pd.DataFrame:
        """The current label of each item: item, label, who, when (+ note when any label has one)."""
        rows = [r.model_dump(include={*LABEL_COLUMNS, "note"}) for r in self.latest().values()]
        frame = pd.DataFrame(rows, columns=[*LABEL_COLUMNS, "note"])
        return frame if frame["note"].notna().any() else frame.drop(columns="note")


def _sync_folder(folder: Path) -> None:
    """fsync a folder, so a file just made in it survives a power loss too (a no-op where folders cannot be
    opened, as on Windows)."""
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


class LabelsView(Mapping[Hashable, LabelValue]):
    """A read-only dict of the current labels, keyed by the caller's own item ids (`keys`: id → store key).

    It reads the store each time, so a label given elsewhere (another notebook on the same file) shows up.
    """

    def __init__(self, store: LabelStore, keys: Mapping[Hashable, str]) -> None:
        self._store = store
        self._keys = keys

    def __getitem__(self, item: Hashable) -> LabelValue:
        record = self._store.get(self._keys[item])
        if record is None or record.label is None:
            raise KeyError(item)
        return record.label

    def __iter__(self) -> Iterator[Hashable]:
        latest = self._store.latest()
        return iter([item for item, key in self._keys.items() if key in latest])

    def __len__(self) -> int:
        latest = self._store.latest()
        return sum(key in latest for key in self._keys.values())

    def __repr__(self) -> str:
        return repr(dict(self))


def open_store(
    store: str | os.PathLike[str] | LabelStore | None,
    kind: str,
    who: str | None = None,
    scale: tuple[float, float] | None = None,
) -> LabelStore:
    """The store a queue writes `kind` labels to: a path (None: in memory) or a LabelStore of its own; a store
    holding labels of another kind is refused (InputError)."""
    if not isinstance(store, LabelStore):
        return LabelStore(store, kind=kind, who=who, scale=scale)
    _refuse_other_kinds(store, kind)
    return store


def _refuse_other_kinds(store: LabelStore, kind: str) -> None:
    other = sorted(store.kinds() - {kind})
    if other:
        where = "in memory" if store.path is None else str(store.path)
        raise InputError(
            f"the label store ({where}) holds {', '.join(other)} labels, not {kind}: "
            "use another file for this kind of label"
        )
