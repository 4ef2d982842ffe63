"""Estimating what a run will cost before making it, from litellm's token counter and bundled price map."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd
from pydantic import BaseModel

from .._constants import ESTIMATED_EXPLANATION_TOKENS, ESTIMATED_SCORE_TOKENS, PACING_HEADROOM
from ..engine import Caller, rate_limits
from ..engine._litellm import is_local_model, unknown_model
from ..engine._prompt_cache import estimated_cost
from ..engine._usage import known_sum

Messages = tuple[dict[str, str], ...]


class JudgeCostEstimate(BaseModel):
    """One judge's share of a `CostEstimate`: its calls, the prompt tokens of the very requests a run would send,
    the typical completion tokens, and their price (`cost_usd` None when litellm has no price for the model).
    `endpoint`, `rpm` and `tpm` say where the calls go and the rate limits known there (the judge's `rpm=` /
    `tpm=`, else what the provider's answers said in this process; None: not known)."""

    judge: str
    model: str
    calls: int
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float | None  # None: litellm has no price for this model
    endpoint: str | None = None
    rpm: float | None = None
    tpm: float | None = None
    answering_calls: int = 0  # of `calls`, those answering questions first (commit-first)
    solver: str | None = None  # the model that answers them, when the judge commits first
    unknown_model: str | None = None  # litellm does not know the model (a typo?): what to tell the user


class CostEstimate(BaseModel):
    """Expected tokens and dollars per judge, and the time the rate limits need; completion lengths are typical,
    not measured."""

    judges: list[JudgeCostEstimate]
    batch: bool = False  # priced at the batch APIs' price (`estimate_cost(batch=True)`)

    def at_batch_price(self) -> CostEstimate:
        """The same calls sent through the providers' batch APIs, at their price (half the live price)."""
        from ..engine._prices import BATCH_DISCOUNT

        judges = [
            j.model_copy(update={"cost_usd": None if j.cost_usd is None else j.cost_usd * BATCH_DISCOUNT})
            for j in self.judges
        ]
        return CostEstimate(judges=judges, batch=True)

    @property
    def total_usd(self) -> float | None:
        return known_sum(j.cost_usd for j in self.judges)

    @property
    def calls(self) -> int:
        return sum(j.calls for j in self.judges)

    @property
    def duration_s(self) -> float | None:
        """Seconds the run takes under the known rate limits: per endpoint (judges sharing one share its
        limits), its calls over its requests per minute or its tokens over its tokens per minute, whichever
        binds, at the pace the engine keeps (a little under the limit); the longest endpoint's. None when some
        judge's endpoint has no known limit (its time depends on how fast the model answers)."""
        work: dict[str, list[float]] = {}
        for j in self.judges:
            if not j.calls:
                continue
            if j.endpoint is None or not (j.rpm or j.tpm):
                return None
            calls, tokens, rpm, tpm = work.setdefault(j.endpoint, [0.0, 0.0, 0.0, 0.0])
            work[j.endpoint] = [
                calls + j.calls,
                tokens + j.prompt_tokens + j.completion_tokens,
                min(v for v in (rpm, j.rpm) if v) if rpm or j.rpm else 0.0,
                min(v for v in (tpm, j.tpm) if v) if tpm or j.tpm else 0.0,
            ]
        if not work:
            return None
        minutes = [
            max(calls / rpm if rpm else 0.0, tokens / tpm if tpm else 0.0) for calls, tokens, rpm, tpm in work.values()
        ]
        return 60.0 * max(minutes) / PACING_HEADROOM

    def to_df(self) -> pd.DataFrame:
        return pd.DataFrame([j.model_dump() for j in self.judges])

    def _duration_text(self) -> str:
        seconds = self.duration_s
        return "" if seconds is None else f", about {readable_duration(seconds)} at the known rate limits"

    def __str__(self) -> str:
        total = "unknown (no price for some model)" if self.total_usd is None else f"${self.total_usd:.4f}"
        if any(j.unknown_model for j in self.judges):
            total = "unknown (an unknown model: check its name)"
        lines = [f"estimated cost: {total}{' (batch price)' if self.batch else ''}{self._duration_text()}"]
        for j in self.judges:
            cost = "no price" if j.cost_usd is None else f"${j.cost_usd:.4f}"
            if j.unknown_model is not None:
                cost = f"unknown model: {j.unknown_model.removeprefix('litellm does not know model ')}"
            limits = ", ".join(f"{v:,.0f} {k}" for k, v in (("RPM", j.rpm), ("TPM", j.tpm)) if v)
            answering = f" ({j.answering_calls} answering first with {j.solver})" if j.answering_calls else ""
            lines.append(
                f"  {j.judge} ({j.model}): {j.calls} calls{answering}, "
                f"~{j.prompt_tokens + j.completion_tokens} tokens, {cost}" + (f", limits {limits}" if limits else "")
            )
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        total = "unknown" if self.total_usd is None else f"${self.total_usd:.4f}"
        return f"<p><b>Estimated cost: {total}</b>{self._duration_text()}</p>" + self.to_df()._repr_html_()


def readable_duration(seconds: float) -> str:
    """`42 s`, `3 min 10 s`, `2 h 5 min`."""
    seconds = round(seconds)
    if seconds < 60:
        return f"{seconds} s"
    minutes, rest = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes} min {rest} s" if rest else f"{minutes} min"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes} min" if minutes else f"{hours} h"


def estimate_calls(
    caller: Caller, name: str, requests: Sequence[Messages], completion_tokens: int
) -> JudgeCostEstimate:
    """Tokens and cost of sending every one of `requests` through `caller`: prompt tokens counted with litellm's
    token counter (the embedded judge's with gpt-4o-mini's tokenizer), `completion_tokens` per call typical, the
    cost with the provider's prompt cache as the run uses it (`estimated_cost`), and the rate limits known at the
    endpoint the calls go to."""
    counts = [caller.count_tokens(m) for m in requests]
    prompt_tokens = sum(counts)
    completion_total = completion_tokens * len(requests)
    cost = estimated_cost(caller, requests, counts, completion_tokens)  # with the provider's prompt cache
    endpoint, rpm, tpm = None, None, None
    if not is_local_model(caller.model):
        settings = caller.settings
        endpoint, rpm, tpm = rate_limits.limits_for(caller.model, caller.litellm_kwargs, settings.rpm, settings.tpm)
    return JudgeCostEstimate(
        judge=name,
        model=caller.model,
        calls=len(requests),
        prompt_tokens=prompt_tokens,
        completion_tokens=completion_total,
        cost_usd=cost,
        endpoint=endpoint,
        rpm=rpm,
        tpm=tpm,
        unknown_model=unknown_model(caller.model, caller.litellm_kwargs) if cost is None else None,
    )


def with_answers(judging: JudgeCostEstimate, answering: JudgeCostEstimate) -> JudgeCostEstimate:
    """A committing judge's estimate: its judging calls and the calls answering first, added up (the cost is
    unknown when either's is)."""
    return judging.model_copy(
        update={
            "calls": judging.calls + answering.calls,
            "prompt_tokens": judging.prompt_tokens + answering.prompt_tokens,
            "completion_tokens": judging.completion_tokens + answering.completion_tokens,
            "cost_usd": known_sum([judging.cost_usd, answering.cost_usd]),
            "answering_calls": judging.answering_calls + answering.calls,
            "solver": answering.model,
        }
    )


def typical_completion_tokens(explanations: bool) -> int:
    """The completion length an estimate assumes: a short JSON answer, plus an explanation when asked for."""
    return ESTIMATED_SCORE_TOKENS + (ESTIMATED_EXPLANATION_TOKENS if explanations else 0)


def unpriced(name: str, model: str, calls: int) -> JudgeCostEstimate:
    """The estimate of a judge that cannot price its calls (no model behind it, or one it does not name)."""
    return JudgeCostEstimate(judge=name, model=model, calls=calls, prompt_tokens=0, completion_tokens=0, cost_usd=None)
