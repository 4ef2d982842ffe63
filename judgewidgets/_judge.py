"""LLMJudge: one model scoring responses with one template, through the shared call path."""

from __future__ import annotations

import asyncio
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from ._ask import Answer, ask
from ._constants import (
    DEFAULT_MAX_CONCURRENCY,
    DEFAULT_REASKS,
    DEFAULT_TIMEOUT_S,
    LOCAL_MAX_CONCURRENCY,
    LOCAL_TIMEOUT_S,
    PREFILLED_MAX_TOKENS,
    TOP_LOGPROBS,
)
from ._cost import CostEstimate, estimate_judge
from ._errors import ConfigurationError
from ._probabilities import expected_value
from ._progress import Progress, counted, make_progress
from ._records import Item, ScoreSource, Vote, build_items
from ._results import JudgeResult
from ._runner import run_sync
from .engine import (
    CallCache,
    CallSession,
    CallSettings,
    ChatRequest,
    RetryPolicy,
    Transport,
    TransportChoice,
    resolve_transport,
)
from .engine._litellm import check_model, is_local_model, supports_logprobs
from .engine._openai_http import custom_base_url
from .engine._request import argument_secrets, masked
from .templates import Anchor, Template, get_template


@runtime_checkable
class Judge(Protocol):
    """The judge role: anything with a name and weight that votes on items. LLMJudge is the built-in one."""

    name: str | None
    weight: float

    async def ajudge(self, items: Sequence[Item], session: CallSession, progress: Progress) -> list[Vote]: ...


def resolve_cache(cache: bool | str | CallCache | None) -> CallCache | None:
    """`True` → the user cache file; a path → a cache there; `False`/None → no cache."""
    if cache is True:
        return CallCache()
    if cache is False or cache is None:
        return None
    if isinstance(cache, CallCache):
        return cache
    return CallCache(cache)


class LLMJudge:
    """Scores responses with a language model under a template, each score normalised to [0, 1].

    `model` is any litellm model string or ``"local"`` (the embedded judge). Extra keyword arguments go to
    `litellm.acompletion` unchanged (`api_base`, `api_key`, `mock_response`, `max_tokens`, ...).
    Calls run `max_concurrency` at a time per model (default 32; 1 for the embedded judge, which has a single
    slot, so queueing happens here and never eats into a call's `timeout`, 120 s; 600 s for the local judge).
    `anchors` are human-scored examples put in the prompt to calibrate the judge's scale to yours.
    `probability_weighted` asks for the answer token's log-probabilities and reports the expected score under
    the judge's probabilities over its answers (G-Eval); the vote keeps the sampled answer in `raw`, the
    probabilities and a `confidence`, and says `score_source="answer"` with a `fallback` reason when none came
    back. The default (None) turns it on wherever the model can return logprobs: the embedded judge, any
    OpenAI-compatible endpoint, and providers litellm lists as supporting `logprobs`.
    `prefill` ends the request with the start of the JSON answer as the assistant's own words, so the next
    token is the answer (one generated token instead of a dozen); the default (None) does so for the embedded
    judge when no explanation is asked for. Only models that continue an assistant message support it.
    `transport` picks the call path: "auto" (default) sends OpenAI-compatible requests (`openai/...`,
    `hosted_vllm/...`, any `api_base` of theirs) straight over pooled HTTP and everything else through litellm;
    "litellm" forces litellm, "fast" forces the direct HTTP path; a Transport object is used as given.
    """

    def __init__(
        self,
        model: str = "local",
        template: str | Template = "likert",
        name: str | None = None,
        explanations: bool = False,
        temperature: float = 0.0,
        weight: float = 1.0,
        *,
        probability_weighted: bool | None = None,
        prefill: bool | None = None,
        structured_output: bool | None = None,
        reasks: int = DEFAULT_REASKS,
        timeout: float | None = None,
        retry: RetryPolicy | None = None,
        max_concurrency: int | None = None,
        cache: bool | str | CallCache | None = True,
        transport: Transport | TransportChoice | None = None,
        anchors: Sequence[Anchor] = (),
        **litellm_kwargs: Any,
    ) -> None:
        if not isinstance(model, str) or not model.strip():
            raise ConfigurationError(f"model must be a non-empty model string, got {model!r}")
        if not (isinstance(weight, (int, float)) and math.isfinite(weight) and weight > 0):
            raise ConfigurationError(f"judge weight must be a positive finite number, got {weight!r}")
        if not (isinstance(temperature, (int, float)) and temperature >= 0):
            raise ConfigurationError(f"temperature must be >= 0, got {temperature!r}")
        if reasks < 0:
            raise ConfigurationError(f"reasks must be >= 0, got {reasks}")
        self.model = model
        local = is_local_model(model)
        self.template = get_template(template)
        self.name = name
        self.explanations = bool(explanations)
        self.temperature = float(temperature)
        self.weight = float(weight)
        self.probability_weighted = probability_weighted
        self.prefill = prefill
        self.structured_output = structured_output
        self.reasks = reasks
        self.anchors = tuple(anchors)
        for anchor in self.anchors:
            self.template.check_anchor(anchor)
        settings: dict[str, Any] = {
            "retry": retry or RetryPolicy(),
            "timeout": timeout if timeout is not None else (LOCAL_TIMEOUT_S if local else DEFAULT_TIMEOUT_S),
            "max_concurrency": (
                max_concurrency
                if max_concurrency is not None
                else (LOCAL_MAX_CONCURRENCY if local else DEFAULT_MAX_CONCURRENCY)
            ),
            "cache": resolve_cache(cache),
            "transport": resolve_transport(transport),
        }
        self.settings = CallSettings(**settings)
        self.litellm_kwargs = dict(litellm_kwargs)

    # --- configuration ---------------------------------------------------------------------------------------

    def __repr__(self) -> str:
        extra = "".join(f", {k}={v!r}" for k, v in masked(self.litellm_kwargs).items())
        return (
            f"LLMJudge(model={self.model!r}, template={self.template.name!r}, name={self.name!r}, "
            f"weight={self.weight}{extra})"
        )

    def with_options(self, **changes: Any) -> LLMJudge:
        """A copy with some settings changed; the original is untouched."""
        current = {
            "model": self.model,
            "template": self.template,
            "name": self.name,
            "explanations": self.explanations,
            "temperature": self.temperature,
            "weight": self.weight,
            "probability_weighted": self.probability_weighted,
            "prefill": self.prefill,
            "structured_output": self.structured_output,
            "reasks": self.reasks,
            "timeout": self.settings.timeout,
            "retry": self.settings.retry,
            "max_concurrency": self.settings.max_concurrency,
            "cache": self.settings.cache,
            "transport": self.settings.transport,
            "anchors": self.anchors,
            **self.litellm_kwargs,
        }
        current.update(changes)
        return LLMJudge(**current)

    @property
    def display_name(self) -> str:
        return self.name or self.model

    @property
    def secrets(self) -> list[str]:
        return argument_secrets(self.litellm_kwargs)

    def check(self) -> None:
        """Raise ConfigurationError now if the model cannot be routed (no call is made)."""
        check_model(self.model, self.litellm_kwargs)

    def estimate_cost(
        self,
        prompts: Sequence[str] | str,
        responses: Sequence[str] | str,
        references: Sequence[str | None] | None = None,
    ) -> CostEstimate:
        """Tokens and dollars this judge would spend on the batch (no call is made)."""
        items = build_items(prompts, responses, references)
        return CostEstimate(judges=[estimate_judge(self, self.display_name, items)])

    def uses_structured_output(self) -> bool:
        """Whether calls ask for schema-constrained JSON: `structured_output`, else yes for the local judge, a
        self-hosted OpenAI-compatible server (named by `api_base`, `OPENAI_BASE_URL` / `OPENAI_API_BASE`, or
        `litellm.api_base`) and models litellm says support response schemas."""
        if self.structured_output is not None:
            return self.structured_output
        if is_local_model(self.model) or custom_base_url(self.model, self.litellm_kwargs) is not None:
            return True
        if "mock_response" in self.litellm_kwargs:
            return False
        from .engine._litellm import import_litellm

        try:
            return bool(import_litellm().supports_response_schema(model=self.model))
        except Exception:
            return False

    def uses_probabilities(self) -> bool:
        """Whether calls ask for logprobs: `probability_weighted`, else wherever the model can return them."""
        if self.probability_weighted is not None:
            return bool(self.probability_weighted)
        return supports_logprobs(self.model, self.litellm_kwargs)

    def uses_prefill(self) -> bool:
        """Whether the request ends with the start of the answer: `prefill`, else for the embedded judge
        when no explanation comes first."""
        if self.prefill is not None:
            return bool(self.prefill)
        return is_local_model(self.model) and not self.explanations

    def request_params(
        self,
        schema: dict[str, Any] | None = None,
        schema_name: str = "verdict",
        *,
        prefilled: bool = False,
        probabilities: bool | None = None,
    ) -> dict[str, Any]:
        """Everything sent to litellm besides model and messages; `schema` replaces the template's answer schema.

        A `prefilled` request asks for no schema (constrained decoding would restart the JSON the prefill began)
        and, unless `max_tokens` is given, for the few tokens that finish the answer. `probabilities` asks for
        logprobs (default: `uses_probabilities()`).
        """
        params: dict[str, Any] = {"temperature": self.temperature, **self.litellm_kwargs}
        if prefilled:
            params.setdefault("max_tokens", PREFILLED_MAX_TOKENS)
        elif self.uses_structured_output():
            params.setdefault(
                "response_format",
                {
                    "type": "json_schema",
                    "json_schema": {
                        "name": schema_name,
                        "schema": schema if schema is not None else self.template.json_schema(self.explanations),
                        "strict": True,
                    },
                },
            )
        if self.uses_probabilities() if probabilities is None else probabilities:
            params.setdefault("logprobs", True)
            params.setdefault("top_logprobs", TOP_LOGPROBS)
        return params

    # --- scoring ---------------------------------------------------------------------------------------------

    def score(
        self,
        prompts: Sequence[str] | str,
        responses: Sequence[str] | str,
        references: Sequence[str | None] | None = None,
        *,
        progress: bool | Progress = True,
    ) -> JudgeResult:
        """Score every response; works in scripts and inside a running event loop (Jupyter)."""
        return run_sync(self.ascore(prompts, responses, references, progress=progress))

    async def ascore(
        self,
        prompts: Sequence[str] | str,
        responses: Sequence[str] | str,
        references: Sequence[str | None] | None = None,
        *,
        progress: bool | Progress = True,
    ) -> JudgeResult:
        """Async twin of `score`."""
        items = build_items(prompts, responses, references)
        self.check()
        session = CallSession()
        bar = make_progress(progress, len(items), f"judging ({self.display_name})")
        try:
            votes = await self.ajudge(items, session, bar)
        finally:
            bar.close()
            session.flush()
        return JudgeResult(items=items, votes=votes, judge=self.display_name)

    async def ajudge(
        self, items: Sequence[Item], session: CallSession, progress: Progress, name: str | None = None
    ) -> list[Vote]:
        """Votes on every item, in order; failures are recorded on their vote, never raised."""
        params = self.request_params(prefilled=self.uses_prefill())
        label = name or self.display_name

        votes = (counted(progress, self.ajudge_one(i, item, session, params, label)) for i, item in enumerate(items))
        return list(await asyncio.gather(*votes))

    async def ajudge_one(
        self, index: int, item: Item, session: CallSession, params: dict[str, Any], label: str, sample: int = 0
    ) -> Vote:
        """This judge's vote on one item; `sample` distinguishes repeated draws of the same item in the cache."""
        messages = self.template.messages(
            item.prompt,
            item.response,
            item.reference,
            self.explanations,
            context=item.context,
            anchors=self.anchors,
            prefill="response_format" not in params and self.uses_prefill(),
        )
        request = ChatRequest(self.model, messages, params, sample)
        answer = await ask(session, request, self.settings, self.secrets, self.template.read, self.reasks)
        score = math.nan
        explanation = None
        reading = ProbabilityReading()
        if answer.value is not None:
            value, explanation = answer.value
            score = self.template.normalise(value)
            if params.get("logprobs"):
                reading = read_probabilities(self.template, answer)
                if reading.probabilities is not None:
                    score = expected_value(reading.probabilities, self.template.option_values())
        return Vote(
            item=index,
            judge=label,
            score=score,
            raw=answer.content,
            explanation=explanation if self.explanations else None,
            error=answer.error,
            score_source=None if answer.value is None else reading.source,
            fallback=reading.fallback,
            probabilities=reading.probabilities,
            confidence=reading.confidence,
            latency_s=answer.latency_s,
            prompt_tokens=answer.prompt_tokens or None,
            completion_tokens=answer.completion_tokens or None,
            cost_usd=answer.cost_usd if answer.completion is not None else None,
            cached=answer.cached and answer.completion is not None,
            attempts=max(answer.attempts, 1),
        )


@dataclass(frozen=True)
class ProbabilityReading:
    """What a vote says about its probabilities: where its score came from and why, if not from them."""

    probabilities: dict[str, float] | None = None
    confidence: float | None = None
    source: ScoreSource = "answer"
    fallback: str | None = None


def read_probabilities(template: Template, answer: Answer[Any]) -> ProbabilityReading:
    """The judge's probabilities over the template's answers in `answer`, or why they are not there."""
    if not template.probability_readable():
        return ProbabilityReading(fallback="the template's answers cannot be told apart by one token")
    if not answer.logprobs:
        return ProbabilityReading(fallback="the model returned no logprobs")
    found = template.answer_probabilities(answer.logprobs, answer.prefill)
    if found is None:
        return ProbabilityReading(fallback="no answer among the alternatives at the answer's token")
    probabilities, _coverage = found
    return ProbabilityReading(
        probabilities=probabilities, confidence=max(probabilities.values()), source="probabilities"
    )
