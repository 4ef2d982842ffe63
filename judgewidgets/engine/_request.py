"""One chat-completion request and the completion it produced, as the engine sees them."""

from __future__ import annotations

import hashlib
import json
import os
import re
import sys
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from ._limit_headers import LimitReading

try:  # orjson is optional: ~3x faster than json for request bodies and cached answers, and byte-identical for them
    import orjson

    def compact_json(value: Any) -> bytes:
        """Compact UTF-8 JSON (as the openai SDK sends it)."""
        return orjson.dumps(value)

    loads = orjson.loads
except ImportError:  # pragma: no cover - exercised where orjson is not installed

    def compact_json(value: Any) -> bytes:
        """Compact UTF-8 JSON (as the openai SDK sends it)."""
        return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()

    def loads(data: bytes | bytearray | memoryview | str) -> Any:
        return json.loads(bytes(data) if isinstance(data, memoryview) else data)


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
        """A digest of everything that determines the answer (model, messages, sampling, endpoint).

        It is the SHA-256 of `json.dumps({"messages", "model", "params", "sample"}, sort_keys=True,
        ensure_ascii=False)` (keys and secrets left out of the params), fed piece by piece so that the parts
        every request of a run shares, its params and its system message, are encoded once (`_encoded`).
        """
        key = self.__dict__.get("_cache_key")  # computed once: a call looks it up, then stores under it
        if key is None:
            digest = hashlib.sha256(b'{"messages": [')
            for i, message in enumerate(self.messages):
                if i:
                    digest.update(b", ")
                digest.update(_encoded_message(message))
            digest.update(b'], "model": ' + _json(self.model) + b', "params": ')
            digest.update(_encoded_params(_Same(self.params)))
            digest.update(b', "sample": ' + _json(self.sample) + b"}")
            key = digest.hexdigest()
            object.__setattr__(self, "_cache_key", key)
        return key

    def with_messages(self, messages: tuple[dict[str, str], ...]) -> ChatRequest:
        return ChatRequest(self.model, messages, self.params, self.sample)

    def prefilled(self, messages: tuple[dict[str, str], ...], start: str, max_tokens: int) -> ChatRequest:
        """`messages` followed by the start of the answer, for the model to continue: no response schema (it
        would restart the JSON the start began) and at most `max_tokens` more."""
        params = {k: v for k, v in self.params.items() if k != "response_format"} | {"max_tokens": max_tokens}
        return ChatRequest(self.model, (*messages, {"role": "assistant", "content": start}), params, self.sample)


# What json.dumps(value, sort_keys=True, default=str, ensure_ascii=False) uses, built once (json.dumps builds
# an encoder per call when given options, which cost more than encoding a short message).
_KEY_ENCODER = json.JSONEncoder(sort_keys=True, default=str, ensure_ascii=False)


def _json(value: Any) -> bytes:
    """The bytes `cache_key` hashes for one value."""
    return _KEY_ENCODER.encode(value).encode()


class _Same:
    """A params dict looked up by identity: a run's requests share one, which is never changed once made."""

    __slots__ = ("value",)

    def __init__(self, value: dict[str, Any]) -> None:
        self.value = value

    def __hash__(self) -> int:
        return id(self.value)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Same) and other.value is self.value


@lru_cache(maxsize=64)
def _encoded_params(params: _Same) -> bytes:
    return _json({k: v for k, v in params.value.items() if k not in TRANSPORT_KWARGS and k not in SECRET_KWARGS})


def _encoded_message(message: dict[str, Any]) -> bytes:
    content = message.get("content")
    if isinstance(content, str) and len(content) > 256 and len(message) == 2 and "role" in message:
        return _encoded_long_message(str(message["role"]), content)  # a system message, the same all run long
    return _json(message)


@lru_cache(maxsize=64)
def _encoded_long_message(role: str, content: str) -> bytes:
    return _json({"content": content, "role": role})


def token_logprobs(logprobs: Any) -> list[dict[str, Any]] | None:
    """The per-token logprobs of a choice, as plain dicts (token, logprob, top_logprobs): the one reader both
    transports use. `logprobs` is the choice's `logprobs` field as JSON (a dict) or as litellm's object."""
    content = logprobs.get("content") if isinstance(logprobs, Mapping) else getattr(logprobs, "content", None)
    if not content:
        return None
    tokens = [token if isinstance(token, Mapping) else token.model_dump() for token in content]
    return [
        {
            "token": token.get("token"),
            "logprob": token.get("logprob"),
            "top_logprobs": [
                {"token": t.get("token"), "logprob": t.get("logprob")} for t in token.get("top_logprobs") or ()
            ],
        }
        for token in tokens
    ]


@dataclass(frozen=True)
class Completion:
    """What came back from one call, with its accounting.

    `waited_s` is how long the call waited for its endpoint's pace (rate limits) before its attempts were sent;
    `limits` is what the answer's headers said about the endpoint's limits (read by the engine, never cached).
    Prompt-cache and reasoning token counts are None where the provider does not report them; `cost_usd` prices
    each kind at its own price, `list_cost_usd` the same tokens at list price. `finish_reason` is the provider's
    ("length" when the token budget ran out) and `reasoning` the model's thinking text, kept apart from `content`.
    """

    content: str
    logprobs: list[dict[str, Any]] | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cost_usd: float | None = None
    latency_s: float = 0.0
    cached: bool = False
    attempts: int = 1
    waited_s: float = 0.0
    limits: LimitReading | None = field(default=None, compare=False, repr=False)
    prompt_cache_read_tokens: int | None = None
    prompt_cache_write_tokens: int | None = None
    reasoning_tokens: int | None = None
    list_cost_usd: float | None = None
    finish_reason: str | None = None
    reasoning: str | None = None
    batch_id: str | None = None  # the provider's batch it was answered in (a batch API's); None for a live call

    def to_json(self) -> str:
        """The cached form: JSON text without raw tabs or newlines (the call journal is line-based)."""
        fields = {
            "content": self.content,
            "logprobs": self.logprobs,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "cost_usd": self.cost_usd,
            "latency_s": self.latency_s,
        }
        for name in _SAID_FIELDS:  # written only when said: answers cached before them read back the same
            if getattr(self, name) is not None:
                fields[name] = getattr(self, name)
        try:
            return compact_json(fields).decode()
        except (TypeError, ValueError):  # orjson refuses a lone surrogate the model sent; json escapes it
            return json.dumps(fields)

    @classmethod
    def from_cached_json(cls, blob: str) -> Completion:
        try:
            data = loads(blob)
        except ValueError:  # orjson refuses the escaped lone surrogates that `to_json`'s fallback writes
            data = json.loads(blob)
        return cls(**data, cached=True)


_SAID_FIELDS = (
    "prompt_cache_read_tokens",
    "prompt_cache_write_tokens",
    "reasoning_tokens",
    "list_cost_usd",
    "finish_reason",
    "reasoning",
    "batch_id",
)


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


def unencodable(text: str) -> str | None:
    """Why `text` cannot be sent as UTF-8 (a lone surrogate, as `json.loads('"\\ud83d"')` gives and scraped
    text often holds), else None."""
    if text.isascii():
        return None
    try:
        text.encode()
    except UnicodeEncodeError as exc:
        return (
            f"holds a character that cannot be encoded as UTF-8 ({text[exc.start]!a}, a lone surrogate, at offset "
            f"{exc.start}); remove or replace it, e.g. text.encode('utf-8', 'replace').decode()"
        )
    return None


def encoding_problem(messages: tuple[dict[str, str], ...]) -> str | None:
    """Why these messages cannot be sent, when one of them cannot be encoded as UTF-8; else None."""
    for message in messages:
        content = message.get("content")
        problem = unencodable(content) if isinstance(content, str) else None
        if problem is not None:
            return f"the {message.get('role', '')} message {problem}"
    return None


def request_text(messages: Sequence[Mapping[str, Any]]) -> str:
    """A request's messages as a person reads them (what a judge's `preview` shows): `[role]` and the text of each."""
    return "\n\n".join(f"[{m['role']}]\n{m['content']}" for m in messages)
