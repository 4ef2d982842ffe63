"""The real embedded judge through the whole engine: a panel scores good and bad answers, and the cache
serves a repeated run without calling the model again."""

from __future__ import annotations

import pytest

import judgewidgets as jw

pytestmark = pytest.mark.local_model


def test_local_panel_separates_good_from_bad_answers() -> None:
    examples = jw.load_example().iloc[[0, 1, 2, 3]].reset_index(drop=True)  # good, bad, good, bad
    panel = jw.LLMPanel(
        [
            jw.LLMJudge("local", template="likert", name="likert", probability_weighted=True),
            jw.LLMJudge("local", template="true_false", name="verdict"),
        ]
    )
    result = panel.score(examples["prompt"], examples["response"], progress=False)
    df = result.to_df()
    assert result.errors.empty, result.errors
    good, bad = df.loc[[0, 2], "avg"].mean(), df.loc[[1, 3], "avg"].mean()
    assert good > bad + 0.3, df[["response", "likert", "verdict"]]
    again = panel.score(examples["prompt"], examples["response"], progress=False)
    assert again.votes["cached"].all() and again.to_df()["avg"].equals(df["avg"])
