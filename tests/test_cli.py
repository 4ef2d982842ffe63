"""The `judgewidgets` command against a loopback server: a newcomer scoring a file with a panel of three judges."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest

from judgewidgets._cli import main
from judgewidgets.testing import OpenAITestServer, json_score


@pytest.fixture(scope="module")
def server() -> Iterator[OpenAITestServer]:
    with OpenAITestServer(json_score(4)) as running:
        yield running


@pytest.fixture
def answers(tmp_path: Path) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "question": ["What is 2+2?", "Capital of France?", "Largest planet?"],
            "answer": ["4", "Paris", 'Mars [[reply:{"score": 1}]]'],
            "source": ["a", "b", "c"],
        }
    )


def run(argv: list[str], monkeypatch: pytest.MonkeyPatch) -> int:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    return main(argv)


@pytest.mark.parametrize(
    ("suffix_in", "suffix_out"), [(".csv", ".csv"), (".jsonl", ".parquet"), (".parquet", ".jsonl")]
)
def test_score_a_file_with_a_panel_of_three(
    server: OpenAITestServer,
    answers: pd.DataFrame,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    suffix_in: str,
    suffix_out: str,
) -> None:
    source = tmp_path / f"answers{suffix_in}"
    {
        ".csv": lambda p: answers.to_csv(p, index=False),
        ".jsonl": lambda p: answers.to_json(p, orient="records", lines=True),
        ".parquet": lambda p: answers.to_parquet(p),
    }[suffix_in](source)
    out = tmp_path / f"scored{suffix_out}"
    argv = [
        "score",
        str(source),
        "--judge",
        "openai/a",
        "--judge",
        "openai/b",
        "--judge",
        "openai/c",
        "--template",
        "likert",
        "--prompt-col",
        "question",
        "--response-col",
        "answer",
        "--api-base",
        server.base_url,
        "-o",
        str(out),
        "--quiet",
    ]
    assert run(argv, monkeypatch) == 0
    table = {".csv": pd.read_csv, ".parquet": pd.read_parquet, ".jsonl": lambda p: pd.read_json(p, lines=True)}[
        suffix_out
    ](out)
    assert list(table.columns)[:3] == ["source", "prompt", "response"]
    # The loopback server's logprobs put 0.9 on the answered digit: probability-weighted scores sit near it.
    assert table["judge_1"].tolist() == pytest.approx([0.75, 0.75, 0.0], abs=0.03)
    assert table["avg"].tolist() == pytest.approx(table["judge_1"].tolist())
    printed = capsys.readouterr().out
    assert "mean_score" in printed and f"wrote 3 rows to {out}" in printed


def test_missing_column_is_one_clear_error(answers: pd.DataFrame, tmp_path: Path, monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    source = tmp_path / "answers.csv"
    answers.to_csv(source, index=False)
    code = run(["score", str(source), "--judge", "openai/a", "-o", str(tmp_path / "o.csv")], monkeypatch)
    assert code == 2
    err = capsys.readouterr().err
    assert "has no column 'prompt', 'response'" in err and "question" in err


def test_unsupported_file_kind(tmp_path: Path, monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    source = tmp_path / "answers.xlsx"
    source.write_text("x")
    assert run(["score", str(source), "--judge", "openai/a", "-o", str(tmp_path / "o.csv")], monkeypatch) == 2
    assert "use a .csv, .jsonl or .parquet file" in capsys.readouterr().err


def test_unroutable_judge(answers: pd.DataFrame, tmp_path: Path, monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    source = tmp_path / "answers.csv"
    answers.to_csv(source, index=False)
    argv = [
        "score",
        str(source),
        "--judge",
        "gpt-nonsense-7",
        "--prompt-col",
        "question",
        "--response-col",
        "answer",
        "-o",
        str(tmp_path / "o.csv"),
    ]
    assert run(argv, monkeypatch) == 2
    assert "cannot route model 'gpt-nonsense-7'" in capsys.readouterr().err


def test_estimate_makes_no_call(
    server: OpenAITestServer, answers: pd.DataFrame, tmp_path: Path, monkeypatch, capsys
) -> None:  # type: ignore[no-untyped-def]
    source = tmp_path / "answers.csv"
    answers.to_csv(source, index=False)
    server.reset_stats()
    argv = [
        "score",
        str(source),
        "--judge",
        "openai/gpt-4o-mini",
        "--prompt-col",
        "question",
        "--response-col",
        "answer",
        "-o",
        str(tmp_path / "o.csv"),
        "--estimate",
    ]
    assert run(argv, monkeypatch) == 0
    assert "estimated cost: $" in capsys.readouterr().out
    assert server.stats.total == 0
    assert not (tmp_path / "o.csv").exists()


def test_help_is_clear() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "judgewidgets", "score", "--help"], capture_output=True, text=True, check=True
    ).stdout
    for flag in ("--judge MODEL", "--template", "--prompt-col", "--response-col", "-o OUTPUT", "examples:"):
        assert flag in out
    assert json.dumps("likert")[1:-1] in out
