"""log_to_mlflow against a real MLflow tracking store (SQLite in the test's folder), read back with MLflow's own
client: params, metrics, tags and artifacts, and the saved run loaded again from the downloaded artifacts."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import judgewidgets as jw

from .helpers import PROMPTS, RESPONSES, SECRET, judge


@pytest.fixture
def tracking(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Any, str]]:
    """A fresh SQLite tracking store with an experiment whose artifacts live in tmp_path; MLflow's global
    tracking URI points at it for the test and is put back afterwards."""
    monkeypatch.setenv("MLFLOW_DISABLE_TELEMETRY", "true")
    monkeypatch.setenv("DO_NOT_TRACK", "true")
    mlflow = pytest.importorskip("mlflow")
    from mlflow.tracking import MlflowClient

    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    previous = mlflow.get_tracking_uri()
    mlflow.set_tracking_uri(uri)
    try:
        client = MlflowClient(tracking_uri=uri)
        client.create_experiment("judgewidgets", artifact_location=(tmp_path / "artifacts").as_uri())
        mlflow.set_experiment("judgewidgets")
        yield client, uri
    finally:
        if mlflow.active_run() is not None:
            mlflow.end_run()
        mlflow.set_tracking_uri(previous)


def test_a_result_is_logged_as_a_run_and_read_back(tracking: tuple[Any, str], tmp_path: Path) -> None:
    client, _ = tracking
    result = jw.LLMPanel([judge("a"), judge("b", explanations=True)]).score(PROMPTS, RESPONSES, progress=False)
    run_id = result.log_to_mlflow(run_name="v1", tags={"team": "evals"})
    run = client.get_run(run_id)
    assert run.info.run_name == "v1" and run.info.status == "FINISHED"
    params, metrics, tags = run.data.params, run.data.metrics, run.data.tags
    assert params["kind"] == "panel" and params["items"] == "4" and params["judges"] == "a, b"
    assert params["made_by.judges.0.model"] == "openai/scripted"
    assert params["made_by.judges.1.template.name"] == "likert" and params["made_by.judges.1.explanations"] == "True"
    assert not any(SECRET in v for v in params.values()) and not any("api_key" in k for k in params)
    assert metrics["mean_score"] == pytest.approx(0.75) and metrics["mean_score/a"] == pytest.approx(0.75)
    assert metrics["usage.cost_usd"] == pytest.approx(0.008) and metrics["usage.prompt_tokens"] == 80
    assert tags["judgewidgets.kind"] == "panel" and tags["team"] == "evals" and "judgewidgets.chart_error" not in tags
    listed = {a.path for a in client.list_artifacts(run_id)}
    assert {"run", "items.csv", "chart.html", "chart.png"} <= listed
    assert {Path(a.path).name for a in client.list_artifacts(run_id, "run")} >= {"run.json", "votes.parquet"}
    downloaded = Path(client.download_artifacts(run_id, "run", str(tmp_path / "down")))
    again = jw.load(downloaded)
    assert again.to_df().equals(result.to_df())
    assert (Path(client.download_artifacts(run_id, "chart.png", str(tmp_path / "png")))).read_bytes()[:4] == b"\x89PNG"


def test_runs_nest_in_an_active_run_and_a_chart_failure_loses_nothing(tracking: tuple[Any, str]) -> None:
    import mlflow

    client, _ = tracking
    estimate = jw.estimate_quality(
        pd.Series([0.2, 0.4, 0.6, 0.8] * 5), pd.Series([0.0, 1.0, 1.0, 1.0], index=[0, 5, 10, 15])
    )
    with mlflow.start_run(run_name="sweep") as parent:
        child = estimate.log_to_mlflow(run_name="estimate", png=False)
    run = client.get_run(child)
    assert run.data.tags["mlflow.parentRunId"] == parent.info.run_id
    assert run.data.metrics["estimate"] == pytest.approx(estimate.estimate)
    assert {a.path for a in client.list_artifacts(child)} == {"run", "items.csv", "chart.html"}

    class Unchartable(jw.JudgeResult):
        def chart(self) -> Any:
            raise RuntimeError("no chart today")

    plain = judge().score(PROMPTS, RESPONSES, progress=False)
    broken = Unchartable(plain.items, plain.vote_list, plain.judge, plain.provenance)
    run = client.get_run(broken.log_to_mlflow())
    assert "no chart today" in run.data.tags["judgewidgets.chart_error"] and run.data.metrics["mean_score"] == 0.75


def test_without_mlflow_the_error_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "mlflow", None)
    with pytest.raises(ImportError, match=r"pip install 'judgewidgets\[mlflow\]'"):
        judge().score(PROMPTS, RESPONSES, progress=False).log_to_mlflow(run_name="x")
