"""What a sequential rating produces: the estimate, its interval, and the trace of every judgment."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar, Literal

import pandas as pd
from pydantic import BaseModel, ConfigDict, Field

from .._saved import Dump, Keepable, KeptFrame, column_errors, mean_or_nan, plain, usage_of_table
from ..engine import Usage
from ..engine._usage import rows_cost_summary

if TYPE_CHECKING:
    import altair as alt

TRACE_COLUMNS = [
    "draw",
    "judge",
    "variant",
    "value",
    "counted",
    "n",
    "mean",
    "low",
    "high",
    "half_width",
    "error",
    *Usage.model_fields,  # what each draw cost: tokens of each kind, billed and at list price
]

Status = Literal["running", "converged", "max_samples", "failed", "budget"]


def empty_trace() -> pd.DataFrame:
    return pd.DataFrame(
        {c: pd.Series(dtype=object if c in ("judge", "error", "batch_id") else float) for c in TRACE_COLUMNS}
    )


class SequentialResult(BaseModel, Keepable):
    """One item's sequential rating. `status`: converged (precise enough), max_samples, failed, budget (stopped
    where the run's `max_cost_usd` allowed no further judgment: the interval is what it had reached), or running.

    `trace` has one row per judgment drawn, in arrival order: the judge and prompt variant that gave it, its
    `value` on the rating scale (NaN for a failed call, then `counted` is False and `error` says why), and the
    running `n`, `mean`, interval `low`/`high` and `half_width` after it, and what the judgment cost (the
    columns of `jw.engine.Usage`: latency, tokens of each kind, cost as billed and at list price, cached,
    attempts, waited_s, batch_id).
    """

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    item: int = Field(0, description="position of the item in a rate_many batch")
    prompt: str
    response: str
    mean: float = Field(description="mean rating on the scale; NaN before any judgment")
    low: float
    high: float
    half_width: float = Field(description="half the interval's width")
    n: int = Field(description="judgments counted (failed calls excluded)")
    sd: float = Field(description="sample sd of the counted ratings (ddof 1)")
    status: Status
    method: str
    scale: tuple[float, float]
    K: float
    alpha: float
    target_half_width: float = Field(description="the precision target d = R/(3K)")
    failures: int = Field(0, description="calls that failed and were not counted")
    error: str | None = Field(None, description="the last failed call's error, when the rating failed")
    trace: pd.DataFrame = Field(default_factory=empty_trace, repr=False)
    provenance: dict[str, Any] = Field(
        default_factory=dict, exclude=True, repr=False, description="The rater's settings (no secrets)."
    )

    def _dump(self) -> Dump:
        """The rating as one record and its trace as a table; the headline is the mean and its half-width."""
        return Dump(
            kind="sequential",
            tables={"trace": self.trace},
            records={"results": [plain(self.summary())]},
            metrics={"mean": self.mean, "half_width": self.half_width, "n": self.n, "converged": float(self.converged)},
            usage=usage_of_table(self.trace),
            judges=_judges([self]),
            inputs=[{"prompt": self.prompt, "response": self.response}],
            provenance=self.provenance,
        )

    @classmethod
    def _restore(cls, dump: Dump) -> SequentialResult:
        row = dump.rows("results")[0]
        return cls.model_validate({**row, "trace": dump.table("trace"), "provenance": dump.provenance})

    @property
    def converged(self) -> bool:
        return self.status == "converged"

    @property
    def interval(self) -> tuple[float, float]:
        return (self.low, self.high)

    @property
    def usage(self) -> Usage:
        """What every judgment drawn cost together (summed over the trace)."""
        return Usage.total(Usage.of_row(row) for row in self.trace.to_dict("records"))

    def summary(self) -> dict[str, Any]:
        """The scalar fields, e.g. for one row of a table."""
        return self.model_dump(exclude={"trace"})

    def chart(self, *, width: int = 520) -> alt.VConcatChart:
        """Running mean with its interval band narrowing to ±d, one point per judgment coloured by judge."""
        from ._charts import sequential_chart

        return sequential_chart(self, width=width)

    def __str__(self) -> str:
        if self.status == "failed":
            return f"rating failed after {self.failures} failed calls ({self.n} counted): {self.error}"
        if self.status == "budget":
            return (
                f"{self.mean:.3f} ± {self.half_width:.3f} after {self.n} judgments, stopped short of the target "
                f"± {self.target_half_width:.3f}: {self.error}"
            )
        return (
            f"{self.mean:.3f} ± {self.half_width:.3f} after {self.n} judgments ({self.status}; "
            f"target ± {self.target_half_width:.3f} at {1 - self.alpha:.0%})"
        )

    def _repr_html_(self) -> str:
        rows = "".join(
            f"<tr><th style='text-align:left'>{k}</th><td>{v}</td></tr>"
            for k, v in (
                ("rating", f"{self.mean:.3f} ± {self.half_width:.3f}"),
                ("interval", f"[{self.low:.3f}, {self.high:.3f}]"),
                ("judgments", f"{self.n} (+{self.failures} failed)" if self.failures else str(self.n)),
                ("status", self.status if self.error is None else f"{self.status}: {self.error}"),
                ("method", self.method),
                ("target", f"± {self.target_half_width:.3f} at {1 - self.alpha:.0%}"),
            )
        )
        return self._noted_html(f"<table>{rows}</table>")

    def _call_errors(self) -> list[str | None]:
        """Every judgment's error, from the trace."""
        return column_errors(self.trace, "error")


def _judges(results: list[SequentialResult]) -> list[str]:
    return list(dict.fromkeys(str(j) for r in results for j in r.trace["judge"].dropna()))


class SequentialFrame(KeptFrame):
    """`rate_many`'s answer: one row per item (a DataFrame), with each item's full result in `.results`.

    `.traces` stacks the per-item traces (with an `item` column); `.trace(i)` is one item's; `.chart()` draws
    every item's convergence.
    """

    _metadata: ClassVar[list[str]] = ["results"]

    @property
    def _constructor(self) -> type[SequentialFrame]:
        return SequentialFrame

    def _call_errors(self) -> list[str | None]:
        """Every judgment's error (the traces), or per item when the table has lost its results."""
        traces = self.traces
        return column_errors(traces, "error") if len(traces) else column_errors(self, "error")

    def _dump(self) -> Dump:
        """The table, every item's rating as a record and their traces stacked (with `item`); the headline is the
        mean rating, the mean judgments per item and the share that converged."""
        results: list[SequentialResult] = getattr(self, "results", None) or []
        summaries = [plain(r.summary()) for r in results]
        return Dump(
            kind="sequential_batch",
            tables={"table": self.plain_frame(), "traces": self.traces},
            records={"results": summaries},
            metrics={
                "mean": mean_or_nan(r.mean for r in results),
                "n": mean_or_nan(r.n for r in results),
                "converged": mean_or_nan(float(r.converged) for r in results),
            },
            usage=usage_of_table(self.traces),
            judges=_judges(results),
            inputs=[{"prompt": r.prompt, "response": r.response} for r in results],
            provenance=self.provenance,
        )

    @classmethod
    def _restore(cls, dump: Dump) -> SequentialFrame:
        traces = dump.table("traces")
        columns = [c for c in traces.columns if c != "item"]
        results = []
        for row in dump.rows("results"):
            mine = traces[traces["item"] == row["item"]][columns].reset_index(drop=True)
            results.append(SequentialResult.model_validate({**row, "trace": mine if len(mine) else empty_trace()}))
        frame = cls(dump.table("table"))
        frame.results = results
        frame.attrs["provenance"] = dump.provenance
        return frame

    @property
    def usage(self) -> Usage:
        """What every item's judgments cost together."""
        return Usage.total(r.usage for r in getattr(self, "results", None) or [])

    @property
    def traces(self) -> pd.DataFrame:
        results: list[SequentialResult] = getattr(self, "results", None) or []
        parts = [r.trace.assign(item=r.item) for r in results if len(r.trace)]
        if not parts:
            return empty_trace().assign(item=pd.Series(dtype=int))
        frame = pd.concat(parts, ignore_index=True)
        return frame.reindex(columns=["item", *TRACE_COLUMNS])  # a run saved before a column was added lacks it

    def trace(self, item: int) -> pd.DataFrame:
        results: list[SequentialResult] = getattr(self, "results", None) or []
        return results[item].trace

    def summary(self) -> pd.DataFrame:
        """Per judge: calls, failed judgments, tokens of each kind, cost as billed and at list price, over every
        item's draws (`cost_summary`)."""
        return rows_cost_summary(self.traces.to_dict("records"))

    def chart(self, *, width: int = 260, columns: int = 3) -> alt.FacetChart:
        """Each item's running mean and interval band (one small panel per item)."""
        from ._charts import batch_chart

        return batch_chart(getattr(self, "results", None) or [], width=width, columns=columns)
