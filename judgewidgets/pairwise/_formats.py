"""Pairing formats: which candidates meet next. Round robin, Swiss, and adaptive (least certain pairs first).

A comparison is one (candidate, candidate, question) triple, judged in both orders when the judge swaps; no
triple is judged twice. Formats only read the `TournamentState`, so they run the same on a language-model judge
and on a simulated one (see benchmarks/tournament_efficiency.py).
"""

from __future__ import annotations

import math
from typing import Protocol, runtime_checkable

import numpy as np

from .._errors import ConfigurationError
from ._adaptive import Adaptive
from ._state import Proposal, TournamentState, pool_size


@runtime_checkable
class PairingFormat(Protocol):
    """The pairing role: given the state, the next comparisons to judge (an empty list ends the tournament)."""

    name: str

    def default_budget(self, n_candidates: int, n_questions: int) -> int: ...

    def propose(self, state: TournamentState, remaining: int) -> Proposal: ...


class RoundRobin:
    """Every pair on every question, round by round (round r asks question r), all in one concurrent batch.
    A budget cuts the schedule after its first `budget` comparisons, so complete rounds come first."""

    name = "round_robin"

    def default_budget(self, n_candidates: int, n_questions: int) -> int:
        return pool_size(n_candidates, n_questions)

    def propose(self, state: TournamentState, remaining: int) -> Proposal:
        if state.comparisons:
            return []
        k = state.n_candidates
        i, j = np.triu_indices(k, 1)
        schedule: Proposal = []
        for q in range(state.n_questions):
            order = state.rng.permutation(len(i))
            schedule.extend((int(i[p]), int(j[p]), q) for p in order)
            if len(schedule) >= remaining:
                break
        return schedule[:remaining]


class Swiss:
    """Rounds in which candidates with similar points meet, preferring pairs that met least; odd one out sits.

    Without a budget it plays ⌈log2 K⌉ rounds per question.
    """

    name = "swiss"

    def default_budget(self, n_candidates: int, n_questions: int) -> int:
        rounds = max(1, math.ceil(math.log2(n_candidates))) * n_questions
        return min(rounds * (n_candidates // 2), pool_size(n_candidates, n_questions))

    def propose(self, state: TournamentState, remaining: int) -> Proposal:
        k = state.n_candidates
        standing = np.lexsort((state.rng.random(k), -state.points))  # best first, random among equals
        place = np.empty(k, dtype=np.intp)
        place[standing] = np.arange(k)
        open_ = np.maximum(state.available(), state.available().T)
        unpaired = list(standing)
        proposal: Proposal = []
        while len(unpaired) > 1 and len(proposal) < remaining:
            top = unpaired.pop(0)
            options = [c for c in unpaired if open_[top, c]]
            if not options:
                continue
            rival = min(options, key=lambda c: (state.used[top, c], abs(place[c] - place[top])))
            unpaired.remove(rival)
            proposal.append((int(top), int(rival), state.next_question(top, rival)))
        return proposal


FORMATS: dict[str, type] = {"round_robin": RoundRobin, "swiss": Swiss, "adaptive": Adaptive}


def get_format(format: str | PairingFormat) -> PairingFormat:
    """A pairing format from its name ("round_robin", "swiss", "adaptive") or an object with `propose`."""
    if isinstance(format, str):
        if format not in FORMATS:
            raise ConfigurationError(f"unknown tournament format {format!r}; use one of {', '.join(FORMATS)}")
        return FORMATS[format]()
    if isinstance(format, PairingFormat):
        return format
    raise ConfigurationError(f"format must be a name ({', '.join(FORMATS)}) or a PairingFormat, got {format!r}")
