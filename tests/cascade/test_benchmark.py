"""benchmarks/cascade.py's code path on the loopback test server, with a tiny --n (no model)."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from judgewidgets.testing import OpenAITestServer
from tests.benchmark_scripts import load_benchmark


def by_length(body: dict[str, Any]) -> str:
    """A judge that prefers the longer response (right on many LLMBar pairs, wrong on others)."""
    text = body["messages"][-1]["content"]
    a = re.search(r"<response_a>\n(.*?)\n</response_a>", text, re.S).group(1)  # type: ignore[union-attr]
    b = re.search(r"<response_b>\n(.*?)\n</response_b>", text, re.S).group(1)  # type: ignore[union-attr]
    return json.dumps({"verdict": "A" if len(a) >= len(b) else "B"})


def test_the_benchmark_runs_both_datasets_on_a_server(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    for key in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY"):
        monkeypatch.delenv(key, raising=False)
    benchmark = load_benchmark("cascade")
    argv = ["--n", "70", "--target", "0.5", "--delta", "0.2"]
    with OpenAITestServer(by_length) as server:
        rows = benchmark.main([*argv, "--api-base", server.base_url])
        calls = server.stats.total
        again = benchmark.main([*argv, "--api-base", server.base_url])
        assert server.stats.total == calls  # the second run answers every call from the cache
    out = capsys.readouterr().out
    assert [r["dataset"] for r in rows] == ["pandalm", "llmbar"]
    for row in rows:
        assert row["items"] == 35 and row["stages"] == ["server (probabilities)", "server (second prompt)"]
        assert 0.0 <= row["coverage"] <= 1.0 and row["last_stage_alone_calls"] == 70
    pandalm = rows[0]
    assert pandalm["decided"] > 0 and pandalm["thresholds"][0] is not None  # the longer answer wins 2 of 3 here
    assert again[0]["coverage"] == pandalm["coverage"] and again[0]["agreement"] == pandalm["agreement"]
    assert "each stage alone on the calibration half" in out and "in-sample coverage each target" in out
    assert "paper: Jung, Brahman & Choi" in out and "for the last stage alone on every test pair" in out
    assert calls > 0


def test_too_few_pairs_is_reported_not_raised(capsys: pytest.CaptureFixture[str]) -> None:
    benchmark = load_benchmark("cascade")
    with OpenAITestServer(by_length) as server:
        rows = benchmark.main(["--n", "20", "--datasets", "llmbar", "--api-base", server.base_url])
        assert server.stats.total == 0
    assert "error" in rows[0] and "cannot calibrate" in capsys.readouterr().out


def test_the_local_cascade_has_two_stages_without_a_key(monkeypatch: pytest.MonkeyPatch) -> None:
    for key in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY"):
        monkeypatch.delenv(key, raising=False)
    benchmark = load_benchmark("cascade")
    judges = benchmark.build_judges(benchmark.parse_args([]), cache=False)
    assert [j.model for j in judges] == ["local", "local"] and judges[1].explanations
    monkeypatch.setenv("OPENAI_API_KEY", "sk-not-used")
    judges = benchmark.build_judges(benchmark.parse_args(["--second", "variant"]), cache=False)
    assert [j.model for j in judges] == ["local", "local", "openai/gpt-4o-mini"]
    assert benchmark.build_judges(benchmark.parse_args(["--no-hosted"]), cache=False)[-1].model == "local"


def test_raw_and_aligned_stages_are_compared_on_a_server(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    for key in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY"):
        monkeypatch.delenv(key, raising=False)
    benchmark = load_benchmark("cascade")
    argv = ["--compare", "--quick", "--n", "120", "--targets", "0.5,0.6", "--delta", "0.2"]
    with OpenAITestServer(by_length) as server:
        rows = benchmark.main([*argv, "--api-base", server.base_url])
        calls = server.stats.total
        again = benchmark.main([*argv, "--api-base", server.base_url])
        assert server.stats.total == calls  # aligning, calibrating and testing again: every call from the cache
    out = capsys.readouterr().out
    assert calls > 0 and [r["coverage"] for r in again] == [r["coverage"] for r in rows]
    keys = {(r["dataset"], r["stages"], r["target"], r["walk"]) for r in rows}
    assert keys == {
        (d, s, t, w)
        for d in ("pandalm", "llmbar")
        for s in ("raw", "aligned")
        for t in (0.5, 0.6)
        for w in ("two starts", "paper")
    }
    for row in rows:
        assert row["tested"] == 40 and 0 <= row["decided"] <= 40 and len(row["thresholds"]) == 2
    pandalm = [r for r in rows if r["dataset"] == "pandalm" and r["target"] == 0.5 and r["walk"] == "two starts"]
    assert all(r["decided"] > 0 for r in pandalm)  # the longer answer wins about 2 of 3 PandaLM pairs
    assert "40 pairs to align, 40 to calibrate, 40 to test" in out and "held-out accuracy" in out
    assert "target (aligned stages decide ≥ 30 % of PandaLM at a certified 70 %): not measured" in out


def test_the_walks_are_compared_by_simulation(capsys: pytest.CaptureFixture[str]) -> None:
    rows = load_benchmark("cascade").main(["--simulate", "--splits", "200"])
    out = capsys.readouterr().out
    assert len(rows) == 13 and all(0 <= r["coverage (two starts)"] <= 1 for r in rows)
    assert min(r["held (two starts)"] for r in rows) >= 0.9  # the guarantee's 1 − δ, with room for 200 splits
    levelled = next(r for r in rows if r["judges"] == "levels off at 88 %, twice" and r["rows"] == 200)
    assert levelled["coverage (two starts)"] > levelled["coverage (paper)"] + 0.1
    assert "two starts decide more in" in out
