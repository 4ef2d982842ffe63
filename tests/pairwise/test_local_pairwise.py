"""The embedded judge on a slice of LLMBar Natural: the whole pairwise path on a real model (slow, so tiny)."""

from __future__ import annotations

import pandas as pd
import pytest

from judgewidgets._errors import LocalModelError
from judgewidgets.pairwise import PairwiseJudge, position_bias
from tests.datasets import llmbar_natural

pytest.importorskip("xllamacpp")
try:
    from judgewidgets.local._weights import chunk_paths

    chunk_paths()
except LocalModelError:
    pytest.skip("the embedded judge's weights are not installed", allow_module_level=True)

pytestmark = pytest.mark.local_model


def test_local_judge_on_a_natural_slice_reports_accuracy_and_consistency() -> None:
    pairs = llmbar_natural()
    shortest = sorted(pairs, key=lambda p: len(p["input"] + p["output_1"] + p["output_2"]))[:2]
    frame = pd.DataFrame(
        {
            "question": [p["input"] for p in shortest],
            "response_a": [p["output_1"] for p in shortest],
            "response_b": [p["output_2"] for p in shortest],
            "label": [p["label"] for p in shortest],
        }
    )
    judge = PairwiseJudge("local", max_tokens=40, cache=False)
    table = judge.compare_many(frame, progress=False)
    assert table["error"].isna().all(), table["error"].tolist()  # structured output always parses
    assert set(table["winner"]) <= {"A", "B", "tie"}
    report = position_bias(table).iloc[0]
    assert report["n_pairs"] == 2 and 0.0 <= report["accuracy"] <= 1.0 and 0.0 <= report["consistency"] <= 1.0
