"""What an alignment measured: agreement with people before and after, on labels the alignment never used."""

from __future__ import annotations

import html
from typing import Any, Literal

import numpy as np
import pandas as pd

from .._saved import Dump, Keepable, plain
from ..agreement import bootstrap_ci, cohen_kappa
from ._labels import Labels
from ._rules import MISSING


def agreement_row(
    name: str,
    predicted: np.ndarray,
    labels: Labels,
    confidence: float = 0.95,
    seed: int = 0,
    item_weights: np.ndarray | None = None,
) -> dict[str, Any]:
    """n judged, accuracy and Cohen's κ (quadratic-weighted for scores) with percentile bootstrap intervals.

    With `item_weights` (1 / the probability a label plan drew each item; 0 for an item it did not draw) the
    accuracy and κ are weighted, so they estimate the agreement over every item the plan covered rather than over
    the uncertain ones it sought; the bootstrap resamples items with their weights."""
    ok = predicted != MISSING
    if item_weights is not None:
        ok &= item_weights > 0
    pred, truth = predicted[ok], labels.codes[ok]
    row: dict[str, Any] = {"rule": name, "n": int(ok.sum()), "failed": int((predicted == MISSING).sum())}
    if not ok.any():
        return row | dict.fromkeys(("accuracy", "accuracy_low", "accuracy_high", "kappa", "kappa_low", "kappa_high"))
    weights: Literal["quadratic"] | None = "quadratic" if labels.ordinal else None
    classes = list(range(len(labels.classes)))
    if item_weights is None:
        acc = bootstrap_ci(
            lambda p, t: (p == t).mean(axis=-1), pred, truth, confidence=confidence, seed=seed, vectorized=True
        )

        def kappa(p: np.ndarray, t: np.ndarray) -> float:
            return cohen_kappa(p, t, weights=weights, labels=classes)

        kap = bootstrap_ci(kappa, pred, truth, n=500, confidence=confidence, seed=seed)
    else:
        w = item_weights[ok]
        acc = bootstrap_ci(
            lambda p, t, v: (v * (p == t)).sum(axis=-1) / v.sum(axis=-1),
            pred,
            truth,
            w,
            confidence=confidence,
            seed=seed,
            vectorized=True,
        )

        def weighted_kappa(p: np.ndarray, t: np.ndarray, v: np.ndarray) -> float:
            return _weighted_kappa(p, t, v, len(classes), quadratic=labels.ordinal)

        kap = bootstrap_ci(weighted_kappa, pred, truth, w, n=500, confidence=confidence, seed=seed)
    row |= {
        "accuracy": acc.estimate,
        "accuracy_low": acc.low,
        "accuracy_high": acc.high,
        "kappa": kap.estimate,
        "kappa_low": kap.low,
        "kappa_high": kap.high,
    }
    if labels.ordinal:
        values = np.asarray(labels.classes, dtype=float)
        row["mae"] = float(np.abs(values[pred] - values[truth]).mean())
    return row


def _weighted_kappa(predicted: np.ndarray, truth: np.ndarray, weights: np.ndarray, k: int, quadratic: bool) -> float:
    """Cohen's κ (quadratic-weighted when `quadratic`) on a confusion table of item weights."""
    table = np.zeros((k, k))
    np.add.at(table, (np.asarray(truth, dtype=int), np.asarray(predicted, dtype=int)), weights)
    total = table.sum()
    if total <= 0:
        return float("nan")
    table /= total
    codes = np.arange(k)
    cost = (codes[:, None] - codes[None, :]) ** 2 if quadratic else (codes[:, None] != codes[None, :]).astype(float)
    expected = np.outer(table.sum(axis=1), table.sum(axis=0))
    chance = float((cost * expected).sum())
    return float("nan") if chance <= 0 else 1.0 - float((cost * table).sum()) / chance


def confusion(predicted: np.ndarray, labels: Labels) -> pd.DataFrame:
    """Counts of (person's label, judge's label) over the judged items; rows the person's."""
    names = [str(c) for c in labels.classes]
    table = np.zeros((len(names), len(names)), dtype=int)
    for p, t in zip(predicted, labels.codes):
        if p != MISSING:
            table[t, p] += 1
    return pd.DataFrame(table, index=pd.Index(names, name="label"), columns=pd.Index(names, name="judged"))


def _undefined(value: Any) -> bool:
    return value is None or bool(pd.isna(value))


def _why(row: pd.Series) -> str:
    n, failed = int(row["n"]), int(row.get("failed", 0))
    if n == 0:
        return f"no item judged: the judge failed on all {failed}"
    return f"undefined: the {n} judged items and their labels hold one class only"


def _accuracy_text(row: pd.Series) -> str:
    if _undefined(row["accuracy"]):
        return f"n/a ({_why(row)})"
    if _undefined(row["accuracy_low"]) or _undefined(row["accuracy_high"]):
        return f"{row['accuracy']:.1%}"
    return f"{row['accuracy']:.1%} [{row['accuracy_low']:.1%}, {row['accuracy_high']:.1%}]"


def _kappa_text(row: pd.Series) -> str:
    return f"n/a ({_why(row)})" if _undefined(row["kappa"]) else f"{row['kappa']:.2f}"


def _shown(table: pd.DataFrame) -> pd.DataFrame:
    """The table rounded for display; a column of numbers and None (a measure that is undefined somewhere) as
    floats, so the None reads n/a."""
    numbers = [
        c
        for c in table.columns
        if table[c].dtype == object and all(v is None or isinstance(v, (float, np.integer)) for v in table[c])
    ]
    return table.astype(dict.fromkeys(numbers, float)).round(3)


_TABLES = ("table", "levers", "per_fold", "learning_curve", "disagreements")


class AlignmentReport(Keepable):
    """Agreement with the people's labels before and after aligning, all measured on held-out labels.

    `table`: before/after accuracy and Cohen's κ (quadratic-weighted for scores) with bootstrap intervals.
    `levers`: every candidate tried (prompt × decision rule), its cross-validated agreement, and which was kept.
    `per_fold`: each fold's agreement before and after and the candidate chosen without it.
    `confusion`: {"before": ..., "after": ...} tables of (label, judged). `learning_curve`: held-out agreement
    when the rules and the choice are fitted on fewer labels. `disagreements`: the labelled items the aligned
    judge still gets wrong, to read. `chosen`: the settings the aligned judge carries. A panel's report also has
    each member's own in `members`.
    """

    def __init__(
        self,
        *,
        table: pd.DataFrame,
        levers: pd.DataFrame,
        per_fold: pd.DataFrame,
        confusion: dict[str, pd.DataFrame],
        learning_curve: pd.DataFrame,
        disagreements: pd.DataFrame,
        chosen: dict[str, Any],
        calls: int,
        seconds: float,
        kind: str,
        folds: int,
    ) -> None:
        self.table = table
        self.levers = levers
        self.per_fold = per_fold
        self.confusion = confusion
        self.learning_curve = learning_curve
        self.disagreements = disagreements
        self.chosen = chosen
        self.calls = calls
        self.seconds = seconds
        self.kind = kind
        self.folds = folds
        self.members: dict[str, AlignmentReport] = {}

    def to_df(self) -> pd.DataFrame:
        """The before/after table."""
        return self.table.copy()

    def _dump(self) -> Dump:
        """Every table (each member's too, prefixed `member_<i>_`) and the settings kept; the headline is the
        held-out accuracy and κ before and after."""
        dump = Dump(kind="alignment")
        dump.state = self._parts("", dump.tables)
        table = self.table.set_index("rule")
        for rule in ("before", "after"):
            if rule in table.index:
                for measure in ("accuracy", "kappa"):
                    value = table.loc[rule].get(measure)
                    dump.metrics[f"{measure}_{rule}"] = float("nan") if value is None else float(value)
        dump.usage = {"latency_s": float(self.seconds), "attempts": int(self.calls)}
        dump.judges = list(self.members)
        return dump

    def _parts(self, prefix: str, tables: dict[str, pd.DataFrame]) -> dict[str, Any]:
        for name in _TABLES:
            tables[f"{prefix}{name}"] = getattr(self, name)
        for rule, frame in self.confusion.items():
            tables[f"{prefix}confusion_{rule}"] = frame
        return {
            "chosen": plain(self.chosen),
            "calls": int(self.calls),
            "seconds": float(self.seconds),
            "kind": self.kind,
            "folds": int(self.folds),
            "confusion": list(self.confusion),
            "members": [
                {"name": name, **member._parts(f"{prefix}member_{i}_", tables)}
                for i, (name, member) in enumerate(self.members.items())
            ],
        }

    @classmethod
    def _restore(cls, dump: Dump) -> AlignmentReport:
        return cls._from_parts(dump.state, "", dump)

    @classmethod
    def _from_parts(cls, state: dict[str, Any], prefix: str, dump: Dump) -> AlignmentReport:
        report = cls(
            **{name: dump.table(f"{prefix}{name}") for name in _TABLES},
            confusion={rule: dump.table(f"{prefix}confusion_{rule}") for rule in state["confusion"]},
            chosen=dict(state["chosen"]),
            calls=int(state["calls"]),
            seconds=float(state["seconds"]),
            kind=state["kind"],
            folds=int(state["folds"]),
        )
        for i, member in enumerate(state.get("members") or []):
            report.members[member["name"]] = cls._from_parts(member, f"{prefix}member_{i}_", dump)
        return report

    @property
    def before(self) -> pd.Series:
        return self.table.set_index("rule").loc["before"]

    @property
    def after(self) -> pd.Series:
        return self.table.set_index("rule").loc["after"]

    def summary(self) -> str:
        """One sentence: the agreement before and after, with intervals, and on what. An agreement that cannot be
        measured (no item judged; κ of judged items and labels of one class only) reads "n/a" and why."""
        b, a = self.before, self.after
        labels = int(a["n"]) + int(a.get("failed", 0))
        weighted = self.chosen.get("weighted_by")
        how = f"; weighted by 1 / the probability plan {weighted} drew each item" if weighted else ""
        return (
            f"held-out agreement with {labels} {self.kind} labels ({self.folds}-fold cross-fitting{how}): "
            f"{_accuracy_text(b)} → {_accuracy_text(a)}; κ {_kappa_text(b)} → {_kappa_text(a)}; "
            f"kept: {self.chosen.get('candidate')}"
        )

    def __repr__(self) -> str:
        return f"AlignmentReport({self.summary()})"

    def _repr_html_(self) -> str:
        shown = _shown(self.table).to_html(index=False, na_rep="n/a")
        levers = _shown(self.levers).to_html(index=False, na_rep="n/a")
        return f"<p>{html.escape(self.summary())}</p>{shown}<p>Candidates tried</p>{levers}"

    def chart(self) -> Any:
        """Before/after accuracy and κ with intervals, beside the learning curve."""
        from ._chart import report_chart

        return report_chart(self)
