"""Failures nobody can miss: after a run whose calls failed, a CallsFailedWarning "N of M calls failed: <the most
common error>", and the same line at the top of the result's HTML and text, for every result kind."""

from __future__ import annotations

import warnings
from typing import Any

import pandas as pd
import pytest

import judgewidgets as jw
from judgewidgets._failures import calls_failed_line
from judgewidgets.testing import ScriptedTransport

REFUSED = "infrastructure: AuthenticationError: Incorrect API key provided (HTTP 401)"
# The engine's wording of a refused key may change; the line's shape and the provider's words may not.
LINE = r"^2 of 3 calls failed: infrastructure: .*Incorrect API key provided$"


def _reply(answer: str) -> Any:
    """A scripted model that answers `answer`, and refuses the key for any request that mentions 'BAD'."""

    def reply(request: Any, attempt: int) -> str:
        if "BAD" in str(request.messages):
            raise jw.CallFailure("Incorrect API key provided", 401)
        return answer

    return reply


def _judge(name: str = "a", answer: str = '{"score": 5}') -> jw.LLMJudge:
    return jw.LLMJudge(f"openai/{name}", name=name, transport=ScriptedTransport(_reply(answer)), cache=False)


PROMPTS = ["2+2?", "Capital of France?", "Largest planet?"]
RESPONSES = ["4", "BAD Paris", "BAD Jupiter"]


def test_the_line_counts_failures_and_names_the_most_common_error() -> None:
    timeout = "infrastructure: Timeout: no answer within 120 s"
    assert calls_failed_line([None, None]) == ""
    assert calls_failed_line([None, REFUSED, REFUSED]) == f"2 of 3 calls failed: {REFUSED}"
    # the most common cause wins (errors that differ only in detail count as one), the others are counted
    line = calls_failed_line([timeout, REFUSED, REFUSED.replace("provided", "provided: sk-***"), None])
    assert line == f"3 of 4 calls failed: {REFUSED} (2 times; 1 other error)"
    # a call the engine did not send because another was refused fails for the same reason
    echoed = (
        "infrastructure: key refused: no [not sent: openai/a answered another call of this run so; it is sent "
        "nothing more]"
    )
    assert calls_failed_line(["infrastructure: key refused: no", echoed]) == (
        "2 of 2 calls failed: infrastructure: key refused: no"
    )
    # calls the budget did not run are no failure
    assert calls_failed_line(["budget: not run, the budget of $0.01 was reached", None]) == ""
    assert calls_failed_line(["budget: not run, ...", REFUSED]) == f"1 of 2 calls failed: {REFUSED}"
    assert len(calls_failed_line(["parse: " + "x" * 1000])) < 300  # one line, shortened


def test_a_judge_warns_after_the_run_and_its_html_and_text_start_with_the_line() -> None:
    judge = _judge()
    with pytest.warns(jw.CallsFailedWarning, match=LINE) as caught:
        result = judge.score(PROMPTS, RESPONSES, progress=False)
    (line,) = [str(w.message) for w in caught if w.category is jw.CallsFailedWarning]  # one, after the run
    assert result.calls_failed == line
    assert repr(result).startswith(line + "\n") and str(result).startswith(line)
    html = result._repr_html_()
    assert html.startswith('<p class="judgewidgets-calls-failed"') and html.index(line) < html.index("<table")
    with pytest.warns(jw.CallsFailedWarning, match=LINE):  # the same failure again is warned again
        judge.score(PROMPTS, RESPONSES, progress=False)


async def test_the_async_twin_warns_the_same() -> None:
    with pytest.warns(jw.CallsFailedWarning, match=LINE):
        result = await _judge().ascore(PROMPTS, RESPONSES, progress=False)
    assert result.calls_failed.startswith("2 of 3 calls failed")


def test_no_failure_no_warning_no_line() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error", jw.CallsFailedWarning)
        result = _judge().score(PROMPTS, ["4", "Paris", "Jupiter"], progress=False)
    assert result.calls_failed == "" and "calls failed" not in repr(result) + result._repr_html_()


def test_users_filter_it_by_category() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error", jw.CallsFailedWarning)
        with pytest.raises(jw.CallsFailedWarning, match=LINE):
            _judge().score(PROMPTS, RESPONSES, progress=False)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        warnings.filterwarnings("ignore", category=jw.CallsFailedWarning)
        _judge().score(PROMPTS, RESPONSES, progress=False)
    assert not [w for w in caught if w.category is jw.CallsFailedWarning]
    assert issubclass(jw.CallsFailedWarning, UserWarning)


def test_a_panel_counts_every_judges_calls() -> None:
    panel = jw.LLMPanel([_judge("a"), _judge("b")])
    with pytest.warns(jw.CallsFailedWarning, match=r"^4 of 6 calls failed: .*Incorrect API key provided$"):
        result = panel.score(PROMPTS, RESPONSES, progress=False)
    assert repr(result).startswith("4 of 6 calls failed") and "4 of 6 calls failed" in result._repr_html_()


def test_a_saved_run_read_back_shows_the_line_without_warning_again(tmp_path: Any) -> None:
    with pytest.warns(jw.CallsFailedWarning):
        result = _judge().score(PROMPTS, RESPONSES, progress=False)
    folder = result.save(tmp_path / "run")
    with warnings.catch_warnings():
        warnings.simplefilter("error", jw.CallsFailedWarning)
        again = jw.load(folder)
    assert again.calls_failed == result.calls_failed and repr(again).startswith(result.calls_failed)


def test_a_rubric_grading_says_it() -> None:
    grader = jw.CriterionGrader(judges=[_judge(answer='{"verdict": "MET", "explanation": "ok"}')])
    rubric = jw.Rubric.from_yaml("- name: correct\n  requirement: Answers correctly\n")
    data = pd.DataFrame({"prompt": PROMPTS, "response": RESPONSES})
    with pytest.warns(jw.CallsFailedWarning, match=LINE):
        result = grader.grade_many(rubric, data, progress=False)
    assert repr(result).startswith("2 of 3 calls failed") and "2 of 3 calls failed" in result._repr_html_()


def test_a_pairwise_table_says_it() -> None:
    judge = jw.PairwiseJudge(
        "openai/p", method="verdict", transport=ScriptedTransport(_reply('{"winner": "A"}')), cache=False
    )
    with pytest.warns(jw.CallsFailedWarning, match=r"^1 of 2 calls failed: .*Incorrect API key provided$"):
        table = judge.compare_many(["2+2?", "Capital?"], ["4", "BAD Paris"], ["5", "Lyon"], progress=False)
    assert repr(table).startswith("1 of 2 calls failed") and "1 of 2 calls failed" in table._repr_html_()
    assert "calls failed" not in repr(table[table["error"].isna()])  # a slice without failures has no line


def test_single_calls_say_it_too() -> None:
    judge = jw.PairwiseJudge(
        "openai/p", method="verdict", transport=ScriptedTransport(_reply('{"winner": "A"}')), cache=False
    )
    with pytest.warns(jw.CallsFailedWarning, match=r"^2 of 2 calls failed: .*Incorrect API key provided$"):
        comparison = judge.compare("Capital?", "BAD Paris", "Lyon")  # both orders refused
    assert comparison.winner is None and comparison.calls_failed.startswith("2 of 2 calls failed")
    grader = jw.CriterionGrader(judges=[_judge(answer='{"verdict": "MET", "explanation": "ok"}')])
    rubric = jw.Rubric.from_yaml("- name: correct\n  requirement: Correct\n- name: short\n  requirement: Short\n")
    with pytest.warns(jw.CallsFailedWarning, match=r"^2 of 2 calls failed: .*Incorrect API key provided$"):
        report = grader.grade(rubric, "BAD Paris", query="Capital of France?")
    assert report._repr_html_().startswith('<p class="judgewidgets-calls-failed"')
