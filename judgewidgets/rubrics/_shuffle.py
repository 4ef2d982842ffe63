"""Seeded option shuffling against position bias: one permutation per (item, criterion, judge)."""

from __future__ import annotations

import hashlib
import random

from ._criterion import Criterion


def item_key(submission: str, query: str | None) -> str:
    """A stable key of one item's content (so the same item always gets the same permutations)."""
    return hashlib.sha256(f"{query or ''}\x00{submission}".encode()).hexdigest()[:16]


def option_order(
    criterion: Criterion, seed: int, key: str, criterion_index: int, judge_id: str, shuffle: bool
) -> list[int]:
    """Option indices in the order the judge sees them. Scored options are permuted; NA options stay last."""
    assert criterion.options is not None
    scored = [i for i, o in enumerate(criterion.options) if not o.na]
    na = [i for i, o in enumerate(criterion.options) if o.na]
    if shuffle:
        digest = hashlib.sha256(f"{seed}:{key}:{criterion_index}:{judge_id}".encode()).hexdigest()
        random.Random(int(digest[:16], 16)).shuffle(scored)
    return scored + na
