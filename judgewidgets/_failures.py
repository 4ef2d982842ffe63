"""What went wrong with a judge's failed calls, in words a command-line user can act on.

A vote's `error` keeps the full text (`infrastructure: AuthenticationError: ... (HTTP 401)`); `failure_cause`
names its kind (key refused, connection refused, rate limited, ...), and `judge_failures` sums the failed votes
per judge with the first error, so a run can report one line per judge and decide whether it failed.

`calls_failed_line` is the one rule for telling a user that calls of a run failed ("3 of 8 calls failed: <the most
common error>"), and `warn_calls_failed` says it as a `CallsFailedWarning` after the run; every result kind starts
its HTML and text with the same line (`_saved.Keepable`).
"""

from __future__ import annotations

import re
import warnings
from collections import Counter
from collections.abc import Iterable, Sequence

from pydantic import BaseModel, Field

from ._errors import CallsFailedWarning
from ._records import Vote
from .engine._budget import BUDGET_KIND
from .engine._faults import answered_error

__all__ = [
    "JudgeFailures",
    "calls_failed_line",
    "failure_cause",
    "is_not_run",
    "judge_failures",
    "missing_key_variables",
    "not_run_count",
    "warn_calls_failed",
]

_HTTP_STATUS = re.compile(r"\(HTTP (\d{3})\)")
# litellm: "Missing Anthropic API Key - A call is being made ..."; the openai SDK: "The api_key client option must
# be set either by passing api_key to the client or by setting the OPENAI_API_KEY environment variable".
_KEY_MISSING = re.compile(r"missing [\w ]{0,40}api[ _]key|api_key client option must be set", re.IGNORECASE)

# (substring of the error text, cause), the first match wins; litellm's and the fast path's exception names
# are the same (see engine._openai_http._ERROR_NAMES), so one table reads both.
_CAUSES: tuple[tuple[str, str], ...] = (
    # The engine's own words first (engine/_faults.py): they lead the provider's message.
    ("quota spent", "quota spent (not a rate limit: add credit or use another key)"),
    ("unknown model", "unknown model (check the model name)"),
    ("request too large", "request too large for the endpoint's limit"),
    ("this request's own failure", "refused again and again while other calls were answered"),
    ("overloaded", "provider overloaded"),
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


def calls_failed_line(errors: Iterable[str | None]) -> str:
    """`3 of 8 calls failed: <the most common error>` for the errors a run recorded (None: answered), or "" when
    none failed. The most common error is the first one of the most common cause (`failure_cause`), so errors that
    differ only in a request id count as one; other causes are counted after it. Calls the budget did not run are
    no failure (nothing went wrong; `_saved.not_run_note` says those)."""
    recorded = list(errors)
    failed = [str(e) for e in recorded if e and not is_not_run(e)]
    if not failed:
        return ""
    roots = [answered_error(e) for e in failed]  # a call not sent for another's error fails for that error
    causes = Counter(failure_cause(r) for r in roots)
    cause, count = causes.most_common(1)[0]  # ties: the cause met first
    example = next(r for r in roots if failure_cause(r) == cause)
    line = f"{len(failed)} of {len(recorded)} calls failed: {_shorten(example, 240)}"
    if count < len(failed):
        others = len(failed) - count
        line += f" ({'once' if count == 1 else f'{count} times'}; {others} other error{'s' if others > 1 else ''})"
    return line


def warn_calls_failed(line: str) -> None:
    """Warn `line` (from `calls_failed_line`) as a CallsFailedWarning, every time: a rerun that fails the same way
    is warned again (Python shows a warning once per place, which would hide the second run's)."""
    if line:
        # No registry: each call is shown anew; the filters (category, "ignore", "error") still apply.
        warnings.warn_explicit(line, CallsFailedWarning, "judgewidgets", 0, module="judgewidgets", registry=None)


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
