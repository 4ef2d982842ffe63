"""A misspelled hosted model is named as such before any call: a warning with the closest names litellm knows, an
estimate that says "unknown model" (the CLI's `--estimate` exits 2), and nothing for a server of the user's."""

from __future__ import annotations

import warnings

import pytest

import judgewidgets as jw
from judgewidgets._cli import main as cli
from judgewidgets.engine._litellm import unknown_model


def test_a_typo_gets_the_closest_known_names() -> None:
    said = unknown_model("openai/gpt4o-mini", {})
    assert said is not None and said.startswith("litellm does not know model 'openai/gpt4o-mini'")
    assert "did you mean 'openai/gpt-4o-mini'" in said


@pytest.mark.parametrize(
    ("model", "params"),
    [
        ("openai/gpt-4o-mini", {}),
        ("anthropic/claude-sonnet-4-5", {}),
        ("openai/my-finetune", {"api_base": "http://127.0.0.1:9/v1"}),  # a server of the user's names its models
        ("openai/anything", {"mock_response": "{}"}),
        ("local", {}),
    ],
)
def test_known_models_and_servers_of_ones_own_are_not_flagged(model: str, params: dict[str, str]) -> None:
    assert unknown_model(model, params) is None


def test_the_warning_comes_before_any_call() -> None:
    judge = jw.LLMJudge("openai/gpt4o-mini", api_key="sk-test")
    with pytest.warns(jw.UnknownModelWarning, match="did you mean 'openai/gpt-4o-mini'"):
        judge.check()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        jw.LLMJudge("openai/gpt-4o-mini", api_key="sk-test").check()


def test_the_estimate_says_unknown_model_not_no_price() -> None:
    estimate = jw.LLMJudge("openai/gpt4o-mini").estimate_cost(["q"], ["a"])
    text = str(estimate)
    assert "unknown model: 'openai/gpt4o-mini'; did you mean 'openai/gpt-4o-mini'" in text
    assert "no price" not in text and estimate.judges[0].unknown_model is not None


def test_the_cli_estimate_exits_2_on_an_unknown_model(tmp_path, capsys: pytest.CaptureFixture[str]) -> None:  # type: ignore[no-untyped-def]
    data = tmp_path / "answers.csv"
    data.write_text("prompt,response\nWhat is 2+2?,4\n")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        status = cli(["score", str(data), "--judge", "openai/gpt4o-mini", "--estimate"])
    out, err = capsys.readouterr()
    assert status == 2
    assert "unknown model" in out and "did you mean 'openai/gpt-4o-mini'" in err


def test_a_transport_of_ones_own_answers_any_name_so_nothing_is_said() -> None:
    from judgewidgets.testing import ScriptedTransport

    judge = jw.LLMJudge("openai/a", transport=ScriptedTransport(lambda r, a: '{"score": 4}'))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        judge.check()
