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


def test_local_judge_scores_from_its_probabilities_by_default() -> None:
    pairs = [
        ("What is 7 x 8?", "7 x 8 = 56.", "7 x 8 = 15."),
        ("Which planet is closest to the Sun?", "Mercury.", "Jupiter is closest to the Sun."),
        ("What is the chemical formula of water?", "H2O.", "CO2."),
    ]
    prompts = [p for p, _, _ in pairs for _ in (0, 1)]
    responses = [r for _, good, bad in pairs for r in (good, bad)]
    for template in ("likert", "true_false"):
        result = jw.LLMJudge("local", template=template, cache=False).score(prompts, responses, progress=False)
        votes = result.vote_list
        assert all(v.score_source == "probabilities" and v.probabilities for v in votes), votes
        assert all(v.raw.startswith('{"') for v in votes)  # the prefilled answer is kept whole
        scores = result.score_list
        assert all(scores[2 * i] > scores[2 * i + 1] for i in range(len(pairs))), (template, scores)
