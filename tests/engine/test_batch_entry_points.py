"""`%%judge --batch` in a real IPython shell and `judgewidgets score --batch` from the command line, on the loopback
batch server: the calls go through a batch, the same command run again pays for nothing, the progress read-out
shows the batch's own counts."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest
from IPython.core.error import UsageError

import judgewidgets as jw
from judgewidgets._cli import main
from judgewidgets.testing import BatchTestServer, json_score
from tests.jupyter.shell import magic_shell

CELL = """prompt: What is the capital of Australia?
response: Canberra.

prompt: How many bones does an adult have?
response: About 206.
"""


@pytest.fixture
def server() -> Iterator[BatchTestServer]:
    with BatchTestServer(json_score(4), delay=0.05) as running:
        yield running


def test_magic_batch_judges_through_a_batch_and_a_rerun_pays_nothing(server, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    for ip in magic_shell(server, monkeypatch, judges="openai/a,openai/b"):  # type: ignore[arg-type]
        ip.run_cell_magic("judge", "--batch --out r --no-chart", CELL)
        votes = ip.user_ns["r"].votes
        assert votes["error"].isna().all() and votes["batch_id"].notna().all()
        assert votes["batch_id"].nunique() == 2  # OpenAI: one model per batch file
        ip.run_cell_magic("judge", "--batch --out again --no-chart", CELL)
        assert ip.user_ns["again"].votes["cached"].all()
    assert server.batch_counts["batches.create"] == 2 and server.stats.total == 0


def test_magic_batch_is_refused_where_it_does_not_judge(server, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    for ip in magic_shell(server, monkeypatch):  # type: ignore[arg-type]
        with pytest.raises(UsageError, match="--batch"):
            ip.run_cell_magic("judge", "--mode sequential --batch --no-chart", CELL)
    assert sum(server.batch_counts.values()) == 0


def test_cli_score_batch(server, tmp_path: Path, monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    source = tmp_path / "answers.csv"
    pd.DataFrame({"prompt": ["2+2?", "3+3?", "4+4?"], "response": ["4", "6", "8"]}).to_csv(source, index=False)
    out = tmp_path / "scored.csv"
    argv = ["score", str(source), "--judge", "openai/a", "--template", "likert", "--api-base", server.base_url]
    assert main([*argv, "--batch", "--output", str(out), "--quiet"]) == 0
    scored = pd.read_csv(out)
    assert scored["openai/a"].notna().all()
    assert server.batch_counts["batches.create"] == 1 and server.stats.total == 0
    assert main([*argv, "--batch", "--estimate"]) == 0
    assert "batch price" in capsys.readouterr().out
    assert main([*argv, "--batch", "--output", str(out), "--quiet"]) == 0
    assert server.batch_counts["batches.create"] == 1  # the rerun: every row from the cache


def test_the_progress_bar_shows_the_batchs_own_counts(server, tmp_path: Path) -> None:
    class Bar:
        def __init__(self) -> None:
            self.statuses: list[str | None] = []

        def advance(self, n: int = 1) -> None: ...

        def close(self) -> None: ...

        def status(self, text: str | None) -> None:
            self.statuses.append(text)

    server.plan.delay = 1.0
    bar = Bar()
    judge = jw.LLMJudge("openai/test", template="likert", api_base=server.base_url, api_key="k", cache=False)
    judge.score(["q1", "q2"], ["a1", "a2"], batch=True, progress=bar)  # type: ignore[arg-type]
    shown = [s for s in bar.statuses if s]
    assert any("batch batch_" in s and "/2 done" in s for s in shown), shown


def test_the_batch_api_benchmark_runs_and_loses_no_row(capsys) -> None:  # type: ignore[no-untyped-def]
    from tests.benchmark_scripts import load_benchmark

    rows = load_benchmark("batch_api").main(["--items", "6", "--delay", "0.05", "--latency", "0"])
    batched, live, again = rows
    assert [r["lost"] for r in rows] == [0, 0, 0] and batched["failed"] == 0 and live["failed"] == 0
    assert batched["cost_usd"] == pytest.approx(live["cost_usd"] * 0.5)
    assert batched["batches"] == 3 and again["requests"] == 0
    assert "batch cost / live cost: 0.500" in capsys.readouterr().out
