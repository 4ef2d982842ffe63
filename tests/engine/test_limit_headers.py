"""Reading what providers say about their rate limits: OpenAI's and Anthropic's headers, retry-after, litellm's."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from judgewidgets.engine._limit_headers import parse_duration, provider_headers, read_limit_headers, retry_after_of


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("120ms", 0.12), ("1s", 1.0), ("6m0s", 360.0), ("1h2m3.5s", 3723.5), ("0.5s", 0.5), ("17", 17.0), ("2m", 120.0)],
)
def test_openai_reset_durations(text: str, seconds: float) -> None:
    assert parse_duration(text) == pytest.approx(seconds)


@pytest.mark.parametrize("text", ["", "soon", "1x", "s", "-3", "1s garbage"])
def test_unreadable_durations_are_none(text: str) -> None:
    assert parse_duration(text) is None


def test_openai_headers_on_an_answer() -> None:
    reading = read_limit_headers(
        {
            "x-ratelimit-limit-requests": "500",
            "x-ratelimit-remaining-requests": "499",
            "x-ratelimit-reset-requests": "120ms",
            "x-ratelimit-limit-tokens": "200000",
            "x-ratelimit-remaining-tokens": "199000",
            "x-ratelimit-reset-tokens": "6m0s",
        }
    )
    assert reading is not None and reading.states_limits
    assert (reading.requests_limit, reading.requests_remaining, reading.requests_reset_s) == (500, 499, 0.12)
    assert (reading.tokens_limit, reading.tokens_remaining, reading.tokens_reset_s) == (200_000, 199_000, 360)
    assert reading.retry_after_s is None


def test_anthropic_headers_with_an_rfc3339_reset() -> None:
    now = datetime(2025, 1, 1, 12, 0, 0, tzinfo=timezone.utc)
    reset = (now + timedelta(seconds=30)).isoformat().replace("+00:00", "Z")
    reading = read_limit_headers(
        {
            "anthropic-ratelimit-requests-limit": "50",
            "anthropic-ratelimit-requests-remaining": "0",
            "anthropic-ratelimit-requests-reset": reset,
            "anthropic-ratelimit-input-tokens-limit": "40000",
            "anthropic-ratelimit-input-tokens-remaining": "39000",
            "retry-after": "7",
        },
        now=now.timestamp(),
    )
    assert reading is not None
    assert (reading.requests_limit, reading.requests_remaining) == (50, 0)
    assert reading.requests_reset_s == pytest.approx(30)
    assert reading.tokens_limit == 40_000  # input tokens, when the combined tokens limit is not sent
    assert reading.retry_after_s == 7


def test_retry_after_forms() -> None:
    assert retry_after_of({"retry-after-ms": "250", "retry-after": "3"}) == 0.25
    assert retry_after_of({"retry-after": "2"}) == 2
    now = datetime(2025, 1, 1, tzinfo=timezone.utc)
    assert retry_after_of({"retry-after": "Wed, 01 Jan 2025 00:00:05 GMT"}, now.timestamp()) == pytest.approx(5)
    assert retry_after_of({}) is None
    reading = read_limit_headers({"retry-after": "1"})
    assert reading is not None and not reading.states_limits and reading.retry_after_s == 1


def test_no_limit_headers_is_none() -> None:
    assert read_limit_headers({"content-type": "application/json"}) is None


def test_litellm_forwarded_headers_are_read_under_their_own_names() -> None:
    forwarded = {
        "llm_provider-x-ratelimit-limit-requests": "1200",
        "x-ratelimit-limit-requests": "1200",
        "llm_provider-content-type": "application/json",
        "llm_provider-retry-after": "1",
    }
    assert provider_headers(forwarded) == {"x-ratelimit-limit-requests": "1200", "retry-after": "1"}
