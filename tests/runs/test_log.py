"""jw.Runs: the run log of a folder (read from each run.json), runs saved, loaded and compared by name."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

import judgewidgets as jw

from .helpers import PROMPTS, RESPONSES, judge


def test_the_log_lists_each_run_with_its_headline(tmp_path: Path) -> None:
    runs = jw.Runs(tmp_path / "evals")
    assert len(runs) == 0 and runs.table.empty and "name" in runs.table.columns
    first = judge("j").score(PROMPTS, RESPONSES, progress=False)
    second = jw.LLMPanel([judge("j"), judge("k")]).score(PROMPTS, [f"{r} score=2" for r in RESPONSES], progress=False)
    runs.save(first, "v1")
    runs.save(second, "v2")
    (tmp_path / "evals" / "notes").mkdir()  # a folder that is not a run is not listed
    table = runs.table
    assert table["name"].tolist() == ["v1", "v2"] and runs.names == ["v1", "v2"] and "v1" in runs
    assert table["kind"].tolist() == ["judge", "panel"] and table["judges"].tolist() == ["j", "j, k"]
    assert table["models"].tolist() == ["openai/scripted"] * 2 and table["items"].tolist() == [4, 4]
    assert table["mean_score"].tolist() == pytest.approx([0.75, 0.25])
    assert table["cost_usd"].tolist() == pytest.approx([0.004, 0.008])
    assert isinstance(table["when"].dtype, pd.DatetimeTZDtype)
    assert table["fingerprint"].iloc[0] != table["fingerprint"].iloc[1]  # other responses: other inputs
    assert not any("/" in c for c in table.columns)  # per-judge metrics stay in run.json
    assert "2 saved runs" in runs._repr_html_() and repr(runs).endswith("2 runs)")


def test_runs_load_and_compare_by_name(tmp_path: Path) -> None:
    runs = jw.Runs(tmp_path)
    runs.save(judge().score(PROMPTS, RESPONSES, progress=False), "v1")
    runs.save(judge().score(PROMPTS, [f"{r} score=5" for r in RESPONSES], progress=False), "v2")
    assert isinstance(runs["v1"], jw.JudgeResult) and runs.load("v2").to_df()["score"].tolist() == [1.0] * 4
    cmp = runs.compare("v1", "v2", seed=3)
    assert cmp.names == ("v1", "v2") and cmp.summary.iloc[0]["change"] == pytest.approx(0.25)
    with pytest.raises(jw.SavedRunError, match=r"no saved run 'v3' in .* \(runs: v1, v2\)"):
        runs.compare("v1", "v3")
    with pytest.raises(jw.SavedRunError, match="plain folder name"):
        runs.save(judge().score(PROMPTS, RESPONSES, progress=False), "../elsewhere")


def test_a_run_this_version_cannot_read_is_listed_with_why(tmp_path: Path) -> None:
    runs = jw.Runs(tmp_path)
    runs.save(judge().score(PROMPTS, RESPONSES, progress=False), "old")
    runs.save(judge().score(PROMPTS, RESPONSES, progress=False), "future")
    meta_file = tmp_path / "future" / "run.json"
    meta = json.loads(meta_file.read_text())
    meta_file.write_text(json.dumps({**meta, "format_version": 99}))
    table = runs.table.set_index("name")
    assert pd.isna(table.loc["old", "error"]) and "upgrade judgewidgets" in table.loc["future", "error"]
