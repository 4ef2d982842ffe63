"""The labelling queue's logic, without a browser: items in order, a person's labels kept in a LabelStore, and
the judges' verdicts on an item hidden until the person has labelled it (so they do not anchor the label)."""

from __future__ import annotations

import math
import os
import warnings
from collections.abc import Callable, Sequence
from typing import Any, Protocol

import numpy as np
import pandas as pd

from .._errors import InputError
from ._kinds import LabelKind
from ._plan import LabelPlan, Metric
from ._store import LABEL_COLUMNS, LabelRecord, LabelStore, Listeners, content_key, open_store

__all__ = ["IntervalSoFar", "LabelQueueModel", "QualityEstimator", "as_frame"]

# What the queue shows of an item, by kind; the optional fields may be missing from the data.
_FIELDS = {
    "pointwise": ("prompt", "response", "reference", "context"),
    "pairwise": ("prompt", "response_a", "response_b", "reference", "context"),
}
_OPTIONAL = {"reference", "context"}
# Commands typed in place of a label.
NEXT, PREVIOUS, CLEAR = (">", "n", "next"), ("<", "previous"), ("c", "clear")
PLAN_COLUMNS = ["plan", "probability"]
READOUT_AFTER = 5  # labels of a plan's items before the queue shows an interval (fewer: t quantiles of 1–2 df)
PROJECT_AFTER = 10  # ... and before it projects the labels still needed


class IntervalSoFar(Protocol):
    """What the queue reads from an estimate (a `jw.QualityEstimate`)."""

    @property
    def metric(self) -> str: ...

    @property
    def estimate(self) -> float: ...

    @property
    def low(self) -> float: ...

    @property
    def high(self) -> float: ...

    @property
    def width(self) -> float: ...

    @property
    def confidence(self) -> float: ...

    @property
    def n_labelled(self) -> int: ...

    def labels_needed(self, target_width: float) -> int | None: ...


class QualityEstimator(Protocol):
    """How the queue turns labels into an interval: `jw.estimate_quality` (the queue sits below the estimates,
    which read judges' results, so the widget hands it in)."""

    def __call__(
        self,
        judge_scores: pd.Series,
        human_labels: pd.Series,
        metric: Metric,
        *,
        pass_threshold: float,
        plan: LabelPlan,
    ) -> IntervalSoFar: ...


class LabelQueueModel:
    """A person labels the items of `data` one at a time; each label is saved in `store` the moment it is given.

    `data` is a DataFrame (columns prompt, response, optionally reference and context; for `kind="pairwise"`
    prompt, response_a, response_b; names set by the `*_col` arguments) or a judge's result (a JudgeResult or
    PanelResult via `to_df()`, PairwiseResults or panel comparisons). The other columns are verdicts (a judge's
    score, winner, explanation), hidden until the item is labelled: all of them by default, or `verdict_cols`
    (then the rest are shown as the item's details). Items are keyed by a hash of their texts (or by
    `id_col`), so reopening the same store on the same data, in any order, resumes at the first
    unlabelled item. `order` is None (the data's), "shuffled" (by `seed`), a list of the data's index labels
    (only those items are queued) or "active": the items a `jw.label_plan` drew (`plan=`), in its order, each
    label saved with the plan's id and the probability its item was drawn with. Any other item can still be
    labelled by hand (`label(value, row=...)`): saved without a probability, counted apart (`n_by_hand`), left
    out of the active estimate. With a plan and `estimator=jw.estimate_quality` (the widget passes it),
    `estimate()` is the quality estimate from the labels so far and `readout()` says it, with the labels still
    needed to reach `target_width`. `store` is a path, a LabelStore,
    or None (kept in memory). `subscribe(callback)` calls `callback()` after every label or clear written
    through the store, from here or anywhere else in this process (a widget redraws its counts).

    Items are named by the data's index label everywhere ("item 7"); where an item stands in the queue is its
    position ("position 3 of 36").
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
        plan: LabelPlan | None = None,
        target_width: float | None = None,
        estimator: QualityEstimator | None = None,
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
        self.plan = self._check_plan(plan, order)
        self.target_width = _check_target_width(target_width, self.plan)
        self.estimator = estimator
        self.store = open_store(store, self.kind.name, who)
        self._check_stored_labels()
        self.order = self._order("active" if self.plan is not None else order, seed)
        self.position = 0
        self.aside: int | None = None  # a row shown outside the queue, to label by hand
        first = self.next_unlabelled(start=0)
        self.position = 0 if first is None else first
        self._listeners = Listeners()
        self._holding = False  # inside label(): tell listeners once it has moved on, not midway
        self.store.subscribe(self._store_changed)

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

    def _check_plan(self, plan: LabelPlan | None, order: Any) -> LabelPlan | None:
        """The plan, checked against the data: its items are the data's index labels (InputError otherwise)."""
        if plan is None:
            if isinstance(order, str) and order == "active":
                raise InputError("order='active' asks in a plan's order: give plan=jw.label_plan(result, budget=...)")
            return None
        if not isinstance(plan, LabelPlan):
            raise InputError(f"plan must be a LabelPlan (jw.label_plan), got {type(plan).__name__}")
        if order is not None and not (isinstance(order, str) and order == "active"):
            raise InputError(f"a plan sets the order: give order='active' (or nothing) with plan=, not {order!r}")
        if not self.frame.index.is_unique:
            raise InputError("a plan names items by the data's index: it needs an index without repeats")
        known = pd.Index(plan.table["item"])
        unknown = known[~known.isin(self.frame.index)]
        extra = self.frame.index[~self.frame.index.isin(known)]
        if len(unknown) or len(extra):
            shown = list(unknown[:3]) or list(extra[:3])
            raise InputError(
                f"plan {plan.id} was made for other items than this data ({len(unknown)} of its items are not in "
                f"the data's index, {len(extra)} rows of the data are not in the plan; e.g. {shown}): make the "
                "plan from the same result or scores, indexed like the data"
            )
        return plan

    def _order(self, order: str | Sequence[Any] | None, seed: int) -> list[int]:
        rows = list(range(len(self.frame)))
        if order is None:
            return rows
        if isinstance(order, str):
            if order == "active" and self.plan is not None:
                return [int(p) for p in self.frame.index.get_indexer(self.plan.items)]
            if order != "shuffled":
                raise InputError(
                    f"order is None, 'shuffled', 'active' (with plan=) or a list of the data's index labels, "
                    f"got {order!r}"
                )
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
        return self.order[self.position] if self.aside is None else self.aside

    @property
    def n_items(self) -> int:
        return len(self.order)

    @property
    def n_labelled(self) -> int:
        """How many queued items have a label (given here or by anyone else on the same store)."""
        latest = self.store.latest()
        return sum(self.keys[row] in latest for row in self.order)

    @property
    def n_by_hand(self) -> int:
        """How many items outside the queue's order have a label (labelled by hand beside a plan's draw)."""
        latest = self.store.latest()
        queued = set(self.order)
        return sum(self.keys[row] in latest for row in range(len(self.frame)) if row not in queued)

    def progress(self) -> str:
        """ "12 of 36 labelled" (+ the labels given by hand outside the queue, when any)."""
        by_hand = self.n_by_hand
        return f"{self.n_labelled} of {self.n_items} labelled" + (f" (+{by_hand} by hand)" if by_hand else "")

    def name(self, row: int | None = None) -> str:
        """The item at `row` (default: the current one) as it is named everywhere: by the data's index label."""
        return f"item {self.frame.index[self._row(row)]}"

    def where(self) -> str:
        """Where the current item stands in the queue: "position 3 of 36" (or that it is outside the queue)."""
        if self.aside is not None:
            return "outside the queue: a label here is by hand"
        return f"position {self.position + 1} of {self.n_items}"

    def subscribe(self, callback: Callable[[], None]) -> None:
        """Call `callback()` after every label or clear written through the store (held weakly when a bound
        method)."""
        self._listeners.add(callback)

    def _store_changed(self, record: LabelRecord | None = None) -> None:
        if not self._holding:
            self._listeners.call()

    def move(self, step: int) -> None:
        """Go `step` items forward (negative: back), wrapping around (from an item shown outside the queue: back
        to where the queue was, then on)."""
        if self.aside is not None:
            self.aside = None
            step -= 1 if step > 0 else -1 if step < 0 else 0
        self.position = (self.position + step) % len(self.order)

    def go_to(self, row: int) -> None:
        """Show the item at `row` of `frame`."""
        if row not in self.order:
            raise InputError(f"row {row} is not in this queue")
        self.aside = None
        self.position = self.order.index(row)

    def show(self, item: Any) -> None:
        """Show the item whose index label is `item` (or whose label reads as the text `item`): in the queue, go
        there; outside it, show it aside, to be labelled by hand."""
        row = self._find(item)
        if row in self.order:
            self.go_to(row)
        else:
            self.aside = row

    def _find(self, item: Any) -> int:
        index = self.frame.index
        if item in index:
            found = index.get_loc(item)
            if isinstance(found, int):
                return found
        matches = [i for i, label in enumerate(index) if str(label) == str(item).strip()]
        if len(matches) != 1:
            raise InputError(f"there is no item {item!r} in the data (items are named by the data's index)")
        return matches[0]

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
        plan, probability = self._drawn(row)
        self._holding = True
        try:
            record = self.store.add(
                self.keys[row], label, note=note or None, kind=self.kind.name, plan=plan, probability=probability
            )
            self._advance(row, advance)
        finally:
            self._holding = False
        self._store_changed()
        return record

    def _advance(self, row: int, advance: bool) -> None:
        if advance and row in self.order:
            self.aside = None
            self.position = self.order.index(row)
            following = self.next_unlabelled()
            if following is not None:
                self.position = following
        elif advance and row == self.aside:  # labelled by hand: back to the queue's first unlabelled item
            self.aside = None
            following = self.next_unlabelled(start=self.position)
            if following is not None:
                self.position = following

    def _drawn(self, row: int) -> tuple[str | None, float | None]:
        """(the plan's id, the probability it drew the item at `row` with), or (None, None) for an item it did
        not draw (labelled by hand) or without a plan."""
        if self.plan is None or row not in self.order:
            return None, None
        return self.plan.id, self.plan.probability(self.frame.index[row])

    def clear(self, row: int | None = None) -> None:
        """Remove the label of the item at `row` (default: the current one)."""
        self.store.clear(self.keys[self._row(row)], kind=self.kind.name)

    def submit(self, text: str, note: str | None = None) -> str:
        """What the person typed: a label ("p", "f", "4", "a", "t", ...) labels the current item and moves on to
        the next unlabelled one; ">" / "n" moves on, "<" back, "c" clears, "go 17" shows item 17 (outside the
        queue: to label it by hand). Says what was done."""
        typed = text.strip().lower()
        if typed.startswith("go "):
            self.show(text.strip()[3:].strip())
            return f"showing {self.name()} ({self.where()})"
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
            raise InputError(
                f"{text!r} is not a label: type {self.kind.describe()}, or > next, < previous, c clear, go <item>"
            )
        row = self.current
        self.label(value, note=note, advance=True)
        return f"{self.name(row)} labelled {value}"

    # --- the estimate so far (with a plan) -------------------------------------------------------------

    def estimate(self) -> IntervalSoFar | None:
        """The quality estimate from the labels so far (active PPI++ on the plan's draw, the judge's verdicts from
        the plan), or None without a plan or an estimator, or before 2 drawn items are labelled."""
        if self.plan is None or self.estimator is None:
            return None
        values = self._label_values()
        drawn = values[values.index.isin(self.plan.items)]
        if len(drawn) < 2:
            return None
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            return self.estimator(
                self.plan.scores(),
                values,
                self.plan.metric,
                pass_threshold=self.plan.pass_threshold,
                plan=self.plan,
            )

    def readout(self) -> str:
        """The interval so far and, with `target_width`, about how many more labels reach it."""
        if self.plan is None:
            return ""
        if self.estimator is None:
            return f"{self.plan.metric}: no interval (give estimator=jw.estimate_quality to see one)"
        estimate = self.estimate() if self._drawn_labelled() >= READOUT_AFTER else None
        if estimate is None:
            return f"{self.plan.metric}: the interval shows from {READOUT_AFTER} labels of the plan's items on"
        text = (
            f"{estimate.metric} {estimate.estimate:.3f}, {estimate.confidence:.0%} interval [{estimate.low:.3f}, "
            f"{estimate.high:.3f}] (width {estimate.width:.3f}) from {estimate.n_labelled} labels"
        )
        if self.target_width is None:
            return text
        if estimate.n_labelled < PROJECT_AFTER:
            return text + f"; how many more reach width {self.target_width:g} shows from {PROJECT_AFTER} labels on"
        needed = estimate.labels_needed(self.target_width)
        if needed == 0:
            return text + f"; the target width {self.target_width:g} is reached: you can stop"
        if needed is None:
            return text + (
                f"; no number of labels reaches width {self.target_width:g} here (the judge's own variance over "
                "these items is wider)"
            )
        left = self.n_items - self.n_labelled
        beyond = (
            f", {needed - left} beyond this plan's {self.n_items} items (plan.with_budget({self.n_labelled + needed}))"
            if needed > left
            else ""
        )
        return text + f"; about {needed} more labels to reach width {self.target_width:g}{beyond}"

    def _drawn_labelled(self) -> int:
        latest = self.store.latest()
        return sum(self.keys[row] in latest for row in self.order)

    def _label_values(self) -> pd.Series:
        """The current labels on the data's index, on the estimate's scale (pass 1 / fail 0; A / B / tie kept;
        scores normalised to [0, 1] on the queue's scale)."""
        latest = self.store.latest()
        rows = [row for row in range(len(self.frame)) if self.keys[row] in latest]
        values: list[Any] = []
        for row in rows:
            label = latest[self.keys[row]].label
            if self.kind.name == "pass_fail":
                values.append(1.0 if label == "pass" else 0.0)
            elif self.kind.name == "score":
                low, high = self.kind.scale or (0.0, 1.0)
                values.append((float(label) - low) / (high - low))  # type: ignore[arg-type]
            else:
                values.append({"A": 1.0, "tie": 0.5, "B": 0.0}[str(label)])
        return pd.Series(values, index=self.frame.index[rows], dtype=float)

    # --- the labels ------------------------------------------------------------------------------------

    @property
    def labels(self) -> pd.DataFrame:
        """The labelled items, in the data's order, with the data's own index and columns, then item (the key),
        label, who and when (+ note when any label has one; + plan and probability with a plan: None for a label
        given by hand): ready for `judge.align(labels, label="label")`. Data columns with those names are kept
        as `<name>_data`."""
        latest = self.store.latest()
        rows = [row for row in range(len(self.frame)) if self.keys[row] in latest]
        records = [latest[self.keys[row]] for row in rows]
        added = [*LABEL_COLUMNS, "note", *PLAN_COLUMNS]
        out = self.frame.iloc[rows].rename(columns={c: f"{c}_data" for c in added if c in self.frame.columns})
        for column in LABEL_COLUMNS:
            out[column] = [getattr(r, column) for r in records]
        if any(r.note for r in records):
            out["note"] = [r.note for r in records]
        if self.plan is not None or any(r.plan for r in records):
            out["plan"] = [r.plan for r in records]
            out["probability"] = [math.nan if r.probability is None else r.probability for r in records]
        return out


def _check_target_width(target_width: Any, plan: LabelPlan | None) -> float | None:
    if target_width is None:
        return None
    if plan is None:
        raise InputError("target_width= needs plan= (the plan carries the judge's verdicts the interval needs)")
    if isinstance(target_width, bool) or not isinstance(target_width, (int, float)) or not 0 < target_width < 1:
        raise InputError(f"target_width is the interval width to reach, a number in (0, 1); got {target_width!r}")
    return float(target_width)


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
