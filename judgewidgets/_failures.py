"""What went wrong with a judge's failed calls, in words a command-line user can act on.

A vote's `error` keeps the full text (`infrastructure: AuthenticationError: ... (HTTP 401)`); `failure_cause`
names its kind (key refused, connection refused, rate limited, ...), and `judge_failures` sums the failed votes
per judge with the first error, so a run can report one line per judge and decide whether it failed.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from pydantic import BaseModel, Field

from ._records import Vote
from .engine._budget import BUDGET_KIND

__all__ = ["JudgeFailures", "failure_cause", "is_not_run", "judge_failures", "missing_key_variables", "not_run_count"]

_HTTP_STATUS = re.compile(r"\(HTTP (\d{3})\)")
# litellm: "Missing Anthropic API Key - A call is being made ..."; the openai SDK: "The api_key client option must
# be set either by passing api_key to the client or by setting the OPENAI_API_KEY environment variable".
_KEY_MISSING = re.compile(r"missing [\w ]{0,40}api[ _]key|api_key client option must be set", re.IGNORECASE)

# (substring of the error text, cause), the first match wins; litellm's and the fast path's exception names
# are the same (see engine._openai_http._ERROR_NAMES), so one table reads both.
_CAUSES: tuple[tuple[str, str], ...] = (
    ("AuthenticationError", "API key refused (401)"),
    ("PermissionDeniedError", "permission denied (403)"),
    ("RateLimitError", "rate limited (429)"),
    ("Connection refused", "connection refused"),
    ("ConnectionRefusedError", "connection refused"),
    ("Name or service not known", "host not found (no network, or a wrong --api-base)"),
    ("nodename nor servname", "host not found (no network, or a wrong --api-base)"),
    ("Temporary failure in name resolution", "host not found (no network, or a wrong --api-base)"),
    ("gaierror", "host not found (no network, or a wrong --api-base)"),
    ("Timeout", "timed out"),
    ("timed out", "timed out"),
    ("NotFoundError", "model or endpoint not found (404)"),
    ("BadRequestError", "request refused (400)"),
    ("APIConnectionError", "could not connect"),
    ("ServiceUnavailableError", "server unavailable (503)"),
    ("InternalServerError", "server error (5xx)"),
)
_STATUS_CAUSES = {
    400: "request refused (400)",
    401: "API key refused (401)",
    403: "permission denied (403)",
    404: "model or endpoint not found (404)",
    408: "timed out",
    429: "rate limited (429)",
}


def is_not_run(error: str | None) -> bool:
    """Whether a recorded error is a call the run's budget did not start (`budget: not run, ...`)."""
    return bool(error) and str(error).startswith(f"{BUDGET_KIND}:")


def not_run_count(errors: Iterable[str | None]) -> int:
    """How many of the recorded errors are calls the run's budget did not start."""
    return sum(1 for error in errors if is_not_run(error))


def failure_cause(error: str) -> str:
    """A short name for why a call failed, from a vote's `error` text."""
    kind, _, detail = error.partition(": ")
    if kind == "parse":
        return "answers could not be read as a score"
    if kind == "input":
        return "the provider refused the input as given (not an outage: change the text or the model)"
    if kind == "budget":
        return "not run: the budget (max cost) was reached"
    if _KEY_MISSING.search(detail):
        return "API key missing"
    for needle, cause in _CAUSES:
        if needle in detail:
            return cause
    status = _HTTP_STATUS.search(detail)
    if status:
        code = int(status.group(1))
        return _STATUS_CAUSES.get(code, "server error (5xx)" if code >= 500 else f"HTTP {code}")
    return detail.split(": ", 1)[0] or "failed"


class JudgeFailures(BaseModel):
    """One judge's failed votes on a batch."""

    judge: str
    calls: int = Field(description="votes the judge was asked for")
    failed: int = Field(description="votes with an error")
    not_run: int = Field(0, description="of those, votes not run because the run's budget was reached")
    cause: str | None = Field(None, description="the kind of the first error, e.g. 'connection refused'")
    first_error: str | None = Field(None, description="the first error's text, without its category prefix")

    @property
    def fraction(self) -> float:
        """The share of the calls that failed, those not run for the budget left out (nothing went wrong)."""
        return (self.failed - self.not_run) / self.calls if self.calls else 0.0

    @property
    def all_failed(self) -> bool:
        return self.calls > 0 and self.failed - self.not_run == self.calls

    def line(self) -> str:
        """`judge 'X': 8 of 8 calls failed: connection refused (APIConnectionError: ...)`; calls not run for the
        budget are named apart: `judge 'X': 3 of 8 calls not run: the budget was reached`."""
        if not self.failed:
            return f"judge {self.judge!r}: all {self.calls} calls answered"
        skipped = f"{self.not_run} of {self.calls} calls not run: the budget (max cost) was reached"
        if self.failed == self.not_run:
            return f"judge {self.judge!r}: {skipped}"
        detail = f" ({_shorten(self.first_error)})" if self.first_error else ""
        failed = self.failed - self.not_run
        line = f"judge {self.judge!r}: {failed} of {self.calls} calls failed: {self.cause}{detail}"
        return f"{line}; {skipped}" if self.not_run else line


def judge_failures(votes: Sequence[Vote], judges: Sequence[str]) -> list[JudgeFailures]:
    """Per judge, in `judges` order: how many of its votes failed and the first (by item) failure's cause."""
    summaries = []
    for judge in judges:
        mine = sorted((v for v in votes if v.judge == judge), key=lambda v: v.item)
        failed = [v for v in mine if v.error]
        skipped = [v for v in failed if is_not_run(v.error)]
        errors = [v for v in failed if not is_not_run(v.error)] or failed
        first = errors[0].error if errors else None
        summaries.append(
            JudgeFailures(
                judge=judge,
                calls=len(mine),
                failed=len(failed),
                not_run=len(skipped),
                cause=failure_cause(first) if first else None,
                first_error=(first.partition(": ")[2] or first) if first else None,
            )
        )
    return summaries


def missing_key_variables(model: str) -> list[str]:
    """The `*_API_KEY` environment variables litellm says `model` needs and that are not set (no call made).

    Only key variables count: litellm also lists settings with working defaults (an Ollama base URL) or
    credentials found elsewhere (AWS profiles), which would be false alarms.
    """
    from .engine._litellm import import_litellm, is_local_model

    if is_local_model(model):
        return []
    try:
        report = import_litellm().validate_environment(model=model)
    except Exception:
        return []
    return [name for name in report.get("missing_keys", []) if str(name).endswith("_API_KEY")]


def _shorten(text: str, limit: int = 160) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
