"""No silent wrong score: against an OpenAI-compatible server named only by the environment (as the CLI and many
notebooks do) the judges ask for structured output, and an answer that carries no verdict of its own (the schema
echoed back, the instructions repeated, an empty object) is a `parse:` error, re-asked and then recorded, never a
number; for every reader (templates, pairwise, rubric binary and multi-choice), on both transports and in the CLI."""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import judgewidgets as jw
from judgewidgets.pairwise import PairwiseJudge
from judgewidgets.rubrics import CriterionGrader
from judgewidgets.testing import OpenAITestServer

_SCHEMA_CUE = "JSON schema and nothing else:\n"


def _system(body: dict[str, Any]) -> str:
    return next(m["content"] for m in body["messages"] if m["role"] == "system")


def echo_schema(body: dict[str, Any]) -> str:
    """What a model that ignores its instructions does: it answers with the JSON schema from its prompt."""
    return _system(body).split(_SCHEMA_CUE, 1)[1]


def echo_instructions(body: dict[str, Any]) -> str:
    """It repeats its instructions (which name the scale's numbers and labels), without the schema."""
    return _system(body).split("Reply with a single JSON object", 1)[0]


def empty_object(body: dict[str, Any]) -> str:
    return "{}"


ECHOES = {"schema": echo_schema, "instructions": echo_instructions, "empty": empty_object}


@pytest.fixture(params=sorted(ECHOES))
def server(request: pytest.FixtureRequest) -> Iterator[OpenAITestServer]:
    with OpenAITestServer(ECHOES[request.param]) as running:
        yield running


@pytest.fixture
def environment_only(server: OpenAITestServer, monkeypatch: pytest.MonkeyPatch) -> None:
    """The endpoint and key come from the environment alone: no api_base argument."""
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")


def _asked_for_structured_output(server: OpenAITestServer) -> bool:
    return all(r.body and "response_format" in r.body for r in server.stats.requests)


def _refused(errors: list[str | None]) -> bool:
    return all(e is not None and e.startswith("parse: ") for e in errors)


@pytest.mark.parametrize("transport", ["litellm", "fast"])
@pytest.mark.parametrize("template", ["likert", "true_false", "continuous"])
def test_single_judges_refuse_an_answer_without_a_verdict(
    server: OpenAITestServer, environment_only: None, transport: str, template: str
) -> None:
    judge = jw.LLMJudge("openai/test", template=template, transport=transport, cache=False)
    assert judge.uses_structured_output()
    server.reset_stats()
    result = judge.score(["What is the capital of France?", "What is 7 * 8?"], ["Paris.", "56."], progress=False)
    assert all(math.isnan(v.score) for v in result.vote_list), [v.score for v in result.vote_list]
    assert _refused([v.error for v in result.vote_list])
    assert server.stats.total == 4  # each row was asked, then re-asked once
    assert _asked_for_structured_output(server)


@pytest.mark.parametrize("transport", ["litellm", "fast"])
def test_pairwise_refuses_an_answer_without_a_verdict(
    server: OpenAITestServer, environment_only: None, transport: str
) -> None:
    judge = PairwiseJudge("openai/test", transport=transport, cache=False)
    server.reset_stats()
    table = judge.compare_many(["Capital of France?"], ["Paris."], ["Lyon."], progress=False)
    assert table["winner"].isna().all() and table["error"].str.startswith("parse: ").all()
    assert _asked_for_structured_output(server)


@pytest.mark.parametrize("transport", ["litellm", "fast"])
def test_rubric_criteria_refuse_an_answer_without_a_verdict(
    server: OpenAITestServer, environment_only: None, transport: str
) -> None:
    rubric = jw.Rubric.from_yaml(
        """
- name: correct
  requirement: States that the capital of France is Paris
- name: quality
  requirement: Overall quality
  scale_type: ordinal
  options: [{label: poor, value: 0.0}, {label: good, value: 1.0}]
"""
    )
    grader = CriterionGrader(judges=["openai/test"], transport=transport, cache=False)
    server.reset_stats()
    report = grader.grade(rubric, "Paris.", "Capital of France?")
    for criterion in report.criteria:  # a failed vote abstains (CANNOT_ASSESS / the NA option) with its error
        assert _refused([v.error for v in criterion.votes]), criterion
        assert all(v.verdict in (None, jw.rubrics.CriterionVerdict.CANNOT_ASSESS) for v in criterion.votes)
        assert all(v.na or v.selected_index is None for v in criterion.votes)
    assert _asked_for_structured_output(server)


@pytest.mark.parametrize("variable", ["OPENAI_BASE_URL", "OPENAI_API_BASE"])
def test_structured_output_follows_the_effective_endpoint(
    server: OpenAITestServer, monkeypatch: pytest.MonkeyPatch, variable: str
) -> None:
    for name in ("OPENAI_BASE_URL", "OPENAI_API_BASE"):
        monkeypatch.delenv(name, raising=False)
    judge = jw.LLMJudge("openai/some-local-model", cache=False)
    assert not judge.uses_structured_output()  # the provider's own API, a model litellm does not know
    monkeypatch.setenv(variable, server.base_url)
    assert judge.uses_structured_output()
    monkeypatch.delenv(variable)
    litellm = pytest.importorskip("litellm")
    monkeypatch.setattr(litellm, "api_base", server.base_url)
    assert judge.uses_structured_output()


def test_a_verdict_is_still_read_from_json_and_from_plain_text() -> None:
    likert = jw.templates.get_template("likert")
    assert likert.read('{"score": 4}') == (4.0, None)
    assert likert.read("Score: 4 — correct with minor issues.")[0] == 4.0
    assert jw.templates.get_template("true_false").read("incorrect")[0] == "incorrect"
    with pytest.raises(ValueError, match="holds no verdict"):
        likert.read('{"result": "fine"}')
    with pytest.raises(ValueError, match="no score between 1 and 5"):
        likert.read('{"score": {"type": "integer", "minimum": 1, "maximum": 5}}')


def test_cli_with_the_endpoint_in_the_environment(
    server: OpenAITestServer,
    environment_only: None,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from judgewidgets._cli import main

    source, out = tmp_path / "answers.csv", tmp_path / "scored.csv"
    rows = {"prompt": ["What is the capital of France?", "What is 7 * 8?"], "response": ["Paris.", "56."]}
    pd.DataFrame(rows).to_csv(source, index=False)
    server.reset_stats()
    # Every row failed, so the command fails (exit 1), and the output has NaN, not 0.0.
    assert main(["score", str(source), "--judge", "openai/test", "-o", str(out), "--no-cache", "--quiet"]) == 1
    table = pd.read_csv(out)
    assert table["openai/test"].isna().all(), table["openai/test"].tolist()
    printed = capsys.readouterr().err
    assert "2 of 2 calls failed: answers could not be read" in printed
    assert _asked_for_structured_output(server)
