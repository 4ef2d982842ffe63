"""`jw.compare(before, after)`: the same items judged in two runs, item by item, with paired intervals."""

from __future__ import annotations

import html
import math
import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import pandas as pd

from .._errors import ConfigurationError, InputError, RegressionError
from ._items import OVERALL, ItemScores, item_scores
from ._stats import paired_bootstraps, sign_test

if TYPE_CHECKING:
    import altair as alt

    from ._widgets import RegressionPager

Rule = Literal["estimate", "interval"]
CHANGES = ("worse", "same", "better")
_TOLERANCE = 1e-9  # score differences smaller than this are float noise, not a change
SUMMARY_COLUMNS = [
    "judge",
    "metric",
    "before",
    "after",
    "change",
    "low",
    "high",
    "p_value",
    "n",
    "better",
    "worse",
    "same",
    "unscored",
]


class RunComparison:
    """Two runs of the same items, compared item by item (what `jw.compare` returns).

    `summary`: per judge (and `overall`, the runs' aggregate) and metric — the mean score (or a's win rate, for
    pairwise comparisons) and the pass rate (score ≥ `pass_threshold`) — the value before and after, the change
    with its paired bootstrap interval (`low`, `high`), the exact sign test's p-value (McNemar's for pass rates),
    and how many paired items got better, worse or stayed the same (`unscored`: paired but unscored in a run).
    `items` (also `to_df()`): one row per paired item and judge: key, judge, before, after, delta, change, the
    texts (the response of each run) and each run's explanation. `only_before` / `only_after`: items in one run
    only (never silently dropped); `judges_only_before` / `judges_only_after`: judges in one run only.
    """

    def __init__(
        self,
        *,
        items: pd.DataFrame,
        summary: pd.DataFrame,
        only_before: pd.DataFrame,
        only_after: pd.DataFrame,
        judges_only_before: list[str],
        judges_only_after: list[str],
        names: tuple[str, str],
        settings: dict[str, Any],
    ) -> None:
        self.items = items
        self.summary = summary
        self.only_before = only_before
        self.only_after = only_after
        self.judges_only_before = judges_only_before
        self.judges_only_after = judges_only_after
        self.names = names
        self.settings = settings

    @property
    def judges(self) -> list[str]:
        """The judges compared, `overall` first when the runs have an aggregate."""
        return list(dict.fromkeys(self.summary["judge"]))

    @property
    def metric(self) -> str:
        """The main metric: "mean_score", or "win_rate" for pairwise comparisons."""
        return str(self.settings["metric"])

    def to_df(self) -> pd.DataFrame:
        return self.items.copy()

    def _judge(self, judge: str | None) -> str:
        if judge is None:
            return self.judges[0]
        if judge not in self.judges:
            raise InputError(f"no judge {judge!r} in this comparison; the judges are {', '.join(self.judges)}")
        return judge

    def regressions(self, judge: str | None = None, n: int | None = None) -> pd.DataFrame:
        """The items one judge (default: the first, `overall` when there is one) scored lower after, worst
        first, with their texts and explanations."""
        judge = self._judge(judge)
        rows = self.items[(self.items["judge"] == judge) & (self.items["change"] == "worse")]
        rows = rows.sort_values("delta", kind="stable").reset_index(drop=True)
        return rows if n is None else rows.head(n)

    def improvements(self, judge: str | None = None, n: int | None = None) -> pd.DataFrame:
        """The items one judge scored higher after, most improved first."""
        judge = self._judge(judge)
        rows = self.items[(self.items["judge"] == judge) & (self.items["change"] == "better")]
        rows = rows.sort_values("delta", ascending=False, kind="stable").reset_index(drop=True)
        return rows if n is None else rows.head(n)

    def assert_no_regression(
        self,
        margin: float = 0.0,
        *,
        metric: str | None = None,
        judges: Sequence[str] | None = None,
        rule: Rule = "estimate",
        show: int = 5,
    ) -> None:
        """Raise RegressionError when a judge's `metric` (default: the main one) fell by more than `margin`.

        `rule="estimate"`: the change itself is below −margin. `rule="interval"` is stricter (non-inferiority):
        the interval's lower bound must lie above −margin, so a small or noisy run fails too. `judges`: which to
        check (default: all, `overall` included). The error names the failing judges and the `show` worst items.
        """
        if isinstance(margin, bool) or not isinstance(margin, (int, float)) or not math.isfinite(margin):
            raise ConfigurationError(f"margin must be a number, got {margin!r}")
        if rule not in ("estimate", "interval"):
            raise ConfigurationError(f"rule must be 'estimate' or 'interval', got {rule!r}")
        metric = metric or self.metric
        rows = self.summary[self.summary["metric"] == metric]
        if rows.empty:
            raise InputError(
                f"no metric {metric!r} here; the metrics are {', '.join(dict.fromkeys(self.summary['metric']))}"
            )
        if judges is not None:
            rows = rows[rows["judge"].isin([self._judge(j) for j in judges])]
        bound = rows["change"] if rule == "estimate" else rows["low"]
        failing = rows[bound.fillna(np.inf) < -margin]
        if failing.empty:
            return
        lines = [f"{self.names[1]} is worse than {self.names[0]} beyond the margin {margin:g} ({rule}):"]
        for row in failing.itertuples(index=False):
            lines.append(
                f"  {row.judge} {row.metric}: {row.before:.3f} → {row.after:.3f} (change {row.change:+.3f}, "
                f"{self.settings['confidence']:.0%} interval [{row.low:+.3f}, {row.high:+.3f}], sign test "
                f"p = {row.p_value:.3g}, {row.worse} of {row.n} items worse)"
            )
        worst = self.regressions(str(failing.iloc[0]["judge"]), n=show)
        if len(worst):
            lines.append(f"worst items ({failing.iloc[0]['judge']}):")
            for i, row in enumerate(worst.to_dict("records"), 1):
                why = row.get("explanation_after")
                lines.append(
                    f"  {i}. {_short(row.get('input'))!r}: {row['before']:.2f} → {row['after']:.2f}"
                    + (f" — {_short(why, 100)}" if isinstance(why, str) and why else "")
                )
        raise RegressionError("\n".join(lines), failures=failing.reset_index(drop=True), worst=worst)

    def chart(self, judges: Sequence[str] | None = None) -> alt.VConcatChart:
        """Each item's score before and after (a slope chart per judge, red where it fell), above each judge's
        change with its interval; tooltips show the texts."""
        from ._chart import comparison_chart

        return comparison_chart(self, list(judges) if judges is not None else self.judges[:4])

    def pager(self, judge: str | None = None, page_size: int = 5) -> RegressionPager:
        """A widget that pages through the regressions, worst first (one judge at a time)."""
        from ._widgets import RegressionPager

        return RegressionPager(self, judge=judge, page_size=page_size)

    def describe(self) -> str:
        """One line per judge: the main metric before → after with its interval, and items better / worse."""
        rows = self.summary[self.summary["metric"] == self.metric]
        lines = [f"{self.names[0]} → {self.names[1]}: {self._paired_text()}"]
        for row in rows.itertuples(index=False):
            lines.append(
                f"  {row.judge}: {row.metric} {row.before:.3f} → {row.after:.3f} ({row.change:+.3f} "
                f"[{row.low:+.3f}, {row.high:+.3f}]); {row.better} better, {row.worse} worse, {row.same} same"
            )
        return "\n".join(lines)

    def _paired_text(self) -> str:
        text = f"{self.settings['paired']} items paired"
        if len(self.only_before) or len(self.only_after):
            text += f", {len(self.only_before)} only before, {len(self.only_after)} only after"
        return text

    def __repr__(self) -> str:
        return f"RunComparison({self.describe()})"

    def _repr_html_(self) -> str:
        head = (
            f"<p><b>{html.escape(self.names[0])} → {html.escape(self.names[1])}</b>: "
            f"{html.escape(self._paired_text())}. Intervals: paired bootstrap ({self.settings['n_boot']} resamples, "
            f"seed {self.settings['seed']}, {self.settings['confidence']:.0%}); p-values: exact sign test.</p>"
        )
        table = self.summary.to_html(index=False, float_format=lambda v: f"{v:.3f}", na_rep="–")
        worst = self.regressions(n=5)
        shown = ""
        if len(worst):
            # A column with nothing in it (no judge explained itself) is left out rather than shown as None.
            wanted = ("input", "before", "after", "delta", "explanation_after")
            columns = [c for c in wanted if c in worst and worst[c].notna().any()]
            shown = "<p>Worst regressions</p>" + worst[columns].to_html(index=False, float_format=lambda v: f"{v:.2f}")
        return head + table + shown


def compare(
    before: Any,
    after: Any,
    *,
    on: str = "input",
    ids: tuple[Sequence[Any], Sequence[Any]] | None = None,
    pass_threshold: float = 0.5,
    confidence: float = 0.95,
    n_boot: int = 2000,
    seed: int = 0,
) -> RunComparison:
    """Compare two runs of the same items (results, or paths of saved runs), item by item.

    Items are matched by `on`: "input" (default: a hash of what was asked — prompt / question / query and
    reference — so new responses, a new judge or a new template still pair up), "item" (every text, responses
    included), "position", a column both results keep per item, or explicit `ids=(before_ids, after_ids)`. A key
    repeated within a run is numbered in order. Items in only one run are reported (`only_before`,
    `only_after`), never dropped silently. Judges are paired by name; `overall` pairs the runs' aggregates (a
    panel's mean, a pipeline's final score, ...); two single-judge runs pair their one judge whatever its name.

    The change in each metric is the mean of the per-item differences after − before, with a percentile
    interval from a paired bootstrap of the items (`n_boot` resamples, `seed`: reproducible), and a p-value
    from the exact two-sided sign test on the items that changed (McNemar's exact test for pass rates). An item
    got better or worse when its score moved at all; items a judge failed on in either run are `unscored`.
    """
    if not 0.0 < confidence < 1.0:
        raise ConfigurationError(f"confidence must lie in (0, 1), got {confidence!r}")
    if isinstance(n_boot, bool) or not isinstance(n_boot, int) or n_boot < 100:
        raise ConfigurationError(f"n_boot must be a whole number of resamples ≥ 100, got {n_boot!r}")
    if not 0.0 <= pass_threshold <= 1.0:
        raise ConfigurationError(f"pass_threshold must lie in [0, 1], got {pass_threshold!r}")
    first, second = item_scores(before), item_scores(after)
    if first.metric != second.metric:
        raise InputError(f"cannot compare a {first.metric} run with a {second.metric} run")
    names = (first.name or _name(before, "before"), second.name or _name(after, "after"))
    keys = (first.keys(ids[0]), second.keys(ids[1])) if ids is not None else (first.keys(on), second.keys(on))
    pairs = _judge_pairs(first, second)
    index_after = {k: i for i, k in enumerate(keys[1])}
    matched = [(i, index_after[k]) for i, k in enumerate(keys[0]) if k in index_after]
    if not matched:
        raise InputError(
            f"no item of {names[0]} is in {names[1]} (matched on {on if ids is None else 'ids'}): "
            "are these runs of the same items? Match on 'position' or give ids=(before_ids, after_ids)"
        )
    paired_before = {k for k in keys[0] if k in index_after}
    only_before = _unmatched(first, keys[0], [k not in index_after for k in keys[0]])
    only_after = _unmatched(second, keys[1], [k not in paired_before for k in keys[1]])
    settings = {
        "on": on if ids is None else "ids",
        "confidence": confidence,
        "n_boot": n_boot,
        "seed": seed,
        "pass_threshold": pass_threshold,
        "metric": first.metric,
        "paired": len(matched),
    }
    items, summary, differences = [], [], []
    for label, a, b in pairs:
        table = _item_table(first, second, keys[0], matched, label, a, b)
        items.append(table)
        for row, d in _summary_rows(label, table, first.metric, settings):
            summary.append(row)
            differences.append(d)
    intervals = paired_bootstraps(differences, n_boot, confidence, seed)
    for row, (estimate, low, high) in zip(summary, intervals, strict=True):
        row.update(change=estimate, low=low, high=high)
    return RunComparison(
        items=pd.concat(items, ignore_index=True),
        summary=pd.DataFrame(summary, columns=SUMMARY_COLUMNS),
        only_before=only_before,
        only_after=only_after,
        judges_only_before=[j for j in first.judges if j not in second.scores],
        judges_only_after=[j for j in second.judges if j not in first.scores],
        names=names,
        settings=settings,
    )


def _name(run: Any, default: str) -> str:
    return os.fspath(run) if isinstance(run, (str, os.PathLike)) else default


def _judge_pairs(first: ItemScores, second: ItemScores) -> list[tuple[str, str, str]]:
    """(label, judge before, judge after) for every judge both runs have, `overall` first."""
    pairs = [(name, name, name) for name in first.scores if name in second.scores]
    pairs.sort(key=lambda p: p[0] != OVERALL)
    if not pairs and len(first.scores) == 1 and len(second.scores) == 1:
        a, b = next(iter(first.scores)), next(iter(second.scores))
        pairs = [(f"{a} → {b}", a, b)]
    if not pairs:
        raise InputError(
            f"the runs share no judge to compare: before has {', '.join(first.scores)}, after has "
            f"{', '.join(second.scores)}"
        )
    return pairs


def _texts(view: ItemScores, rows: list[int], column: str | None) -> list[Any]:
    if column is None or column not in view.frame:
        return [None] * len(rows)
    values = view.frame[column].to_numpy(dtype=object)
    return [values[i] for i in rows]


def _item_table(
    first: ItemScores,
    second: ItemScores,
    keys: list[str],
    matched: list[tuple[int, int]],
    label: str,
    a: str,
    b: str,
) -> pd.DataFrame:
    rows_a, rows_b = [i for i, _ in matched], [j for _, j in matched]
    before = first.scores[a].to_numpy(dtype=float)[rows_a]
    after = second.scores[b].to_numpy(dtype=float)[rows_b]
    delta = after - before
    change = np.where(
        np.isnan(delta),
        "unscored",
        np.where(delta > _TOLERANCE, "better", np.where(delta < -_TOLERANCE, "worse", "same")),
    )
    table = pd.DataFrame(
        {
            "key": [keys[i] for i in rows_a],
            "judge": label,
            "before": before,
            "after": after,
            "delta": delta,
            "change": change,
            "input": _texts(first, rows_a, first.inputs[0]),
        }
    )
    for column in first.inputs[1:]:
        table[column] = _texts(first, rows_a, column)
    table["response_before"] = _texts(first, rows_a, first.response)
    table["response_after"] = _texts(second, rows_b, second.response)
    table["explanation_before"] = [_text(v) for v in _column(first.explanations.get(a), rows_a)]
    table["explanation_after"] = [_text(v) for v in _column(second.explanations.get(b), rows_b)]
    return table


def _column(series: pd.Series | None, rows: list[int]) -> list[Any]:
    if series is None:
        return [None] * len(rows)
    values = series.to_numpy(dtype=object)
    return [values[i] for i in rows]


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _summary_rows(
    label: str, table: pd.DataFrame, metric: str, settings: dict[str, Any]
) -> list[tuple[dict[str, Any], np.ndarray]]:
    """One judge's summary rows (the main metric, then the pass rate), each with its per-item differences; the
    change and its interval are filled in by `compare`, which bootstraps every judge's differences together."""
    scored = table[table["change"] != "unscored"]
    counts = {c: int((scored["change"] == c).sum()) for c in CHANGES}
    unscored = int((table["change"] == "unscored").sum())
    before, after = scored["before"].to_numpy(), scored["after"].to_numpy()
    measures = [(metric, before, after)]
    if metric != "win_rate":
        threshold = settings["pass_threshold"]
        measures.append(("pass_rate", (before >= threshold).astype(float), (after >= threshold).astype(float)))
    rows = []
    for name, b, a in measures:
        d = a - b
        moved = {"better": int((d > _TOLERANCE).sum()), "worse": int((d < -_TOLERANCE).sum())}
        row = {
            "judge": label,
            "metric": name,
            "before": float(b.mean()) if len(b) else math.nan,
            "after": float(a.mean()) if len(a) else math.nan,
            "change": math.nan,
            "low": math.nan,
            "high": math.nan,
            "p_value": sign_test(d),
            "n": len(d),
            "better": moved["better"] if name != metric else counts["better"],
            "worse": moved["worse"] if name != metric else counts["worse"],
            "same": len(d) - moved["better"] - moved["worse"] if name != metric else counts["same"],
            "unscored": unscored,
        }
        rows.append((row, d))
    return rows


def _unmatched(view: ItemScores, keys: list[str], mask: list[bool]) -> pd.DataFrame:
    rows = [i for i, unmatched in enumerate(mask) if unmatched]
    table = pd.DataFrame({"key": [keys[i] for i in rows], "position": rows})
    for column in view.texts:
        table[column] = _texts(view, rows, column)
    for judge, scores in view.scores.items():
        table[f"score_{judge}"] = scores.to_numpy(dtype=float)[rows] if rows else []
    return table


def _short(value: Any, limit: int = 60) -> str:
    text = " ".join(str(value).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
