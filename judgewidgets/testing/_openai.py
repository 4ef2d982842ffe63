"""The OpenAI wire format the test server speaks: completions, logprobs, usage and error bodies."""

from __future__ import annotations

import json
import math
import re
import time
from typing import Any

from ._responders import content_text

__all__ = ["LogprobsCache", "completion_body", "error_body", "logprobs_content", "models_body", "word_count"]

# Digits stand alone (so a score is one token), a word keeps one leading space as in BPE vocabularies,
# runs of other whitespace and each punctuation mark are tokens; the tokens join back to the content.
_TOKEN = re.compile(r"\d| ?[^\W\d]+|\s+|[^\w\s]")
_CHOSEN_DIGIT_P = 0.9
_CHOSEN_OTHER_P = 0.999
_FILLER: tuple[str, ...]
_FILLER = (" the", ",", ".", "\n", " a", " and", '"', ":", " is", " of", " to", " in", "}", "{", " not")
_FILLER += (" this", " it", " be", " that", " with")
MALFORMED_BODY = b'{"id": "chatcmpl-malformed", "object": "chat.completion", "choices": [{"message": {"ro'


def word_count(body: dict[str, Any]) -> int:
    """Whitespace-separated words in all messages of a request: the test server's prompt token count."""
    messages = body.get("messages")
    if not isinstance(messages, list):
        return 0
    return sum(len(content_text(m.get("content")).split()) for m in messages if isinstance(m, dict))


def _is_digit(token: str) -> bool:
    return len(token) == 1 and "0" <= token <= "9"


def _alternatives(token: str, chosen_p: float) -> list[tuple[str, float]]:
    """Plausible runners-up of `token` with their probabilities, most likely first."""
    if _is_digit(token):
        d = int(token)
        others = sorted((k for k in range(10) if k != d), key=lambda k: (abs(k - d), k))
        weights = [2.0 ** -abs(k - d) for k in others]
        names = [str(k) for k in others]
    else:
        names = [f for f in _FILLER if f != token]
        weights = [2.0**-i for i in range(len(names))]
    scale = (1 - chosen_p) / sum(weights)
    return [(name, w * scale) for name, w in zip(names, weights, strict=True)]


def _entry(token: str, logprob: float) -> dict[str, Any]:
    return {"token": token, "logprob": logprob, "bytes": list(token.encode())}


def logprobs_content(content: str, top_logprobs: int) -> list[dict[str, Any]]:
    """Per-token logprobs of `content`, deterministic: a digit gets p=0.9 and the other digits share the
    rest, nearer digits more; any other token gets p=0.999. `top_logprobs` alternatives per token."""
    out = []
    for token in _TOKEN.findall(content):
        chosen_p = _CHOSEN_DIGIT_P if _is_digit(token) else _CHOSEN_OTHER_P
        entry = _entry(token, math.log(chosen_p))
        if top_logprobs > 0:
            top = [(token, chosen_p), *_alternatives(token, chosen_p)][:top_logprobs]
            entry["top_logprobs"] = [_entry(t, math.log(p)) for t, p in top]
        else:
            entry["top_logprobs"] = []
        out.append(entry)
    return out


class LogprobsCache:
    """The JSON of `logprobs_content` per (content, top_logprobs), kept for the few answers a test server repeats:
    building and encoding ~11 entries per token dominated the server's CPU under load."""

    def __init__(self, size: int = 1024) -> None:
        self.size = size
        self._json: dict[tuple[str, int], str] = {}

    def json(self, content: str, top_logprobs: int) -> str:
        key = (content, top_logprobs)
        text = self._json.get(key)
        if text is None:
            if len(self._json) >= self.size:
                self._json.clear()
            text = json.dumps({"content": logprobs_content(content, top_logprobs), "refusal": None}, **_COMPACT)
            self._json[key] = text
        return text


_COMPACT: dict[str, Any] = {"separators": (",", ":")}
_SPLICE = "\x00logprobs\x00"


def completion_body(
    body: dict[str, Any],
    content: str,
    completion_id: str,
    prompt_tokens: int | None = None,
    logprobs: LogprobsCache | None = None,
    *,
    completion_tokens: int | None = None,
    usage_details: dict[str, Any] | None = None,
    finish_reason: str = "stop",
) -> bytes:
    """The JSON bytes of a `chat.completion` answering `body` with `content` (logprobs when it asks for them).

    `usage_details` are added to `usage` as given (`prompt_tokens_details`, `completion_tokens_details`)."""
    if completion_tokens is None:
        completion_tokens = len(content.split())
    if prompt_tokens is None:
        prompt_tokens = word_count(body)
    fragment = None
    if body.get("logprobs"):
        fragment = (logprobs or LogprobsCache(0)).json(content, int(body.get("top_logprobs") or 0))
    payload = {
        "id": completion_id,
        "object": "chat.completion",
        "created": int(time.time()),
        "model": body.get("model", "test"),
        "system_fingerprint": "judgewidgets-test",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content, "refusal": None},
                "logprobs": _SPLICE if fragment is not None else None,
                "finish_reason": finish_reason,
            }
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
            **(usage_details or {}),
        },
    }
    text = json.dumps(payload, **_COMPACT)
    if fragment is not None:
        text = text.replace(json.dumps(_SPLICE), fragment, 1)
    return text.encode()


def error_body(message: str, type_: str, code: str | None = None, param: str | None = None) -> bytes:
    """The JSON bytes of an OpenAI error answer."""
    return json.dumps({"error": {"message": message, "type": type_, "param": param, "code": code}}).encode()


def models_body(models: tuple[str, ...]) -> bytes:
    """The JSON bytes of the `GET /v1/models` list."""
    data = [{"id": m, "object": "model", "created": 0, "owned_by": "judgewidgets"} for m in models]
    return json.dumps({"object": "list", "data": data}).encode()
