"""benchmarks/ppi_estimates.py at tiny sizes: the simulation, its targets, and the PandaLM resampling hook on
synthetic verdicts (no model, no server)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import judgewidgets as jw
from tests.benchmark_scripts import load_benchmark


def test_the_simulation_prints_coverage_widths_and_targets(capsys: pytest.CaptureFixture[str]) -> None:
    benchmark = load_benchmark("ppi_estimates")
    rows = benchmark.main(["--draws", "300", "--N", "400", "--ns", "30,60", "--rhos", "0,0.8"])
    assert [(r["family"], r["rho"], r["n"]) for r in rows] == [
        (family, rho, n) for family in ("scores", "pass/fail") for rho in (0.0, 0.8) for n in (30, 60)
    ]
    for row in rows:
        assert 0.85 <= row["ppi_coverage"] <= 1 and 0.85 <= row["labels_coverage"] <= 1
        assert row["judge_coverage"] < 0.7  # the judge alone is biased, and its interval does not know
        assert row["theory"] == pytest.approx(np.sqrt(1 - row["rho_true"] ** 2 * 400 / (400 + row["n"])))
        assert row["ratio"] <= 1.03
    good = [r for r in rows if r["family"] == "scores" and r["rho"] == 0.8]
    assert all(abs(r["vs_theory"]) < 0.05 and r["ratio"] < 0.75 for r in good)
    assert rows[4]["rho_true"] < 0.01 and rows[6]["rho_true"] > 0.8  # pass/fail's exact correlation
    out = capsys.readouterr().out
    assert "PPI coverage >= 94% at n >= 50" in out and "never wider than labels only" in out
    assert "sqrt(1 − ρ²·N/(N+n))" in out and "false pass" in out and "no judge verdicts given" in out


def test_quick_is_small() -> None:
    args = load_benchmark("ppi_estimates").parse_args(["--quick"])
    assert args.ns == [50] and args.rhos == [0.0, 0.9] and args.draws == 2000


def synthetic_pairs(pairs: int, agree: float, seed: int) -> pd.DataFrame:
    """Labels A/B/tie and a judge that gives the label with probability `agree`, else "A" (a first-slot habit)."""
    rng = np.random.default_rng(seed)
    label = rng.choice(["A", "B", "tie"], pairs, p=[0.42, 0.47, 0.11])
    verdict = np.where(rng.random(pairs) < agree, label, "A")
    return pd.DataFrame({"label": label, "verdict": verdict})


def test_the_pandalm_resampling_measures_coverage_and_width_on_a_labelled_frame() -> None:
    benchmark = load_benchmark("ppi_estimates")
    frame = synthetic_pairs(999, agree=0.7, seed=0)
    frame.loc[3, "verdict"] = None  # a failed call: left out and counted
    rows = benchmark.pandalm_resample(frame, [50, 100], draws=500, seed=1)
    truth = frame.drop(index=3)["label"].map({"A": 1.0, "tie": 0.5, "B": 0.0}).mean()
    assert [r["n"] for r in rows] == [50, 100] and all(r["pairs"] == 998 and r["dropped"] == 1 for r in rows)
    for row in rows:
        assert row["truth"] == pytest.approx(truth) and row["N"] == 998 - row["n"]
        assert row["ppi_coverage"] >= 0.92 and row["labels_coverage"] >= 0.92
        assert row["judge_coverage"] < 0.2  # the first-slot habit inflates A's wins; its own interval misses
        assert row["ppi_width"] < row["labels_width"] and 0 < row["lam"] <= 1
    assert rows[1]["ppi_width"] < rows[0]["ppi_width"]
    with pytest.raises(ValueError, match='"A", "B" or "tie"'):
        benchmark.pandalm_resample(frame.assign(verdict="first"), [50], draws=10)


def test_judge_verdicts_on_pandalm_join_its_labels(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pandalm = jw.datasets.pandalm()
    rng = np.random.default_rng(2)
    verdicts = np.where(rng.random(len(pandalm)) < 0.6, pandalm["label"], "A")
    path = tmp_path / "verdicts.csv"
    pd.DataFrame({"pair_id": pandalm["pair_id"], "verdict": verdicts}).to_csv(path, index=False)
    frame = load_benchmark("ppi_estimates").verdicts_frame(path)
    assert len(frame) == len(pandalm) and (frame["verdict"] == verdicts).all()
    load_benchmark("ppi_estimates").main(
        ["--draws", "100", "--N", "200", "--ns", "50", "--rhos", "0.5", "--pandalm-verdicts", str(path)]
    )
    out = capsys.readouterr().out
    assert "PandaLM (share of pairs where response 1 wins" in out and "ppi_coverage" in out
