import random

import pytest

from judgewidgets.engine import RetryPolicy


@pytest.mark.parametrize("status", [408, 409, 429, 500, 502, 503, 504, None])
def test_retryable_statuses(status: int | None) -> None:
    assert RetryPolicy.is_retryable(status)


@pytest.mark.parametrize("status", [400, 401, 403, 404, 422])
def test_client_errors_are_not_retried(status: int) -> None:
    assert not RetryPolicy.is_retryable(status)


def test_backoff_doubles_with_jitter_and_caps() -> None:
    policy = RetryPolicy(initial_delay=0.5, max_delay=8.0, jitter=0.25)
    rng = random.Random(0)
    for attempt, base in [(0, 0.5), (1, 1.0), (2, 2.0), (3, 4.0), (4, 8.0), (6, 8.0)]:
        delay = policy.delay(attempt, rng=rng)
        assert base * 0.75 <= delay <= base


def test_retry_after_lengthens_the_wait_and_is_capped() -> None:
    policy = RetryPolicy(max_retry_after=10)
    assert policy.delay(0, retry_after=3.0) == 3.0
    assert policy.delay(0, retry_after=600) == 10


@pytest.mark.parametrize("retry_after", [0.0, 0.05, -1.0, None])
def test_no_retry_after_shortens_the_backoff(retry_after: float | None) -> None:
    """Whatever the server says (0, a little, a negative number, nothing readable), a retry waits at least its
    jittered backoff: no answer is retried in a tight loop."""
    policy = RetryPolicy(initial_delay=0.5, max_delay=8.0, jitter=0.25)
    rng = random.Random(1)
    assert 0.375 <= policy.delay(0, retry_after=retry_after, rng=rng) <= 0.5
    assert 6.0 <= policy.delay(5, retry_after=retry_after, rng=rng) <= 8.0


@pytest.mark.parametrize("kwargs", [{"max_retries": -1}, {"jitter": 2.0}, {"initial_delay": -1}])
def test_invalid_policies(kwargs: dict) -> None:
    with pytest.raises(ValueError):
        RetryPolicy(**kwargs)
