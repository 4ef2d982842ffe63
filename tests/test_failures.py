"""Naming why calls failed, from the errors recorded on votes."""

from __future__ import annotations

import pytest

from judgewidgets._failures import JudgeFailures, failure_cause, judge_failures, missing_key_variables
from judgewidgets._records import Vote


@pytest.mark.parametrize(
    ("error", "cause"),
    [
        (
            "infrastructure: APIConnectionError: ConnectionRefusedError: [Errno 111] Connection refused",
            "connection refused",
        ),
        (
            "infrastructure: APIConnectionError: ConnectionRefusedError: [Errno 111] Connect call failed ('::1', 9)",
            "connection refused",
        ),
        (
            "infrastructure: APIConnectionError: gaierror: [Errno -2] Name or service not known",
            "host not found (no network, or a wrong --api-base)",
        ),
        (
            "infrastructure: AuthenticationError: litellm.AuthenticationError: Missing Anthropic API Key - A call is",
            "API key missing",
        ),
        ("infrastructure: AuthenticationError: Incorrect API key provided (HTTP 401)", "API key refused (401)"),
        ("infrastructure: RateLimitError: slow down (HTTP 429)", "rate limited (429)"),
        ("infrastructure: Timeout: no answer within 120 s", "timed out"),
        ("infrastructure: NotFoundError: model 'x' does not exist (HTTP 404)", "model or endpoint not found (404)"),
        ("infrastructure: APIError: teapot (HTTP 418)", "HTTP 418"),
        ("infrastructure: ServiceUnavailableError: overloaded (HTTP 503)", "provider overloaded"),
        ("infrastructure: ServiceUnavailableError: down for maintenance (HTTP 503)", "server unavailable (503)"),
        (
            "infrastructure: quota spent (not a rate limit: ...): RateLimitError: You exceeded",
            "quota spent (not a rate limit: add credit or use another key)",
        ),
        (
            "input: request too large (larger than ...): RateLimitError: Request too large for gpt-4o",
            "the provider refused the input as given (not an outage: change the text or the model)",
        ),
        ("parse: the judge returned an empty answer", "answers could not be read as a score"),
    ],
)
def test_failure_cause(error: str, cause: str) -> None:
    assert failure_cause(error) == cause


def test_judge_failures_count_per_judge_and_keep_the_first_error() -> None:
    refused = "infrastructure: APIConnectionError: ConnectionRefusedError: [Errno 111] Connection refused"
    votes = [
        Vote(item=1, judge="a", score=float("nan"), error="parse: nothing to read"),
        Vote(item=0, judge="a", score=float("nan"), error=refused),
        Vote(item=2, judge="a", score=0.5),
        Vote(item=0, judge="b", score=1.0),
    ]
    a, b = judge_failures(votes, ["a", "b"])
    assert (a.calls, a.failed, a.cause, a.all_failed) == (3, 2, "connection refused", False)
    assert a.first_error == "APIConnectionError: ConnectionRefusedError: [Errno 111] Connection refused"
    assert a.line() == f"judge 'a': 2 of 3 calls failed: connection refused ({a.first_error})"
    assert b == JudgeFailures(judge="b", calls=1, failed=0)


def test_missing_key_variables_names_only_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    assert missing_key_variables("openai/gpt-4o-mini") == ["OPENAI_API_KEY"]
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    assert missing_key_variables("openai/gpt-4o-mini") == []
    assert missing_key_variables("local") == []
    monkeypatch.delenv("OLLAMA_API_BASE", raising=False)
    assert missing_key_variables("ollama/llama3") == []  # its base URL has a working default


def test_input_caused_failures_are_told_apart_from_outages() -> None:
    from judgewidgets._failures import failure_cause

    cause = failure_cause("input: BadRequestError: the prompt (5000 tokens) exceeds the context (4096); shorten it")
    assert "not an outage" in cause and "refused the input" in cause
    assert failure_cause("infrastructure: APIConnectionError: Connection refused") == "connection refused"
