"""The public judgment data the tests use, read from the repository's derived copies in notebooks/data (kept
there with their licenses and credits, see notebooks/data/README.md), so a clean checkout runs every data test."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd

DATA = Path(__file__).resolve().parents[1] / "notebooks" / "data"


def _records(name: str) -> list[dict[str, Any]]:
    with (DATA / name).open(encoding="utf-8") as lines:
        return [json.loads(line) for line in lines if line.strip()]


def llmbar_natural() -> list[dict[str, Any]]:
    """LLMBar Natural: 100 pairs with `input`, `output_1`, `output_2` and the gold `label` (1 | 2)."""
    return _records("llmbar_natural.jsonl")


def pandalm_testset() -> list[dict[str, Any]]:
    """PandaLM's human test set v1: 999 comparisons labelled by `annotator1..3` (0 tie, 1, 2)."""
    return _records("pandalm_testset.jsonl")


def arena_hard_battles() -> pd.DataFrame:
    """Arena-Hard-Auto's 1,348 battles: model_a, model_b, winner (model_a | model_b | tie)."""
    return pd.read_json(DATA / "arena_hard_battles.jsonl", lines=True)
