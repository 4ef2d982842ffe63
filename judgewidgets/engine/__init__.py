"""The judging engine's call path: requests, transports, retries, cache, accounting."""

from ._cache import CallCache
from ._client import CallSession, CallSettings
from ._litellm import LiteLLMTransport
from ._request import ChatRequest, Completion
from ._retry import RetryPolicy
from ._transport import Transport

__all__ = [
    "CallCache",
    "CallSession",
    "CallSettings",
    "ChatRequest",
    "Completion",
    "LiteLLMTransport",
    "RetryPolicy",
    "Transport",
]
