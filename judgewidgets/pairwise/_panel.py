"""PairwisePanel: several pairwise judges comparing the same pairs, combined by majority or weighted vote."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import pandas as pd
from pydantic import BaseModel, ConfigDict, Field

from .._batching import Batching, BatchRetry, batchable
from .._errors import ConfigurationError
from .._failures import is_not_run
from .._progress import Progress
from .._run import run_scope
from .._runner import run_sync
from .._saved import Dump, Keepable, provenance, record_rows, reported, usage_of
from ..engine import CallSession, Usage
from ..engine._usage import cost_summary
from ..scoring import CostEstimate, JudgeCostEstimate
from ..scoring._aggregate import check_weights
from ._batch import PairwiseTable, one_pair, pairs_from, stamped
from ._judge import PairwiseJudge
from ._records import (
    OrderVerdict,
    PairItem,
    PairwiseResult,
    Winner,
    comparison_rows,
    pair_metrics,
    pair_texts,
    verdict_rows,
)

if TYPE_CHECKING:
    from ..alignment import AlignmentReport

VOTES = ("majority", "weighted")


class PanelComparison(BaseModel, Keepable):
    """A panel's verdict on one pair: each judge's debiased result and the vote over them.

    `confidence` is the (weighted) share of answering judges that voted for `winner`; a vote tied between
    labels gives 'tie'. `consistent` is True when every answering judge's two orders agreed.
    """

    model_config = ConfigDict(frozen=True)

    question: str
    response_a: str
    response_b: str
    reference: str | None = None
    winner: Winner | None
    confidence: float | None
    consistent: bool | None
    vote_list: list[PairwiseResult]
    error: str | None = None
    provenance: dict[str, Any] = Field(
        default_factory=dict, exclude=True, repr=False, description="The panel's settings (no secrets)."
    )

    def _dump(self) -> Dump:
        """The panel's verdict, each judge's debiased result and every order's verdict, as records."""
        verdicts = [(i, v) for i, result in enumerate(self.vote_list) for v in result.verdicts]
        return Dump(
            kind="pairwise_panel",
            records={
                "comparisons": comparison_rows([self], "vote_list"),
                "results": [
                    {"position": i, **row} for i, row in enumerate(comparison_rows(self.vote_list, "verdicts"))
                ],
                "verdicts": record_rows([v for _, v in verdicts], result=[i for i, _ in verdicts]),
            },
            metrics=pair_metrics([self.winner], [self.consistent], [self.error]),
            usage=usage_of(self.verdicts),
            judges=[r.judge for r in self.vote_list],
            inputs=[pair_texts(self)],
            provenance=self.provenance,
        )

    @classmethod
    def _restore(cls, dump: Dump) -> PanelComparison:
        verdicts: dict[int, list[OrderVerdict]] = {}
        for row in dump.rows("verdicts"):  # each row names its judge's result; extra keys are ignored
            verdicts.setdefault(row["result"], []).append(OrderVerdict.model_validate(row))
        results = [
            PairwiseResult.model_validate({**row, "verdicts": verdicts.get(row["position"], [])})
            for row in sorted(dump.rows("results"), key=lambda r: r["position"])
        ]
        return cls.model_validate({**dump.rows("comparisons")[0], "vote_list": results, "provenance": dump.provenance})

    @property
    def votes(self) -> pd.DataFrame:
        """Tidy table: one row per judge, its debiased result (winner, consistent, confidence, ..., cost)."""
        return pd.DataFrame([r.row() for r in self.vote_list])

    @property
    def verdicts(self) -> list[OrderVerdict]:
        """Every judge's verdict on every order."""
        return [v for result in self.vote_list for v in result.verdicts]

    @property
    def usage(self) -> Usage:
        """What every judge's calls on both orders cost together."""
        return Usage.total(self.verdicts)

    def summary(self) -> pd.DataFrame:
        """Per judge: calls, failed orders, tokens of each kind, cost as billed and at list price (`cost_summary`)."""
        return cost_summary((v.judge, v, v.error) for v in self.verdicts)


def tally(results: Sequence[PairwiseResult], weights: Sequence[float]) -> tuple[Winner | None, float | None]:
    """(winner, share of weight behind it) over the judges that answered; equal top shares give 'tie'."""
    totals: dict[Winner, float] = {}
    for result, weight in zip(results, weights):
        if result.winner is not None:
            totals[result.winner] = totals.get(result.winner, 0.0) + weight
    if not totals:
        return None, None
    best = max(totals.values())
    leaders = [label for label, total in totals.items() if total == best]
    winner: Winner = leaders[0] if len(leaders) == 1 else "tie"
    return winner, totals.get(winner, 0.0) / sum(totals.values())


class PairwisePanel:
    """A panel of pairwise judges (model strings or PairwiseJudge); names default to judge_1..judge_n.

    `vote="majority"` counts one vote per judge; `"weighted"` weighs each by `weights` (or the judges' own
    `weight`). Keyword arguments go to judges built from model strings.
    """

    def __init__(
        self,
        judges: Sequence[str | PairwiseJudge],
        vote: Literal["majority", "weighted"] = "majority",
        weights: Sequence[float] | None = None,
        **judge_kwargs: Any,
    ) -> None:
        if isinstance(judges, (str, PairwiseJudge)):
            judges = [judges]
        built = []
        for i, judge in enumerate(judges):
            if isinstance(judge, str):
                judge = PairwiseJudge(judge, **judge_kwargs)
            elif not isinstance(judge, PairwiseJudge):
                raise ConfigurationError(f"judge {i} is a {type(judge).__name__}; give a model string or PairwiseJudge")
            built.append(judge)
        if not built:
            raise ConfigurationError("a panel needs at least one judge")
        if vote not in VOTES:
            raise ConfigurationError(f"unknown vote {vote!r}; use 'majority' or 'weighted'")
        self.judges = built
        self.vote = vote
        self.names = [j.name or f"judge_{i + 1}" for i, j in enumerate(built)]
        repeated = sorted({n for n in self.names if self.names.count(n) > 1})
        if repeated:
            raise ConfigurationError(f"judge names must be unique; repeated: {', '.join(repeated)}")
        self.weights = check_weights(weights if weights is not None else [j.weight for j in built], len(built))
        self.alignment_report: AlignmentReport | None = None

    def __repr__(self) -> str:
        inner = ", ".join(f"{n}={j.model!r}" for n, j in zip(self.names, self.judges))
        return f"PairwisePanel({inner}, vote={self.vote!r})"

    @property
    def display_name(self) -> str:
        return f"panel of {len(self.judges)}"

    def check(self) -> None:
        for judge in self.judges:
            judge.check()

    def check_items(self, items: Sequence[PairItem]) -> None:
        """InputError now for a comparison some judge cannot make as configured (see `PairwiseJudge.check_items`)."""
        for judge in self.judges:
            judge.check_items(items)

    def align(self, labelled: pd.DataFrame, label: str = "label", **options: Any) -> PairwisePanel:
        """A panel of aligned members (A / B / tie labels), weighted by held-out agreement when that helps, carrying
        its `alignment_report`. Options as `LLMJudge.align`'s (`templates`: the pointwise templates tried)."""
        return run_sync(self.aalign(labelled, label, **options))

    async def aalign(self, labelled: pd.DataFrame, label: str = "label", **options: Any) -> PairwisePanel:
        """Async twin of `align`."""
        from ._alignment import aalign_pairwise_panel

        return await aalign_pairwise_panel(self, labelled, label, **options)

    def estimate_items(self, items: Sequence[PairItem], name: str | None = None) -> list[JudgeCostEstimate]:
        """Every judge's estimate for comparing `items` (no call is made)."""
        return [j.estimate_items(items, n) for j, n in zip(self.judges, self.names)]

    def estimate_cost(
        self,
        data: pd.DataFrame | Sequence[str] | None = None,
        responses_a: Sequence[Any] | None = None,
        responses_b: Sequence[Any] | None = None,
        references: Sequence[str | None] | None = None,
        *,
        batch: bool = False,
        **conversations: Any,
    ) -> CostEstimate:
        """What `compare_many` on the same arguments would spend, per judge (no call is made); `batch=True`: at
        the batch APIs' price."""
        items, _ = pairs_from(data, responses_a, responses_b, references, **conversations)
        estimate = CostEstimate(judges=self.estimate_items(items))
        return estimate.at_batch_price() if batch else estimate

    def _vote_weights(self) -> list[float]:
        return self.weights if self.vote == "weighted" else [1.0] * len(self.judges)

    async def acompare_items(
        self, items: Sequence[PairItem], session: CallSession, progress: Progress
    ) -> list[PanelComparison]:
        per_judge = await asyncio.gather(
            *(j.acompare_items(items, session, progress, name) for j, name in zip(self.judges, self.names))
        )
        weights = self._vote_weights()
        out = []
        for i, item in enumerate(items):
            results = [judge_results[i] for judge_results in per_judge]
            winner, share = tally(results, weights)
            answered = [r for r in results if r.winner is not None]
            flags = [r.consistent for r in answered if r.consistent is not None]
            failed = [r.error for r in results if r.error]
            errors = [f"{r.judge}: {r.error}" for r in results if r.error]
            if failed and all(is_not_run(e) for e in failed):
                errors = failed[:1]  # not run for the budget: said once, kind first, as every not-run row says it
            out.append(
                PanelComparison(
                    question=item.question,
                    response_a=item.response_a,
                    response_b=item.response_b,
                    reference=item.reference,
                    winner=winner,
                    confidence=share,
                    consistent=all(flags) if flags else None,
                    vote_list=results,
                    error=None if answered else "; ".join(errors) or None,
                )
            )
        return out

    def compare(
        self,
        question: str | None = None,
        response_a: Any = None,
        response_b: Any = None,
        reference: str | None = None,
        *,
        max_cost_usd: float | None = None,
        batch: bool | Batching = False,
        batch_retry: BatchRetry | None = None,
        **conversations: Any,
    ) -> PanelComparison:
        """Every judge compares the pair; the panel votes. Works inside Jupyter. Conversations: `history=` (the
        messages both replies answer, with `response_a` / `response_b` each a reply's text or messages), or
        `conversation_a=` and `conversation_b=` (compared on their last turns, or whole with `target="whole"`).
        `max_cost_usd`: the budget, as `compare_many`'s."""
        return run_sync(
            self.acompare(
                question,
                response_a,
                response_b,
                reference,
                max_cost_usd=max_cost_usd,
                batch=batch,
                batch_retry=batch_retry,
                **conversations,
            )
        )

    @batchable
    async def acompare(
        self,
        question: str | None = None,
        response_a: Any = None,
        response_b: Any = None,
        reference: str | None = None,
        *,
        max_cost_usd: float | None = None,
        batch: bool | Batching = False,
        batch_retry: BatchRetry | None = None,
        **conversations: Any,
    ) -> PanelComparison:
        """Async twin of `compare`."""
        items = one_pair(question, response_a, response_b, reference, **conversations)
        self.check()
        self.check_items(items)
        async with run_scope(max_cost_usd=max_cost_usd, batch=batch, batch_retry=batch_retry, makers=[self]) as run:
            compared = (await self.acompare_items(items, run.session, run.progress))[0]
        return compared.model_copy(update={"provenance": provenance(self)})

    def compare_many(
        self,
        data: pd.DataFrame | Sequence[str] | None = None,
        responses_a: Sequence[Any] | None = None,
        responses_b: Sequence[Any] | None = None,
        references: Sequence[str | None] | None = None,
        *,
        progress: bool | Progress = True,
        max_cost_usd: float | None = None,
        batch: bool | Batching = False,
        batch_retry: BatchRetry | None = None,
        **conversations: Any,
    ) -> PairwiseTable:
        """One row per comparison: pair_id, the panel's winner, confidence, error, one column per judge's winner.

        `attrs["verdicts"]` holds every judge's verdict on every order (what `jw.position_bias` reads).
        `max_cost_usd` is the run's budget: no call starts that could take the spend past it; the verdicts left
        are recorded as not run (error `budget: ...`), never raised.
        """
        return run_sync(
            self.acompare_many(
                data,
                responses_a,
                responses_b,
                references,
                progress=progress,
                max_cost_usd=max_cost_usd,
                batch=batch,
                batch_retry=batch_retry,
                **conversations,
            )
        )

    @batchable
    async def acompare_many(
        self,
        data: pd.DataFrame | Sequence[str] | None = None,
        responses_a: Sequence[Any] | None = None,
        responses_b: Sequence[Any] | None = None,
        references: Sequence[str | None] | None = None,
        *,
        progress: bool | Progress = True,
        max_cost_usd: float | None = None,
        batch: bool | Batching = False,
        batch_retry: BatchRetry | None = None,
        **conversations: Any,
    ) -> PairwiseTable:
        """Async twin of `compare_many`."""
        items, frame = pairs_from(data, responses_a, responses_b, references, **conversations)
        self.check()
        self.check_items(items)
        async with run_scope(
            progress,
            len(items) * len(self.judges),
            self.display_name,
            max_cost_usd=max_cost_usd,
            batch=batch,
            batch_retry=batch_retry,
            makers=[self],
        ) as run:
            results = await self.acompare_items(items, run.session, run.progress)
        rows = []
        for result in results:
            row: dict[str, Any] = {
                "winner": result.winner,
                "confidence": result.confidence,
                "consistent": result.consistent,
                "error": result.error,
            }
            for name, vote in zip(self.names, result.vote_list):
                row[name] = vote.winner
                row[f"{name}_consistent"] = vote.consistent
            rows.append(row)
        table = pd.DataFrame(rows)
        kept = frame.drop(columns=[c for c in table.columns if c in frame.columns])
        if "pair_id" not in kept.columns:
            kept = kept.assign(pair_id=np.arange(len(kept)))
        out = pd.concat([kept, table], axis=1)
        out.attrs["verdicts"] = verdict_rows(frame, results).to_dict("records")  # plain records: concat-safe
        return reported(stamped(out, provenance(self)))
