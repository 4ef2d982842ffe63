"""The call path every judge shares: cache, per-model concurrency limit, pacing, timeout, retries, accounting."""

from __future__ import annotations

import asyncio
import logging
import math
import random
import time
from collections.abc import Awaitable, Callable, Hashable
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

from .._constants import DEFAULT_MAX_CONCURRENCY, DEFAULT_TIMEOUT_S, ESTIMATED_SCORE_TOKENS, OWN_REFUSALS
from .._errors import ConfigurationError, JudgeCallError
from ._batch import Batcher
from ._budget import Budget
from ._cache import CallCache
from ._faults import Action, CallFailure, Fault, classify_failure, not_sent
from ._litellm import classify, count_tokens, is_local_model
from ._pacing import EndpointPacer, RateLimits, rate_limits
from ._request import ChatRequest, Completion, call_secrets, encoding_problem, redact
from ._retry import RetryPolicy
from ._routing import AutoTransport
from ._transport import Transport

logger = logging.getLogger("judgewidgets.engine")
T = TypeVar("T")


@dataclass(frozen=True)
class CallSettings:
    """How a judge's calls are made. Immutable: `with_options` returns a changed copy.

    `rpm` / `tpm` are the endpoint's requests and tokens per minute when the user knows their tier (None: learned
    from the provider's answers); they pace every judge that calls the same endpoint.
    """

    retry: RetryPolicy = field(default_factory=RetryPolicy)
    timeout: float = DEFAULT_TIMEOUT_S
    max_concurrency: int = DEFAULT_MAX_CONCURRENCY
    cache: CallCache | None = None
    transport: Transport = field(default_factory=AutoTransport)
    rpm: float | None = None
    tpm: float | None = None

    def __post_init__(self) -> None:
        if not self.timeout > 0:
            raise ConfigurationError(f"timeout must be > 0 seconds, got {self.timeout}")
        if int(self.max_concurrency) < 1:
            raise ConfigurationError(f"max_concurrency must be >= 1, got {self.max_concurrency}")
        for name, what in (("rpm", "requests"), ("tpm", "tokens")):
            value = getattr(self, name)
            if value is not None and (
                isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < math.inf
            ):
                raise ConfigurationError(
                    f"{name} must be the endpoint's {what} per minute, a number > 0 (or None to learn it from the "
                    f"provider), got {value!r}"
                )

    def with_options(self, **changes: Any) -> CallSettings:
        return replace(self, **changes)


class CallSession:
    """Shared by every call of one run: the per-model concurrency limits live here, not in a global.

    So do the run's transports: judges whose transports are configured alike (each judge of a panel builds its
    own) send their calls through the first of them the run used, so they share its connections, and the pool
    to a server holds as many as the concurrency limit allows rather than that many per judge.

    Rate limits are the one thing shared beyond the run: each attempt waits for its endpoint's pacer in
    `rate_limits` (the process's, unless another `RateLimits` is given), which every run and judge shares.
    """

    def __init__(
        self, rng: random.Random | None = None, *, limits: RateLimits | None = None, budget: Budget | None = None
    ) -> None:
        self.budget = budget  # the run's max_cost_usd, when it has one
        self.batcher: Batcher | None = None  # batch=True: calls go to the providers' batch APIs (engine/_batch.py)
        self._limits: dict[str, asyncio.Semaphore] = {}
        self._transports: dict[Hashable, Transport] = {}
        self._rng = rng or random.Random()
        self._in_flight: dict[str, asyncio.Future[Completion]] = {}
        self._made: dict[Hashable, asyncio.Future[Any]] = {}
        self.caches: set[CallCache] = set()
        self.rate_limits = limits if limits is not None else rate_limits
        self.pacers: dict[int, EndpointPacer] = {}  # the endpoints this run called (for the progress read-out)
        self._ended: dict[EndpointPacer, _Ended] = {}  # endpoints this run sends nothing more to, and why

    def pacer(self, request: ChatRequest, settings: CallSettings) -> EndpointPacer:
        """The pacer of the endpoint `request` goes to, told the user's tier when the settings give one."""
        pacer = self.rate_limits.pacer(request.model, request.params)
        self.pacers.setdefault(id(pacer), pacer)
        if settings.rpm is not None or settings.tpm is not None:
            pacer.configure(settings.rpm, settings.tpm)
        return pacer

    def holding_back(self) -> str | None:
        """How the run's endpoints hold its calls back now, for the progress bar (None: they do not)."""
        parts = [text for pacer in list(self.pacers.values()) if (text := pacer.holding_back())]
        return "; ".join(parts) or None

    def transport(self, transport: Transport) -> Transport:
        """The transport this run sends `transport`'s calls through: the first alike one it used, else itself."""
        key = getattr(transport, "share_key", None)
        if key is None:
            return transport
        return self._transports.setdefault(key, transport)

    async def once(self, key: Hashable, make: Callable[[], Awaitable[T]]) -> tuple[T, bool]:
        """`make()`'s result, made once in this run for `key` however many ask for it, at the same time or later
        (commit-first answers: one per question); and whether this ask made it. A `make` that raises or is
        cancelled is forgotten, so a later ask makes it again."""
        pending = self._made.get(key)
        if pending is not None:
            return await asyncio.shield(pending), False
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        future.add_done_callback(lambda f: f.cancelled() or f.exception())  # no "never retrieved" warnings
        self._made[key] = future
        try:
            result = await make()
        except BaseException as exc:
            del self._made[key]
            if isinstance(exc, asyncio.CancelledError):
                future.cancel()
            else:
                future.set_exception(exc)
            raise
        future.set_result(result)
        return result, True

    def _limit(self, model: str, size: int) -> asyncio.Semaphore:
        limit = self._limits.get(model)
        if limit is None:
            limit = self._limits[model] = asyncio.Semaphore(size)
        return limit

    async def complete(self, request: ChatRequest, settings: CallSettings, secrets: list[str]) -> Completion:
        """One call with everything the engine guarantees; raises JudgeCallError after the last retry.

        Whatever fails for this one request (text that cannot be encoded, an unreadable cache) is raised as a
        JudgeCallError, which the judges record on the vote, so it never costs the rest of a batch.
        """
        problem = encoding_problem(request.messages)
        if problem is not None:
            raise JudgeCallError(problem, status_code=None, attempts=0, kind="input")
        cache = settings.cache
        if cache is not None:
            try:
                if cache not in self.caches:  # a run's first call: take in what killed processes answered
                    self.caches.add(cache)
                    cache.recover()
                hit = cache.get(request)
            except Exception as exc:
                raise JudgeCallError(f"the call cache {cache.path} cannot be read: {exc!r}", attempts=0) from None
            if hit is not None:
                return hit
            return await self._once(request, settings, secrets, cache)
        if self.batcher is not None:
            return await self.batcher.complete(request, settings, secrets, self)
        return await self.live(request, settings, secrets)

    async def live(self, request: ChatRequest, settings: CallSettings, secrets: list[str]) -> Completion:
        """The call sent now (not batched): within the per-model limit and the budget, with its attempts."""
        async with self._limit(request.model, settings.max_concurrency):
            return await self._paid(request, settings, secrets)

    async def _once(
        self, request: ChatRequest, settings: CallSettings, secrets: list[str], cache: CallCache
    ) -> Completion:
        """A cached call made once however many ask for it at the same time: later askers share the answer
        (as a cache hit: they pay nothing), so two identical requests in one run can never disagree."""
        key = request.cache_key()
        pending = self._in_flight.get(key)
        if pending is not None:
            return replace(await asyncio.shield(pending), cached=True)
        future: asyncio.Future[Completion] = asyncio.get_running_loop().create_future()
        future.add_done_callback(lambda f: f.cancelled() or f.exception())  # no "never retrieved" warnings
        self._in_flight[key] = future
        try:
            if self.batcher is not None:
                completion = await self.batcher.complete(request, settings, secrets, self)
            else:
                completion = await self.live(request, settings, secrets)
        except asyncio.CancelledError:
            future.cancel()
            raise
        except BaseException as exc:
            future.set_exception(exc)
            raise
        finally:
            del self._in_flight[key]
        future.set_result(completion)
        try:
            cache.put(request, completion)
        except Exception as exc:  # a full disk: the answer is paid for, so the vote keeps it
            logger.warning("the call cache %s could not keep an answer: %r", cache.path, exc)
        return completion

    async def _paid(self, request: ChatRequest, settings: CallSettings, secrets: list[str]) -> Completion:
        """The call's attempts, within the run's budget when it has one."""
        if self.budget is None:
            return await self._attempts(request, settings, secrets)
        reservation = await self.budget.reserve(request)
        cost: float | None = 0.0  # a failed call is not billed
        try:
            completion = await self._attempts(request, settings, secrets)
            cost = completion.cost_usd
            return completion
        except asyncio.CancelledError:
            cost = None  # it may have been answered (and billed) as it was cancelled
            raise
        finally:
            self.budget.settle(reservation, cost)

    async def _attempts(self, request: ChatRequest, settings: CallSettings, secrets: list[str]) -> Completion:
        """Attempts until one is answered: each waits for its endpoint's pace, and each failure is handled as its
        fault says (engine/_faults.py): waited out endpoint-wide, retried, or final for the row or the endpoint."""
        policy = settings.retry
        transport = self.transport(settings.transport)
        pacer = self.pacer(request, settings)
        paced = getattr(transport, "paced", True) and not _answers_itself(request)
        started = time.monotonic()
        tokens: tuple[float, float] | None = None
        tries = failures = waits = 0
        answers_before = pacer.answers  # to tell whether the endpoint answered other calls while this one waited
        alone: _Refusals | None = None  # this request's refusals, while no other call of the endpoint is refused
        waited = 0.0

        def ended() -> JudgeCallError | None:
            end = self._ended.get(pacer)
            return None if end is None else end.error(tries, waited)

        while True:
            if tokens is None and paced and pacer.counts_tokens:
                tokens = _estimated_tokens(request)
            total, prompt = tokens or (0.0, 0.0)
            ticket = await pacer.acquire(total, paced=paced, prompt_tokens=prompt, first=waits > 0, stop=ended)
            waited += ticket.waited_s
            tries += 1
            try:
                completion = await transport.complete(request, settings.timeout)
            except asyncio.CancelledError:
                pacer.failed(ticket)
                raise
            except Exception as exc:
                fault = classify_failure(exc if isinstance(exc, CallFailure) else classify(exc))
                failure = fault.failure
                hidden = call_secrets(request.params, secrets)
                if fault.action is Action.WAIT:
                    overload = fault.kind == "overloaded"
                    delay = policy.delay(waits, failure.retry_after, self._rng)  # never a tight loop
                    retry_after = failure.retry_after
                    if retry_after is not None:
                        retry_after = min(retry_after, policy.max_retry_after)
                    elif overload:
                        retry_after = delay  # an overload without retry-after: the endpoint backs off too
                    pacer.rate_limited(ticket, retry_after, failure.limits, overload=overload, fresh=waits == 0)
                    alone = _Refusals.after(alone, pacer, time.monotonic())
                    why = _why_stop_waiting(alone, pacer, policy, started, pacer.answers > answers_before)
                    if why is not None:
                        raise _call_error(fault, f"{fault.message()} — {why}", hidden, tries, waited) from None
                    waits += 1
                    await asyncio.sleep(delay)
                    continue
                pacer.failed(ticket)
                if fault.action is Action.END_ENDPOINT:
                    end = self._ended.setdefault(pacer, _Ended(fault, redact(fault.message(), hidden), pacer.label))
                    pacer.wake_all()
                    raise end.error(tries, waited) from None
                if fault.action is Action.RETRY and failures < policy.max_retries:
                    await asyncio.sleep(policy.delay(failures, failure.retry_after, self._rng))
                    failures += 1
                    continue
                raise _call_error(fault, fault.message(), hidden, tries, waited) from None
            pacer.answered(ticket, completion.limits, completion.prompt_tokens)
            if tries > 1 or waited:
                return replace(completion, attempts=tries, waited_s=waited)
            return completion

    def flush(self) -> None:
        for cache in self.caches:
            cache.flush()


def _why_stop_waiting(
    alone: _Refusals, pacer: EndpointPacer, policy: RetryPolicy, started: float, others_answered: bool
) -> str | None:
    """Why a call refused (429) or turned away (overloaded) gives up waiting, or None while it should wait on."""
    if alone.own_failure(policy, others_answered):
        return (
            f"refused {alone.count} times in {alone.span_s:.0f} s while {pacer.label} answered other calls and "
            "refused no new one: this request's own failure (larger than a tokens-per-minute limit?), not a reason "
            "to wait"
        )
    if pacer.stalled_for(started) >= policy.rate_limit_patience:
        return (
            f"{pacer.label} answered nothing for {policy.rate_limit_patience:g} s (RetryPolicy.rate_limit_patience); "
            "a daily limit does not pass with waiting"
        )
    return None


@dataclass(frozen=True)
class _Refusals:
    """One request's refusals (429s, overloads) since its first, while its endpoint refused no fresh call (one
    never refused before: a limit that binds refuses those too; requests refused forever do not count)."""

    count: int
    first_at: float
    last_at: float
    fresh_refusals: int  # the endpoint's refusals of fresh calls at this request's first refusal

    @classmethod
    def after(cls, before: _Refusals | None, pacer: EndpointPacer, now: float) -> _Refusals:
        """The record once one more refusal came: a new one when a fresh call was refused meanwhile."""
        if before is None or pacer.fresh_refusals != before.fresh_refusals:
            return cls(1, now, now, pacer.fresh_refusals)
        return cls(before.count + 1, before.first_at, now, before.fresh_refusals)

    @property
    def span_s(self) -> float:
        return self.last_at - self.first_at

    def own_failure(self, policy: RetryPolicy, others_answered: bool) -> bool:
        """Whether the refusals are this request's own: refused again and again, for long enough, while the
        endpoint answered other calls and refused no new one (a request larger than a token limit)."""
        return others_answered and self.count > OWN_REFUSALS and self.span_s >= policy.own_refusal_patience


@dataclass(frozen=True)
class _Ended:
    """Why a run sends nothing more to an endpoint: the first answer no wait mends (a spent quota, a refused key,
    an unknown model), told to every call of the run that was queued for it."""

    fault: Fault
    message: str  # redacted
    label: str

    def error(self, attempts: int, waited_s: float) -> JudgeCallError:
        text = self.message
        if attempts == 0:
            text = not_sent(text, self.label)
        return JudgeCallError(
            text,
            status_code=self.fault.status_code,
            attempts=attempts,
            waited_s=waited_s,
            fault=self.fault.kind,
        )


def _call_error(fault: Fault, message: str, hidden: list[str], attempts: int, waited_s: float) -> JudgeCallError:
    """The JudgeCallError a vote records for a call that failed for good (keys redacted)."""
    return JudgeCallError(
        redact(message, hidden),
        status_code=fault.status_code,
        attempts=attempts,
        kind="input" if fault.is_input else "infrastructure",
        waited_s=waited_s,
        fault=fault.kind,
    )


def _answers_itself(request: ChatRequest) -> bool:
    """Whether no provider answers this request (the embedded judge, litellm's `mock_response`): nothing to pace."""
    return is_local_model(request.model) or "mock_response" in request.params


def _estimated_tokens(request: ChatRequest) -> tuple[float, float]:
    """What a call spends against a token limit, counted before it is sent, and the prompt's part of it: its
    prompt (the estimator `estimate_cost` uses) and the answer it allows (`max_tokens`, else a short verdict's)."""
    try:
        prompt = count_tokens(request.model, request.messages)
    except Exception:  # no tokenizer for this model: about four characters a token
        prompt = sum(len(str(m.get("content") or "")) for m in request.messages) // 4
    params = request.params
    answer = params.get("max_tokens") or params.get("max_completion_tokens") or ESTIMATED_SCORE_TOKENS
    return float(prompt + int(answer)), float(prompt)
