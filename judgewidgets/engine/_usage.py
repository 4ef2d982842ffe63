"""Usage: what the calls behind one result cost. Every vote kind carries it, so estimates and spending add up."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field


def known_sum(values: Iterable[Any]) -> Any:
    """The sum of token counts or costs, or None when any of them is unknown (no answer, no price)."""
    values = list(values)
    return None if any(v is None for v in values) else sum(values)


def said_sum(values: Iterable[Any]) -> Any:
    """The sum of the counts a provider reported, or None when none did (a count it does not report at all)."""
    said = [v for v in values if v is not None]
    return sum(said) if said else None


class Usage(BaseModel):
    """Latency, tokens, dollars, cache hits, attempts and rate-limit waits of the calls behind a result.

    Every vote kind extends it (`jw.Vote`, a pairwise `OrderVerdict`, a rubric `CriterionVote`, a pipeline
    `StageScore`) and the sequential trace has its columns, so the accounting of every call is kept the same
    way everywhere: filled from an answer by `Answer.usage()`, added up by `Usage.total`.
    """

    model_config = ConfigDict(frozen=True)

    latency_s: float = Field(0.0, description="Seconds the calls took (0 for cache hits).")
    prompt_tokens: int | None = Field(
        None,
        description="Prompt tokens the model read, prompt-cache reads and writes included; None when no call answered.",
    )
    completion_tokens: int | None = Field(
        None, description="Completion tokens billed, reasoning included; None when no call answered."
    )
    cost_usd: float | None = Field(
        None,
        description="Dollars as billed: each kind of token at its own price (cache reads and writes, batch); None "
        "when unknown (no price, or no answer).",
    )
    cached: bool = Field(False, description="Whether every call was answered from the cache (paid nothing).")
    attempts: int = Field(1, description="Attempts made, retries and re-asks included.")
    waited_s: float = Field(
        0.0,
        description="Seconds the calls waited for their endpoint's rate limits before being sent (like latency_s, "
        "added up over calls that waited side by side).",
    )
    prompt_cache_read_tokens: int | None = Field(
        None, description="Prompt tokens read from the provider's prompt cache; None when the provider does not say."
    )
    prompt_cache_write_tokens: int | None = Field(
        None, description="Prompt tokens written to the provider's prompt cache (Anthropic); None when not said."
    )
    reasoning_tokens: int | None = Field(
        None, description="Completion tokens spent reasoning (billed as output); None when the provider does not say."
    )
    list_cost_usd: float | None = Field(
        None, description="What the same tokens cost at list price, live, with no prompt cache (None: no price)."
    )
    batch_id: str | None = Field(
        None, description="The provider's batch the call was answered in (batch=True); None for a live call."
    )

    @property
    def usage(self) -> Usage:
        """The accounting alone (of a vote that extends Usage)."""
        return Usage(**self.usage_fields())

    def usage_fields(self) -> dict[str, Any]:
        """The accounting fields, to build another record that carries the same usage."""
        return {name: getattr(self, name) for name in Usage.model_fields}

    @classmethod
    def of_call(cls, completion: Any) -> Usage:
        """The accounting of one call's answer (an engine `Completion`), its wait for the rate limits included."""
        return cls(**{name: getattr(completion, name) for name in cls.model_fields})

    @classmethod
    def of_row(cls, row: Mapping[str, Any]) -> Usage:
        """The accounting a table row records (its columns named as Usage's fields; NaN, a missing value, read as
        not said): a saved or tabled vote's."""
        import pandas as pd

        return cls(**{k: None if pd.isna(row[k]) else row[k] for k in cls.model_fields if k in row})

    @classmethod
    def total(cls, records: Iterable[Usage]) -> Usage:
        """The usage of several calls together: latencies, tokens, costs, attempts and waits add up (a token count
        or cost is None when any part's is), cached only when every part was."""
        parts = list(records)  # read as Usage: a record extending it carries the same fields
        if not parts:
            return Usage(attempts=0, cached=True, prompt_tokens=0, completion_tokens=0, cost_usd=0.0, list_cost_usd=0.0)

        return Usage(
            latency_s=sum(p.latency_s for p in parts),
            prompt_tokens=known_sum(p.prompt_tokens for p in parts),
            completion_tokens=known_sum(p.completion_tokens for p in parts),
            cost_usd=known_sum(p.cost_usd for p in parts),
            cached=all(p.cached for p in parts),
            attempts=sum(p.attempts for p in parts),
            waited_s=sum(p.waited_s for p in parts),
            prompt_cache_read_tokens=said_sum(p.prompt_cache_read_tokens for p in parts),
            prompt_cache_write_tokens=said_sum(p.prompt_cache_write_tokens for p in parts),
            reasoning_tokens=said_sum(p.reasoning_tokens for p in parts),
            list_cost_usd=known_sum(p.list_cost_usd for p in parts),
            batch_id=next((p.batch_id for p in reversed(parts) if p.batch_id), None),
        )


COST_COLUMNS = (
    "calls",
    "failed",
    "prompt_tokens",
    "completion_tokens",
    "prompt_cache_read_tokens",
    "prompt_cache_write_tokens",
    "reasoning_tokens",
    "cost_usd",
    "list_cost_usd",
)


def cost_summary(records: Iterable[tuple[str, Usage, str | None]]) -> Any:
    """Per judge (a DataFrame indexed by judge, in order of appearance): calls (attempts, retries and re-asks
    included), failed votes, tokens of each kind (None where the provider said nothing), `cost_usd` as billed and
    `list_cost_usd` (the same tokens at list price, live, without a prompt cache), each the sum of what is known,
    as a DataFrame's `sum` skips NaN. `records` are (judge, the vote's usage, its error)."""
    import pandas as pd

    by_judge: dict[str, list[tuple[Usage, str | None]]] = {}
    for judge, usage, error in records:
        by_judge.setdefault(judge, []).append((usage, error))
    rows = {}
    for judge, votes in by_judge.items():
        rows[judge] = {
            "calls": sum(u.attempts for u, _ in votes),
            "failed": sum(1 for _, e in votes if e),
            **{name: said_sum(getattr(u, name) for u, _ in votes) for name in COST_COLUMNS[2:]},
        }
    frame = pd.DataFrame.from_dict(rows, orient="index", columns=list(COST_COLUMNS))
    frame.index.name = "judge"
    return frame


def rows_cost_summary(rows: Iterable[Mapping[str, Any]]) -> Any:
    """`cost_summary` of table rows that each record a `judge`, Usage's fields and an `error` (a match of a
    tournament, a draw of a sequential rating)."""
    records = []
    for row in rows:
        error = row.get("error")
        records.append((str(row.get("judge")), Usage.of_row(row), error if isinstance(error, str) else None))
    return cost_summary(records)
