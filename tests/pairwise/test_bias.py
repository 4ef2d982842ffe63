import re

import numpy as np
import pandas as pd
import pytest

import judgewidgets as jw
from judgewidgets.pairwise import PairwiseJudge, flips_by_gap, position_bias
from judgewidgets.testing import ScriptedTransport
from tests.datasets import llmbar_natural
from tests.fakes import user_text
from tests.pairwise.helpers import answer, slots


def test_llmbar_natural_recovers_a_planted_first_slot_bias() -> None:
    pairs = llmbar_natural()
    biased = {i for i in range(len(pairs)) if i % 10 < 3}  # 30 pairs where the judge always takes slot A
    by_question = {p["input"]: (i, p) for i, p in enumerate(pairs)}

    def reply(request, attempt):  # type: ignore[no-untyped-def]
        question = re.search(r"<question>\n(.*?)\n</question>", user_text(request), re.S).group(1)
        index, pair = by_question[question]
        if index in biased:
            return answer("A", 0.9)
        first, _ = slots(request)
        better = pair["output_1"] if pair["label"] == 1 else pair["output_2"]
        return answer("A" if first == better else "B", 0.9)

    frame = pd.DataFrame(
        {
            "question": [p["input"] for p in pairs],
            "response_a": [p["output_1"] for p in pairs],
            "response_b": [p["output_2"] for p in pairs],
            "label": [p["label"] for p in pairs],  # LLMBar's 1 | 2 is understood as A | B
        }
    )
    pj = PairwiseJudge("openai/fake", transport=ScriptedTransport(reply), cache=False)
    table = pj.compare_many(frame, progress=False)
    row = position_bias(table).iloc[0]
    assert row["n_pairs"] == 100 and row["n_verdicts"] == 200
    assert row["consistency"] == pytest.approx(0.70)
    assert row["first_slot_preference"] == pytest.approx(0.65)  # (70·1 + 30·2) / 200 decisive verdicts
    assert row["accuracy"] == pytest.approx(0.85)  # unbiased pairs right twice, biased ones once
    assert row["accuracy_both"] == pytest.approx(0.70)
    assert row["tie_rate"] == 0.0
    assert row["flip_rate_clear"] == pytest.approx(0.30)  # LLMBar labels no ties: every pair is "clear"
    # The debiased winners: consistent pairs keep their (right) winner, the biased 30 become ties.
    assert (table["winner"] == "tie").sum() == 30


def long_frame() -> pd.DataFrame:
    # Judge j1: pair 0 consistent A; pair 1 flips with the slot (first-slot bias); pair 2 only one order.
    return pd.DataFrame(
        {
            "pair_id": [0, 0, 1, 1, 2, 0, 0],
            "judge": ["j1", "j1", "j1", "j1", "j1", "j2", "j2"],
            "swapped": [False, True, False, True, False, False, True],
            "winner": ["A", "A", "A", "B", "tie", "B", "B"],
            "label": ["A", "A", "B", "B", "tie", "A", "A"],
        }
    )


def test_position_bias_per_judge_on_a_hand_made_table() -> None:
    out = position_bias(long_frame()).set_index("judge")
    assert list(out.reset_index().columns[:6]) == [
        "judge",
        "n_pairs",
        "consistency",
        "first_slot_preference",
        "accuracy",
        "accuracy_both",
    ]
    j1 = out.loc["j1"]
    assert j1["n_pairs"] == 3 and j1["consistency"] == 0.5
    assert j1["first_slot_preference"] == pytest.approx(3 / 4)  # A, (B shown first) A, A, (B shown first) B
    assert j1["accuracy"] == pytest.approx(4 / 5) and j1["accuracy_both"] == pytest.approx(1 / 2)
    j2 = out.loc["j2"]
    assert j2["consistency"] == 1.0 and j2["accuracy"] == 0.0 and j2["first_slot_preference"] == 0.5


def test_without_labels_accuracy_is_nan_and_judge_is_optional() -> None:
    frame = long_frame().drop(columns=["label", "judge"]).query("pair_id != 0 or swapped == swapped")
    out = position_bias(frame.iloc[:5])
    assert len(out) == 1 and out.loc[0, "judge"] == "judge" and np.isnan(out.loc[0, "accuracy"])


def test_flips_by_numeric_quality_gap() -> None:
    rng = np.random.default_rng(0)
    rows = []
    for pair in range(60):
        gap = pair / 60
        flip = rng.random() > gap  # small gaps flip often
        rows += [
            {"pair_id": pair, "swapped": False, "winner": "A", "gap": gap},
            {"pair_id": pair, "swapped": True, "winner": "B" if flip else "A", "gap": gap},
        ]
    table = flips_by_gap(pd.DataFrame(rows), bins=3)
    assert table["gap_group"].tolist() == ["gap_q1", "gap_q2", "gap_q3"] and table["n_pairs"].sum() == 60
    assert table["flip_rate"].iloc[0] > table["flip_rate"].iloc[-1]
    summary = position_bias(pd.DataFrame(rows)).iloc[0]
    assert summary["flip_rate_gap_q1"] == table["flip_rate"].iloc[0]


def test_bad_verdict_tables_are_refused() -> None:
    with pytest.raises(jw.InputError, match="pair_id"):
        position_bias(pd.DataFrame({"winner": ["A"]}))
    with pytest.raises(jw.InputError, match="unknown winner"):
        position_bias(pd.DataFrame({"pair_id": [0], "swapped": [False], "winner": ["first"]}))
