"""The public judgment data the tests use, read from the copies that ship as package data (with their licenses
and credits, see judgewidgets/data/README.md), so a clean checkout and an installed package run every data test."""

from __future__ import annotations

from typing import Any

import pandas as pd

from judgewidgets.datasets import arena_hard
from judgewidgets.datasets._load import _records


def llmbar_natural() -> list[dict[str, Any]]:
    """LLMBar Natural: 100 pairs with `input`, `output_1`, `output_2` and the gold `label` (1 | 2)."""
    return _records("llmbar/Natural.jsonl")


def pandalm_testset() -> list[dict[str, Any]]:
    """PandaLM's human test set v1: 999 comparisons labelled by `annotator1..3` (0 tie, 1, 2)."""
    return _records("pandalm/testset-v1.jsonl")


def arena_hard_battles() -> pd.DataFrame:
    """Arena-Hard-Auto's 1,348 battles: model_a, model_b, winner (model_a | model_b | tie)."""
    return arena_hard()
