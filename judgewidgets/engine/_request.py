"""One chat-completion request and the completion it produced, as the engine sees them."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

# Keyword arguments that say where or how to send a request, not what is asked: they never enter a cache
# key, and secrets among them never enter results, caches, logs or reprs.
TRANSPORT_KWARGS = frozenset(
    {"api_key", "timeout", "num_retries", "max_retries", "metadata", "extra_headers", "headers", "client"}
)
SECRET_KWARGS = frozenset({"api_key", "aws_secret_access_key", "aws_session_token", "azure_ad_token"})


@dataclass(frozen=True)
class ChatRequest:
    """A chat-completion call: model, messages, and every other argument for litellm."""

    model: str
    messages: tuple[dict[str, str], ...]
    params: dict[str, Any] = field(default_factory=dict)
    sample: int = 0  # distinguishes repeated samples of one prompt in the cache

    def cache_key(self) -> str:
        """A digest of everything that determines the answer (model, messages, sampling, endpoint)."""
        key = self.__dict__.get("_cache_key")  # computed once: a call looks it up, then stores under it
        if key is None:
            material = {
                "model": self.model,
                "messages": self.messages,
                "params": {
                    k: v for k, v in self.params.items() if k not in TRANSPORT_KWARGS and k not in SECRET_KWARGS
                },
                "sample": self.sample,
            }
            blob = json.dumps(material, sort_keys=True, default=str, ensure_ascii=False)
            key = hashlib.sha256(blob.encode()).hexdigest()
            object.__setattr__(self, "_cache_key", key)
        return key

    def with_messages(self, messages: tuple[dict[str, str], ...]) -> ChatRequest:
        return ChatRequest(self.model, messages, self.params, self.sample)


@dataclass(frozen=True)
class Completion:
    """What came back from one call, with its accounting."""

    content: str
    logprobs: list[dict[str, Any]] | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cost_usd: float | None = None
    latency_s: float = 0.0
    cached: bool = False
    attempts: int = 1

    def to_json(self) -> str:
        return json.dumps(
            {
                "content": self.content,
                "logprobs": self.logprobs,
                "prompt_tokens": self.prompt_tokens,
                "completion_tokens": self.completion_tokens,
                "cost_usd": self.cost_usd,
                "latency_s": self.latency_s,
            }
        )

    @classmethod
    def from_cached_json(cls, blob: str) -> Completion:
        data = json.loads(blob)
        return cls(**data, cached=True)


def redact(text: str, secrets: list[str]) -> str:
    """Replace every secret that occurs in `text` by a mask."""
    for secret in secrets:
        if secret and len(secret) >= 4:
            text = text.replace(secret, "***")
    return text
