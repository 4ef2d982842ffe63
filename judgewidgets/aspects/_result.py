"""The result of an aspect evaluation: one row per item, a score, pass flag and explanation per aspect."""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from .._records import Item
from .._saved import Dump, Keepable, plain
from ..engine import Usage
from ..scoring._results import PanelResult
from ._aspect import Aspect

if TYPE_CHECKING:
    import altair as alt


@dataclass
class AspectResult(Keepable):
    """Scores of every aspect of every item. A failed aspect call scores NaN, does not pass, keeps its error.
    `provenance`: the evaluator's settings (no secrets)."""

    items: list[Item]
    aspects: list[Aspect]
    thresholds: dict[str, float]
    panel: PanelResult
    provenance: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    def _dump(self) -> Dump:
        """The panel's items and votes, with the aspects and thresholds; the headline is each aspect's mean score
        and pass rate, and the share of items that passed every aspect."""
        dump = self.panel._dump(kind="aspects")
        dump.state.update(aspects=[plain(a.model_dump()) for a in self.aspects], thresholds=dict(self.thresholds))
        summary = self.summary()
        metrics: dict[str, float] = {"pass_rate": float(self.passed().all(axis=1).mean()) if self.items else math.nan}
        for row in summary.to_dict("records"):
            metrics[f"mean_score/{row['aspect']}"] = row["mean_score"]
            metrics[f"pass_rate/{row['aspect']}"] = row["pass_rate"]
        dump.metrics = metrics
        dump.provenance = self.provenance
        return dump

    @classmethod
    def _restore(cls, dump: Dump) -> AspectResult:
        panel = PanelResult._restore(dump)
        return cls(
            items=panel.items,
            aspects=[Aspect(**a) for a in dump.state["aspects"]],
            thresholds={str(k): float(v) for k, v in dump.state["thresholds"].items()},
            panel=panel,
            provenance=dump.provenance,
        )

    @property
    def usage(self) -> Usage:
        """What every aspect's calls cost together."""
        return self.panel.usage

    @property
    def names(self) -> list[str]:
        return [a.name for a in self.aspects]

    def scores(self) -> pd.DataFrame:
        """Items × aspects table of scores in [0, 1] (NaN where the aspect's call failed)."""
        return self.panel.scores()

    def passed(self) -> pd.DataFrame:
        """Items × aspects table of pass flags: score ≥ the aspect's threshold (NaN never passes)."""
        scores = self.scores()
        return pd.DataFrame(
            {n: [bool(s >= self.thresholds[n]) if not math.isnan(s) else False for s in scores[n]] for n in self.names}
        )

    @property
    def votes(self) -> pd.DataFrame:
        """Tidy long table: item, aspect, score, raw, explanation, error, latency and cost of every call."""
        return self.panel.votes.rename(columns={"judge": "aspect"})

    @property
    def errors(self) -> pd.DataFrame:
        """The aspect calls that failed, with their errors."""
        return self.panel.errors.rename(columns={"judge": "aspect"})

    def to_df(self) -> pd.DataFrame:
        """prompt, response (+ reference), then per aspect `<aspect>`, `<aspect>_passed`, `<aspect>_explanation`,
        then `passed` (every aspect passed), `average_score` (mean over the aspects that scored, NaN when none
        did) and `error` (the failed aspects' errors, None when all succeeded)."""
        frame = pd.DataFrame({"prompt": [i.prompt for i in self.items], "response": [i.response for i in self.items]})
        if any(i.reference is not None for i in self.items):
            frame["reference"] = [i.reference for i in self.items]
        scores = self.scores()
        passed = self.passed()
        explanations: dict[str, list[str | None]] = {n: [None] * len(self.items) for n in self.names}
        errors: list[list[str]] = [[] for _ in self.items]
        for vote in self.panel.vote_list:
            explanations[vote.judge][vote.item] = vote.explanation
            if vote.error:
                errors[vote.item].append(f"{vote.judge}: {vote.error}")
        for name in self.names:
            frame[name] = scores[name].to_numpy(dtype=float)
            frame[f"{name}_passed"] = passed[name].to_numpy(dtype=bool)
            frame[f"{name}_explanation"] = explanations[name]
        frame["passed"] = passed.all(axis=1).to_numpy(dtype=bool)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            frame["average_score"] = np.nanmean(scores.to_numpy(dtype=float), axis=1)
        frame["error"] = ["; ".join(e) if e else None for e in errors]
        return frame

    def summary(self) -> pd.DataFrame:
        """Per aspect: threshold, mean score, pass rate and failed calls."""
        scores = self.scores()
        passed = self.passed()
        rows: list[dict[str, Any]] = []
        for name in self.names:
            column = scores[name]
            rows.append(
                {
                    "aspect": name,
                    "threshold": self.thresholds[name],
                    "mean_score": float(column.mean()) if column.notna().any() else math.nan,
                    "pass_rate": float(passed[name].mean()),
                    "failed_calls": int(column.isna().sum()),
                }
            )
        return pd.DataFrame(rows)

    def chart(self) -> alt.FacetChart:
        """Bars of every aspect's score per item, coloured by pass/fail, with each aspect's threshold as a tick."""
        import altair as alt

        from .._charts import offline

        scores = self.scores()
        passed = self.passed()
        rows = []
        for index, item in enumerate(self.items):
            prompt = " ".join(item.prompt.split())
            for name in self.names:
                score = scores.at[index, name]
                rows.append(
                    {
                        "item": f"{index}: {prompt[:40]}{'…' if len(prompt) > 40 else ''}",
                        "aspect": name,
                        "score": None if math.isnan(score) else float(score),
                        "threshold": self.thresholds[name],
                        "outcome": "failed call"
                        if math.isnan(score)
                        else ("pass" if passed.at[index, name] else "fail"),
                    }
                )
        data = pd.DataFrame(rows)
        x = alt.X("aspect:N", sort=self.names, title=None)
        bars = (
            alt.Chart()
            .mark_bar()
            .encode(
                x=x,
                y=alt.Y("score:Q", scale=alt.Scale(domain=[0, 1]), title="score"),
                color=alt.Color(
                    "outcome:N",
                    scale=alt.Scale(domain=["pass", "fail", "failed call"], range=["#4c9a2a", "#d9534f", "#999999"]),
                    title=None,
                ),
                tooltip=["item:N", "aspect:N", alt.Tooltip("score:Q", format=".2f"), "threshold:Q", "outcome:N"],
            )
        )
        ticks = alt.Chart().mark_tick(color="black", thickness=2).encode(x=x, y="threshold:Q")
        return offline(
            alt.layer(bars, ticks, data=data)
            .properties(width=max(120, 28 * len(self.names)), height=160)
            .facet(facet=alt.Facet("item:N", title=None, sort=None), columns=3)
            .properties(title="Aspect scores per item (ticks: pass thresholds)")
        )

    def _call_errors(self) -> list[str | None]:
        return [v.error for v in self.panel.vote_list]

    def __repr__(self) -> str:
        head = f"AspectResult: {len(self.aspects)} aspects on {len(self.items)} items"
        return self._noted_text(f"{head}\n{self.to_df()!r}")

    def _repr_html_(self) -> str:
        return self._noted_html(self.to_df()._repr_html_())
