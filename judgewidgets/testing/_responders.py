"""Responders: what the test server answers, as a function of the request body.

A responder is any callable `(request_body: dict) -> str`. The ones shipped here are small frozen
dataclasses rather than closures so that they pickle, which `OpenAITestServer(spawn=True)` needs to hand
them to the server process.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = ["Responder", "echo", "fits_schema", "fixed", "hashed_score", "json_score", "last_user_text"]

Responder = Callable[[dict[str, Any]], str]


def last_user_text(body: dict[str, Any]) -> str:
    """The text of the last user message of a chat request ("" when there is none)."""
    messages = body.get("messages")
    if not isinstance(messages, list):
        return ""
    for message in reversed(messages):
        if isinstance(message, dict) and message.get("role") == "user":
            return content_text(message.get("content"))
    return ""


def content_text(content: Any) -> str:
    """The text of a message's content, whether a string or a list of typed parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(
            part.get("text", "") for part in content if isinstance(part, dict) and part.get("type") == "text"
        )
    return ""


@dataclass(frozen=True)
class _Fixed:
    text: str

    def __call__(self, body: dict[str, Any]) -> str:
        return self.text


@dataclass(frozen=True)
class _JsonScore:
    value: float | int | str
    explanation: str

    def __call__(self, body: dict[str, Any]) -> str:
        return json.dumps({"score": self.value, "explanation": self.explanation})


@dataclass(frozen=True)
class _HashedScore:
    low: int
    high: int

    def __call__(self, body: dict[str, Any]) -> str:
        text = last_user_text(body)
        digest = hashlib.blake2b(text.encode(), digest_size=8).digest()
        score = self.low + int.from_bytes(digest, "big") % (self.high - self.low + 1)
        return json.dumps({"score": score, "explanation": f"Deterministic test score {score}."})


@dataclass(frozen=True)
class _FitsSchema:
    def __call__(self, body: dict[str, Any]) -> str:
        response_format = body.get("response_format") or {}
        schema = (response_format.get("json_schema") or {}).get("schema") or {}
        answer: dict[str, Any] = {}
        for name, spec in (schema.get("properties") or {}).items():
            if not isinstance(spec, dict):
                continue
            if "enum" in spec:
                answer[name] = spec["enum"][0]
            elif spec.get("type") in ("integer", "number"):
                low, high = spec.get("minimum", 1), spec.get("maximum", 5)
                answer[name] = (low + high) // 2 if spec.get("type") == "integer" else (low + high) / 2
            elif spec.get("type") == "boolean":
                answer[name] = True
            else:
                answer[name] = "Fine."
        return json.dumps(answer or {"score": 4, "explanation": "Fine."})


@dataclass(frozen=True)
class _Echo:
    def __call__(self, body: dict[str, Any]) -> str:
        return last_user_text(body)


def fixed(text: str) -> Responder:
    """Always answer `text`."""
    return _Fixed(text)


def json_score(value: float | int | str, explanation: str = "Test explanation.") -> Responder:
    """Always answer `{"score": value, "explanation": explanation}`."""
    return _JsonScore(value, explanation)


def hashed_score(low: int = 1, high: int = 5) -> Responder:
    """Answer `{"score": N, "explanation": ...}`, N in low..high from a stable hash of the last user message.

    Identical prompts get identical scores across runs and processes (unlike the salted built-in `hash`).
    This is the server's default responder.
    """
    if high < low:
        raise ValueError(f"hashed_score needs low <= high, got {low}..{high}")
    return _HashedScore(low, high)


def echo() -> Responder:
    """Answer the text of the last user message."""
    return _Echo()


def fits_schema() -> Responder:
    """Answer a JSON object that fits the request's response schema (its first choice of each enum, the middle of
    each number's range): any template's judge reads a verdict from it. Without a schema, `{"score": 4}`."""
    return _FitsSchema()
