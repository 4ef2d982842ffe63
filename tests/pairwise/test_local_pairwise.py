"""The embedded judge on a slice of LLMBar Natural: the whole pairwise path on a real model (slow, so tiny)."""

from __future__ import annotations

import pandas as pd
import pytest

from judgewidgets.pairwise import PairwiseJudge, position_bias
from tests.datasets import llmbar_natural
from tests.local_model import require_local_model

pytestmark = require_local_model()


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


CLEAR = ("What is the capital of France?", "The capital of France is Paris.", "The capital of France is Berlin.")


@pytest.mark.parametrize("method", ["probability", "pointwise"])
def test_each_probability_method_picks_the_right_answer_in_either_order(method: str) -> None:
    judge = PairwiseJudge("local", method=method)  # a private per-test cache: the mirrored pair reuses its calls
    question, right, wrong = CLEAR
    forward, backward = judge.compare(question, right, wrong), judge.compare(question, wrong, right)
    assert (forward.winner, backward.winner) == ("A", "B")
    assert forward.p_a_better is not None and forward.p_a_better > 0.5 and forward.confidence > 0.5
    assert forward.p_a_better == pytest.approx(1 - backward.p_a_better, abs=1e-9)
    assert all(v.probabilities is not None and v.fallback is None for v in forward.verdicts)


def test_verdict_method_parses_both_orders() -> None:
    result = PairwiseJudge("local", method="verdict", cache=False).compare(*CLEAR)
    assert result.error is None and result.winner in {"A", "B", "tie"}
    assert [v.swapped for v in result.verdicts] == [False, True] and all(v.verdict for v in result.verdicts)
