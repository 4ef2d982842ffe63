"""benchmarks/runs.py at a tiny size: every operation measured against its target and its peer, in one table."""

from __future__ import annotations

import math

import pytest

import judgewidgets as jw
from tests.benchmark_scripts import load_benchmark


def test_the_benchmark_prints_each_operation_against_the_target_and_its_peer(
    capsys: pytest.CaptureFixture[str],
) -> None:
    rows = load_benchmark("runs").main(["--votes", "400", "--items", "100", "--judges", "2", "--repeat", "1"])
    assert [r["operation"] for r in rows] == ["save", "load", "compare"]
    assert rows[0]["size"] == "400 votes" and rows[2]["size"] == "2 × 100 items, 2 judges"
    for row in rows:
        assert row["seconds"] > 0 and row["peer_seconds"] > 0
        assert math.isclose(row["vs_target"], row["seconds"]) and math.isclose(
            row["vs_peer"], row["seconds"] / row["peer_seconds"]
        )
    out = capsys.readouterr().out
    assert "× target" in out and "× peer" in out and "pyarrow write" in out and "pandas + numpy by hand" in out
    assert "over the 1 s target: " in out and "by CPU time" in out


def test_quick_is_small_and_the_default_is_the_issues_size() -> None:
    benchmark = load_benchmark("runs")
    quick, full = benchmark.parse_args(["--quick"]), benchmark.parse_args([])
    assert (quick.votes, quick.items, quick.repeat) == (10_000, 2_000, 3)
    assert (full.votes, full.items, full.judges) == (100_000, 10_000, 4)


def test_the_synthetic_runs_look_like_real_ones_and_the_peer_agrees_with_compare() -> None:
    benchmark = load_benchmark("runs")
    result = benchmark.panel_result(200, 2)
    votes = result.votes
    assert 0.0 < votes["error"].notna().mean() < 0.15 and votes["confidence"].notna().any()
    before, after = benchmark.panel_result(300, 2, seed=1), benchmark.panel_result(300, 2, seed=1, worse=0.3)
    ours = jw.compare(before, after).summary.set_index(["judge", "metric"])["change"]
    peer = benchmark.by_hand(before, after).set_index(["judge", "metric"])["change"]
    for judge in ("judge_1", "judge_2"):
        assert ours[(judge, "mean_score")] == pytest.approx(peer[(judge, "mean_score")])
        assert ours[(judge, "mean_score")] < -0.05
