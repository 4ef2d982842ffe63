"""The litellm path: lazy import, model routing checks, the call itself, and how its failures are classified."""

from __future__ import annotations

import gc
import os
import sys
import time
import warnings
from collections.abc import Mapping, MutableMapping
from functools import lru_cache
from types import ModuleType
from typing import Any

from .._errors import ConfigurationError, UnknownModelWarning
from ._faults import CallFailure
from ._limit_headers import LimitReading, provider_headers, read_limit_headers, retry_after_of
from ._request import ChatRequest, Completion, token_logprobs

# What litellm reads from the network unless told to use its bundled copy: its model cost map (at import) and
# Anthropic's beta-header table (a blocking fetch of up to 5 s on the first Anthropic call, where the network is cut).
OFFLINE_SETTINGS = (("LITELLM_LOCAL_MODEL_COST_MAP", "True"), ("LITELLM_LOCAL_ANTHROPIC_BETA_HEADERS", "True"))


def keep_litellm_offline(environ: MutableMapping[str, str] | None = None) -> None:
    """Point litellm at its bundled cost map and beta-header table in `environ` (this process's by default); a
    value you set yourself stays."""
    target = os.environ if environ is None else environ
    for name, value in OFFLINE_SETTINGS:
        target.setdefault(name, value)


def import_litellm() -> ModuleType:
    """Import litellm (≈6 s, so only when a call is made) with its bundled tables, never the network's."""
    keep_litellm_offline()
    first = "litellm" not in sys.modules
    import litellm

    # litellm prints a "Give Feedback / Get Help" banner on every failed call; judgewidgets records each
    # failure on its vote instead, so the banner is only noise in a notebook.
    litellm.suppress_debug_info = True
    if first:
        # Its import leaves ~260k long-lived objects that every full garbage collection would walk again:
        # measured, that doubled the fast path's CPU per call and cost litellm's ~20 %. Freezing moves them out
        # of the cyclic collector's sight (reference counting still frees them).
        gc.collect()
        gc.freeze()
    return litellm


def is_local_model(model: str) -> bool:
    return model == "local" or model.startswith("local/")


def routed_model(model: str) -> str:
    """The model string litellm receives: the embedded judge goes through our registered custom provider."""
    if is_local_model(model):
        from ..local import ensure_registered, to_litellm_model

        ensure_registered()
        return to_litellm_model(model)
    return model


def check_model(model: str, params: dict[str, Any], *, provider: bool = True) -> None:
    """Raise ConfigurationError when litellm cannot route `model` (before any call is made); warn when the calls
    go to a `provider` that will not know it (UnknownModelWarning)."""
    if not isinstance(model, str) or not model.strip():
        raise ConfigurationError(f"a judge model must be a non-empty string, got {model!r}")
    if is_local_model(model):
        import importlib.util

        if importlib.util.find_spec("xllamacpp") is None:
            raise ConfigurationError(
                "model 'local' needs the embedded judge's runtime: pip install 'judgewidgets[local]'"
            )
        return
    if "mock_response" in params:
        return
    litellm = import_litellm()
    try:
        litellm.get_llm_provider(model=model, api_base=params.get("api_base"))
    except Exception as exc:  # litellm raises BadRequestError subclasses with a long text
        raise ConfigurationError(
            f"litellm cannot route model {model!r}: name the provider as 'provider/model', "
            "e.g. 'openai/gpt-4o-mini', 'anthropic/claude-3-5-haiku-latest', 'ollama/llama3', "
            "or 'openai/<name>' with api_base=... for an OpenAI-compatible server"
        ) from exc
    unknown = unknown_model(model, params) if provider else None
    if unknown is not None:  # a typo, most likely: said before any call, and the provider's 404 ends the run
        warnings.warn(
            f"{unknown} (no price, and the provider will likely answer that it does not exist; a model of a server "
            "of your own needs api_base=...)",
            UnknownModelWarning,
            stacklevel=2,
        )


def unknown_model(model: str, params: Mapping[str, Any]) -> str | None:
    """None when litellm knows `model`, or the calls go to a server of the user's (`api_base`, a provider's base-URL
    variable), the embedded judge or a mocked answer; else what to tell the user, with the closest names litellm
    knows ("litellm does not know model 'openai/gpt4o-mini'; did you mean 'openai/gpt-4o-mini'?")."""
    if is_local_model(model) or "mock_response" in params:
        return None
    from ._openai_http import custom_base_url

    if custom_base_url(model, params) is not None or _known_model(model):
        return None
    close = _closest_models(model)
    hint = f"; did you mean {' or '.join(repr(name) for name in close)}?" if close else ""
    return f"litellm does not know model {model!r}{hint}"


@lru_cache(maxsize=256)
def _known_model(model: str) -> bool:
    try:
        import_litellm().get_model_info(model)
    except Exception:
        return False
    return True


@lru_cache(maxsize=64)
def _closest_models(model: str, n: int = 3) -> tuple[str, ...]:
    """The names litellm's model map knows that are closest to `model`, each as 'provider/name'."""
    import difflib

    prefix, slash, _ = model.partition("/")
    named: dict[str, str] = {}  # the name compared (with the provider when the user gave one) -> shown
    for key, info in import_litellm().model_cost.items():
        provider = str(info.get("litellm_provider") or "") if isinstance(info, dict) else ""
        if not provider or (slash and provider != prefix):
            continue
        full = key if key.startswith(f"{provider}/") else f"{provider}/{key}"
        named.setdefault(full if slash else full.removeprefix(f"{provider}/"), full)
    close = difflib.get_close_matches(model, sorted(named), n=n, cutoff=0.75)
    return tuple(dict.fromkeys(named[name] for name in close))


def supports_logprobs(model: str, params: dict[str, Any]) -> bool:
    """Whether a call can ask `model` for top logprobs without error: the embedded judge, OpenAI-compatible
    endpoints, and providers litellm lists as accepting `logprobs` and `top_logprobs` (OpenAI's chat models,
    Azure, vLLM, Together, Fireworks, DeepSeek, OpenRouter, Vertex, ...). Not: Anthropic, Bedrock, Ollama,
    Mistral, OpenAI's o-series reasoning models, Gemini's own API (no top logprobs), mocked responses."""
    if is_local_model(model):
        return True
    if "mock_response" in params:
        return False
    return _provider_supports_logprobs(model, params.get("api_base"))


@lru_cache(maxsize=256)
def _provider_supports_logprobs(model: str, api_base: str | None) -> bool:
    litellm = import_litellm()
    try:
        name, provider, _, _ = litellm.get_llm_provider(model=model, api_base=api_base)
        supported = litellm.get_supported_openai_params(model=name, custom_llm_provider=provider) or []
    except Exception:
        return False
    return "logprobs" in supported and "top_logprobs" in supported


def counted_model(model: str) -> str:
    """The model whose tokenizer counts `model`'s prompts: its own where litellm knows it, gpt-4o-mini's for the
    embedded judge (close to Qwen's; `Caller.prompt_budget` leaves a margin for the difference)."""
    return "gpt-4o-mini" if is_local_model(model) else routed_model(model)


def count_tokens(model: str, messages: Any) -> int:
    """Prompt tokens of `messages` as litellm counts them for `model` (the embedded judge's with gpt-4o-mini's
    tokenizer): the one estimator of cost estimates and of pacing against a token limit."""
    return int(import_litellm().token_counter(model=counted_model(model), messages=list(messages)))


@lru_cache(maxsize=256)
def context_window(model: str) -> int | None:
    """How many prompt tokens `model` takes, from litellm's bundled model map (None when it does not know)."""
    if is_local_model(model):
        from ..local._runtime import DEFAULT_N_CTX

        return DEFAULT_N_CTX
    litellm = import_litellm()
    try:
        info = litellm.get_model_info(model)
    except Exception:
        return None
    window = info.get("max_input_tokens")  # not max_tokens: in the map that is often the output limit
    return int(window) if window else None


def token_prices(model: str) -> tuple[float, float] | None:
    """(input, output) USD per token (`prices_of`: litellm's bundled map, corrected), or None when it has no price."""
    from ._prices import prices_of

    prices = prices_of(model)
    return None if prices is None else (prices.input, prices.output)


def _error_headers(exc: BaseException) -> dict[str, str] | None:
    """The provider's headers on a litellm exception, lower-cased (litellm keeps them on
    `litellm_response_headers`; its rebuilt `response` has none)."""
    sources = (
        getattr(exc, "litellm_response_headers", None),
        getattr(getattr(exc, "response", None), "headers", None),
        getattr(exc, "headers", None),
    )
    for headers in sources:
        if not headers:
            continue
        try:
            return {str(k).lower(): str(v) for k, v in headers.items()}
        except (TypeError, AttributeError):
            continue
    return None


def response_limits(response: Any) -> LimitReading | None:
    """What a litellm response's headers said about the rate limits: the provider's raw headers
    (`_response_headers`), else those litellm forwards in `_hidden_params["additional_headers"]`."""
    raw = getattr(response, "_response_headers", None)
    if not raw:
        hidden = getattr(response, "_hidden_params", None) or {}
        raw = hidden.get("additional_headers") if isinstance(hidden, dict) else None
    if not raw:
        return None
    try:
        headers = provider_headers(raw)
    except (TypeError, AttributeError):
        return None
    return read_limit_headers(headers) if headers else None


def classify(exc: BaseException) -> CallFailure:
    """Turn any exception from a call into a CallFailure with its HTTP status (None: no response)."""
    status = getattr(exc, "status_code", None)
    if not isinstance(status, int):
        status = None
    name = type(exc).__name__
    if status is None and ("Timeout" in name or isinstance(exc, TimeoutError)):
        status = 408
    headers = _error_headers(exc)
    retry_after = retry_after_of(headers) if headers else None
    limits = read_limit_headers(headers) if headers else None
    code = next((v for v in (getattr(exc, "code", None), getattr(exc, "type", None)) if isinstance(v, str)), None)
    failure = CallFailure(f"{name}: {exc}".strip()[:2000], status, retry_after, limits, code)
    if failure.fix is not None and _configuration_cause(exc):
        failure.fix = None  # e.g. the embedded judge's weights are missing: a 400 that no change of the text mends
    return failure


def _configuration_cause(exc: BaseException) -> bool:
    """Whether judgewidgets' own configuration error lies in the exception's chain (the local provider's)."""
    from .._errors import ConfigurationError, LocalModelError

    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, (ConfigurationError, LocalModelError)):
            return True
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return False


class LiteLLMTransport:
    """Sends a ChatRequest through `litellm.acompletion`; litellm's own retries are off (we retry). The
    provider's rate-limit headers, on answers and on 429s, are handed to the engine's pacing."""

    name = "litellm"
    paced = True

    async def complete(self, request: ChatRequest, timeout: float) -> Completion:
        litellm = import_litellm()
        started = time.perf_counter()
        try:
            response = await litellm.acompletion(
                model=routed_model(request.model),
                messages=list(request.messages),
                timeout=timeout,
                num_retries=0,
                max_retries=0,
                **request.params,
            )
        except Exception as exc:
            failure = classify(exc)
            if failure.status_code == 408 and "timed out after" not in str(failure):
                failure = CallFailure(f"Timeout: timed out after {timeout:g} s ({failure})"[:2000], 408)
            raise failure from exc
        latency = time.perf_counter() - started
        choice = response.choices[0]
        content = choice.message.content or tool_arguments(choice.message)
        logprobs = token_logprobs(getattr(choice, "logprobs", None))
        thinking = getattr(choice.message, "reasoning_content", None)
        return Completion(
            content=content,
            logprobs=logprobs,
            latency_s=latency,
            limits=response_limits(response),
            finish_reason=getattr(choice, "finish_reason", None),
            reasoning=thinking if isinstance(thinking, str) and thinking else None,
            **usage_of(request.model, getattr(response, "usage", None)),
        )


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def usage_of(model: str, usage: Any, *, batch: bool = False) -> dict[str, Any]:
    """The token counts and costs of a litellm `usage` as `Completion` fields, priced by kind (`call_cost`).

    litellm puts Anthropic's cache reads and writes inside `prompt_tokens` and reports them in
    `prompt_tokens_details` (`cached_tokens`, `cache_creation_tokens`, the 1-hour writes in
    `cache_creation_token_details`), as OpenAI's `cached_tokens`. Anthropic does not report thinking tokens apart
    from output tokens (litellm's `reasoning_tokens` for it is an estimate from the text): None there."""
    from ._prices import call_cost, list_cost

    prompt_tokens = _count(getattr(usage, "prompt_tokens", None))
    completion_tokens = _count(getattr(usage, "completion_tokens", None))
    details = getattr(usage, "prompt_tokens_details", None)
    read = _count(getattr(details, "cached_tokens", None))
    write = write_1h = reasoning = None
    if model.startswith("anthropic/") or "claude" in model:  # the one provider that reports cache writes
        write = _count(getattr(details, "cache_creation_tokens", None))
        if write is None:
            write = _count(getattr(usage, "_cache_creation_input_tokens", None))
        if read is not None and write is None:
            write = 0  # Anthropic says both or neither; litellm drops a write of 0
        write_details = getattr(details, "cache_creation_token_details", None)
        write_1h = _count(getattr(write_details, "ephemeral_1h_input_tokens", None))
    else:
        reasoning = _count(getattr(getattr(usage, "completion_tokens_details", None), "reasoning_tokens", None))
    return {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "cost_usd": call_cost(
            model,
            prompt_tokens,
            completion_tokens,
            cache_read_tokens=read,
            cache_write_tokens=write,
            cache_write_1h_tokens=write_1h,
            batch=batch,
        ),
        "prompt_cache_read_tokens": read,
        "prompt_cache_write_tokens": write,
        "reasoning_tokens": reasoning,
        "list_cost_usd": list_cost(model, prompt_tokens, completion_tokens),
    }


def tool_arguments(message: Any) -> str:
    """The arguments of the first tool call of a reply that has no text: a provider that answers a response
    schema through a forced tool (litellm's stand-in for Anthropic models without native structured output)
    returns the verdict there when litellm does not move it into the content itself."""
    calls = getattr(message, "tool_calls", None) or []
    function = getattr(calls[0], "function", None) if calls else None
    return str(getattr(function, "arguments", None) or "")
