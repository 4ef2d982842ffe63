"""`%judge --labels`: a person's labels on some of the judged items, read and matched before any call, and the
quality estimate they correct (PPI++, `jw.estimate_quality`) beside the judge's own.

Labels come from a file (CSV, JSON Lines such as a `jw.LabelStore`, Parquet), or a notebook variable holding a
DataFrame, a `LabelQueue` or a `LabelStore`. Each label finds its item the way the label store keys items: by an
id column (`--id-col`, in the data and the labels), by the item's texts (the labels table has the prompt and
response columns), or by the store's `item` key (a hash of the item's texts, as `jw.labels.item_key` computes).
When the judged items are conversations (`--conversation-col C`, one label per conversation), a labels table with
the column C matches them by the conversation itself (its messages, however written: lists or JSON text).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from IPython.core.error import UsageError

from .._errors import InputError
from .._records import Item
from ..conversations import parse_conversation
from ..labels import content_key

_PASS = {"pass", "passed", "yes", "true", "correct", "good", "1", "1.0"}
_FAIL = {"fail", "failed", "no", "false", "incorrect", "bad", "0", "0.0"}
_SHOWN = 5


def read_labels(source: str, namespace: Mapping[str, Any]) -> pd.DataFrame:
    """The labels table `source` names: a notebook variable (DataFrame, LabelQueue, LabelStore) or a file."""
    value = namespace.get(source)
    if value is not None:
        table = value if isinstance(value, pd.DataFrame) else getattr(value, "labels", None)
        if not isinstance(table, pd.DataFrame):
            raise UsageError(
                f"--labels {source} is a {type(value).__name__}; give a DataFrame, a LabelQueue or a LabelStore, "
                "or a file (.csv, .jsonl, .parquet)"
            )
        return table
    path = Path(source).expanduser()
    if not path.is_file():
        raise UsageError(f"--labels {source}: no such variable in the notebook, nor a file")
    suffix = path.suffix.lower()
    try:
        if suffix == ".csv":
            return pd.read_csv(path)
        if suffix in (".jsonl", ".json", ".ndjson"):
            if suffix != ".json" or path.read_text(encoding="utf-8").lstrip()[:1] != "[":
                return _store_or_lines(path)
            return pd.read_json(path)
        if suffix == ".parquet":
            return pd.read_parquet(path)
    except (ValueError, OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"--labels {source}: cannot read it ({exc})") from None
    raise UsageError(f"--labels {source}: read .csv, .jsonl (a label store) or .parquet files, not {suffix or 'this'}")


def _store_or_lines(path: Path) -> pd.DataFrame:
    """A label store's current labels (its records replayed: the latest of each item, clears applied), or plain
    JSON lines."""
    from ..labels import LabelStore

    first = next((line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()), "{}")
    try:
        fields = json.loads(first)
    except ValueError:
        fields = None
    if isinstance(fields, dict) and {"item", "kind", "when"} <= set(fields):
        return LabelStore(path).labels
    return pd.read_json(path, lines=True)


def match_labels(
    items: pd.DataFrame,
    labels: pd.DataFrame,
    *,
    label_col: str = "label",
    id_col: str | None = None,
    ids: Sequence[Any] | None = None,
    text_cols: Mapping[str, str | None] | None = None,
    conversation_col: str | None = None,
) -> pd.Series:
    """The labels on the judged items' positions (0..n-1), as given; UsageError naming what does not match.

    `items` has prompt, response (optional reference) columns, and a `conversation` column (each item's
    conversation as JSON, `item_frame`) when the items are conversations; `ids` are the items' own ids when
    `id_col` is given; `text_cols` maps prompt / response / reference to the labels table's own column names when
    they differ; a labels table with the column `conversation_col` is matched by the conversations themselves.
    """
    if label_col not in labels.columns:
        raise UsageError(
            f"--labels: the table has no {label_col!r} column (columns: {_columns(labels)}); name it with --label-col"
        )
    if conversation_col is not None and id_col is None and conversation_col in labels.columns:
        keys, label_keys, how = _conversation_keys(items, labels, conversation_col)
    else:
        keys, label_keys, how = _keys(items, labels, id_col, ids, text_cols or {})
    values = labels[label_col].tolist()
    present = [i for i, v in enumerate(values) if not _missing(v)]
    seen: dict[str, int] = {}
    for i in present:
        if label_keys[i] in seen:
            raise UsageError(f"--labels: item {label_keys[i]!r} is labelled twice (rows {seen[label_keys[i]]} and {i})")
        seen[label_keys[i]] = i
    position = {key: p for p, key in enumerate(keys)}
    unknown = [label_keys[i] for i in present if label_keys[i] not in position]
    if unknown:
        raise UsageError(
            f"--labels: {len(unknown)} of {len(present)} labels are for items not judged here (matched by {how}): "
            f"{_few(unknown)}; label a subset of these items, or match them another way (--id-col)"
        )
    if len(present) < 2:
        raise UsageError(
            f"--labels: {len(present)} labelled item(s) among the judged ones; an interval needs 2 or more"
        )
    return pd.Series({position[label_keys[i]]: values[i] for i in present}, dtype=object).sort_index()


def _keys(
    items: pd.DataFrame,
    labels: pd.DataFrame,
    id_col: str | None,
    ids: Sequence[Any] | None,
    text_cols: Mapping[str, str | None],
) -> tuple[list[str], list[str], str]:
    """(the items' keys, the labels' keys, how they were matched)."""
    if id_col is not None:
        column = id_col if id_col in labels.columns else "item" if "item" in labels.columns else None
        if column is None or ids is None:
            raise UsageError(f"--id-col {id_col}: the labels table has no {id_col!r} (or 'item') column")
        return [str(v) for v in ids], [str(v) for v in labels[column]], f"the id column {id_col!r}"
    named = {field: text_cols.get(field) or field for field in ("prompt", "response", "reference")}
    for field in ("prompt", "response"):
        if named[field] not in labels.columns and field in labels.columns:
            named[field] = field
    if named["prompt"] in labels.columns and named["response"] in labels.columns:
        fields = ["prompt", "response"]
        if "reference" in items.columns and named["reference"] in labels.columns:
            fields.append("reference")
        item_keys = [content_key(**{f: row[f] for f in fields}) for _, row in items.iterrows()]
        label_keys = [content_key(**{f: row[named[f]] for f in fields}) for _, row in labels.iterrows()]
        return item_keys, label_keys, f"the texts ({', '.join(named[f] for f in fields)})"
    if "item" in labels.columns:
        has_reference = "reference" in items.columns
        item_keys = [
            content_key(prompt=row["prompt"], response=row["response"], reference=row["reference"])
            if has_reference
            else content_key(prompt=row["prompt"], response=row["response"])
            for _, row in items.iterrows()
        ]
        return item_keys, [str(v) for v in labels["item"]], "the label store's item keys (hashes of the texts)"
    raise UsageError(
        "--labels: the table cannot name its items: give it an `item` column (a label store's keys), the items' "
        f"texts ({named['prompt']}, {named['response']}), or an id column shared with --data (--id-col); "
        f"its columns are {_columns(labels)}"
    )


def item_frame(items: Sequence[Item]) -> pd.DataFrame:
    """The judged items as `match_labels` reads them: prompt, response, reference (when any item has one) and, for
    conversations, each one's messages as JSON (`conversation`)."""
    frame = pd.DataFrame({"prompt": [i.prompt for i in items], "response": [i.response for i in items]})
    if any(i.reference is not None for i in items):
        frame["reference"] = [i.reference for i in items]
    if items and all(i.conversation is not None for i in items):
        frame["conversation"] = [i.conversation.conversation.to_json() for i in items if i.conversation is not None]
    return frame


def _conversation_keys(items: pd.DataFrame, labels: pd.DataFrame, column: str) -> tuple[list[str], list[str], str]:
    """(the items' keys, the labels' keys, how): each a hash of the conversation's messages as read (so a list and
    its JSON text key alike), with the reference when both tables have one."""
    with_reference = "reference" in items.columns and "reference" in labels.columns
    item_keys = [
        content_key(conversation=c, reference=r if with_reference else None)
        for c, r in zip(items["conversation"], items.get("reference", [None] * len(items)))
    ]
    label_keys = []
    for i, value in enumerate(labels[column]):
        try:
            read = parse_conversation(value, i).to_json()
        except InputError as exc:
            raise UsageError(f"--labels: row {i} of column {column!r}: {exc}") from None
        reference = labels["reference"].iloc[i] if with_reference else None
        label_keys.append(content_key(conversation=read, reference=reference))
    return item_keys, label_keys, f"the conversations (column {column!r})"


def encode(labels: pd.Series, scale: tuple[float, float] | None) -> tuple[pd.Series, bool]:
    """(labels on [0, 1], whether they are pass/fail): pass/fail, yes/no, True/False and 1/0 as 1 and 0; numbers
    on `scale` (default [0, 1]) normalised. UsageError naming the labels that are neither."""
    low, high = scale or (0.0, 1.0)
    out, binary, bad = {}, True, []
    for item, value in labels.items():
        text = str(value).strip().lower()
        if isinstance(value, (bool, np.bool_)):
            out[item] = float(value)
        elif text in _PASS | _FAIL and not (scale and _number(value)):
            out[item] = 1.0 if text in _PASS else 0.0
        elif _number(value) and low <= float(value) <= high:
            out[item] = (float(value) - low) / (high - low)
            binary = False
        else:
            bad.append(f"{item}: {value!r}")
    if bad:
        where = f"numbers on [{low:g}, {high:g}]" if scale else "numbers in [0, 1] (or --label-scale LOW,HIGH)"
        raise UsageError(f"--labels: {len(bad)} labels are neither pass/fail nor {where}: {', '.join(bad[:_SHOWN])}")
    return pd.Series(out, dtype=float), binary


def parse_scale(text: str | None) -> tuple[float, float] | None:
    """`--label-scale LOW,HIGH` as numbers, LOW < HIGH."""
    if text is None:
        return None
    parts = [p.strip() for p in text.split(",")]
    try:
        low, high = (float(p) for p in parts)
    except ValueError:
        raise UsageError(f"--label-scale {text!r}: give LOW,HIGH, e.g. 1,5") from None
    if not low < high:
        raise UsageError(f"--label-scale {text!r}: LOW must be below HIGH")
    return low, high


def estimates(scores: pd.Series, labels: pd.Series, binary: bool, pass_threshold: float | None) -> dict[str, Any]:
    """The mean score and, with a threshold, the pass rate, each by PPI++ beside the judge's own and the labels'.

    The labels are on [0, 1]; with a threshold, score labels count as a pass at or above it."""
    from ..estimates import estimate_quality

    out = {"mean": estimate_quality(scores, labels, "mean")}
    if pass_threshold is not None:
        passed = labels if binary else (labels >= pass_threshold).astype(float)
        out["pass_rate"] = estimate_quality(scores, passed, "pass_rate", pass_threshold=pass_threshold)
    return out


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def _number(value: Any) -> bool:
    if isinstance(value, (bool, np.bool_)):
        return False
    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            return False
    return isinstance(value, (int, float, np.integer, np.floating)) and math.isfinite(float(value))


def _columns(frame: pd.DataFrame) -> str:
    return ", ".join(map(str, frame.columns[:12]))


def _few(values: Sequence[Any]) -> str:
    shown = ", ".join(repr(v) for v in values[:_SHOWN])
    return shown + (f" and {len(values) - _SHOWN} more" if len(values) > _SHOWN else "")
