"""The judging engine's call path: requests, transports, retries, cache, accounting."""

from ._cache import CallCache
from ._client import CallSession, CallSettings
from ._litellm import LiteLLMTransport
from ._openai_http import OpenAIHTTPTransport
from ._request import ChatRequest, Completion
from ._retry import RetryPolicy
from ._routing import AutoTransport, TransportChoice, resolve_transport, select_transport
from ._transport import Transport

__all__ = [
    "AutoTransport",
    "CallCache",
    "CallSession",
    "CallSettings",
    "ChatRequest",
    "Completion",
    "LiteLLMTransport",
    "OpenAIHTTPTransport",
    "RetryPolicy",
    "Transport",
    "TransportChoice",
    "resolve_transport",
    "select_transport",
]
