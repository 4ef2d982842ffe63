"""Caller: one model asked one way. Every judge kind holds one and asks through it.

A caller owns what decides how a model is called: the model string, the request parameters (temperature,
structured output, logprobs, prefill, anything for litellm), the call settings (timeout, concurrency, retries,
cache, transport; the embedded judge's defaults are decided here, once), the secrets to keep out of every
record, and the re-asks of an unreadable answer. Judges add what is asked (a template, a scale, a rubric) and
how an answer is read.
"""

from __future__ import annotations

import re
import weakref
from collections.abc import Callable
from typing import Any, TypeVar

from .._constants import (
    DEFAULT_MAX_CONCURRENCY,
    DEFAULT_REASKS,
    DEFAULT_TIMEOUT_S,
    LOCAL_ANSWER_MAX_TOKENS,
    LOCAL_MAX_CONCURRENCY,
    LOCAL_TIMEOUT_S,
    PREFILLED_MAX_TOKENS,
    TOP_LOGPROBS,
)
from .._errors import ConfigurationError
from ._ask import Answer, ask, prefill_of
from ._cache import CallCache
from ._client import CallSession, CallSettings
from ._litellm import (
    LiteLLMTransport,
    check_model,
    context_window,
    count_tokens,
    import_litellm,
    is_local_model,
    supports_logprobs,
)
from ._openai_http import OpenAIHTTPTransport, custom_base_url, provider_of
from ._prompt_cache import PrefixWarmer, PromptCacheChoice, check_prompt_cache, laid_out, served_by
from ._request import ChatRequest, Completion, argument_secrets, masked
from ._retry import RetryPolicy
from ._routing import AutoTransport, TransportChoice, resolve_transport
from ._transport import Transport

T = TypeVar("T")
MIN_CONTEXT = 256  # tokens: less cannot hold a judge's instructions
ANSWER_RESERVE_TOKENS = 1_024  # room left for the answer when the request names no max_tokens
MAX_TOKENS_REQUIRED = frozenset({"anthropic"})  # providers whose API needs max_tokens (litellm fills in 4,096)
THINKING_OPTIONS = frozenset({"thinking", "reasoning_effort"})  # their budget counts in max_tokens: left to litellm
# What a reasoning model refuses (OpenAI's o-series and gpt-5: 400 unsupported_parameter; Anthropic with thinking on:
# temperature other than 1, top_k). A temperature of 1 is the only one they take, so it is sent as none.
REASONING_REFUSES = frozenset({"top_p", "top_k", "logprobs", "top_logprobs"})
MIN_THINKING_BUDGET = 1_024  # Anthropic's least `thinking.budget_tokens`
_OPENAI_REASONING = re.compile(r"^(?:o\d|gpt-5)(?!.*-chat)")  # o1, o3-mini, o4-mini, gpt-5, gpt-5-mini; not gpt-5-chat
CONTEXT_MARGIN = 0.05  # of the window, for the difference between the counting tokenizer and the model's
Messages = tuple[dict[str, str], ...]


def resolve_cache(cache: bool | str | CallCache | None) -> CallCache | None:
    """`True` → the user cache file; a path → a cache there; `False`/None → no cache."""
    if cache is True:
        return CallCache()
    if cache is False or cache is None:
        return None
    if isinstance(cache, CallCache):
        return cache
    return CallCache(cache)


class Caller:
    """How one model is called: request parameters, call settings, secrets and re-asks.

    `model` is any litellm model string or ``"local"`` (the embedded judge). Calls run `max_concurrency` at a
    time per model (default 32; 1 for the embedded judge, which has a single slot, so queueing happens in the
    engine and never eats into a call's `timeout`, 120 s; 600 s for the embedded judge). `structured_output`,
    `probability_weighted` (ask for logprobs) and `prefill` default (None) to what the model supports.
    `transport` is "auto", "litellm", "fast" or a Transport object. `context_window` is how many tokens of prompt
    the model takes (default: the embedded judge's context, else what litellm's model map says, else unknown): a
    conversation longer than that is shortened to fit (`conversations.fit_to_context`). `rpm` / `tpm` are the
    endpoint's requests and tokens per minute when you know your tier (default: learned from the provider's
    answers); they pace every judge calling that endpoint (`jw.engine.rate_limits`). `prompt_cache` ("auto", "1h"
    or False) lays requests out for the provider's prompt cache (engine/_prompt_cache.py). Extra keyword arguments
    go to `litellm.acompletion` unchanged.
    """

    def __init__(
        self,
        model: str = "local",
        *,
        temperature: float = 0.0,
        structured_output: bool | None = None,
        probability_weighted: bool | None = None,
        prefill: bool | None = None,
        reasks: int = DEFAULT_REASKS,
        timeout: float | None = None,
        retry: RetryPolicy | None = None,
        max_concurrency: int | None = None,
        cache: bool | str | CallCache | None = True,
        transport: Transport | TransportChoice | None = None,
        context_window: int | None = None,
        rpm: float | None = None,
        tpm: float | None = None,
        prompt_cache: PromptCacheChoice = "auto",
        **litellm_kwargs: Any,
    ) -> None:
        if not isinstance(model, str) or not model.strip():
            raise ConfigurationError(f"model must be a non-empty model string, got {model!r}")
        if isinstance(temperature, bool) or not (isinstance(temperature, (int, float)) and temperature >= 0):
            raise ConfigurationError(f"temperature must be >= 0, got {temperature!r}")
        if isinstance(reasks, bool) or not isinstance(reasks, int) or reasks < 0:
            raise ConfigurationError(f"reasks must be an integer >= 0, got {reasks!r}")
        if context_window is not None and (
            isinstance(context_window, bool) or not isinstance(context_window, int) or context_window < MIN_CONTEXT
        ):
            raise ConfigurationError(
                f"context_window must be a whole number of tokens >= {MIN_CONTEXT}, got {context_window!r}"
            )
        check_thinking(litellm_kwargs)
        local = is_local_model(model)
        self.model = model
        self.temperature = float(temperature)
        self.structured_output = structured_output
        self.probability_weighted = probability_weighted
        self.prefill = prefill
        self.reasks = reasks
        self.context_window = context_window
        self.settings = CallSettings(
            retry=retry or RetryPolicy(),
            timeout=timeout if timeout is not None else (LOCAL_TIMEOUT_S if local else DEFAULT_TIMEOUT_S),
            max_concurrency=(
                max_concurrency
                if max_concurrency is not None
                else (LOCAL_MAX_CONCURRENCY if local else DEFAULT_MAX_CONCURRENCY)
            ),
            cache=resolve_cache(cache),
            transport=resolve_transport(transport),
            rpm=rpm,
            tpm=tpm,
        )
        self.litellm_kwargs = dict(litellm_kwargs)
        self.prompt_cache = check_prompt_cache(prompt_cache)
        self._warmers: weakref.WeakKeyDictionary[CallSession, PrefixWarmer] = weakref.WeakKeyDictionary()

    def __getstate__(self) -> dict[str, Any]:
        # A copy (a resumed batch, a Ray worker) warms its own runs' prefixes: the runs seen here stay here.
        return {k: v for k, v in self.__dict__.items() if k != "_warmers"}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._warmers = weakref.WeakKeyDictionary()

    def __repr__(self) -> str:
        extra = "".join(f", {k}={v!r}" for k, v in masked(self.litellm_kwargs).items())
        return f"Caller(model={self.model!r}, temperature={self.temperature}{extra})"

    def options(self) -> dict[str, Any]:
        """The constructor arguments that rebuild this caller (settings as they are now)."""
        return {
            "model": self.model,
            "temperature": self.temperature,
            "structured_output": self.structured_output,
            "probability_weighted": self.probability_weighted,
            "prefill": self.prefill,
            "reasks": self.reasks,
            "timeout": self.settings.timeout,
            "retry": self.settings.retry,
            "max_concurrency": self.settings.max_concurrency,
            "cache": self.settings.cache,
            "transport": self.settings.transport,
            "context_window": self.context_window,
            "rpm": self.settings.rpm,
            "tpm": self.settings.tpm,
            "prompt_cache": self.prompt_cache,
            **self.litellm_kwargs,
        }

    def with_options(self, **changes: Any) -> Caller:
        """A copy with some options changed; the original is untouched."""
        return Caller(**{**self.options(), **changes})

    @property
    def secrets(self) -> list[str]:
        """Secret values among the arguments (API keys, tokens): redacted from every error and record."""
        return argument_secrets(self.litellm_kwargs)

    def check(self) -> None:
        """Raise ConfigurationError now if the model cannot be routed (no call is made); warn when a provider will
        not know it (a transport of one's own, a ScriptedTransport, answers any name)."""
        reaches_provider = isinstance(self.settings.transport, (AutoTransport, LiteLLMTransport, OpenAIHTTPTransport))
        check_model(self.model, self.litellm_kwargs, provider=reaches_provider)

    # --- what a request asks for -----------------------------------------------------------------------------

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
        try:
            return bool(import_litellm().supports_response_schema(model=self.model))
        except Exception:
            return False

    def uses_probabilities(self) -> bool:
        """Whether calls ask for logprobs: `probability_weighted`, else wherever the model can return them (not a
        reasoning model: it refuses them, so a probability reading falls back to the answer, with its note)."""
        if self.probability_weighted is not None:
            return bool(self.probability_weighted)
        return not self.reasons() and supports_logprobs(self.model, self.litellm_kwargs)

    def reasons(self) -> bool:
        """Whether the model reasons before it answers, and so refuses sampling parameters: `reasoning_effort` or
        `thinking` given, or an OpenAI reasoning model (o-series, gpt-5) whatever its settings."""
        if THINKING_OPTIONS & self.litellm_kwargs.keys():
            return True
        return provider_of(self.model) in ("openai", "azure") and bool(
            _OPENAI_REASONING.match(self.model.rpartition("/")[2])
        )

    def for_reasoning(self, params: dict[str, Any]) -> dict[str, Any]:
        """`params` as a reasoning model takes them (unchanged for another model): no parameter it refuses
        (`REASONING_REFUSES`, a temperature other than 1); on OpenAI `max_tokens` becomes `max_completion_tokens`
        (reasoning counts in it); with Anthropic's `thinking`, an answer cap no larger than the thinking budget is
        room for the answer on top of it (Anthropic requires `max_tokens` above the budget), and no cap at all
        leaves `ANSWER_RESERVE_TOKENS` after it."""
        if not self.reasons():
            return params
        out = {k: v for k, v in params.items() if k not in REASONING_REFUSES and not (k == "temperature" and v != 1)}
        budget = thinking_budget(out)
        if budget is not None:
            cap = out.get("max_tokens")
            if not isinstance(cap, int):
                out["max_tokens"] = budget + ANSWER_RESERVE_TOKENS
            elif cap <= budget:
                out["max_tokens"] = budget + cap
        elif provider_of(self.model) != "anthropic" and "max_tokens" in out:
            cap = out.pop("max_tokens")
            out.setdefault("max_completion_tokens", cap)
        return out

    def uses_prefill(self, explanations: bool = False) -> bool:
        """Whether a request ends with the start of the answer: `prefill`, else for the embedded judge when no
        explanation comes first (never with Anthropic's thinking on, which refuses a prefilled answer)."""
        if self.prefill is not None:
            return bool(self.prefill)
        return self.answers_steered() and not explanations and thinking_budget(self.litellm_kwargs) is None

    def answers_steered(self) -> bool:
        """Whether answers are steered by a prefill and capped at a verdict's length (`LOCAL_ANSWER_MAX_TOKENS`):
        the embedded judge's, and those over the Messages API to a server that is not Anthropic's."""
        return is_local_model(self.model) or self.messages_api_elsewhere()

    def messages_api_elsewhere(self) -> bool:
        """Whether calls speak Anthropic's Messages API to a server that is not Anthropic's (`anthropic/<name>`
        with an `api_base`, e.g. llama.cpp's `/v1/messages`). Such a server cannot be handed the answer's schema:
        llama.cpp's Messages handler keeps only messages, tools, tool_choice, stop, max_tokens and sampling, and
        the forced tool litellm sends in place of a schema is not decoded under a grammar there, so a small model
        writes it as prose or repeats the schema. Answers are steered by a prefill instead (see `ask`)."""
        return provider_of(self.model) == "anthropic" and custom_base_url(self.model, self.litellm_kwargs) is not None

    def request_params(
        self,
        schema: dict[str, Any] | None = None,
        schema_name: str = "verdict",
        *,
        prefilled: bool = False,
        probabilities: bool | None = None,
        prefilled_max_tokens: int = PREFILLED_MAX_TOKENS,
    ) -> dict[str, Any]:
        """Everything sent besides model and messages.

        `schema` is the answer's JSON schema, asked for where structured output is used. A `prefilled` request
        asks for no schema (constrained decoding would restart the JSON the prefill began) and, unless
        `max_tokens` is given, for `prefilled_max_tokens`: the few tokens that finish the answer, by default. The
        embedded judge's other answers to a `schema` are capped at `LOCAL_ANSWER_MAX_TOKENS` (a verdict and a short
        explanation), so a reply that repeats itself is cut off and re-asked within seconds; so are answers over
        the Messages API to a server that is not Anthropic's, and answers from Anthropic at `ANSWER_RESERVE_TOKENS`
        (its API requires a limit, and litellm's default of 4,096 lets a looping answer run for minutes).
        `probabilities` asks for logprobs (default: `uses_probabilities()`).
        """
        params: dict[str, Any] = {"temperature": self.temperature, **self.litellm_kwargs}
        if prefilled:
            params.setdefault("max_tokens", prefilled_max_tokens)
        elif schema is not None:
            if self.uses_structured_output():
                params.setdefault(
                    "response_format",
                    {"type": "json_schema", "json_schema": {"name": schema_name, "schema": schema, "strict": True}},
                )
            if self.answers_steered():
                params.setdefault("max_tokens", LOCAL_ANSWER_MAX_TOKENS)
            elif provider_of(self.model) in MAX_TOKENS_REQUIRED and not THINKING_OPTIONS & self.litellm_kwargs.keys():
                params.setdefault("max_tokens", ANSWER_RESERVE_TOKENS)
        if self.uses_probabilities() if probabilities is None else probabilities:
            params.setdefault("logprobs", True)
            params.setdefault("top_logprobs", TOP_LOGPROBS)
        return params

    # --- how much a request may hold -------------------------------------------------------------------------

    def prompt_budget(self) -> int | None:
        """The prompt tokens a request may hold (None: the model's context is unknown): the context window less the
        longest answer asked for (`max_tokens`, else the embedded judge's cap or 1,024) and a 5 % margin, since
        prompts are counted with a tokenizer that may not be the model's own."""
        window = self.context_window or context_window(self.model)
        if window is None:
            return None
        answer = self.litellm_kwargs.get("max_tokens") or (
            LOCAL_ANSWER_MAX_TOKENS if self.answers_steered() else ANSWER_RESERVE_TOKENS
        )
        return max(0, int(window * (1 - CONTEXT_MARGIN)) - int(answer))

    def count_tokens(self, messages: Messages) -> int:
        """Prompt tokens of `messages` as litellm counts them for this model (the embedded judge's with
        gpt-4o-mini's tokenizer)."""
        return count_tokens(self.model, messages)

    # --- calling ---------------------------------------------------------------------------------------------

    async def ask(
        self,
        session: CallSession,
        messages: Messages,
        params: dict[str, Any],
        read: Callable[[str], T],
        sample: int = 0,
    ) -> Answer[T]:
        """Ask once and read the answer with `read` (ValueError when it cannot), re-asking up to `reasks` times;
        a failure is recorded on the Answer, never raised. `sample` tells repeated draws apart in the cache."""
        request, prefix = self.cached_layout(self.shaped(ChatRequest(self.model, messages, params, sample)))
        if prefix is None or session.batcher is not None:  # a batch is answered as a whole: nothing to warm
            return await ask(session, request, self.settings, self.secrets, read, self.reasks, self.uses_prefill())
        warmer = self._warmers.setdefault(session, PrefixWarmer())
        first = await warmer.enter(prefix)  # the prefix's first request goes alone: the rest find it cached
        try:
            return await ask(session, request, self.settings, self.secrets, read, self.reasks, self.uses_prefill())
        finally:
            if first:
                warmer.answered(prefix)

    def cache_provider(self) -> str | None:
        """Whose prompt cache the requests are laid out for: "anthropic" (its own API, also at another address
        through ANTHROPIC_BASE_URL, or a Claude model litellm knows at `api_base`), "openai" (a model OpenAI serves,
        at any address), None otherwise (an unknown model behind `api_base`; `prompt_cache=False`)."""
        if self.prompt_cache is False:
            return None
        provider = provider_of(self.model)
        if provider == "anthropic" and (not self.messages_api_elsewhere() or served_by(self.model) == "anthropic"):
            return "anthropic"
        return "openai" if provider == "openai" and served_by(self.model) == "openai" else None

    def cached_layout(self, request: ChatRequest) -> tuple[ChatRequest, str | None]:
        """`request` laid out for the provider's prompt cache, and the prefix to warm first (None: none)."""
        return laid_out(request, self.cache_provider(), self.prompt_cache)

    def shaped(self, request: ChatRequest) -> ChatRequest:
        """`request` in the form its endpoint honours (`_shaped`), with only parameters the model takes
        (`for_reasoning`)."""
        request = self._shaped(request)
        params = self.for_reasoning(request.params)
        return (
            request
            if params is request.params
            else ChatRequest(request.model, request.messages, params, request.sample)
        )

    def _shaped(self, request: ChatRequest) -> ChatRequest:
        """`request` in the form its endpoint honours. Over the Messages API to a server that is not Anthropic's
        (`messages_api_elsewhere`), a response schema becomes a prefill: the answer starts as a JSON object at the
        schema's first property, which the model continues (so it cannot repeat the schema back), capped at
        `max_tokens`. Anthropic's own API keeps the schema (litellm sends it as a forced tool or as native
        structured output); an unreadable answer is re-asked either way."""
        response_format = request.params.get("response_format")
        if not isinstance(response_format, dict) or not self.messages_api_elsewhere():
            return request
        if thinking_budget(request.params) is not None:
            return request  # Anthropic refuses a prefilled answer with thinking on: the schema stays
        if given := prefill_of(request.messages):
            return request.prefilled(request.messages[:-1], given, self._answer_tokens(request))
        schema = (response_format.get("json_schema") or {}).get("schema") or {}
        first = next(iter(schema.get("properties") or {}), None)
        start = "{" if first is None else '{"' + first + '":'
        return request.prefilled(request.messages, start, self._answer_tokens(request))

    def _answer_tokens(self, request: ChatRequest) -> int:
        return int(request.params.get("max_tokens") or LOCAL_ANSWER_MAX_TOKENS)

    async def complete(self, session: CallSession, messages: Messages, params: dict[str, Any]) -> Completion:
        """One completion with nothing read from it (generation); raises JudgeCallError after the last retry."""
        request = ChatRequest(self.model, messages, self.for_reasoning(params))
        return await session.complete(request, self.settings, self.secrets)


def thinking_budget(params: dict[str, Any]) -> int | None:
    """The `budget_tokens` of Anthropic's extended thinking when it is on, else None."""
    thinking = params.get("thinking")
    if isinstance(thinking, dict) and thinking.get("type") == "enabled":
        budget = thinking.get("budget_tokens")
        return int(budget) if isinstance(budget, int) and not isinstance(budget, bool) else 0
    return None


def check_thinking(params: dict[str, Any]) -> None:
    """Raise ConfigurationError before any call when a thinking budget leaves no room for the verdict or is below
    Anthropic's minimum."""
    budget = thinking_budget(params)
    if budget is None:
        return
    if budget < MIN_THINKING_BUDGET:
        raise ConfigurationError(
            f"thinking needs budget_tokens >= {MIN_THINKING_BUDGET} (Anthropic's minimum), got {params['thinking']!r}"
        )
    cap = params.get("max_tokens")
    if isinstance(cap, int) and budget < cap <= budget + 16:
        raise ConfigurationError(
            f"max_tokens={cap} leaves {cap - budget} tokens after a thinking budget of {budget}: no room for the "
            f"verdict; give max_tokens at least {budget + 64}, or one up to the budget as the answer's own room"
        )
