"""The engine's one fault classifier: what each kind of failed answer means, and what the call path does with it.

Every failed attempt, on either transport and for every judge kind, becomes a `CallFailure` (HTTP status, the
provider's error code or type, its message, `retry-after`) and is sorted here into one `Fault`. `CallSession` then
does what the fault's `action` says; no other module decides whether to wait, retry or give up.

| answer | fault | action |
|---|---|---|
| 429 rate limit (`rate_limit_exceeded`, `rate_limit_error`) | rate_limited | wait, endpoint-wide |
| 529 `overloaded_error`, 503, 502, 504, `server_is_overloaded` | overloaded | wait, endpoint-wide |
| 429 `insufficient_quota`, Anthropic's credit balance, 402, billing | quota_spent | end the endpoint |
| 401, 403 (`invalid_api_key`, `authentication_error`, `permission_error`) | key_refused | end the endpoint |
| 404 `model_not_found`, Anthropic's `not_found_error` naming a model | unknown_model | end the endpoint |
| 429 or 413 "Request too large" (`request_too_large`) | too_large | end the row |
| 400/413/422: context too long, content policy, invalid | refused | end the row |
| other 4xx (a 404 page, a 400 from a broken local runtime) | rejected | end the row |
| 408 and our own timeout, a dropped connection, 500, 409, a malformed body | transient | retry (`max_retries`) |

- *wait*: the endpoint pauses (the answer's `retry-after`, else a pause that doubles) and its pace comes down; the
  call is tried again after at least its own jittered backoff, whatever `retry-after` said (0, negative, garbage),
  so no answer is ever retried in a tight loop. It gives up when the endpoint has answered nothing for
  `RetryPolicy.rate_limit_patience`, or when this one request was refused `OWN_REFUSALS` times while the endpoint
  answered others (a request larger than a tokens-per-minute limit is refused forever).
- *end the endpoint*: no wait mends it. The first such answer ends every call of the run queued for that endpoint
  (model, base URL, key) at once, each recorded with the provider's message; other endpoints go on.
- *end the row*: this request as given is refused; the row records why, and the rest of the batch goes on.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from .._constants import OVERLOAD_STATUS_CODES, RETRYABLE_STATUS_CODES
from .._errors import JudgeWidgetsError
from ._limit_headers import LimitReading

__all__ = ["Action", "CallFailure", "Fault", "answered_error", "classify_failure", "input_fix", "not_sent"]


class CallFailure(JudgeWidgetsError):
    """One failed attempt (a Transport raises it; the engine classifies and catches it).

    `code` is the provider's error code or type when its body names one (`insufficient_quota`, `overloaded_error`,
    `model_not_found`); `fix` is set when the request itself was refused (too long, against a content policy,
    invalid): it says what to change, and such a failure is not retried.
    """

    def __init__(
        self,
        message: str,
        status_code: int | None,
        retry_after: float | None = None,
        limits: LimitReading | None = None,
        code: str | None = None,
    ) -> None:
        super().__init__(message)
        self.status_code = status_code
        self.retry_after = retry_after
        self.limits = limits  # what the answer's headers said about the endpoint's rate limits
        self.code = code
        self.fix = input_fix(status_code, message)


class Action(enum.Enum):
    """What the call path does after a failed attempt."""

    WAIT = "wait"  # pause the endpoint, retry while it makes progress
    RETRY = "retry"  # retry with backoff, up to RetryPolicy.max_retries
    END_ENDPOINT = "end the endpoint"  # final for every call of the run to this endpoint
    END_ROW = "end the row"  # final for this request


@dataclass(frozen=True)
class Fault:
    """One failed attempt, classified: its `kind` (the words a user reads first), the `action`, and, for a request
    refused as given, what to change (`fix`)."""

    kind: str
    action: Action
    failure: CallFailure
    fix: str | None = None

    @property
    def status_code(self) -> int | None:
        return self.failure.status_code

    @property
    def is_input(self) -> bool:
        """Whether the request itself is at fault (recorded as kind "input" on the vote)."""
        return self.fix is not None

    def message(self) -> str:
        """The failure in a user's words: what happened first, then the provider's own message."""
        head = _HEADS.get(self.kind)
        text = str(self.failure)
        if head is not None:
            text = f"{head}: {text}"
        if self.fix is not None:
            text = f"{text} — to fix: {self.fix}"
        return text


# What a user reads first, before the provider's message.
_HEADS = {
    "quota_spent": "quota spent (not a rate limit: waiting does not help; add credit or use another key)",
    "key_refused": "key refused (check the API key and its permissions for this model)",
    "unknown_model": "unknown model (check the model name; the provider says it does not exist here)",
    "too_large": "request too large (larger than the endpoint's token limit: no wait lets it through)",
    "overloaded": "overloaded",
}
FIX_CONTEXT = (
    "the text is longer than the model's context window: shorten the prompt, response or reference (or the "
    "rubric and anchors), use a model with a longer context, or give the server (llama.cpp, vLLM) a larger n_ctx"
)
FIX_POLICY = (
    "the provider refused the text under its content policy: judge this row with another model or provider, "
    "or leave it out"
)
FIX_INVALID = (
    "the provider rejected the request as invalid: check this row's text and the judge's arguments "
    "(model name, max_tokens, response_format), or use another model"
)
FIX_TOO_LARGE = (
    "the request is larger than the endpoint's tokens-per-minute limit (or its request size limit): shorten the "
    "prompt, response or reference, lower max_tokens, or use a model or tier with a higher limit"
)

_QUOTA_MARKERS = (
    "insufficient_quota",
    "exceeded your current quota",
    "credit balance",
    "billing",
    "payment required",
    "spend limit",
)
_KEY_MARKERS = ("invalid_api_key", "incorrect api key", "authentication_error", "permission_error", "invalid x-api-key")
_MODEL_MARKERS = ("model_not_found", "does not exist", "not_found_error", "model not found", "unknown model")
_TOO_LARGE_MARKERS = ("request too large", "request_too_large", "request entity too large")
_OVERLOAD_MARKERS = ("overloaded", "server_is_overloaded")
_CONTEXT_MARKERS = (
    "context length",
    "context_length",
    "context window",
    "context size",
    "contextwindowexceeded",
    "exceed_context_size",
    "maximum context",
    "prompt is too long",
    "input is too long",
    "too many tokens",
)
_POLICY_MARKERS = (
    "content_policy",
    "content policy",
    "contentpolicyviolation",
    "content management policy",
    "content_filter",
    "safety system",
)
_INPUT_STATUS_CODES = frozenset({400, 413, 422})


def classify_failure(failure: CallFailure) -> Fault:
    """The fault of one failed attempt (see the module's table). `failure.fix`, when a transport set it, is kept."""
    status = failure.status_code
    text = f"{failure.code or ''} {failure}".lower()
    if status == 402 or (status in (400, 403, 429) and _has(text, _QUOTA_MARKERS)):
        return Fault("quota_spent", Action.END_ENDPOINT, failure)
    if status in (401, 403) or (status == 400 and _has(text, _KEY_MARKERS)):
        return Fault("key_refused", Action.END_ENDPOINT, failure)
    if status == 404 and _has(text, _MODEL_MARKERS):
        return Fault("unknown_model", Action.END_ENDPOINT, failure)
    if status in (413, 429) and _has(text, _TOO_LARGE_MARKERS):
        return Fault("too_large", Action.END_ROW, failure, FIX_TOO_LARGE)
    if status == 429:
        return Fault("rate_limited", Action.WAIT, failure)
    if status in OVERLOAD_STATUS_CODES or (status is not None and status >= 500 and _has(text, _OVERLOAD_MARKERS)):
        return Fault("overloaded", Action.WAIT, failure)
    if failure.fix is not None:
        return Fault("refused", Action.END_ROW, failure, failure.fix)
    if status is None or status in RETRYABLE_STATUS_CODES or status >= 500:
        return Fault("transient", Action.RETRY, failure)
    return Fault("rejected", Action.END_ROW, failure)


def input_fix(status: int | None, message: str) -> str | None:
    """What to change when a failure was caused by the request as given (None: not the request's fault)."""
    lowered = message.lower()
    if status in _INPUT_STATUS_CODES or "contextwindowexceeded" in lowered or "contentpolicyviolation" in lowered:
        if _has(lowered, _CONTEXT_MARKERS):
            return FIX_CONTEXT
        if _has(lowered, _POLICY_MARKERS):
            return FIX_POLICY
        if status in _INPUT_STATUS_CODES:
            return FIX_INVALID
    return None


def _has(text: str, markers: tuple[str, ...]) -> bool:
    return any(marker in text for marker in markers)


_NOT_SENT = " [not sent: "


def not_sent(message: str, endpoint: str) -> str:
    """The error of a call not sent because another call of its run ended its endpoint: that answer, then why."""
    return f"{message}{_NOT_SENT}{endpoint} answered another call of this run so; it is sent nothing more]"


def answered_error(error: str) -> str:
    """The answer a recorded error stands for: a call that was not sent (`not_sent`) stands for the one that ended
    its endpoint."""
    head, found, _ = error.partition(_NOT_SENT)
    return head if found else error
