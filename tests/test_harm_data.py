"""The shipped harm pairs (`jw.datasets.harm_pairs()`, data/harm/pairs.jsonl) and their place in `jw.meta_evaluate`."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
import pytest

import judgewidgets as jw
from judgewidgets._errors import ConfigurationError, InputError
from judgewidgets.testing import ScriptedTransport
from tests.pairwise.helpers import answer, slots


def test_fifty_pairs_half_of_each_kind_the_right_reply_in_either_slot() -> None:
    pairs = jw.datasets.harm_pairs()
    assert len(pairs) == 50 and pairs["pair_id"].is_unique
    assert pairs["kind"].value_counts().to_dict() == {"harmful_request": 25, "harmless_request": 25}
    assert (pairs["subset"] == pairs["kind"]).all()
    for kind, part in pairs.groupby("kind"):
        assert part["label"].value_counts().to_dict() == {"A": 13, "B": 12}, kind
    for row in pairs.to_dict("records"):
        assert row["good"] != row["bad"] and row["question"] and row["note"]
        right, wrong = (
            (row["response_a"], row["response_b"]) if row["label"] == "A" else (row["response_b"], row["response_a"])
        )
        assert (right, wrong) == (row["good"], row["bad"])


def test_harmful_compliance_is_described_in_general_terms_only() -> None:
    """No quantity, code, link or numbered step in any compliant reply to a harmful request."""
    harmful = jw.datasets.harm_pairs("harmful_request")
    operational = re.compile(r"\d|`|https?://|^\s*(step|\d+\.)\s", re.IGNORECASE | re.MULTILINE)
    assert not [r for r in harmful["bad"] if operational.search(r)]


def test_kinds_are_checked() -> None:
    assert len(jw.datasets.harm_pairs(["harmless_request"])) == 25
    with pytest.raises(InputError, match="harm pair kind"):
        jw.datasets.harm_pairs("harmfull")


def _judge(first_slot: bool = False) -> jw.PairwiseJudge:
    """A scripted judge that picks the shipped right reply (or always the first slot); one order per presentation,
    so `meta_evaluate`'s two presentations of a pair are the judge's two orders."""
    right = set(jw.datasets.harm_pairs()["good"])

    def reply(request, attempt):  # type: ignore[no-untyped-def]
        a, _ = slots(request)
        return answer("A" if first_slot or a in right else "B", 0.9)

    transport = ScriptedTransport(reply)
    return jw.PairwiseJudge("openai/fake", method="verdict", swap=False, transport=transport, cache=False)


def test_meta_evaluate_measures_a_judge_on_each_kind_in_both_orders() -> None:
    report = jw.meta_evaluate(_judge(), "harm", progress=False)
    table = report.measured.set_index("subset")
    assert list(table.index) == ["harmful_request", "harmless_request"] and (table["dataset"] == "harm").all()
    assert (table["n"] == 25).all() and (table["accuracy"] == 1.0).all() and (table["accuracy_both"] == 1.0).all()
    assert (table["positional_agreement"] == 1.0).all()
    summary = report.summary().set_index("set")
    assert summary.loc["harm pairs (mean of kinds)", "accuracy"] == 1.0
    biased = jw.meta_evaluate(_judge(first_slot=True), "harm", subsets=["harmful_request"], n=10, progress=False)
    row = biased.measured.iloc[0]
    assert row["subset"] == "harmful_request" and row["n"] == 10
    assert row["accuracy"] == 0.5 and row["positional_agreement"] == 0.0 and row["first_slot_preference"] == 1.0


def test_the_default_sets_stay_llmbar_and_pandalm() -> None:
    with pytest.raises(ConfigurationError, match="harm"):
        jw.meta_evaluate(_judge(), "harms", progress=False)
    assert isinstance(jw.datasets.harm_pairs(), pd.DataFrame)


def test_the_benchmark_prints_each_kind_beside_the_published_judges(capsys: pytest.CaptureFixture[str]) -> None:
    from judgewidgets.testing import OpenAITestServer
    from tests.benchmark_scripts import load_benchmark

    with OpenAITestServer(lambda body: answer("A")) as server:
        table = load_benchmark("harm_pairs").main(
            ["--judges", "verdict", "--n", "2", "--fresh", "--model", "m", "--api-base", server.base_url]
        )
    assert list(table["subset"]) == ["harmful_request", "harmless_request"] and list(table["n"]) == [2, 2]
    assert table["accuracy"].tolist() == [0.0, 0.0]  # always "A": the orders disagree, an inconsistent tie
    printed = capsys.readouterr().out
    assert "Prometheus-2-7B" in printed and "target" in printed and "harmless_request" in printed


def test_the_benchmark_reads_hhh_alignment_from_a_bigbench_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from judgewidgets.testing import OpenAITestServer
    from tests.benchmark_scripts import load_benchmark

    for subset in ("harmless", "helpful", "honest", "other"):
        examples = [
            {"input": f"{subset} question {i}", "target_scores": {f"good {i}": 1, f"bad {i}": 0}} for i in range(3)
        ]
        (tmp_path / subset).mkdir()
        (tmp_path / subset / "task.json").write_text(json.dumps({"examples": examples}))
    bench = load_benchmark("harm_pairs")
    pairs = bench.hhh_pairs(str(tmp_path), seed=0)
    assert len(pairs) == 12 and set(pairs["label"]) == {"A", "B"}
    good = pairs.apply(lambda r: r["response_a"] if r["label"] == "A" else r["response_b"], axis=1)
    assert all(text.startswith("good") for text in good)
    with OpenAITestServer(lambda body: answer("A")) as server:
        args = ["--judges", "verdict", "--n", "2", "--fresh", "--model", "m", "--api-base", server.base_url]
        table = bench.main([*args, "--hhh", str(tmp_path)])
    assert list(table["set"]) == ["harm pairs"] * 2 + ["HHH alignment"] * 4
    assert "on all 8 HHH alignment pairs" in capsys.readouterr().out
