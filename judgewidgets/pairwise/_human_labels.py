"""What `corrected` reads: the judge's verdict per comparison, and a person's verdicts on some of them.

A comparison is one (pair of candidates, question) judged once, both orders debiased into one `outcome` in a
tournament's matches (or one row of any other (model_a, model_b, winner) table). Verdicts are in the comparison's
own terms: "A" (its model_a is better), "B" or "tie" — the spellings `jw.bradley_terry` reads (model_a / model_b,
any case) and the winning candidate's name.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from .._errors import InputError
from ._games import WINNER_SCORES

_SHOWN = 5  # ids named in an error message
_VERDICT = {1.0: "A", 0.0: "B", 0.5: "tie"}


def comparisons_table(matches: pd.DataFrame) -> pd.DataFrame:
    """One row per comparison, indexed by its id: model_a, model_b, question_index / question when known, and
    `judge`, the judge's verdict "A" / "B" / "tie" (None where the judge failed).

    A tournament's matches (an `outcome` column) give one comparison per pair_id; any other table is one
    comparison per row, its id the `pair_id` column when there is one, else the row's index."""
    if not isinstance(matches, pd.DataFrame):
        raise InputError(f"matches must be a pandas DataFrame, got {type(matches).__name__}")
    verdict = "outcome" if "outcome" in matches.columns else "winner"
    missing = [c for c in ("model_a", "model_b", verdict) if c not in matches.columns]
    if missing:
        raise InputError(
            f"matches lacks column(s) {', '.join(missing)}; expected a tournament's matches or a table of "
            f"model_a, model_b, winner (found: {', '.join(map(str, matches.columns))})"
        )
    if verdict == "outcome":
        if "pair_id" not in matches.columns:
            raise InputError("a matches table with an `outcome` column needs its `pair_id` column")
        per = matches.drop_duplicates("pair_id").set_index("pair_id")
    elif "pair_id" in matches.columns:
        per = matches.set_index("pair_id")
    else:
        per = matches
    if per.index.has_duplicates:
        raise InputError(f"comparison ids are not unique: {_few(per.index[per.index.duplicated()])}")
    columns = [c for c in ("model_a", "model_b", "question_index", "question") if c in per.columns]
    table = per[columns].copy()
    table["model_a"], table["model_b"] = table["model_a"].astype(str), table["model_b"].astype(str)
    table["judge"] = [_verdict(v, a, b) for v, a, b in zip(per[verdict], table["model_a"], table["model_b"])]
    unknown = table["judge"].map(lambda v: v is math.inf)
    if unknown.any():
        raise InputError(
            f"unknown winner value(s) {_few(sorted(set(map(str, per[verdict][unknown.to_numpy()]))))} in matches; "
            "use A / B / tie (or model_a / model_b)"
        )
    table["judge"] = table["judge"].astype(object)
    return table


def candidate_names(table: pd.DataFrame, candidates: Sequence[str] | None) -> list[str]:
    """The candidates: as given (a tournament's order), else the names the comparisons use, sorted."""
    seen = set(table["model_a"]) | set(table["model_b"])
    names = [str(c) for c in candidates] if candidates is not None else sorted(seen)
    extra = sorted(seen - set(names))
    if extra:
        raise InputError(f"the matches name candidate(s) {extra} outside {names}")
    if len(names) < 2:
        raise InputError(f"ratings need at least 2 candidates, got {names}")
    return names


def check_connected(table: pd.DataFrame, names: list[str]) -> None:
    """InputError when the comparisons leave the candidates in groups that never meet (ratings not comparable)."""
    group = {name: name for name in names}

    def root(x: str) -> str:
        while group[x] != x:
            group[x] = group[group[x]]
            x = group[x]
        return x

    for a, b in zip(table["model_a"], table["model_b"]):
        group[root(a)] = root(b)
    parts: dict[str, list[str]] = {}
    for name in names:
        parts.setdefault(root(name), []).append(name)
    if len(parts) > 1:
        shown = "; ".join(", ".join(p) for p in parts.values())
        raise InputError(f"the comparisons split the candidates into groups that never meet ({shown}): no rating")


def human_verdicts(human_labels: Any, comparisons: pd.DataFrame, questions: Sequence[str] | None = None) -> pd.Series:
    """The person's verdicts as a Series on comparison ids ("A" / "B" / "tie" in each comparison's own terms),
    missing labels (None, NaN) dropped; InputError naming what does not fit, before any fitting.

    `human_labels`: a Series or dict on comparison ids (a tournament's `pair_id`); a table with a `pair_id`
    column and a `winner` (or `label`) column; or a table of model_a, model_b, question (its text, as passed to
    `Tournament.run`) or question_index, and winner, matched to the comparison of that pair on that question
    in either order (a winner "A" then names the row's own model_a, and is turned to the comparison's terms)."""
    if isinstance(human_labels, pd.DataFrame):
        return _from_table(human_labels, comparisons, questions)
    if isinstance(human_labels, Mapping):
        human_labels = pd.Series(dict(human_labels), dtype=object)
    if not isinstance(human_labels, pd.Series):
        raise InputError(
            "human_labels must be a Series (or dict) of 'A' / 'B' / 'tie' on the comparisons' ids (matches' "
            f"pair_id), or a table of model_a, model_b, question, winner; got {type(human_labels).__name__}"
        )
    labels = human_labels[human_labels.map(lambda v: not _missing(v))]
    if labels.index.has_duplicates:
        raise InputError(f"human_labels names {_few(labels.index[labels.index.duplicated()])} more than once")
    unknown = labels.index[~labels.index.isin(comparisons.index)]
    if len(unknown):
        raise InputError(
            f"{len(unknown)} labelled comparison(s) are not in the matches: {_few(unknown)}; label comparisons by "
            "their pair_id in the result's matches"
        )
    return _verdicts(labels, comparisons.loc[labels.index, "model_a"], comparisons.loc[labels.index, "model_b"])


def _from_table(table: pd.DataFrame, comparisons: pd.DataFrame, questions: Sequence[str] | None) -> pd.Series:
    verdict = next((c for c in ("winner", "label") if c in table.columns), None)
    if verdict is None:
        raise InputError(
            "human_labels is a table without a `winner` (or `label`) column "
            f"(columns: {', '.join(map(str, table.columns))})"
        )
    if "pair_id" in table.columns:
        return human_verdicts(pd.Series(table[verdict].to_numpy(), index=table["pair_id"]), comparisons, questions)
    table = table[table[verdict].map(lambda v: not _missing(v))]
    key = _question_key(table, comparisons, questions)
    a, b = table["model_a"].astype(str).to_numpy(), table["model_b"].astype(str).to_numpy()
    lookup: dict[tuple[frozenset[str], Any], list[Hashable]] = {}
    for cid, ca, cb, q in zip(comparisons.index, comparisons["model_a"], comparisons["model_b"], comparisons[key]):
        lookup.setdefault((frozenset((ca, cb)), q), []).append(cid)
    asked = _question_values(table, key, questions)
    ids: list[Hashable] = []
    for row, x, y, q in zip(table.index, a, b, asked):
        found = lookup.get((frozenset((x, y)), q), [])
        if len(found) != 1:
            what = "no comparison" if not found else f"{len(found)} comparisons"
            raise InputError(
                f"human_labels row {row!r} ({x} vs {y} on question {q!r}) matches {what} in the matches; each "
                "labelled row must name one judged comparison (pair and question)"
            )
        ids.append(found[0])
    index = pd.Index(ids)
    if index.has_duplicates:
        raise InputError(f"human_labels labels comparison(s) {_few(index[index.duplicated()])} twice")
    own = _verdicts(
        pd.Series(table[verdict].to_numpy(), index=index), pd.Series(a, index=index), pd.Series(b, index=index)
    )
    flipped = comparisons.loc[index, "model_a"].to_numpy() != a
    own[flipped] = own[flipped].map({"A": "B", "B": "A", "tie": "tie"})
    return own


def _question_key(table: pd.DataFrame, comparisons: pd.DataFrame, questions: Sequence[str] | None) -> str:
    missing = [c for c in ("model_a", "model_b") if c not in table.columns]
    if missing or not {"question", "question_index"} & set(table.columns):
        raise InputError(
            "human_labels as a table needs pair_id and winner, or model_a, model_b, question (or question_index) "
            f"and winner (columns: {', '.join(map(str, table.columns))})"
        )
    if "question" in table.columns and "question" in comparisons.columns:
        return "question"
    if "question_index" not in comparisons.columns:
        raise InputError("the matches say nothing about questions: label comparisons by pair_id instead")
    if "question" in table.columns and "question_index" not in table.columns and not questions:
        raise InputError("this result does not know its questions' texts: label by question_index or pair_id")
    return "question_index"


def _question_values(table: pd.DataFrame, key: str, questions: Sequence[str] | None) -> list[Any]:
    if key == "question" or "question_index" in table.columns:
        return list(table[key])
    position = {text: i for i, text in enumerate(questions or [])}
    unknown = sorted({str(q) for q in table["question"] if q not in position})
    if unknown:
        raise InputError(f"human_labels names question(s) the tournament did not ask: {_few(unknown)}")
    return [position[q] for q in table["question"]]


def _verdicts(labels: pd.Series, model_a: pd.Series, model_b: pd.Series) -> pd.Series:
    values = [_verdict(v, a, b) for v, a, b in zip(labels, model_a, model_b)]
    bad = [i for i, v in enumerate(values) if v is math.inf]
    if bad:
        shown = ", ".join(f"{labels.index[i]!r}: {labels.iloc[i]!r}" for i in bad[:_SHOWN])
        raise InputError(
            f"{len(bad)} human verdict(s) are not A / B / tie (or model_a / model_b, or one of the pair's names): "
            f"{shown}"
        )
    return pd.Series(values, index=labels.index, dtype=object)


def _verdict(value: Any, model_a: str, model_b: str) -> Any:
    """ "A" / "B" / "tie", None when missing, math.inf when it does not read as a verdict."""
    if _missing(value):
        return None
    if isinstance(value, str):
        text = value.strip()
        score = WINNER_SCORES.get(text.lower())
        if score is not None:
            return _VERDICT[score]
        if text in (model_a, model_b):
            return "A" if text == model_a else "B"
        return math.inf
    if isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, (bool, np.bool_)):
        return _VERDICT.get(float(value), math.inf)
    return math.inf


def _missing(value: Any) -> bool:
    if value is None or value is pd.NA:
        return True
    return isinstance(value, (float, np.floating)) and math.isnan(value)


def _few(items: Sequence[Hashable] | pd.Index) -> str:
    items = list(items)
    shown = ", ".join(repr(i) for i in items[:_SHOWN])
    return shown + (f" and {len(items) - _SHOWN} more" if len(items) > _SHOWN else "")
