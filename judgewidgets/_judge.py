"""LLMJudge: one model scoring responses with one template, through the shared call path."""

from __future__ import annotations

import asyncio
import math
from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

from ._ask import ask
from ._constants import (
    DEFAULT_MAX_CONCURRENCY,
    DEFAULT_REASKS,
    DEFAULT_TIMEOUT_S,
    LOCAL_MAX_CONCURRENCY,
    LOCAL_TIMEOUT_S,
)
from ._cost import CostEstimate, estimate_judge
from ._errors import ConfigurationError
from ._logprob_score import weighted_score
from ._progress import Progress, counted, make_progress
from ._records import Item, Vote, build_items
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
from .engine._litellm import check_model, is_local_model
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
    `probability_weighted` asks for the answer token's log-probabilities and reports the expected score
    (G-Eval), falling back to the parsed score when the model returns none.
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
        probability_weighted: bool = False,
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

    def request_params(self, schema: dict[str, Any] | None = None, schema_name: str = "verdict") -> dict[str, Any]:
        """Everything sent to litellm besides model and messages; `schema` replaces the template's answer schema."""
        params: dict[str, Any] = {"temperature": self.temperature, **self.litellm_kwargs}
        if self.uses_structured_output():
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
        if self.probability_weighted:
            params.setdefault("logprobs", True)
            params.setdefault("top_logprobs", 5)
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
        params = self.request_params()
        label = name or self.display_name

        votes = (counted(progress, self.ajudge_one(i, item, session, params, label)) for i, item in enumerate(items))
        return list(await asyncio.gather(*votes))

    async def ajudge_one(
        self, index: int, item: Item, session: CallSession, params: dict[str, Any], label: str, sample: int = 0
    ) -> Vote:
        """This judge's vote on one item; `sample` distinguishes repeated draws of the same item in the cache."""
        messages = self.template.messages(
            item.prompt, item.response, item.reference, self.explanations, context=item.context, anchors=self.anchors
        )
        request = ChatRequest(self.model, messages, params, sample)
        answer = await ask(session, request, self.settings, self.secrets, self.template.read, self.reasks)
        score = math.nan
        explanation = None
        if answer.value is not None:
            value, explanation = answer.value
            score = self.template.normalise(value)
            if self.probability_weighted and answer.completion is not None:
                weighted = weighted_score(self.template, answer.content, answer.completion.logprobs)
                if weighted is not None:
                    score = weighted
        return Vote(
            item=index,
            judge=label,
            score=score,
            raw=answer.content,
            explanation=explanation if self.explanations else None,
            error=answer.error,
            latency_s=answer.latency_s,
            prompt_tokens=answer.prompt_tokens or None,
            completion_tokens=answer.completion_tokens or None,
            cost_usd=answer.cost_usd if answer.completion is not None else None,
            cached=answer.cached and answer.completion is not None,
            attempts=max(answer.attempts, 1),
        )
