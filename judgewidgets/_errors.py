"""The exceptions judgewidgets raises, in one tree.

```
JudgeWidgetsError
├── ConfigurationError      bad configuration: unknown template, unroutable model, invalid weights, a retry
│                           policy, review policy or Ray runner with impossible settings
├── InputError              bad data: empty batches, mismatched lengths, NaN text, unknown columns
├── JudgeCallError          a model call failed after every retry (status code, retry count and kind attached:
│                           "infrastructure" for outages, "input" for a request the provider refuses as given)
├── ParseError              the judge answered, but no verdict or score could be read from the answer
├── LocalModelError         the embedded judge's runtime or weights are missing or corrupt
├── ShardFailedError        a distributed run's shard kept failing (its worker died more often than allowed)
├── SavedRunError           a saved run cannot be written or read as asked: not a saved run, a format newer than
│                           this judgewidgets reads, a missing table, a folder that would be overwritten
├── RegressionError         `RunComparison.assert_no_regression` found a change beyond its margin (also
│                           an AssertionError, so a test suite reports it as a failure); names the worst items
└── CallFailure             one failed attempt of a call, raised by a Transport (yours too, with the HTTP
                            status) and caught by the engine, which retries it or records a JudgeCallError
```

User errors (`ConfigurationError`, `InputError`) are also `ValueError`s and are raised before any model is
called. Run-time failures (`JudgeCallError`, `ParseError`) are recorded on the vote of the item they hit, so a
batch never loses its other rows; they are raised only by single-call helpers: the readers of a judge's answer
(`Template.read`, `PairwiseJudge.read`) raise `ParseError`, which is also a `ValueError`.
`CallFailure` is defined in `judgewidgets.engine` (it carries the engine's classification of the failure).

Two warnings, not exceptions: `UnknownModelWarning` (a `UserWarning`) when a judge names a hosted model litellm
does not know and no `api_base` (a typo, most likely; the closest names are offered), before any call; and
`CallsFailedWarning` (a `UserWarning`) says after a run that some of its calls
failed, "3 of 8 calls failed: <the most common error>", the line the result's HTML and text also start with.
Jupyter shows it under the cell; `warnings.filterwarnings("ignore", category=jw.CallsFailedWarning)` silences it,
`"error"` makes a script stop on it.
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

__all__ = [
    "CallsFailedWarning",
    "ConfigurationError",
    "InputError",
    "JudgeCallError",
    "JudgeWidgetsError",
    "LocalModelError",
    "ParseError",
    "RegressionError",
    "SavedRunError",
    "ShardFailedError",
    "UnknownModelWarning",
    "configuration_error",
]


class JudgeWidgetsError(Exception):
    """Base class of every exception raised by judgewidgets."""


class ConfigurationError(JudgeWidgetsError, ValueError):
    """A judge, panel, template or run was configured with values that cannot work."""


class InputError(JudgeWidgetsError, ValueError):
    """The data handed to a judge cannot be judged as given."""


class JudgeCallError(JudgeWidgetsError):
    """A model call failed after every retry allowed by the retry policy.

    `kind` is "infrastructure" (the provider or the network failed: retrying later may work) or "input" (the
    provider refuses this request as given: too long for the context, refused by its content policy, invalid;
    not retried, and the message says what to change).
    """

    def __init__(
        self,
        message: str,
        *,
        status_code: int | None = None,
        attempts: int = 1,
        kind: str = "infrastructure",
        waited_s: float = 0.0,
        fault: str | None = None,
    ) -> None:
        super().__init__(message)
        self.status_code = status_code
        self.attempts = attempts
        self.kind = kind
        self.waited_s = waited_s  # seconds the call waited for its endpoint's rate limits
        self.fault = fault  # the engine's name for the answer (engine/_faults.py: "quota_spent", "overloaded", ...)

    @property
    def recorded(self) -> str:
        """The error as a vote records it: prefixed with its kind."""
        return f"{self.kind}: {self}"


class ParseError(JudgeWidgetsError, ValueError):
    """The judge answered, but its answer holds no usable verdict or score; `raw` is the answer."""

    def __init__(self, message: str, *, raw: str = "") -> None:
        super().__init__(message)
        self.raw = raw


class LocalModelError(JudgeWidgetsError):
    """The embedded local judge cannot run: runtime not installed, weights missing or corrupt."""


class ShardFailedError(JudgeWidgetsError):
    """A distributed run's shard failed more often than the runner's `max_retries` allows."""


class SavedRunError(JudgeWidgetsError, ValueError):
    """A saved run cannot be written or read as asked; the message says why and what to do."""


class RegressionError(JudgeWidgetsError, AssertionError):
    """Two runs compared, and the later one is worse than the margin allows.

    `failures` is the summary rows that failed (judge, metric, change, interval), `worst` the worst regressed
    items with their texts; the message names both."""

    def __init__(self, message: str, *, failures: Any = None, worst: Any = None) -> None:
        super().__init__(message)
        self.failures = failures
        self.worst = worst


class CallsFailedWarning(UserWarning):
    """Some calls of a run failed (their votes are recorded, unscored): "N of M calls failed: <the most common
    error>". Warned once after every run method that had failures, of every result kind; filter it by category."""


class UnknownModelWarning(UserWarning):
    """A judge names a hosted model litellm does not know, with no `api_base` of the user's: most likely a typo
    ("litellm does not know model 'openai/gpt4o-mini'; did you mean 'openai/gpt-4o-mini'?"). Warned when the judge
    is made, before any call."""


def configuration_error(what: str, error: ValidationError) -> ConfigurationError:
    """One ConfigurationError naming every field pydantic refused in `what` (a criterion, a review policy)."""
    problems = "; ".join(
        f"{'.'.join(str(p) for p in e['loc']) or 'value'}: {str(e['msg']).removeprefix('Value error, ')}"
        for e in error.errors()
    )
    return ConfigurationError(f"{what}: {problems}")
