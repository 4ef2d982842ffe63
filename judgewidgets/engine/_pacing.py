"""Pacing per endpoint: one limiter per provider endpoint, shared by every judge in the process.

An endpoint is a model at a base URL under one API key (the key by a salted digest, never the key itself):
OpenAI and Anthropic set their limits per model and key. Every judge kind calls through `CallSession`, which
asks the endpoint's `EndpointPacer` before each attempt and tells it how the attempt ended, so panels, pairwise
judges, tournaments, rubric graders, sequential raters, cascades and pipelines in one process share what it
learned, on both transports, across runs and event loops (the sync facade's private loop and a user's own).

How the pace is found, in the order it is trusted:

1. the user's tier, `rpm=` / `tpm=` on any judge;
2. what the provider says on every answer (`x-ratelimit-*`, `anthropic-ratelimit-*`): the pace is then the
   stated limit, a little under it, and a `remaining` of 0 holds the next call back;
3. where nothing is said, the 429s themselves: the accepted rate between two of them (what a bucket that ran dry
   let through) sets the pace, which creeps back up while answers come and the pace is what holds calls back.

A 429 makes the whole endpoint wait (what `retry-after` asks, else a pause that doubles while nothing answers),
not only the request that got it. Before an endpoint has answered once, one call goes alone (its answer may state
the limits, and a low tier is not flooded); then, if it stated none, the calls in flight grow by one per answer
(from 16) until the endpoint shows no limit. The schedule is plain time under a `threading.Lock` and waits are
`asyncio.sleep`, so no asyncio primitive ties a pacer to one loop.

Process-wide sharing is the point, so the pacers live in one explicit object, `rate_limits` (a `RateLimits`):
`rate_limits.table` shows what each endpoint learned, `rate_limits.reset()` forgets it. Under Ray each worker
process has its own (workers do not pool what they learn; a worker learns its share from the provider's answers).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import math
import os
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .._constants import (
    PACING_HEADROOM,
    PACING_MIN_MEASURE_S,
    PACING_MIN_RPS,
    PROBE_HOLD_S,
    PROBE_WINDOW,
    RATE_CREEP_PER_S,
    RATE_DECREASE,
    RATE_LIMIT_PAUSE_S,
    RATE_NEAR_REFUSED,
    RATE_PROBE_PER_S,
    SLOW_START_OPEN,
    SLOW_START_WINDOW,
)
from ._limit_headers import LimitReading

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["EndpointPacer", "RateLimits", "Ticket", "endpoint_identity", "rate_limits"]

Clock = Callable[[], float]
_MAX_PAUSE_S = 60.0  # a pause that doubles while nothing answers stops doubling here
_WINDOW_RECHECK_S = 0.5  # a call waiting for room in the window looks again at least this often


@dataclass(frozen=True)
class Ticket:
    """One attempt let through by a pacer: when it was sent, and how long it waited for the endpoint's pace."""

    sent_at: float
    waited_s: float
    paced: bool
    prompt_tokens: float = 0.0  # the prompt tokens counted before the call (to compare with what was billed)


class EndpointPacer:
    """The pace of one endpoint: what it is known to allow, when the next call may start, and what it did.

    Thread-safe and loop-free: calls from any thread and any event loop share it. Its figures (`rpm`, `tpm`,
    `source`, `answers`, `refusals` (429s), `waited_s`) are what `RateLimits.table` shows.
    """

    def __init__(self, label: str, *, clock: Clock = time.monotonic) -> None:
        self.label = label
        self._clock = clock
        self._lock = threading.Lock()
        # What is known: the user's tier, the provider's statement, and the pace learned from 429s alone.
        self.configured_rpm: float | None = None
        self.configured_tpm: float | None = None
        self.stated_rpm: float | None = None
        self.stated_tpm: float | None = None
        self.learned_rps: float | None = None
        self._headroom = 1.0  # cut by 429s despite a known limit (another client shares it); grows back
        self._token_scale = 1.0  # prompt tokens billed / counted, over recent calls
        # The schedule (monotonic seconds).
        self._next_request = 0.0
        self._next_tokens = 0.0
        self._paused_until = 0.0
        self._window: int | None = PROBE_WINDOW
        self._probe_sent = -math.inf  # when the last call went out alone, before the first outcome
        self._in_flight = 0
        self._queue: deque[_Waiter] = deque()  # calls waiting for the pace, first come first served
        # Learning from 429s.
        self._reacted_at = -math.inf
        self._quiet_pauses = 0
        self._measure_from = clock()  # answers to calls sent since then are measured ...
        self._measured = 0
        self._paused_s = 0.0  # ... over the time since then less the pauses
        self._refused_rps: float | None = None  # the pace a 429 last refused
        self._first_refusal: tuple[float, float] | None = None  # (when, pause) of a first 429 not yet measured
        self._last_creep = clock()
        self._bound_at = -math.inf
        # What it did.
        self.last_answer = clock()
        self.answers = 0
        self.refusals = 0
        self.overloads = 0
        self.fresh_refusals = 0
        self.waited_s = 0.0

    def __repr__(self) -> str:
        pace = self.requests_per_minute()
        shown = "not limited so far" if pace is None else f"{pace:,.0f} requests/min ({self.source})"
        return f"EndpointPacer({self.label}: {shown})"

    # -- what is known ----------------------------------------------------------------------------------------

    @property
    def rpm(self) -> float | None:
        """The request limit per minute known for this endpoint (the user's or the provider's, the lower)."""
        known = [v for v in (self.configured_rpm, self.stated_rpm) if v]
        return min(known) if known else None

    @property
    def tpm(self) -> float | None:
        """The token limit per minute known for this endpoint (the user's or the provider's, the lower)."""
        known = [v for v in (self.configured_tpm, self.stated_tpm) if v]
        return min(known) if known else None

    @property
    def source(self) -> str | None:
        """Where the pace comes from: 'configured' (rpm=/tpm=), 'headers' (the provider said), '429s', or None."""
        if self.configured_rpm or self.configured_tpm:
            return "configured"
        if self.stated_rpm or self.stated_tpm:
            return "headers"
        return "429s" if self.learned_rps else None

    @property
    def counts_tokens(self) -> bool:
        """Whether calls must say their tokens before they start (a token limit is known)."""
        return self.tpm is not None

    def requests_per_minute(self) -> float | None:
        """The pace calls are let through at, per minute (None: not limited)."""
        interval = self._request_interval()
        return 60.0 / interval if interval else None

    def configure(self, rpm: float | None, tpm: float | None) -> None:
        """Take the user's tier (the last one given wins; None leaves a value as it is)."""
        if rpm == self.configured_rpm and tpm == self.configured_tpm:
            return
        with self._lock:
            if rpm is not None:
                self.configured_rpm = float(rpm)
            if tpm is not None:
                self.configured_tpm = float(tpm)
            self._window = None

    def _request_interval(self) -> float:
        rpm = self.rpm
        if rpm:
            return 60.0 / (rpm * PACING_HEADROOM * self._headroom)
        if self.learned_rps:
            return 1.0 / self.learned_rps
        return 0.0

    def _token_rate(self) -> float | None:
        tpm = self.tpm
        return tpm / 60.0 * PACING_HEADROOM * self._headroom if tpm else None

    # -- letting calls through --------------------------------------------------------------------------------

    async def acquire(
        self,
        tokens: float = 0.0,
        *,
        paced: bool = True,
        prompt_tokens: float = 0.0,
        first: bool = False,
        stop: Callable[[], BaseException | None] | None = None,
    ) -> Ticket:
        """Wait until this endpoint's pace lets one more call start, then count it in flight.

        Calls wait in line (first come, first served): only the first sleeps until the pace allows a start, the
        others until they are first, so a pace that changes meanwhile (a limit stated, a 429) applies to every
        call still waiting. `tokens` is what the call will spend against a token limit (prompt and answer), of
        which `prompt_tokens` were counted from its prompt: the count is scaled by what the provider billed for
        earlier prompts against what was counted for them (tokenizers differ). `paced=False` (a scripted
        transport, a mocked answer) only honours a pause the endpoint is in. `first` puts a call that was refused
        at the head of the line (it goes before calls sent after it). `stop` is asked whenever the call wakes: an
        exception it returns is raised at once (the run ended this endpoint; `wake_all` wakes every call waiting).
        Every ticket must be handed back by `answered`, `rate_limited` or `failed`.
        """
        tokens += (self._token_scale - 1.0) * prompt_tokens
        began = self._clock()
        windowed = 0.0  # seconds waited for room in the window (not for the pace)
        if not paced:
            slept = False
            while True:
                if stop is not None and (ended := stop()) is not None:
                    raise ended
                with self._lock:
                    now = self._clock()
                    if now >= self._paused_until:
                        return self._let_through(now, now - began if slept else 0.0, False)
                    wait = self._paused_until - now
                await asyncio.sleep(min(wait, _WINDOW_RECHECK_S) if stop is not None else wait)
                slept = True
        loop = asyncio.get_running_loop()
        me: _Waiter | None = None
        try:
            while True:
                if stop is not None and (ended := stop()) is not None:
                    raise ended
                with self._lock:
                    now = self._clock()
                    if self._first_refusal is not None and now >= self._paused_until:
                        self._settle_first_refusal(now)
                    if me is None:
                        if not self._queue and self._room(now) and self._ready_at(tokens) <= now:
                            return self._claim(now, tokens, 0.0, prompt_tokens)
                        me = _Waiter(loop)
                        if first:
                            self._queue.appendleft(me)
                        else:
                            self._queue.append(me)
                    windowing = False
                    if self._queue[0] is me:
                        if not self._room(now):
                            wait, windowing = _WINDOW_RECHECK_S, True
                        else:
                            wait = self._ready_at(tokens) - now
                            if wait <= 0:
                                self._queue.popleft()
                                me = None
                                self._wake_first()
                                return self._claim(now, tokens, now - began - windowed, prompt_tokens)
                            self._bound_at = now
                    else:
                        wait = _WINDOW_RECHECK_S
                    future = me.future = loop.create_future()
                waiting_since = self._clock()
                with contextlib.suppress(asyncio.TimeoutError, TimeoutError):
                    await asyncio.wait_for(future, wait)
                if windowing:
                    windowed += self._clock() - waiting_since
        finally:
            if me is not None:  # cancelled while waiting: leave the line, and let the next one go
                with self._lock:
                    first = bool(self._queue) and self._queue[0] is me
                    with contextlib.suppress(ValueError):
                        self._queue.remove(me)
                    if first:
                        self._wake_first()

    def _room(self, now: float) -> bool:
        """Whether the window lets one more call be in flight. Before the endpoint's first outcome one call goes
        alone, but never holds the others back for long: every `PROBE_HOLD_S` without an outcome lets one more go
        (a first request that hangs costs the rest a second, not its whole timeout)."""
        if self._window is None or self._in_flight < self._window:
            return True
        return self._window == PROBE_WINDOW and now - self._probe_sent >= PROBE_HOLD_S

    def _ready_at(self, tokens: float) -> float:
        """When the pace lets the next call start (it may be in the past)."""
        ready = max(self._paused_until, self._next_request)
        if tokens and self._token_rate():
            ready = max(ready, self._next_tokens)
        return ready

    def _claim(self, now: float, tokens: float, waited: float, prompt_tokens: float) -> Ticket:
        """Book a start now: the next may follow one interval later (a start that was a little late does not
        push the ones after it back), and its tokens' time later under a token limit."""
        interval = self._request_interval()
        if interval:
            self._next_request = max(self._next_request, now - interval / 2) + interval
        rate = self._token_rate()
        if rate and tokens:
            cost = tokens / rate
            self._next_tokens = max(self._next_tokens, now - cost / 2) + cost
        if self._window == PROBE_WINDOW:
            self._probe_sent = now
        return self._let_through(now, waited, True, prompt_tokens)

    def _let_through(self, now: float, waited: float, paced: bool, prompt_tokens: float = 0.0) -> Ticket:
        waited = max(0.0, waited)
        self.waited_s += waited
        if paced:
            self._in_flight += 1
        return Ticket(sent_at=now, waited_s=waited, paced=paced, prompt_tokens=prompt_tokens)

    # -- how calls ended --------------------------------------------------------------------------------------

    def answered(self, ticket: Ticket, reading: LimitReading | None = None, billed_prompt: int | None = None) -> None:
        """A call was answered: progress, maybe the provider's statement of its limits, and the prompt tokens it
        billed (against those counted before the call, they scale the counts of later calls)."""
        with self._lock:
            if billed_prompt and ticket.prompt_tokens:
                ratio = min(3.0, max(0.5, billed_prompt / ticket.prompt_tokens))
                self._token_scale += 0.2 * (ratio - self._token_scale)
            now = self._clock()
            self._release(ticket)
            self.answers += 1
            self.last_answer = now
            self._quiet_pauses = 0
            if ticket.sent_at >= self._measure_from:
                self._measured += 1
            if reading is not None:
                self._learn(now, reading)
            if ticket.paced:
                self._widen()
            self._creep(now)
            self._wake_first()

    def rate_limited(
        self,
        ticket: Ticket,
        retry_after: float | None,
        reading: LimitReading | None = None,
        *,
        overload: bool = False,
        fresh: bool = True,
    ) -> None:
        """A call was refused with a 429, or the endpoint said it is overloaded (529, 503): the whole endpoint
        pauses, and the pace comes down. `fresh`: the call had not been refused before (`fresh_refusals` counts
        those: a limit that binds refuses them, a request refused forever is never fresh again)."""
        with self._lock:
            now = self._clock()
            self._release(ticket)
            if overload:
                self.overloads += 1
            else:
                self.refusals += 1
            if fresh:
                self.fresh_refusals += 1
            if reading is not None:
                self._learn(now, reading)
            if ticket.sent_at <= self._reacted_at:  # sent before the last pause began: that pause answers it too
                self._wake_first()
                return
            pause = retry_after if retry_after is not None else min(RATE_LIMIT_PAUSE_S * 2**self._quiet_pauses, 60.0)
            pause = max(pause, 0.0)
            self._quiet_pauses += 1
            self._reacted_at = now
            resume = max(self._paused_until, now + pause)
            self._paused_s += resume - max(now, self._paused_until)
            self._paused_until = resume
            self._next_request = resume
            if self.counts_tokens:
                self._next_tokens = max(self._next_tokens, resume)
            if self.rpm or self.tpm:
                self._headroom = max(0.5, self._headroom * RATE_DECREASE)
            else:
                if self._first_refusal is not None:
                    self._settle_first_refusal(now)
                self._learn_from_refusal(now, pause)
            self._last_creep = resume
            self._window = None
            self._wake_first()

    def failed(self, ticket: Ticket) -> None:
        """A call failed otherwise (or was cancelled): it leaves the window, and a first one opens it."""
        with self._lock:
            self._release(ticket)
            if ticket.paced:
                self._widen()
            self._wake_first()

    def wake_all(self) -> None:
        """Wake every call waiting in line, so each asks its `stop` again."""
        with self._lock:
            for waiter in self._queue:
                waiter.wake()

    def stalled_for(self, since: float) -> float:
        """Seconds this endpoint has answered nothing, counted from `since` at the earliest."""
        return self._clock() - max(self.last_answer, since)

    def _release(self, ticket: Ticket) -> None:
        if ticket.paced:
            self._in_flight = max(0, self._in_flight - 1)

    def _widen(self) -> None:
        """One more call may be in flight (from one to 16 at the endpoint's first outcome), until it is open."""
        if self._window is None:
            return
        self._window = SLOW_START_WINDOW if self._window == PROBE_WINDOW else self._window + 1
        if self._window >= SLOW_START_OPEN:
            self._window = None

    def _learn(self, now: float, reading: LimitReading) -> None:
        """Take the limits an answer stated: from then on calls are paced a little under them. (`remaining` is
        not used to hold calls back: it is as old as the answer, and a pace under the limit keeps it above 0.)"""
        if reading.requests_limit:
            self.stated_rpm = reading.requests_limit
        if reading.tokens_limit:
            self.stated_tpm = reading.tokens_limit
        if reading.states_limits:
            self._window = None

    def _learn_from_refusal(self, now: float, pause: float) -> None:
        """The pace from 429s alone. The first refusal sets it, once its pause is over, to what got through
        until then (the answers of calls sent before it, which may come back after it) over at least the pause:
        a bucket's first burst is not a rate. Each later one sets it to a little less than the pace that was
        refused, or than the rate answers came at (pauses left out) when that is lower. The refused pace is
        remembered: below it the pace grows back fast, near it slowly."""
        current = self.learned_rps
        if current is None:
            if self._first_refusal is None:
                self._first_refusal = (now, pause)
            return
        active = now - self._measure_from - (self._paused_s - max(0.0, self._paused_until - now))
        self._refused_rps = current
        answered = self._measured / active if active >= PACING_MIN_MEASURE_S else current
        self._set_pace(now, min(current, answered))

    def _settle_first_refusal(self, now: float) -> None:
        """Once the first refusal's pause is over: the pace from what got through before it."""
        assert self._first_refusal is not None
        refused_at, pause = self._first_refusal
        self._first_refusal = None
        if self._measured == 0:
            return  # nothing answered: the pauses alone hold calls back until something does
        active = refused_at - self._measure_from - (self._paused_s - max(0.0, self._paused_until - refused_at))
        self._set_pace(now, self._measured / max(active, pause))

    def _set_pace(self, now: float, rate: float) -> None:
        self.learned_rps = max(PACING_MIN_RPS, rate * RATE_DECREASE)
        self._measure_from, self._measured = now, 0
        self._paused_s = max(0.0, self._paused_until - now)

    def _creep(self, now: float) -> None:
        """While answers come and the pace is what holds calls back, let it grow: fast while it is well under the
        last pace refused (or none was), slowly near it (the limit may be higher than learned, or another client
        stopped sharing it)."""
        elapsed = now - self._last_creep
        self._last_creep = now
        if elapsed <= 0 or now - self._bound_at > 1.0 or now < self._paused_until:
            return
        step = min(elapsed, 1.0)
        if self.learned_rps is not None and not (self.rpm or self.tpm):
            refused = self._refused_rps
            fast = refused is None or self.learned_rps < RATE_NEAR_REFUSED * refused
            self.learned_rps *= 1.0 + (RATE_PROBE_PER_S if fast else RATE_CREEP_PER_S) * step
        if self._headroom < 1.0:
            self._headroom = min(1.0, self._headroom * (1.0 + RATE_CREEP_PER_S * step))

    def _wake_first(self) -> None:
        """Wake the call first in line (it looks again under the lock)."""
        if self._queue:
            self._queue[0].wake()

    # -- what the user sees -----------------------------------------------------------------------------------

    def holding_back(self) -> str | None:
        """A short account of how this endpoint holds calls back now (None: it does not)."""
        now = self._clock()
        name = self.label.split(" at ")[0]
        if now < self._paused_until:
            return f"{name}: paused {self._paused_until - now:.0f} s by a rate limit"
        if self._queue and now - self._bound_at < 1.0:
            pace = self.requests_per_minute()
            tokens = f", {self.tpm:,.0f} tokens/min" if self.tpm else ""
            return f"{name}: rate limit, {pace:,.0f} calls/min{tokens}" if pace else f"{name}: rate limit{tokens}"
        return None

    def figures(self) -> dict[str, Any]:
        """One row of `RateLimits.table`."""
        return {
            "endpoint": self.label,
            "rpm": self.rpm,
            "tpm": self.tpm,
            "pace_rpm": self.requests_per_minute(),
            "source": self.source,
            "answered": self.answers,
            "rate_limited": self.refusals,
            "overloaded": self.overloads,
            "waited_s": round(self.waited_s, 3),
        }


class _Waiter:
    """A call waiting in an endpoint's line, in whichever event loop it runs."""

    __slots__ = ("future", "loop")

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.future: asyncio.Future[None] | None = None

    def wake(self) -> None:
        future = self.future
        if future is not None:
            with contextlib.suppress(RuntimeError):  # its loop is closed: the call is gone with it
                self.loop.call_soon_threadsafe(_resolve, future)


def _resolve(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


# -- which endpoint a request goes to -------------------------------------------------------------------------

_BASE_ENVS = {"openai": ("OPENAI_BASE_URL", "OPENAI_API_BASE"), "hosted_vllm": ("HOSTED_VLLM_API_BASE",)}


def endpoint_identity(model: str, params: Mapping[str, Any], salt: bytes) -> tuple[str, str, str]:
    """(model, base URL, key digest) of a request: the provider's model name, the base URL it goes to (its
    user:password part left out) and a salted digest of the key it carries (or the provider's environment key)."""
    from ._openai_http import provider_of

    provider = provider_of(model) or "unknown"
    name = model if "/" in model else f"{provider}/{model}"
    base = params.get("api_base") or params.get("base_url")
    if not base:
        base = next((os.environ[v] for v in _BASE_ENVS.get(provider, ()) if os.environ.get(v)), "")
    base = str(base).rstrip("/")
    credentials = ""
    if "@" in base:
        scheme, _, rest = base.partition("://")
        credentials, _, host = rest.rpartition("@")
        base = f"{scheme}://{host}" if rest else base
    key = params.get("api_key") or os.environ.get(f"{provider.upper()}_API_KEY") or ""
    secret = f"{key}\0{credentials}"
    digest = hashlib.blake2b(secret.encode(), key=salt, digest_size=8).hexdigest() if secret != "\0" else ""
    return name, base, digest


class RateLimits:
    """Every endpoint's pacer in this process: the one registry the engine asks (see the module's docstring).

    `rate_limits` is the process's own; build another only to test pacing apart from it. `table` shows what
    each endpoint learned; `reset()` forgets everything (the next call to each endpoint probes it again).
    """

    def __init__(self, *, clock: Clock = time.monotonic) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._pacers: dict[tuple[str, str, str], EndpointPacer] = {}
        self._key_numbers: dict[str, int] = {}
        self._salt = os.urandom(16)

    def __repr__(self) -> str:
        return f"RateLimits({len(self._pacers)} endpoints)"

    def __len__(self) -> int:
        return len(self._pacers)

    def pacer(self, model: str, params: Mapping[str, Any]) -> EndpointPacer:
        """The pacer of the endpoint a request with this model and these arguments goes to."""
        identity = endpoint_identity(model, params, self._salt)
        pacer = self._pacers.get(identity)
        if pacer is None:
            with self._lock:
                pacer = self._pacers.get(identity)
                if pacer is None:
                    pacer = self._pacers[identity] = EndpointPacer(self._label(*identity), clock=self._clock)
        return pacer

    def known(self, model: str, params: Mapping[str, Any]) -> EndpointPacer | None:
        """The pacer of that endpoint when one exists already (nothing is created)."""
        return self._pacers.get(endpoint_identity(model, params, self._salt))

    def limits_for(
        self, model: str, params: Mapping[str, Any], rpm: float | None = None, tpm: float | None = None
    ) -> tuple[str, float | None, float | None]:
        """(endpoint, requests per minute, tokens per minute) known for where such a request goes: `rpm` / `tpm`
        when given (the user's tier), else what its pacer learned from the provider (None: not known). Creates
        no pacer."""
        identity = endpoint_identity(model, params, self._salt)
        pacer = self._pacers.get(identity)
        label = pacer.label if pacer is not None else self._label(*identity)
        if pacer is not None:
            rpm = min(v for v in (rpm, pacer.rpm) if v) if rpm or pacer.rpm else None
            tpm = min(v for v in (tpm, pacer.tpm) if v) if tpm or pacer.tpm else None
        return label, rpm, tpm

    def _label(self, name: str, base: str, digest: str) -> str:
        where = f" at {base}" if base else ""
        if not digest:
            return f"{name}{where}"
        number = self._key_numbers.setdefault(digest, len(self._key_numbers) + 1)
        return f"{name}{where} (key {number})"

    @property
    def pacers(self) -> list[EndpointPacer]:
        """The endpoints' pacers, in the order they were first used."""
        return list(self._pacers.values())

    @property
    def table(self) -> pd.DataFrame:
        """One row per endpoint: its limits (rpm, tpm: the user's or the provider's), the pace calls go at
        (pace_rpm), where that comes from (source), and what happened (answered, rate_limited (429s), overloaded
        (529s, 503s), waited_s)."""
        import pandas as pd

        columns = ["endpoint", "rpm", "tpm", "pace_rpm", "source", "answered", "rate_limited", "overloaded", "waited_s"]
        return pd.DataFrame([p.figures() for p in self.pacers], columns=columns)

    def reset(self) -> None:
        """Forget every endpoint (limits learned, pauses, counts)."""
        with self._lock:
            self._pacers.clear()
            self._key_numbers.clear()

    def __getstate__(self) -> dict[str, Any]:
        raise TypeError("RateLimits belongs to its process; a copy (a Ray worker) uses that process's own")


rate_limits = RateLimits()
"""The process's pacers, one per endpoint: every judge's calls wait for them (`jw.rate_limits.table`,
`jw.rate_limits.reset()`)."""
