"""What a pipeline run returns: its table of final scores, a DataFrame that can be saved and logged."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .._saved import Dump, KeptFrame, column_errors, mean_or_nan

if TYPE_CHECKING:
    from ..engine import Usage

TEXT_COLUMNS = ("prompt", "response", "reference", "baseline")


class PipelineTable(KeptFrame):
    """`EvaluationPipeline.run`'s answer: one row per item (see `run`), a DataFrame whose `attrs["usage"]` holds
    what each stage's calls cost; `save` keeps it, `log_to_mlflow` logs it."""

    @property
    def stages(self) -> list[str]:
        """The stages' names (each has a score column, `<stage>_error` and `<stage>_detail`)."""
        return [str(c)[: -len("_error")] for c in self.columns if str(c).endswith("_error")]

    def _call_errors(self) -> list[str | None]:
        return column_errors(self, *(f"{stage}_error" for stage in self.stages))

    @property
    def usage(self) -> Usage:
        """What every stage's calls cost together (each stage's own in `attrs["usage"]`)."""
        from ..engine import Usage

        return Usage(**_total((self.attrs.get("usage") or {}).values()))

    def _dump(self) -> Dump:
        """The table (review reasons as JSON lists) and each stage's usage; the headline is the mean final score,
        the share flagged for review and each stage's mean score."""
        usage: dict[str, Any] = dict(self.attrs.get("usage") or {})
        metrics: dict[str, float] = {
            "mean_score": mean_or_nan(self["final_score"].tolist()) if "final_score" in self else float("nan"),
            "needs_review": float(self["needs_human_review"].mean()) if len(self) else float("nan"),
        }
        for stage in self.stages:
            metrics[f"mean_score/{stage}"] = mean_or_nan(self[stage].tolist())
        texts = [c for c in TEXT_COLUMNS if c in self.columns]
        return Dump(
            kind="pipeline",
            state={"stage_usage": usage},
            tables={"table": self.plain_frame("usage")},
            metrics=metrics,
            usage=_total(usage.values()),
            judges=self.stages,
            inputs=self[texts].to_dict("records") if texts else None,
            provenance=self.provenance,
        )

    @classmethod
    def _restore(cls, dump: Dump) -> PipelineTable:
        table = cls(dump.table("table"))
        table.attrs["usage"] = dump.state.get("stage_usage") or {}
        table.attrs["provenance"] = dump.provenance
        return table


def _total(stages: Any) -> dict[str, Any]:
    """The stages' usages added up (a token count or cost is None when any stage's is)."""
    from ..engine import Usage

    return Usage.total(Usage(**u) for u in stages).model_dump()
