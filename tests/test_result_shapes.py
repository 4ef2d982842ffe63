"""The same names mean the same shapes on every result: `votes` a tidy DataFrame, `vote_list` its records,
`scores()` an items × judges table, `usage` what it cost."""

from __future__ import annotations

import json

import pandas as pd

import judgewidgets as jw
from judgewidgets.engine import Usage
from judgewidgets.testing import ScriptedTransport

PROMPTS, RESPONSES = ["What is 2 + 2?", "Capital of France?"], ["4", "Paris"]


def _reply(request, attempt):  # type: ignore[no-untyped-def]
    fields = request.params["response_format"]["json_schema"]["schema"]["properties"]
    if "selected_option" in fields:
        return json.dumps({"explanation": "ok", "selected_option": 1})
    if "score" in fields:
        return '{"score": 4}'
    verdicts = fields["verdict"].get("enum", [])
    return json.dumps({"explanation": "ok", "verdict": "A" if "A" in verdicts else "MET"})


def _transport() -> ScriptedTransport:
    return ScriptedTransport(_reply)


def _shapes(result: object, n_votes: int) -> None:
    votes, vote_list = result.votes, result.vote_list  # type: ignore[attr-defined]
    assert isinstance(votes, pd.DataFrame) and len(votes) == n_votes
    assert isinstance(vote_list, list) and len(vote_list) == n_votes and all(isinstance(v, Usage) for v in vote_list)


def test_judge_and_panel_results_share_their_names() -> None:
    judge = jw.LLMJudge(
        "openai/m", name="j", transport=_transport(), cache=False, structured_output=True, probability_weighted=False
    )
    single = judge.score(PROMPTS, RESPONSES, progress=False)
    panel = jw.LLMPanel([judge]).score(PROMPTS, RESPONSES, progress=False)
    for result in (single, panel):
        _shapes(result, 2)
        assert list(result.votes.columns[:3]) == ["item", "judge", "score"]
        assert result.scores().columns.tolist() == ["j"] and result.scores()["j"].tolist() == [0.75, 0.75]
    assert single.score_list == [0.75, 0.75] and single.votes.equals(single.votes_df)


def test_rubric_and_pairwise_results_share_their_names() -> None:
    rubric = jw.Rubric([jw.Criterion("Correct", name="correct")])
    grader = jw.CriterionGrader(
        [jw.LLMJudge("openai/m", transport=_transport(), cache=False, structured_output=True)], seed=1
    )
    graded = grader.grade_many(rubric, pd.DataFrame({"prompt": PROMPTS, "response": RESPONSES}), progress=False)
    _shapes(graded, 2)
    _shapes(graded.reports[0], 1)
    assert graded.usage.attempts == 2 and graded.reports[0].usage.attempts == 1
    pairwise = jw.PairwiseJudge(
        "openai/m", method="verdict", transport=_transport(), cache=False, structured_output=True
    )
    compared = pairwise.compare("q", "a", "b")
    _shapes(compared, 2)  # one row per order
    assert compared.vote_list == compared.verdicts and compared.usage.attempts == 2
    panel = jw.PairwisePanel([pairwise.with_options(name="x"), pairwise.with_options(name="y")])
    verdict = panel.compare("q", "a", "b")
    assert isinstance(verdict.votes, pd.DataFrame) and verdict.votes["judge"].tolist() == ["x", "y"]
    assert [r.judge for r in verdict.vote_list] == ["x", "y"]


def _summarises(result: object, judges: list[str], calls: int) -> None:
    """`summary()`: a row per judge (calls, failures, tokens of each kind, both costs) that adds up to `usage`."""
    summary = result.summary()  # type: ignore[attr-defined]
    assert isinstance(summary, pd.DataFrame) and summary.index.tolist() == judges
    assert {"calls", "failed", "prompt_tokens", "cost_usd", "list_cost_usd"} <= set(summary.columns)
    assert int(summary["calls"].sum()) == calls == result.usage.attempts  # type: ignore[attr-defined]
    assert int(summary["prompt_tokens"].sum()) == result.usage.prompt_tokens  # type: ignore[attr-defined]


def test_every_result_kind_summarises_its_calls_per_judge() -> None:
    judge = jw.LLMJudge("openai/m", name="j", transport=_transport(), cache=False, structured_output=True)
    _summarises(judge.score(PROMPTS, RESPONSES, progress=False), ["j"], 2)
    _summarises(jw.LLMPanel([judge]).score(PROMPTS, RESPONSES, progress=False), ["j"], 2)
    rubric = jw.Rubric([jw.Criterion("Correct", name="correct")])
    grader = jw.CriterionGrader([judge], seed=1)
    graded = grader.grade_many(rubric, pd.DataFrame({"prompt": PROMPTS, "response": RESPONSES}), progress=False)
    _summarises(graded, ["j"], 2)
    _summarises(graded.reports[0], ["j"], 1)
    pairwise = jw.PairwiseJudge(
        "openai/m", name="p", method="verdict", transport=_transport(), cache=False, structured_output=True
    )
    _summarises(pairwise.compare("q", "a", "b"), ["p"], 2)
    _summarises(pairwise.compare_many(PROMPTS, RESPONSES, ["x", "y"], progress=False), ["p"], 4)
    panel = jw.PairwisePanel([pairwise.with_options(name="x"), pairwise.with_options(name="y")])
    _summarises(panel.compare("q", "a", "b"), ["x", "y"], 4)
    tournament = jw.Tournament(pairwise, format="round_robin").run(
        PROMPTS, {"m1": RESPONSES, "m2": ["5", "Lyon"]}, progress=False
    )
    _summarises(tournament, ["p"], 4)
