"""Loaders of the shipped judgment data, as tables in the shape the pairwise tools read."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from importlib import resources
from typing import Any

import pandas as pd

from .._errors import InputError

LLMBAR_SUBSETS = ("Natural", "Adversarial-Neighbor", "Adversarial-GPTInst", "Adversarial-GPTOut", "Adversarial-Manual")
_SHORT = {name.removeprefix("Adversarial-").lower(): name for name in LLMBAR_SUBSETS}
_PANDALM_LABELS = {"0": "tie", "1": "A", "2": "B"}


def _records(path: str) -> list[dict[str, Any]]:
    with resources.files("judgewidgets").joinpath(f"data/{path}").open(encoding="utf-8") as lines:
        return [json.loads(line) for line in lines if line.strip()]


def subset_name(subset: str) -> str:
    """The LLMBar subset a name means ("Natural", "Adversarial-GPTInst", or short: "gptinst", "manual")."""
    if subset in LLMBAR_SUBSETS:
        return subset
    name = _SHORT.get(str(subset).lower().removeprefix("adversarial-"))
    if name is None:
        raise InputError(f"unknown LLMBar subset {subset!r}; use one of {', '.join(LLMBAR_SUBSETS)}")
    return name


def llmbar(subsets: str | Sequence[str] = LLMBAR_SUBSETS) -> pd.DataFrame:
    """LLMBar's pairs (Zeng et al., ICLR 2024; MIT): one output follows the instruction, the other does not.

    Columns subset, pair_id, question, response_a (output_1), response_b (output_2), label ("A" when output_1
    is the better one, else "B"). Natural has 100 pairs; the four Adversarial subsets 319 in all.
    """
    names = [subset_name(s) for s in ([subsets] if isinstance(subsets, str) else subsets)]
    if not names:
        raise InputError("no LLMBar subset named")
    rows = []
    for name in names:
        for record in _records(f"llmbar/{name}.jsonl"):
            rows.append(
                {
                    "subset": name,
                    "pair_id": record["pair_id"],
                    "question": record["input"],
                    "response_a": record["output_1"],
                    "response_b": record["output_2"],
                    "label": "A" if int(record["label"]) == 1 else "B",
                }
            )
    return pd.DataFrame(rows)


def majority(labels: Sequence[str]) -> str | None:
    """The label most annotators gave, or None when no label has a majority."""
    top, count = Counter(labels).most_common(1)[0]
    return top if count > len(labels) / 2 else None


def _text(value: object) -> str:
    """A field as the text the model wrote: six PandaLM responses are the word "True", stored as JSON `true`."""
    return value if isinstance(value, str) else str(value)


def pandalm() -> pd.DataFrame:
    """PandaLM's human-annotated test set (Wang et al., 2023; Apache-2.0): 999 pairs, three annotators each.

    Columns pair_id, question (instruction, then the input when there is one), response_a, response_b,
    annotator1..3 ("A", "B", "tie") and label, their majority (None on the 3 items where all three differ).
    """
    rows = []
    for record in _records("pandalm/testset-v1.jsonl"):
        votes = [_PANDALM_LABELS[str(record[f"annotator{k}"])] for k in (1, 2, 3)]
        question = _text(record["instruction"]) + (f"\n\n{_text(record['input'])}" if record.get("input") else "")
        rows.append(
            {
                "pair_id": int(record["idx"]),
                "question": question,
                "response_a": _text(record["response1"]),
                "response_b": _text(record["response2"]),
                **{f"annotator{k}": vote for k, vote in zip((1, 2, 3), votes)},
                "label": majority(votes),
            }
        )
    return pd.DataFrame(rows)


def arena_hard() -> pd.DataFrame:
    """Arena-Hard-Auto's 1,348 judged battles (Apache-2.0): question_id, model_a, model_b, winner."""
    return pd.DataFrame(_records("arena_hard/battles.jsonl"))
