"""A run's spending limit (`max_cost_usd=`): no call starts that could take the spend past it.

A `Budget` belongs to one run's `CallSession`. Every call the run would pay for (a cache hit, or a request that
shares an answer already on its way, costs nothing) reserves its estimated cost before it starts, under the
per-model concurrency limit; its real cost replaces the reservation when it answers, and a call that failed
releases it (providers do not bill refused or failed requests). A call starts when the spend so far plus the
calls in flight plus its own estimate stay within the limit. When it would fit once the calls in flight have
answered, it waits for them; when it cannot fit even then, it is not run: a JudgeCallError of kind "budget",
which the judges record on the vote (`budget: not run, the budget of $0.50 was reached`) like any other
failure, so a batch is never cut short by a raise. A rerun with a larger budget pays only for those calls: the
cache answers the others.

The estimate is the one `estimate_cost` makes: prompt tokens counted with litellm's token counter, priced from
litellm's model map; the completion at the typical judge answer with an explanation (capped at the request's
`max_tokens`). A real answer longer than that is paid for and counted: the spend can pass the limit by what the
calls in flight used beyond their estimates, never by a call started after the limit was reached.

A model litellm has no price for cannot be budgeted: `check_prices` raises one ConfigurationError before any
call, naming how to register a price; a call that still reaches such a model is not run. The embedded judge
(`local`) costs nothing, so a budget never stops it.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Iterable
from typing import NamedTuple

from .._constants import ESTIMATED_EXPLANATION_TOKENS, ESTIMATED_SCORE_TOKENS
from .._errors import ConfigurationError, JudgeCallError
from ._litellm import count_tokens, token_prices
from ._request import ChatRequest

__all__ = ["BUDGET_KIND", "Budget", "Reservation", "check_max_cost", "check_prices", "dollars", "unpriced_hint"]

BUDGET_KIND = "budget"  # the kind (error prefix) of a call not run for the budget
# The completion a reservation assumes: a judge's answer with its explanation (the larger of the two typical
# lengths `estimate_cost` uses), unless the request caps it lower.
RESERVED_COMPLETION_TOKENS = ESTIMATED_SCORE_TOKENS + ESTIMATED_EXPLANATION_TOKENS


def check_max_cost(max_cost_usd: object) -> float | None:
    """`max_cost_usd` as a float (None: no budget); ConfigurationError for anything but a finite number >= 0."""
    if max_cost_usd is None:
        return None
    if (
        isinstance(max_cost_usd, bool)
        or not isinstance(max_cost_usd, (int, float))
        or not math.isfinite(max_cost_usd)
        or max_cost_usd < 0
    ):
        raise ConfigurationError(
            f"max_cost_usd must be a number of dollars >= 0 (or None for no budget), got {max_cost_usd!r}"
        )
    return float(max_cost_usd)


def dollars(amount: float) -> str:
    """`$0.50`, `$12.00`; small amounts with their significant digits (`$0.0004`)."""
    return f"${amount:.2f}" if amount == 0 or amount >= 0.1 else f"${amount:.2g}"


def unpriced_hint(model: str) -> str:
    """What to do about a budget on a model litellm has no price for."""
    return (
        f"litellm has no price for model {model!r}, so a budget cannot be kept: register one before the run, "
        f"e.g. litellm.register_model({{{model!r}: {{'input_cost_per_token': 1.5e-07, "
        f"'output_cost_per_token': 6e-07}}}}) (0 for a server you do not pay per token), or run without "
        "max_cost_usd"
    )


def check_prices(models: Iterable[str]) -> None:
    """ConfigurationError naming every model litellm has no price for (no call is made)."""
    missing = sorted({m for m in models if token_prices(m) is None})
    if missing:
        raise ConfigurationError("; ".join(unpriced_hint(m) for m in missing))


class Budget:
    """One run's limit in dollars: spent so far, reserved for the calls in flight, and the calls not run."""

    def __init__(self, max_cost_usd: float) -> None:
        limit = check_max_cost(max_cost_usd)
        assert limit is not None
        self.limit = limit
        self.spent = 0.0
        self.reserved = 0.0
        self.in_flight = 0
        self.not_run = 0
        self._estimated = 0.0  # the estimates of the answered calls whose cost is known...
        self._billed = 0.0  # ...and what they cost
        self._settled: asyncio.Event | None = None  # set (and replaced) whenever a call in flight settles

    def __repr__(self) -> str:
        return f"Budget({dollars(self.limit)}, spent {dollars(self.spent)}, {self.not_run} calls not run)"

    @property
    def reached(self) -> bool:
        """Whether a call was not run for this budget."""
        return self.not_run > 0

    def note(self) -> str:
        """One line for the end of a run that the budget cut short."""
        return (
            f"{self.not_run} call{'s' if self.not_run != 1 else ''} not run: the budget of {dollars(self.limit)} "
            f"was reached ({dollars(self.spent)} spent); their rows say so (error 'budget: ...'). Run again "
            "with a larger max_cost_usd to judge them: the cache answers the rest for free."
        )

    @property
    def scale(self) -> float:
        """How much more than estimated the answered calls cost (1 when they cost less): what a reservation is
        multiplied by, so that answers longer than the estimator's typical one (a reasoning model's hidden tokens,
        long explanations) do not carry the spend past the limit once the first have answered."""
        return max(1.0, self._billed / self._estimated) if self._estimated > 0 else 1.0

    def estimate(self, request: ChatRequest) -> float:
        """What `request` is expected to cost (see the module docstring); JudgeCallError when it has no price."""
        prices = token_prices(request.model)
        if prices is None:
            self.not_run += 1
            raise JudgeCallError(f"not run, {unpriced_hint(request.model)}", attempts=0, kind=BUDGET_KIND)
        if prices == (0.0, 0.0):
            return 0.0
        cap = request.params.get("max_tokens")
        completion = RESERVED_COMPLETION_TOKENS
        if isinstance(cap, int) and not isinstance(cap, bool) and cap > 0:
            completion = min(completion, cap)
        return count_tokens(request.model, request.messages) * prices[0] + completion * prices[1]

    async def reserve(self, request: ChatRequest) -> Reservation:
        """Hold the estimated cost of `request` (times `scale`) before it starts, waiting for the calls in flight
        when it fits only after them; JudgeCallError (kind "budget") when it cannot fit."""
        estimate = self.estimate(request)
        while True:
            held = estimate * self.scale  # again after each wait: the answers that came may have changed it
            if self.spent + self.reserved + held <= self.limit:
                break
            if self.in_flight == 0 or self.spent + held > self.limit:
                self.not_run += 1
                raise JudgeCallError(
                    f"not run, the budget of {dollars(self.limit)} was reached", attempts=0, kind=BUDGET_KIND
                )
            if self._settled is None:
                self._settled = asyncio.Event()
            await self._settled.wait()
        self.reserved += held
        self.in_flight += 1
        return Reservation(held, estimate)

    def settle(self, reservation: Reservation, cost: float | None) -> None:
        """A call is over and cost `cost` (None: unknown, counted as held; 0: failed, nothing billed)."""
        if cost is not None and cost > 0:
            self._estimated += reservation.estimate
            self._billed += cost
        self.in_flight -= 1
        self.reserved = self.reserved - reservation.held if self.in_flight else 0.0  # no residue when none is out
        self.spent += reservation.held if cost is None else cost
        if self._settled is not None:
            self._settled.set()
            self._settled = None


class Reservation(NamedTuple):
    """What a call started under a budget holds (`held`) and the estimate it was held for."""

    held: float
    estimate: float
