"""benchmarks/alignment.py's code path on the loopback test server, with small sets (no model)."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from judgewidgets.testing import OpenAITestServer
from tests.benchmark_scripts import load_benchmark


def shorter_wins(body: dict[str, Any]) -> str:
    """A judge that prefers the longer response shown first unless it is much longer: wrong in a learnable way."""
    text = body["messages"][1]["content"]
    a = re.search(r"<response_a>\n(.*?)\n</response_a>", text, re.S).group(1)  # type: ignore[union-attr]
    b = re.search(r"<response_b>\n(.*?)\n</response_b>", text, re.S).group(1)  # type: ignore[union-attr]
    return json.dumps({"verdict": "A" if len(a) >= len(b) else "B", "confidence": 0.7})


def test_the_benchmark_aligns_and_tests_on_disjoint_pairs(capsys: pytest.CaptureFixture[str]) -> None:
    benchmark = load_benchmark("alignment")
    argv = ["--ks", "20,40", "--test-n", "30", "--subsets", "Natural", "--levers", "rule"]
    with OpenAITestServer(shorter_wins) as server:
        rows = benchmark.main_sync([*argv, "--api-base", server.base_url])
        calls = server.stats.total
        again = benchmark.main_sync([*argv, "--api-base", server.base_url])
        assert server.stats.total == calls  # the second run answers every call from the cache
    assert [(r["dataset"], r["k"]) for r in rows] == [("pandalm", 20), ("pandalm", 40), ("llmbar", 20), ("llmbar", 40)]
    assert [r["test_n"] for r in rows] == [30, 30, 80, 60]
    for row in rows:
        assert 0 <= row["before_accuracy"] <= 1 and 0 <= row["after_accuracy"] <= 1
        assert row["before_acc_low"] <= row["before_accuracy"] <= row["before_acc_high"]
        assert row["calls"] == 2 * row["k"]  # both orders of each labelled pair, one prompt (the rule lever)
    assert [r["after_accuracy"] for r in again] == [r["after_accuracy"] for r in rows]
    out = capsys.readouterr().out
    assert "targets:" in out and "gpt-3.5-turbo" in out and "LLMBar Natural" in out


def test_train_and_test_pairs_never_overlap() -> None:
    benchmark = load_benchmark("alignment")
    args = benchmark.parse_args(["--test-n", "200"])
    for dataset, _, pool, test in benchmark.splits(args):
        if dataset == "pandalm":
            assert not set(pool["pair_id"]) & set(test["pair_id"]) and len(test) == 200
            assert len(pool) + len(test) == 999


def test_pandalm_verdicts_are_written_for_the_resampling(tmp_path: Any) -> None:
    """benchmarks/pandalm_verdicts.py judges alignment.py's pairs in its order and writes what ppi_estimates reads."""
    verdicts, ppi = load_benchmark("pandalm_verdicts"), load_benchmark("ppi_estimates")
    out = tmp_path / "verdicts.csv"
    with OpenAITestServer(shorter_wins) as server:
        written = verdicts.main(["--n", "30", "--out", str(out), "--api-base", server.base_url])
    assert len(written) == 30 and set(written["verdict"]) <= {"A", "B", "tie"}
    test = load_benchmark("alignment").splits(load_benchmark("alignment").parse_args(["--datasets", "pandalm"]))[0][3]
    assert list(written["pair_id"]) == list(test["pair_id"].head(30))
    rows = ppi.pandalm_resample(ppi.verdicts_frame(out), [10], draws=50)
    assert rows[0]["pairs"] == 30 and 0 <= rows[0]["ppi_coverage"] <= 1
