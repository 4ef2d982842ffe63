"""Choosing a stopping rule by name, and the default."""

from __future__ import annotations

from typing import Any

from .._errors import ConfigurationError
from ._confseq import ConfidenceSequenceRule
from ._precision import Precision
from ._rules import SeedRule, SteinRule, StoppingRule, TQuantileRule

# Every built-in rule by its name; `method=` takes one of these or a StoppingRule object.
METHODS: dict[str, type] = {
    "seed": SeedRule,
    "t": TQuantileRule,
    "stein": SteinRule,
    "confidence_sequence": ConfidenceSequenceRule,
}
# The default must keep coverage >= 94.5 % at nominal 95 % with <= 1.15 x the seed's 41.4 judgments on the seed's
# distribution (K = 10, alpha = 0.05). Measured (benchmarks/sequential_coverage.py, 5,000 trials; "t" averaged
# over 12 x 5,000): seed 90.0 % / 41.6; t 95.2 % / 46.6 (1.12 x); stein 94.7 % / 47.1 (1.14 x, p95 65 vs 60);
# confidence_sequence 99.1 % / 120 (2.9 x). "t" is the cheapest that meets the target, with the smallest p95.
DEFAULT_METHOD = "t"


def make_rule(method: str | StoppingRule | None, precision: Precision, pilot: int) -> StoppingRule:
    """The rule for `method` (a name, a rule object, or None for the default) aimed at `precision`."""
    if method is None:
        method = DEFAULT_METHOD
    if isinstance(method, str):
        if method not in METHODS:
            raise ConfigurationError(f"unknown method {method!r}; use one of {', '.join(METHODS)} or a StoppingRule")
        return METHODS[method](precision=precision, pilot=pilot)
    if not isinstance(method, StoppingRule):
        raise ConfigurationError(
            f"method must be a name ({', '.join(METHODS)}) or a StoppingRule, got {type(method).__name__}"
        )
    if method.precision != precision or method.pilot != pilot:
        raise ConfigurationError(
            f"the rule {method!r} aims at scale={method.precision.scale}, K={method.precision.K:g}, "
            f"alpha={method.precision.alpha:g}, pilot={method.pilot} but scale={precision.scale}, "
            f"K={precision.K:g}, alpha={precision.alpha:g}, pilot={pilot} was asked for; build the rule with the "
            "same settings or pass its name"
        )
    return method


def method_name(rule: Any) -> str:
    return str(getattr(rule, "name", type(rule).__name__))
