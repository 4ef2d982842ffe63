"""`judgewidgets score --save` and `judgewidgets compare`: runs kept from the command line and compared in CI
(the loopback server judges; no model)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest

import judgewidgets as jw
from judgewidgets._cli import main
from judgewidgets._runfiles import META_FILE
from judgewidgets.testing import OpenAITestServer, json_score

ROOT = Path(__file__).resolve().parents[2]
BAD = ' [[reply:{"score": 1}]]'  # the loopback server answers this item's call with a likert 1


@pytest.fixture(scope="module")
def server() -> Iterator[OpenAITestServer]:
    with OpenAITestServer(json_score(4)) as running:
        yield running


@pytest.fixture(autouse=True)
def key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")


def answers(bad: tuple[int, ...] = ()) -> pd.DataFrame:
    """Six questions with their answers; the answers at `bad` carry the directive that makes them score 1."""
    questions = [f"Question {i}: what is {i} + {i}?" for i in range(6)]
    replies = [f"It is {2 * i}." + (BAD if i in bad else "") for i in range(6)]
    return pd.DataFrame({"question": questions, "answer": replies, "gold": [str(2 * i) for i in range(6)]})


def score(server: OpenAITestServer, source: Path, *extra: str) -> int:
    argv = ["score", str(source), "--judge", "mini=openai/mini", "--judge", "big=openai/big"]
    argv += ["--prompt-col", "question", "--response-col", "answer", "--reference-col", "gold"]
    return main([*argv, "--api-base", server.base_url, "--quiet", *extra])


@pytest.fixture
def two_runs(server: OpenAITestServer, tmp_path: Path) -> Path:
    """runs/v1 (every answer scores 4) and runs/v2 (answers 1 and 4 score 1), saved by `score --save`."""
    for name, bad in (("v1", ()), ("v2", (1, 4))):
        source = tmp_path / f"{name}.csv"
        answers(bad).to_csv(source, index=False)
        assert score(server, source, "--save", str(tmp_path / "runs" / name)) == 0
    return tmp_path / "runs"


def test_score_save_keeps_the_run_for_jw_load(server: OpenAITestServer, tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    source, out, folder = tmp_path / "a.csv", tmp_path / "scored.csv", tmp_path / "runs" / "v1"
    answers().to_csv(source, index=False)
    assert score(server, source, "-o", str(out), "--save", str(folder)) == 0
    printed = capsys.readouterr().out
    assert f"wrote 6 rows to {out}" in printed and f"saved the run in {folder}" in printed
    again = jw.load(folder)
    assert isinstance(again, jw.PanelResult) and again.judges == ["mini", "big"]
    assert [i.prompt for i in again.items] == answers()["question"].tolist()
    assert [i.reference for i in again.items] == answers()["gold"].tolist()
    assert again.to_df()["mini"].tolist() == pd.read_csv(out)["mini"].tolist()
    meta = json.loads((folder / META_FILE).read_text())
    assert meta["kind"] == "panel" and meta["models"] == ["openai/mini", "openai/big"]
    assert "sk-test" not in (folder / META_FILE).read_text()


def test_save_alone_is_enough_and_an_existing_run_needs_overwrite(
    server: OpenAITestServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source, folder = tmp_path / "a.csv", tmp_path / "v1"
    answers().to_csv(source, index=False)
    assert score(server, source, "--save", str(folder)) == 0  # no -o: the saved run holds the scores
    server.reset_stats()
    assert score(server, source, "--save", str(folder)) == 2
    assert "already holds a saved run (panel, saved " in capsys.readouterr().err
    assert server.stats.total == 0  # refused before any call
    assert score(server, source, "--save", str(folder), "--overwrite") == 0


@pytest.mark.parametrize("where", ["folder with other files", "the input file"])
def test_a_save_folder_that_cannot_hold_the_run_is_refused_before_any_call(
    server: OpenAITestServer, tmp_path: Path, capsys: pytest.CaptureFixture[str], where: str
) -> None:
    source = tmp_path / "a.csv"
    answers().to_csv(source, index=False)
    folder = source
    if where == "folder with other files":
        folder = tmp_path / "notes"
        folder.mkdir()
        (folder / "todo.txt").write_text("x")
    server.reset_stats()
    assert score(server, source, "--save", str(folder)) == 2
    err = capsys.readouterr().err
    assert ("holds other files" in err) if where != "the input file" else ("is the input file" in err)
    assert server.stats.total == 0


def test_compare_prints_the_comparison_and_exits_1_on_a_regression(
    two_runs: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    v1, v2 = str(two_runs / "v1"), str(two_runs / "v2")
    assert main(["compare", v1, v2, "--margin", "0.02"]) == 1
    captured = capsys.readouterr()
    out = captured.out
    assert out.startswith(f"{v1} → {v2}: 6 items paired")
    assert "overall: mean_score" in out and "2 worse, 4 same" in out
    assert "paired bootstrap of the items (2000 resamples, seed 0, 95%)" in out and "exact sign test" in out
    assert "worst regressions (overall):" in out and "Question 1: what is 1 + 1?" in out
    assert "response before: It is 2." in out and "response after: It is 2. [[reply:" in out
    err = captured.err.splitlines()
    assert err[0] == f"judgewidgets: regression: {v2} is worse than {v1} beyond the margin 0.02 (estimate):"
    assert any("overall mean_score" in line for line in err) and all(line.startswith(" ") for line in err[1:])


def test_a_margin_wide_enough_passes_and_the_table_is_written(
    two_runs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "changes.parquet"
    assert main(["compare", "v1", "v2", "--runs", str(two_runs), "--margin", "0.5", "--show", "0", "-o", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "worst regressions" not in printed
    assert "no regression beyond the margin 0.5 (mean_score, rule: estimate)" in printed
    table = pd.read_parquet(out)
    assert set(table["judge"]) == {"overall", "mini", "big"} and len(table) == 18
    assert sorted(table[table["change"] == "worse"]["input"].unique()) == [
        "Question 1: what is 1 + 1?",
        "Question 4: what is 4 + 4?",
    ]


def test_judge_metric_and_rule_choose_what_fails(two_runs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    v1, v2 = str(two_runs / "v1"), str(two_runs / "v2")
    assert main(["compare", v2, v1, "--margin", "0"]) == 0  # the other way round, everything got better
    assert main(["compare", v1, v1, "--rule", "interval"]) == 0  # identical runs: a zero-width interval at 0
    assert main(["compare", v1, v2, "--judge", "mini", "--metric", "pass_rate", "--margin", "0.5"]) == 0
    assert main(["compare", v1, v2, "--judge", "mini", "--metric", "pass_rate", "--margin", "0.1"]) == 1
    err = capsys.readouterr().err
    assert "mini pass_rate" in err and "overall" not in err.split("worst items")[0]


def test_a_table_with_a_score_column_can_be_compared(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = pd.DataFrame({"prompt": ["a", "b", "c"], "score": [1.0, 0.5, 0.0]})
    after = pd.DataFrame({"prompt": ["c", "b", "a"], "score": [0.0, 0.5, 0.5]})  # rows in another order
    before.to_csv(tmp_path / "before.csv", index=False)
    after.to_json(tmp_path / "after.jsonl", orient="records", lines=True)
    assert main(["compare", str(tmp_path / "before.csv"), str(tmp_path / "after.jsonl"), "--margin", "0.2"]) == 0
    assert "score: mean_score 0.500 → 0.333 (-0.167" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["compare", "{tmp}/nope", "{tmp}/v1"], "no saved run at {tmp}/nope (no such folder)"),
        (["compare", "{tmp}/plain", "{tmp}/v1"], "is not a saved judgewidgets run (no run.json in it)"),
        (["compare", "{tmp}/newer", "{tmp}/v1"], "was saved in run format 99 by judgewidgets"),
        (["compare", "x", "v1", "--runs", "{tmp}"], "no saved run 'x' in {tmp} (runs: newer, v1)"),
        (["compare", "v1", "v1", "--runs", "{tmp}/nope"], "--runs {tmp}/nope: no such folder"),
        (["compare", "{tmp}/scored.csv", "{tmp}/v1"], "scored.csv has no `score` column"),
        (["compare", "{tmp}/v1", "{tmp}/v1.xlsx"], "give a saved run folder or a .csv, .jsonl or .parquet table"),
        (["compare", "{tmp}/v1", "{tmp}/v1", "-o", "{tmp}/out.xlsx"], "use a .csv, .jsonl or .parquet file"),
        (["compare", "{tmp}/v1", "{tmp}/v1", "--judge", "gpt"], "no judge 'gpt' in this comparison"),
        (["compare", "{tmp}/v1", "{tmp}/v1", "--metric", "win_rate"], "--metric win_rate: these runs have"),
        (["compare", "{tmp}/v1", "{tmp}/v1", "--on", "colour"], "cannot match items on 'colour'"),
        (["compare", "{tmp}/v1", "{tmp}/v1", "--margin", "inf"], "is not a finite number"),
        (["compare", "{tmp}/v1", "{tmp}/v1", "--confidence", "1"], "is not between 0 and 1"),
        (["compare", "{tmp}/v1", "{tmp}/v1", "--n-boot", "10"], "fewer than 100 resamples"),
    ],
)
def test_bad_usage_exits_2_with_one_clear_line(
    server: OpenAITestServer,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    argv: list[str],
    message: str,
) -> None:
    source = tmp_path / "a.csv"
    answers().to_csv(source, index=False)
    assert score(server, source, "--save", str(tmp_path / "v1"), "-o", str(tmp_path / "scored.csv")) == 0
    (tmp_path / "plain").mkdir()
    newer = tmp_path / "newer"
    newer.mkdir()
    meta = json.loads((tmp_path / "v1" / META_FILE).read_text())
    (newer / META_FILE).write_text(json.dumps({**meta, "format_version": 99}))
    (tmp_path / "v1.xlsx").write_text("x")
    capsys.readouterr()
    assert status([a.replace("{tmp}", str(tmp_path)) for a in argv]) == 2
    err = capsys.readouterr().err
    assert message.replace("{tmp}", str(tmp_path)) in err and "Traceback" not in err


def status(argv: list[str]) -> int | str | None:
    """The command's exit status, argparse's own usage errors (SystemExit) included."""
    try:
        return main(argv)
    except SystemExit as exc:
        return exc.code


def test_the_command_run_as_a_user_runs_it(two_runs: Path) -> None:
    """In its own interpreter: status 1, the comparison on stdout, and on stderr the regression lines only."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)}
    done = subprocess.run(
        [sys.executable, "-m", "judgewidgets", "compare", str(two_runs / "v1"), str(two_runs / "v2")],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert done.returncode == 1, done.stderr
    assert "6 items paired" in done.stdout
    lines = done.stderr.strip().splitlines()
    assert lines[0].startswith("judgewidgets: regression: ") and "Warning" not in done.stderr
