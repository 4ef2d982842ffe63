"""Results of a judging run: the tidy table of votes and the wide table of scores per item."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from .._records import Item, Vote, item_from_row, item_row
from .._review import ReviewPolicy, failure_kind, review_table
from .._saved import Dump, Keepable, mean_or_nan, not_run_count, noted_html, record_columns, usage_of
from ..engine import Usage
from ._aggregate import aggregate
from ._conversations import conversation_columns, conversation_table

if TYPE_CHECKING:
    import altair as alt

VOTE_COLUMNS = [
    "item",
    "judge",
    "score",
    "raw",
    "explanation",
    "error",
    "latency_s",
    "prompt_tokens",
    "completion_tokens",
    "cost_usd",
    "cached",
    "waited_s",
    "score_source",
    "confidence",
    "prompt_cache_read_tokens",
    "prompt_cache_write_tokens",
    "reasoning_tokens",
    "list_cost_usd",
    "batch_id",
]
# The token counts a provider may not report (None there): nullable integer columns.
_SAID_COUNTS = ("prompt_cache_read_tokens", "prompt_cache_write_tokens", "reasoning_tokens")


COMMIT_COLUMNS = ["reference_source", "made_reference"]


def votes_frame(votes: Sequence[Vote]) -> pd.DataFrame:
    """The tidy long table: one row per (item, judge); `shortened` when a conversation was shortened, and
    `reference_source` and `made_reference` when a judge committed first."""
    columns = [*VOTE_COLUMNS, *(["shortened"] if any(v.shortened for v in votes) else [])]
    columns += COMMIT_COLUMNS if committed(votes) else []
    rows = [vote.model_dump(include=set(columns)) for vote in votes]
    frame = pd.DataFrame(rows, columns=columns)
    floats = dict.fromkeys(("score", "confidence", "latency_s", "cost_usd", "waited_s", "list_cost_usd"), float)
    return frame.astype({**floats, **dict.fromkeys(_SAID_COUNTS, "Int64")})


def usage_summary(votes: pd.DataFrame, judges: Sequence[str]) -> pd.DataFrame:
    """Per judge: calls (attempts: retries and re-asks included; `votes` needs an `attempts` column), mean score,
    failures (of which `not_run`: left by the run's budget), tokens of each kind (cache
    reads and writes and reasoning: None where the provider did not say), cost as billed (`cost_usd`) beside the
    same tokens at list price, live, without a prompt cache (`list_cost_usd`), median latency and cache hits."""
    grouped = votes.groupby("judge", sort=False)
    return pd.DataFrame(
        {
            "calls": grouped["attempts"].sum(),
            "mean_score": grouped["score"].mean(),
            "failed": grouped["error"].apply(lambda s: int(s.notna().sum())),
            "not_run": grouped["error"].apply(not_run_count),
            "prompt_tokens": grouped["prompt_tokens"].sum(),
            "completion_tokens": grouped["completion_tokens"].sum(),
            **{name: grouped[name].sum(min_count=1) for name in _SAID_COUNTS},
            "cost_usd": grouped["cost_usd"].sum(min_count=1),
            "list_cost_usd": grouped["list_cost_usd"].sum(min_count=1),
            "median_latency_s": grouped["latency_s"].median(),
            "cached": grouped["cached"].sum(),
        }
    ).reindex(list(judges))


def committed(votes: Sequence[Vote]) -> bool:
    """Whether any vote came from a judge that commits first."""
    return any(v.reference_source is not None for v in votes)


def _item_columns(items: Sequence[Item]) -> dict[str, list[Any]]:
    columns: dict[str, list[Any]] = {
        **conversation_columns(items),
        "prompt": [i.prompt for i in items],
        "response": [i.response for i in items],
    }
    if any(i.reference is not None for i in items):
        columns["reference"] = [i.reference for i in items]
    return columns


def item_rows(items: Sequence[Item]) -> list[dict[str, Any]]:
    """The items as rows (prompt, response, reference, context; a conversation's too): what a saved run keeps."""
    return [item_row(i) for i in items]


def items_from(rows: Sequence[dict[str, Any]]) -> list[Item]:
    return [item_from_row(r) for r in rows]


@dataclass
class JudgeResult(Keepable):
    """One judge's votes on a batch. The names mean what they mean on a PanelResult: `votes` is the tidy
    DataFrame, `vote_list` the Vote records, `scores()` the items × judge table. `provenance` is the judge's
    settings (no secrets), kept by `save()`."""

    items: list[Item]
    vote_list: list[Vote]
    judge: str
    provenance: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    def _dump(self) -> Dump:
        """Items and votes as records; the headline is the mean score and the failed votes."""
        return Dump(
            kind="judge",
            state={"judge": self.judge},
            records={"items": item_rows(self.items), "votes": record_columns(self.vote_list)},
            metrics={
                "mean_score": mean_or_nan(v.score for v in self.vote_list),
                "failed": _failed(self.vote_list),
                "not_run": not_run_count(v.error for v in self.vote_list),
            },
            usage=usage_of(self.vote_list),
            judges=[self.judge],
            inputs=item_rows(self.items),
            provenance=self.provenance,
        )

    @classmethod
    def _restore(cls, dump: Dump) -> JudgeResult:
        return cls(
            items=items_from(dump.rows("items")),
            vote_list=[Vote.model_validate(row) for row in dump.rows("votes")],
            judge=dump.state["judge"],
            provenance=dump.provenance,
        )

    def to_df(self) -> pd.DataFrame:
        """Columns prompt, response, score, raw, explanation, error — one row per item (and `shortened` when a
        conversation was too long for the judge's context: which turns it did not read; `reference_source` and
        `made_reference` when the judge committed first: which reference it graded against)."""
        frame = pd.DataFrame(_item_columns(self.items))
        by_item = sorted(self.vote_list, key=lambda v: v.item)
        frame["score"] = [v.score for v in by_item]
        frame["raw"] = [v.raw for v in by_item]
        frame["explanation"] = [v.explanation for v in by_item]
        frame["error"] = [v.error for v in by_item]
        if any(v.shortened for v in by_item):
            frame["shortened"] = [v.shortened for v in by_item]
        if committed(by_item):
            frame["reference_source"] = [v.reference_source for v in by_item]
            frame["made_reference"] = [v.made_reference for v in by_item]
        return frame

    @property
    def votes(self) -> pd.DataFrame:
        """Tidy long table: item, judge, score, raw, explanation, error, latency_s, tokens, cost_usd, cached,
        waited_s."""
        return votes_frame(self.vote_list)

    @property
    def votes_df(self) -> pd.DataFrame:
        """The same table as `votes` (its earlier name)."""
        return self.votes

    @property
    def usage(self) -> Usage:
        """What every call behind the votes cost together."""
        return Usage.total(self.vote_list)

    def scores(self) -> pd.DataFrame:
        """Items × judge table of normalised scores (one column, named by the judge; NaN where it failed)."""
        return pd.DataFrame({self.judge: self.score_list})

    def by_conversation(self) -> pd.DataFrame:
        """One row per judged conversation (turns, failed, mean, min, last, lowest_turn): the aggregate of a
        per-turn judgment (`to_df()` has a row per turn)."""
        return conversation_table(self.items, self.score_list)

    def turn_chart(self) -> alt.LayerChart:
        """Heatmap of a per-turn judgment (`target="each_turn"`): conversations as rows, the assistant's turns as
        columns, coloured by score, the turn's text in the tooltip. InputError for a result that has no judgment
        per turn."""
        from ._turn_chart import turn_chart

        return turn_chart(self.items, self.votes)

    @property
    def score_list(self) -> list[float]:
        """The scores in item order."""
        return [v.score for v in sorted(self.vote_list, key=lambda v: v.item)]

    @property
    def not_run(self) -> int:
        """How many items the run's budget (`max_cost_usd`) left unjudged (their error says `budget: ...`)."""
        return not_run_count(v.error for v in self.vote_list)

    def _call_errors(self) -> list[str | None]:
        return [v.error for v in self.vote_list]

    def summary(self) -> pd.DataFrame:
        """This judge's row of a panel's summary: calls, mean score, failures, tokens of each kind, cost as billed
        and at list price, median latency and cache hits (`usage_summary`)."""
        return usage_summary(self.votes.assign(attempts=[v.attempts for v in self.vote_list]), [self.judge])

    def __repr__(self) -> str:
        return self._noted_text(f"JudgeResult: {self.judge} on {len(self.items)} items\n{self.to_df()!r}")

    def _repr_html_(self) -> str:
        return noted_html(self.to_df(), (v.error for v in self.vote_list), "items")


def _failed(votes: Sequence[Vote]) -> int:
    return sum(1 for v in votes if v.error)


@dataclass
class PanelResult(Keepable):
    """A panel's votes on a batch, per judge and aggregated. `provenance` is the panel's settings (no secrets)."""

    items: list[Item]
    vote_list: list[Vote]
    judges: list[str]
    weights: list[float] | None = None
    explaining: list[str] = field(default_factory=list)  # judges that were asked to explain
    _scores: pd.DataFrame | None = field(default=None, repr=False)
    provenance: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    def _dump(self, kind: str = "panel") -> Dump:
        """Items and votes as records; the headline is each judge's mean score and the panel's."""
        metrics: dict[str, float] = {}
        if self.items:
            consensus = self.consensus()["consensus"]
            metrics["mean_score"] = mean_or_nan(consensus.tolist())
        for judge in self.judges:
            metrics[f"mean_score/{judge}"] = mean_or_nan(v.score for v in self.vote_list if v.judge == judge)
        metrics["failed"] = _failed(self.vote_list)
        metrics["not_run"] = not_run_count(v.error for v in self.vote_list)
        return Dump(
            kind=kind,
            state={"judges": list(self.judges), "weights": self.weights, "explaining": list(self.explaining)},
            records={"items": item_rows(self.items), "votes": record_columns(self.vote_list)},
            metrics=metrics,
            usage=usage_of(self.vote_list),
            judges=list(self.judges),
            inputs=item_rows(self.items),
            provenance=self.provenance,
        )

    @classmethod
    def _restore(cls, dump: Dump) -> PanelResult:
        return cls(
            items=items_from(dump.rows("items")),
            vote_list=[Vote.model_validate(row) for row in dump.rows("votes")],
            judges=list(dump.state["judges"]),
            weights=dump.state.get("weights"),
            explaining=list(dump.state.get("explaining") or []),
            provenance=dump.provenance,
        )

    @property
    def votes(self) -> pd.DataFrame:
        """Tidy long table: item, judge, score, raw, explanation, error, latency_s, tokens, cost_usd, cached,
        waited_s."""
        return votes_frame(self.vote_list)

    @property
    def usage(self) -> Usage:
        """What every judge's calls cost together."""
        return Usage.total(self.vote_list)

    def scores(self) -> pd.DataFrame:
        """Items × judges table of normalised scores (NaN where a judge failed)."""
        if self._scores is None:
            column = {judge: i for i, judge in enumerate(self.judges)}
            values = np.full((len(self.items), len(self.judges)), np.nan)
            for vote in self.vote_list:
                values[vote.item, column[vote.judge]] = vote.score
            self._scores = pd.DataFrame(values, columns=list(self.judges))
        return self._scores.copy()

    def to_df(self) -> pd.DataFrame:
        """prompt, response, one column per judge, avg, median, min, max (+weighted_avg), disagreement
        (+ <judge>_explanation for each judge that was asked to explain; + reference_source, the sources of the
        references the judges graded against, and <judge>_made_reference for each judge that answered first)."""
        scores = self.scores()
        frame = pd.DataFrame(_item_columns(self.items))
        frame = pd.concat([frame, scores, aggregate(scores, self.weights)], axis=1)
        for judge in self.explaining:
            frame[f"{judge}_explanation"] = self._per_item(judge, "explanation")
        if committed(self.vote_list):
            sources: list[dict[str, None]] = [{} for _ in self.items]
            for vote in sorted(self.vote_list, key=lambda v: self.judges.index(v.judge)):
                if vote.reference_source is not None:
                    sources[vote.item][vote.reference_source] = None
            frame["reference_source"] = [", ".join(s) or None for s in sources]
            for judge in self.judges:
                made = self._per_item(judge, "made_reference")
                if any(m is not None for m in made):
                    frame[f"{judge}_made_reference"] = made
        return frame

    def _per_item(self, judge: str, field: str) -> list[Any]:
        """One judge's `field` of its vote on each item (None where it has no vote)."""
        values: list[Any] = [None] * len(self.items)
        for vote in self.vote_list:
            if vote.judge == judge:
                values[vote.item] = getattr(vote, field)
        return values

    @property
    def errors(self) -> pd.DataFrame:
        """The votes that failed, with their errors and each error's `kind` (infrastructure, input, parse)."""
        votes = self.votes
        failed = votes[votes["error"].notna()].reset_index(drop=True)
        failed.insert(failed.columns.get_loc("error"), "kind", [failure_kind(e) for e in failed["error"]])
        return failed

    @property
    def not_run(self) -> int:
        """How many votes the run's budget (`max_cost_usd`) left unjudged (their error says `budget: ...`)."""
        return not_run_count(v.error for v in self.vote_list)

    def summary(self) -> pd.DataFrame:
        """Per judge: calls, mean score, failures, tokens of each kind, cost as billed and at list price, median
        latency and cache hits (`usage_summary`)."""
        return usage_summary(self.votes.assign(attempts=[v.attempts for v in self.vote_list]), self.judges)

    def by_conversation(self) -> pd.DataFrame:
        """One row per judged conversation, over the panel's consensus per turn (see `JudgeResult.by_conversation`)."""
        return conversation_table(self.items, self.consensus()["consensus"].tolist())

    def turn_chart(self, judge: str | None = None) -> alt.LayerChart:
        """Heatmap of a per-turn judgment (`target="each_turn"`): conversations as rows, the assistant's turns as
        columns, coloured by the consensus, or by one judge's score picked from the list under the chart (`judge`:
        the one shown first), the turn's text in the tooltip. InputError for a result that has no judgment per
        turn."""
        import warnings

        from ._turn_chart import turn_chart

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # a turn no judge scored is a grey cell of the chart
            consensus = self.consensus()["consensus"].tolist()
        return turn_chart(self.items, self.votes, consensus, shown=judge)

    def consensus(self) -> pd.DataFrame:
        """Per item: the consensus score (weighted mean when weighted), a confidence from the judges' spread
        (1 − 2·std, so unanimous judges give 1 and a 0/1 split gives 0) and how many judges answered."""
        table = self.to_df()
        scores = self.scores()
        score = table["weighted_avg"] if "weighted_avg" in table else table["avg"]
        answered = scores.notna().sum(axis=1)
        confidence = (1 - 2 * table["disagreement"]).clip(lower=0.0).where(answered > 0)
        return pd.DataFrame({"consensus": score, "confidence": confidence, "judges_answered": answered})

    def review(self, policy: ReviewPolicy | None = None) -> pd.DataFrame:
        """Items that need a human, with reasons: judges disagree (std of scores), a judge failed, low score."""
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            consensus = self.consensus()
            disagreement = self.to_df()["disagreement"].fillna(0.0).tolist()
        failed = [0] * len(self.items)
        kinds: list[set[str]] = [set() for _ in self.items]
        for vote in self.vote_list:
            if vote.error:
                failed[vote.item] += 1
                kinds[vote.item].add(failure_kind(vote.error))
        table = review_table(
            consensus["consensus"].tolist(),
            disagreement,
            failed,
            policy or ReviewPolicy(),
            failure_kinds=[sorted(k) for k in kinds],
        )
        table.insert(0, "prompt", [i.prompt for i in self.items])
        table.insert(1, "response", [i.response for i in self.items])
        return table

    def chart(self) -> alt.HConcatChart:
        """Judge × item heatmap of scores beside each judge's score distribution."""
        from ._chart import panel_chart

        return panel_chart(self.votes, pd.DataFrame(_item_columns(self.items)), self.judges)

    def _call_errors(self) -> list[str | None]:
        return [v.error for v in self.vote_list]

    def __repr__(self) -> str:
        import warnings

        head = f"PanelResult: {len(self.judges)} judges on {len(self.items)} items"
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # items no judge scored: the line above says why
            return self._noted_text(f"{head}\n{self.to_df()!r}")

    def _repr_html_(self) -> str:
        return noted_html(self.to_df(), (v.error for v in self.vote_list))
