"""`judgewidgets score --commit-first [--solver MODEL]` against a loopback server that answers questions and grades
against the reference it is shown."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest

from judgewidgets._cli import main
from judgewidgets.testing import OpenAITestServer
from tests.jupyter.test_magic_commit_first import is_solver, respond


@pytest.fixture(scope="module")
def server() -> Iterator[OpenAITestServer]:
    with OpenAITestServer(respond) as running:
        yield running


@pytest.fixture
def source(tmp_path: Path) -> Path:
    path = tmp_path / "answers.csv"
    pd.DataFrame(
        {
            "question": ["Days in a leap year?", "Days in a leap year?", "Days in a year?"],
            "answer": ["365", "366", "365"],
            "gold": [None, None, "365"],
        }
    ).to_csv(path, index=False)
    return path


def score(source: Path, out: Path, server: OpenAITestServer, *extra: str) -> list[str]:
    return [
        "score",
        str(source),
        "--prompt-col",
        "question",
        "--response-col",
        "answer",
        "--reference-col",
        "gold",
        "--judge",
        "openai/a",
        "--api-base",
        server.base_url,
        "--no-cache",
        "-o",
        str(out),
        "--quiet",
        *extra,
    ]


def test_commit_first_answers_each_question_once_and_writes_where_references_came_from(
    server: OpenAITestServer, source: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    server.reset_stats()
    out = tmp_path / "scored.csv"
    assert main(score(source, out, server, "--commit-first")) == 0
    table = pd.read_csv(out)
    assert table["reference_source"].tolist() == ["judge", "judge", "given"]
    assert table["openai/a_made_reference"].tolist()[:2] == ["A leap year has 366 days."] * 2
    assert table["openai/a"].tolist() == pytest.approx([0.0, 1.0, 1.0], abs=0.05)
    assert sum(1 for b in server.stats.bodies if b and is_solver(b)) == 1


def test_a_solver_is_served_at_the_api_base_and_the_estimate_counts_it(
    server: OpenAITestServer,
    source: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    server.reset_stats()
    out = tmp_path / "scored.csv"
    assert main(score(source, out, server, "--solver", "openai/strong")) == 0
    assert pd.read_csv(out)["reference_source"].tolist()[:2] == ["solver:openai/strong"] * 2
    assert {b["model"] for b in server.stats.bodies if b and is_solver(b)} == {"strong"}
    assert main(score(source, out, server, "--commit-first", "--estimate")) == 0
    assert "1 answering first with openai/a" in capsys.readouterr().out
