"""Which transport carries a request: the one place that decides between the fast path and litellm.

The fast path (`OpenAIHTTPTransport`) is the default wherever it applies: the provider speaks OpenAI's chat API
(`openai/...` with or without `api_base`, `hosted_vllm/...` with a base URL, a bare OpenAI model name) and every
argument is one the chat API defines. Everything else (anthropic, ollama, the embedded `local` judge, a request
carrying litellm-only arguments such as `mock_response`) goes through litellm.
"""

from __future__ import annotations

from collections.abc import Coroutine, Hashable, Mapping
from typing import Any, Literal

from .._errors import ConfigurationError
from ._litellm import LiteLLMTransport, is_local_model
from ._openai_http import BODY_KWARGS, ROUTING_KWARGS, OpenAIHTTPTransport, openai_endpoint
from ._request import ChatRequest, Completion
from ._transport import Transport

__all__ = ["AutoTransport", "TransportChoice", "resolve_transport", "select_transport"]

TransportChoice = Literal["auto", "fast", "litellm"]
_FAST_KWARGS = BODY_KWARGS | ROUTING_KWARGS


def select_transport(model: str, params: Mapping[str, Any]) -> Literal["fast", "litellm"]:
    """'fast' when `model` with `params` can go straight to an OpenAI-compatible endpoint, else 'litellm'."""
    if is_local_model(model):
        return "litellm"
    for key in params:
        if key not in _FAST_KWARGS:
            return "litellm"
    return "fast" if openai_endpoint(model, params) is not None else "litellm"


class AutoTransport:
    """The default transport: each request takes the path `select_transport` chooses for it.

    Deciding per request keeps a judge correct when `with_options` changes its model or endpoint. The two
    transports it holds (and the fast path's connection pools) are shared by every copy of the judge.
    """

    name = "auto"
    paced = True

    def __init__(self, fast: OpenAIHTTPTransport | None = None, litellm: Transport | None = None) -> None:
        self.fast = fast or OpenAIHTTPTransport()
        self.litellm = litellm or LiteLLMTransport()

    def __repr__(self) -> str:
        return "AutoTransport()"

    @property
    def share_key(self) -> Hashable | None:
        """Equal for AutoTransports built alike from the shipped transports (see `CallSession.transport`)."""
        if type(self.fast) is not OpenAIHTTPTransport or type(self.litellm) is not LiteLLMTransport:
            return None
        return (type(self), self.fast.share_key)

    def route(self, request: ChatRequest) -> Transport:
        """The transport this request takes."""
        return self.fast if select_transport(request.model, request.params) == "fast" else self.litellm

    def complete(self, request: ChatRequest, timeout: float) -> Coroutine[Any, Any, Completion]:
        """The chosen transport's attempt, handed back unawaited: no extra coroutine frame per call."""
        return self.route(request).complete(request, timeout)


def resolve_transport(transport: Transport | TransportChoice | None) -> Transport:
    """A Transport from a judge's `transport=` argument: None or 'auto' (the fast path where it applies),
    'fast' (always the OpenAI-compatible HTTP path), 'litellm' (always litellm), or a Transport object."""
    if transport is None or transport == "auto":
        return AutoTransport()
    if transport == "fast":
        return OpenAIHTTPTransport(forced=True)
    if transport == "litellm":
        return LiteLLMTransport()
    if isinstance(transport, str) or not isinstance(transport, Transport):
        raise ConfigurationError(
            f"transport must be 'auto', 'fast', 'litellm' or a Transport object, got {transport!r}"
        )
    return transport
