"""Choosing few-shot examples from a person's labels: the ones the judge got most wrong, every class alike."""

from __future__ import annotations

import numpy as np

from ._labels import Labels

MAX_EXAMPLE_CHARS = 1500  # a longer labelled item makes every prompt longer than it teaches


def choose_examples(
    rows: np.ndarray,
    labels: Labels,
    baseline: np.ndarray,
    lengths: np.ndarray,
    count: int,
    seed: int,
) -> list[int]:
    """Up to `count` rows among `rows` (never outside them), spread evenly over the classes present; within a
    class, those whose baseline signal lies farthest from the label come first (the corrections a person would
    show), short ones only, ties broken by a seeded shuffle. Sorted by class then row, so a prompt is stable."""
    if count <= 0 or len(rows) == 0:
        return []
    rng = np.random.default_rng(seed)
    short = rows[lengths[rows] <= MAX_EXAMPLE_CHARS]
    classes = [c for c in np.unique(labels.codes[short])]
    if not classes:
        return []
    per_class = {c: count // len(classes) for c in classes}
    for c in rng.permutation(classes)[: count % len(classes)]:
        per_class[c] += 1
    chosen: list[int] = []
    for c in classes:
        members = short[labels.codes[short] == c]
        members = members[rng.permutation(len(members))]
        error = np.abs(np.nan_to_num(baseline[members], nan=0.5) - labels.targets[members])
        ranked = members[np.argsort(-error, kind="stable")]
        chosen.extend(int(r) for r in ranked[: per_class[c]])
    return sorted(chosen, key=lambda r: (labels.codes[r], r))
