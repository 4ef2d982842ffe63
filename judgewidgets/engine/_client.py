"""The call path every judge shares: cache, per-model concurrency limit, timeout, retries, accounting."""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Hashable
from dataclasses import dataclass, field, replace
from typing import Any

from .._constants import DEFAULT_MAX_CONCURRENCY, DEFAULT_TIMEOUT_S
from .._errors import ConfigurationError, JudgeCallError
from ._cache import CallCache
from ._litellm import CallFailure, classify
from ._request import ChatRequest, Completion, call_secrets, encoding_problem, redact
from ._retry import RetryPolicy
from ._routing import AutoTransport
from ._transport import Transport

logger = logging.getLogger("judgewidgets.engine")


@dataclass(frozen=True)
class CallSettings:
    """How a judge's calls are made. Immutable: `with_options` returns a changed copy."""

    retry: RetryPolicy = field(default_factory=RetryPolicy)
    timeout: float = DEFAULT_TIMEOUT_S
    max_concurrency: int = DEFAULT_MAX_CONCURRENCY
    cache: CallCache | None = None
    transport: Transport = field(default_factory=AutoTransport)

    def __post_init__(self) -> None:
        if not self.timeout > 0:
            raise ConfigurationError(f"timeout must be > 0 seconds, got {self.timeout}")
        if int(self.max_concurrency) < 1:
            raise ConfigurationError(f"max_concurrency must be >= 1, got {self.max_concurrency}")

    def with_options(self, **changes: Any) -> CallSettings:
        return replace(self, **changes)


class CallSession:
    """Shared by every call of one run: the per-model concurrency limits live here, not in a global.

    So do the run's transports: judges whose transports are configured alike (each judge of a panel builds its
    own) send their calls through the first of them the run used, so they share its connections, and the pool
    to a server holds as many as the concurrency limit allows rather than that many per judge.
    """

    def __init__(self, rng: random.Random | None = None) -> None:
        self._limits: dict[str, asyncio.Semaphore] = {}
        self._transports: dict[Hashable, Transport] = {}
        self._rng = rng or random.Random()
        self._in_flight: dict[str, asyncio.Future[Completion]] = {}
        self.caches: set[CallCache] = set()

    def transport(self, transport: Transport) -> Transport:
        """The transport this run sends `transport`'s calls through: the first alike one it used, else itself."""
        key = getattr(transport, "share_key", None)
        if key is None:
            return transport
        return self._transports.setdefault(key, transport)

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
        async with self._limit(request.model, settings.max_concurrency):
            return await self._attempts(request, settings, secrets)

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
            async with self._limit(request.model, settings.max_concurrency):
                completion = await self._attempts(request, settings, secrets)
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

    async def _attempts(self, request: ChatRequest, settings: CallSettings, secrets: list[str]) -> Completion:
        policy = settings.retry
        transport = self.transport(settings.transport)
        attempt = 0
        while True:
            try:
                completion = await transport.complete(request, settings.timeout)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                failure = exc if isinstance(exc, CallFailure) else classify(exc)
                refused = failure.fix is not None  # the request as given: another attempt gets the same answer
                if refused or attempt >= policy.max_retries or not policy.is_retryable(failure.status_code):
                    message = f"{failure} — to fix: {failure.fix}" if refused else str(failure)
                    raise JudgeCallError(
                        redact(message, call_secrets(request.params, secrets)),
                        status_code=failure.status_code,
                        attempts=attempt + 1,
                        kind="input" if refused else "infrastructure",
                    ) from None
                await asyncio.sleep(policy.delay(attempt, failure.retry_after, self._rng))
                attempt += 1
                continue
            return replace(completion, attempts=attempt + 1) if attempt else completion

    def flush(self) -> None:
        for cache in self.caches:
            cache.flush()
