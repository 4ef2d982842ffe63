"""One chat-completion request and the completion it produced, as the engine sees them."""

from __future__ import annotations

import hashlib
import json
import os
import re
import sys
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

# Keyword arguments that say where or how to send a request, not what is asked: they never enter a cache
# key, and secrets among them never enter results, caches, logs or reprs.
TRANSPORT_KWARGS = frozenset(
    {"api_key", "timeout", "num_retries", "max_retries", "metadata", "extra_headers", "headers", "client"}
)
SECRET_KWARGS = frozenset({"api_key", "aws_secret_access_key", "aws_session_token", "azure_ad_token"})
HEADER_KWARGS = ("extra_headers", "headers")
# Names of environment variables and litellm settings that hold credentials (OPENAI_API_KEY, litellm.api_key,
# litellm.anthropic_key, AWS_SESSION_TOKEN, ...).
_SECRET_NAME = re.compile(r"(?:^|_)(?:API_?KEY|KEY|TOKEN|SECRET|PASSWORD|CREDENTIALS?)(?:_|$)", re.IGNORECASE)
_MIN_AMBIENT_SECRET = 8  # shorter values of such variables (flags such as "1", "true") are not secrets


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
    """Replace every secret that occurs in `text` by a mask (longest first, so no part of one survives)."""
    for secret in sorted({s for s in secrets if s and len(s) >= 4}, key=len, reverse=True):
        text = text.replace(secret, "***")
    return text


def masked(params: Mapping[str, Any]) -> dict[str, Any]:
    """The arguments as a repr may show them: keys and header values masked, a password in a URL too."""
    shown: dict[str, Any] = {}
    for key, value in params.items():
        if key in SECRET_KWARGS:
            value = "***"
        elif key in HEADER_KWARGS and isinstance(value, Mapping):
            value = {name: "***" for name in value}
        elif key in ("api_base", "base_url") and value and "@" in str(value):
            value = redact(str(value), argument_secrets({key: value}))
        shown[key] = value
    return shown


def argument_secrets(params: Mapping[str, Any]) -> list[str]:
    """The secrets among a call's arguments: keys (`api_key`, ...), header values, a password in `api_base`."""
    found = [str(params[k]) for k in SECRET_KWARGS if params.get(k)]
    for name in HEADER_KWARGS:
        headers = params.get(name)
        if isinstance(headers, Mapping):
            for value in headers.values():
                text = str(value)
                found.append(text)
                scheme, _, token = text.partition(" ")  # "Bearer sk-...": the token alone may be echoed back
                if token and scheme.isalpha():
                    found.append(token.strip())
    for name in ("api_base", "base_url"):
        base = params.get(name)
        if base and "@" in str(base):
            userinfo = str(base).partition("://")[2].partition("@")[0]
            found.append(userinfo.partition(":")[2] or userinfo)
    return found


def _ambient_secrets() -> Iterator[str]:
    """Credentials a call may pick up without being given them: the environment and litellm's settings."""
    for name, value in os.environ.items():
        if _SECRET_NAME.search(name) and len(value) >= _MIN_AMBIENT_SECRET:
            yield value
    litellm = sys.modules.get("litellm")
    if litellm is not None:
        for name, value in list(vars(litellm).items()):
            if isinstance(value, str) and len(value) >= _MIN_AMBIENT_SECRET and _SECRET_NAME.search(name):
                yield value


def call_secrets(params: Mapping[str, Any], given: Sequence[str] = ()) -> list[str]:
    """Every secret a call may use, whatever its source: `given`, its arguments, the environment, litellm."""
    return [*given, *argument_secrets(params), *_ambient_secrets()]


def encoding_problem(messages: tuple[dict[str, str], ...]) -> str | None:
    """Why these messages cannot be sent as UTF-8 (a lone surrogate, common in scraped text), else None."""
    for message in messages:
        content = message.get("content")
        if isinstance(content, str) and not content.isascii():
            try:
                content.encode()
            except UnicodeEncodeError as exc:
                char = content[exc.start]
                return (
                    f"the text holds a character that cannot be encoded as UTF-8 ({char!a}, a lone surrogate, "
                    f"at offset {exc.start} of the {message.get('role', '')} message): remove or replace it, e.g. "
                    "text.encode('utf-8', 'replace').decode()"
                )
    return None
