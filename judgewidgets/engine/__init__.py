"""The judging engine's call path: requests, transports, retries, cache, accounting."""

from ._ask import Answer, ask
from ._cache import CallCache
from ._caller import Caller, resolve_cache
from ._client import CallSession, CallSettings
from ._limit_headers import LimitReading
from ._litellm import CallFailure, LiteLLMTransport
from ._openai_http import OpenAIHTTPTransport
from ._pacing import EndpointPacer, RateLimits, rate_limits
from ._request import ChatRequest, Completion
from ._retry import RetryPolicy
from ._routing import AutoTransport, TransportChoice, resolve_transport, select_transport
from ._transport import Transport
from ._usage import Usage

__all__ = [
    "Answer",
    "AutoTransport",
    "CallCache",
    "CallFailure",
    "CallSession",
    "CallSettings",
    "Caller",
    "ChatRequest",
    "Completion",
    "EndpointPacer",
    "LimitReading",
    "LiteLLMTransport",
    "OpenAIHTTPTransport",
    "RateLimits",
    "RetryPolicy",
    "Transport",
    "TransportChoice",
    "Usage",
    "ask",
    "rate_limits",
    "resolve_cache",
    "resolve_transport",
    "select_transport",
]
