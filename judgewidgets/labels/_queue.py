"""The labelling queue's logic, without a browser: items in order, a person's labels kept in a LabelStore, and
the judges' verdicts on an item hidden until the person has labelled it (so they do not anchor the label)."""

from __future__ import annotations

import os
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from .._errors import InputError
from ._kinds import LabelKind
from ._store import LABEL_COLUMNS, LabelRecord, LabelStore, content_key, open_store

__all__ = ["LabelQueueModel", "as_frame"]

# What the queue shows of an item, by kind; the optional fields may be missing from the data.
_FIELDS = {
    "pointwise": ("prompt", "response", "reference", "context"),
    "pairwise": ("prompt", "response_a", "response_b", "reference", "context"),
}
_OPTIONAL = {"reference", "context"}
# Commands typed in place of a label.
NEXT, PREVIOUS, CLEAR = (">", "n", "next"), ("<", "previous"), ("c", "clear")


class LabelQueueModel:
    """A person labels the items of `data` one at a time; each label is saved in `store` the moment it is given.

    `data` is a DataFrame (columns prompt, response, optionally reference and context; for `kind="pairwise"`
    prompt, response_a, response_b; names set by the `*_col` arguments) or a judge's result (a JudgeResult or
    PanelResult via `to_df()`, PairwiseResults or panel comparisons). The other columns are verdicts (a judge's
    score, winner, explanation), hidden until the item is labelled: all of them by default, or `verdict_cols`
    (then the rest are shown as the item's details). Items are keyed by a hash of their texts (or by
    `id_col`), so reopening the same store on the same data, in any order, resumes at the first
    unlabelled item. `order` is None (the data's), "shuffled" (by `seed`) or a list of the data's index labels
    (only those items are queued). `store` is a path, a LabelStore, or None (kept in memory).
    """

    def __init__(
        self,
        data: Any,
        kind: str = "pass_fail",
        store: str | os.PathLike[str] | LabelStore | None = "labels.jsonl",
        *,
        scale: tuple[float, float] | None = None,
        order: str | Sequence[Any] | None = None,
        seed: int = 0,
        id_col: str | None = None,
        prompt_col: str = "prompt",
        response_col: str = "response",
        response_a_col: str = "response_a",
        response_b_col: str = "response_b",
        reference_col: str = "reference",
        context_col: str = "context",
        verdict_cols: Sequence[str] | None = None,
        who: str | None = None,
    ) -> None:
        self.kind = LabelKind.of(kind, scale)
        self.frame = as_frame(data)
        if self.frame.empty:
            raise InputError("there are no items to label: the data has no rows")
        names = {
            "prompt": prompt_col,
            "response": response_col,
            "response_a": response_a_col,
            "response_b": response_b_col,
            "reference": reference_col,
            "context": context_col,
        }
        if prompt_col == "prompt" and "prompt" not in self.frame and "question" in self.frame:
            names["prompt"] = "question"  # the pairwise results' name
        self.text_cols = self._text_columns(names)
        self.id_col = id_col
        self.keys = self._keys()
        read = {*self.text_cols.values(), *([id_col] if id_col else [])}
        if verdict_cols is None:
            self.verdict_cols = [c for c in self.frame.columns if c not in read]
        else:
            self._require(list(verdict_cols), "verdict_cols")
            self.verdict_cols = [c for c in verdict_cols if c not in read]
        self.detail_cols = [c for c in self.frame.columns if c not in read and c not in self.verdict_cols]
        self.store = open_store(store, self.kind.name, who)
        self._check_stored_labels()
        self.order = self._order(order, seed)
        self.position = 0
        first = self.next_unlabelled(start=0)
        self.position = 0 if first is None else first

    # --- construction ----------------------------------------------------------------------------------

    def _require(self, columns: list[str], what: str) -> None:
        missing = [c for c in columns if c not in self.frame.columns]
        if missing:
            raise InputError(
                f"the data has no column {', '.join(map(repr, missing))} ({what}); its columns are "
                f"{', '.join(map(str, self.frame.columns))}"
            )

    def _text_columns(self, names: dict[str, str]) -> dict[str, str]:
        fields = _FIELDS["pairwise" if self.kind.name == "pairwise" else "pointwise"]
        required = [names[f] for f in fields if f not in _OPTIONAL]
        missing = [c for c in required if c not in self.frame.columns]
        if missing:
            hint = (
                "; for two responses per item use kind='pairwise'"
                if self.kind.name != "pairwise" and {"response_a", "response_b"} <= set(self.frame.columns)
                else ""
            )
            raise InputError(
                f"the data has no column {', '.join(map(repr, missing))} for a {self.kind.name} queue: its "
                f"columns are {', '.join(map(str, self.frame.columns))} (name yours with "
                f"{', '.join(f'{f}_col=' for f in fields if f not in _OPTIONAL)}){hint}"
            )
        return {f: names[f] for f in fields if names[f] in self.frame.columns}

    def _keys(self) -> list[str]:
        if self.id_col is None:
            texts = self.frame[list(self.text_cols.values())].to_numpy(dtype=object)
            return [content_key(**dict(zip(self.text_cols, row))) for row in texts]
        self._require([self.id_col], "id_col")
        ids = self.frame[self.id_col]
        if ids.isna().any():
            raise InputError(f"the id column {self.id_col!r} has missing values: every item needs an id")
        keys = [str(v) for v in ids]
        if len(set(keys)) != len(keys):
            repeated = sorted({k for k in keys if keys.count(k) > 1})[:5]
            raise InputError(f"the id column {self.id_col!r} repeats ids ({', '.join(repeated)}): each must be unique")
        return keys

    def _check_stored_labels(self) -> None:
        """Refuse a store whose labels of these items this kind cannot take (another scale, say)."""
        latest = self.store.latest()
        for key in self.keys:
            record = latest.get(key)
            if record is None:
                continue
            try:
                self.kind.check(record.label)
            except InputError:
                where = "in memory" if self.store.path is None else str(self.store.path)
                raise InputError(
                    f"the label store ({where}) holds label {record.label!r} for item {key}, which a "
                    f"{self.kind.name} queue cannot take ({self.kind.describe()}): open it on the scale its "
                    "labels were given on, or use another file"
                ) from None

    def _order(self, order: str | Sequence[Any] | None, seed: int) -> list[int]:
        rows = list(range(len(self.frame)))
        if order is None:
            return rows
        if isinstance(order, str):
            if order != "shuffled":
                raise InputError(f"order is None, 'shuffled' or a list of the data's index labels, got {order!r}")
            return [int(i) for i in np.random.default_rng(seed).permutation(len(rows))]
        if not self.frame.index.is_unique:
            raise InputError("an order of index labels needs a data index without repeats")
        wanted = list(order)
        positions = self.frame.index.get_indexer(wanted)
        unknown = [w for w, p in zip(wanted, positions) if p < 0]
        if unknown:
            raise InputError(f"order names items the data does not have: {unknown[:5]}")
        if len(set(positions)) != len(positions) or not wanted:
            raise InputError("order lists each item once, and at least one")
        return [int(p) for p in positions]

    # --- where we are ----------------------------------------------------------------------------------

    @property
    def current(self) -> int:
        """The row (position in `frame`) of the item shown."""
        return self.order[self.position]

    @property
    def n_items(self) -> int:
        return len(self.order)

    @property
    def n_labelled(self) -> int:
        """How many queued items have a label (given here or by anyone else on the same store)."""
        latest = self.store.latest()
        return sum(self.keys[row] in latest for row in self.order)

    def progress(self) -> str:
        return f"{self.n_labelled} of {self.n_items} labelled"

    def move(self, step: int) -> None:
        """Go `step` items forward (negative: back), wrapping around."""
        self.position = (self.position + step) % len(self.order)

    def go_to(self, row: int) -> None:
        """Show the item at `row` of `frame`."""
        if row not in self.order:
            raise InputError(f"row {row} is not in this queue")
        self.position = self.order.index(row)

    def next_unlabelled(self, start: int | None = None) -> int | None:
        """The position (in the queue) of the first unlabelled item from `start` on (default: after the current
        one), wrapping around; None when every item is labelled."""
        latest = self.store.latest()
        begin = self.position + 1 if start is None else start
        for offset in range(len(self.order)):
            position = (begin + offset) % len(self.order)
            if self.keys[self.order[position]] not in latest:
                return position
        return None

    # --- one item --------------------------------------------------------------------------------------

    def _row(self, row: int | None) -> int:
        return self.current if row is None else row

    def record(self, row: int | None = None) -> LabelRecord | None:
        """The label record of the item at `row` (default: the current one), or None while unlabelled."""
        return self.store.get(self.keys[self._row(row)])

    def texts(self, row: int | None = None) -> dict[str, str]:
        """What the person reads: prompt, response (or response_a, response_b), reference and context when
        given."""
        values = self.frame.iloc[self._row(row)]
        return {field: "" if pd.isna(values[col]) else str(values[col]) for field, col in self.text_cols.items()}

    def details(self, row: int | None = None) -> dict[str, Any]:
        """The item's other columns that are no verdicts (only when `verdict_cols` named the verdicts)."""
        return self.frame.iloc[self._row(row)][self.detail_cols].to_dict()

    def verdicts(self, row: int | None = None) -> dict[str, Any] | None:
        """The judges' verdicts on the item (the data's other columns), or None while it is unlabelled: they
        are shown only once the person has given a label of their own."""
        row = self._row(row)
        if self.record(row) is None:
            return None
        return self.frame.iloc[row][self.verdict_cols].to_dict()

    def label(
        self, value: Any, row: int | None = None, *, note: str | None = None, advance: bool = False
    ) -> LabelRecord:
        """Label the item at `row` (default: the current one): saved at once; with `advance`, go on to the next
        unlabelled item."""
        label = self.kind.check(value)
        row = self._row(row)
        record = self.store.add(self.keys[row], label, note=note or None, kind=self.kind.name)
        if advance and row in self.order:
            self.position = self.order.index(row)
            following = self.next_unlabelled()
            if following is not None:
                self.position = following
        return record

    def clear(self, row: int | None = None) -> None:
        """Remove the label of the item at `row` (default: the current one)."""
        self.store.clear(self.keys[self._row(row)], kind=self.kind.name)

    def submit(self, text: str, note: str | None = None) -> str:
        """What the person typed: a label ("p", "f", "4", "a", "t", ...) labels the current item and moves on to
        the next unlabelled one; ">" / "n" moves on, "<" back, "c" clears. Says what was done."""
        typed = text.strip().lower()
        if typed in NEXT:
            self.move(1)
            return "next item"
        if typed in PREVIOUS:
            self.move(-1)
            return "previous item"
        if typed in CLEAR:
            self.clear()
            return "label cleared"
        value = self.kind.parse(typed)
        if value is None:
            raise InputError(f"{text!r} is not a label: type {self.kind.describe()}, or > next, < previous, c clear")
        row = self.current
        self.label(value, note=note, advance=True)
        return f"item {self.frame.index[row]} labelled {value}"

    # --- the labels ------------------------------------------------------------------------------------

    @property
    def labels(self) -> pd.DataFrame:
        """The labelled items, in the data's order, with the data's own index and columns, then item (the key),
        label, who and when (+ note when any label has one): ready for `judge.align(labels, label="label")`.
        Data columns with those names are kept as `<name>_data`."""
        latest = self.store.latest()
        rows = [row for row in range(len(self.frame)) if self.keys[row] in latest]
        records = [latest[self.keys[row]] for row in rows]
        added = [*LABEL_COLUMNS, "note"]
        out = self.frame.iloc[rows].rename(columns={c: f"{c}_data" for c in added if c in self.frame.columns})
        for column in LABEL_COLUMNS:
            out[column] = [getattr(r, column) for r in records]
        if any(r.note for r in records):
            out["note"] = [r.note for r in records]
        return out


def as_frame(data: Any) -> pd.DataFrame:
    """The items of `data` as a DataFrame: a DataFrame as given (copied), a result with `to_df()`, or
    pairwise results (one PairwiseResult or panel comparison, or a list of them)."""
    if isinstance(data, pd.DataFrame):
        return data.copy()
    if _is_pair(data):
        data = [data]
    if isinstance(data, Sequence) and not isinstance(data, str) and data and all(_is_pair(d) for d in data):
        return pd.DataFrame([_pair_row(d) for d in data])
    if hasattr(data, "to_df"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # missing votes: blank verdicts in the queue itself
            return as_frame(data.to_df())
    raise InputError(
        "data is a DataFrame or a judge's result (JudgeResult, PanelResult, PairwiseResults), "
        f"got {type(data).__name__}"
    )


def _is_pair(value: Any) -> bool:
    return all(hasattr(value, name) for name in ("question", "response_a", "response_b", "winner"))


def _pair_row(result: Any) -> dict[str, Any]:
    """A pairwise result's texts and verdicts (winner, confidence; each panel judge's winner)."""
    row: dict[str, Any] = {
        "question": result.question,
        "response_a": result.response_a,
        "response_b": result.response_b,
        "reference": result.reference,
        "winner": result.winner,
        "confidence": result.confidence,
    }
    for vote in getattr(result, "vote_list", []):
        if not hasattr(vote, "swapped"):  # a panel judge's debiased result, not one order's verdict
            row[vote.judge] = vote.winner
    if row["reference"] is None:
        del row["reference"]
    return row
