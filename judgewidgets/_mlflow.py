"""A result logged as an MLflow run, into the tracking URI and experiment the user has set.

Params: what made the result (each judge's settings, flattened to `made_by.judges.0.model`, ...; no secrets),
its kind, item count and input fingerprint. Metrics: the result's headline metrics and its usage (`usage.cost_usd`,
...). Artifacts: the saved run (`run/`: run.json and the Parquet tables, loadable with `jw.load` once
downloaded), the per-item table (`items.csv`) and the chart (`chart.html`, and `chart.png` through
vl-convert). Tags: `judgewidgets.kind` and `judgewidgets.version`.
"""

from __future__ import annotations

import math
import re
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from ._runfiles import Dump, write
from ._version import __version__
from .engine._request import _ambient_secrets, redact

_MAX_PARAMS = 300  # a description can be long (templates, rubrics); the whole of it is in run/run.json
_MAX_VALUE = 500  # characters of a param value shown (older tracking servers refuse longer ones)
_BATCH = 100  # params per call (MLflow's limit per batch)
_KEY = re.compile(r"[^A-Za-z0-9_\-. /]")


def import_mlflow() -> Any:
    """The mlflow module, or an ImportError saying what to install."""
    try:
        import mlflow
    except ImportError as exc:
        raise ImportError(
            "log_to_mlflow needs MLflow, which is not installed: pip install 'judgewidgets[mlflow]'"
        ) from exc
    return mlflow


def log_result(
    result: Any,
    run_name: str | None = None,
    *,
    experiment: str | None = None,
    tags: Mapping[str, str] | None = None,
    chart: bool = True,
    png: bool = True,
) -> str:
    """Log `result` as one MLflow run (nested in the active run, if there is one) and return its run id.

    `experiment` names the experiment to log into (created if missing; default: MLflow's active experiment);
    `tags` are added to the run's; `chart=False` skips the chart artifacts, `png=False` only its PNG (which
    vl-convert renders in a second or two). A chart that cannot be drawn is noted in the tag
    `judgewidgets.chart_error`, and the rest is logged."""
    mlflow = import_mlflow()
    dump = result._dump()
    if experiment is not None:
        mlflow.set_experiment(experiment)
    nested = mlflow.active_run() is not None
    with mlflow.start_run(run_name=run_name, nested=nested) as run:
        mlflow.set_tags({"judgewidgets.kind": dump.kind, "judgewidgets.version": __version__, **dict(tags or {})})
        found = params(dump)
        keys = list(found)
        for start in range(0, len(keys), _BATCH):
            mlflow.log_params({k: found[k] for k in keys[start : start + _BATCH]})
        mlflow.log_metrics(metrics(dump))
        with tempfile.TemporaryDirectory(prefix="judgewidgets-mlflow-") as tmp:
            folder = write(result, Path(tmp) / "run")
            mlflow.log_artifacts(str(folder), artifact_path="run")
            table = _per_item(result)
            if table is not None:
                items = Path(tmp) / "items.csv"
                table.to_csv(items, index=False)
                mlflow.log_artifact(str(items))
            if chart and callable(getattr(result, "chart", None)):
                _log_chart(mlflow, result, Path(tmp), png)
    return str(run.info.run_id)


def params(dump: Dump) -> dict[str, str]:
    """The run's params: kind, items, fingerprint and models, then the flattened settings of what made it."""
    secrets = list(_ambient_secrets())
    out: dict[str, str] = {"kind": dump.kind}
    if dump.inputs is not None:
        from ._runfiles import fingerprint

        out["items"] = str(len(dump.inputs))
        out["fingerprint"] = str(fingerprint(dump.inputs))
    if dump.judges:
        out["judges"] = ", ".join(dump.judges)
    for key, value in _flat(dump.provenance, "made_by"):
        if len(out) >= _MAX_PARAMS:
            break
        text = redact(str(value), secrets) if secrets else str(value)
        out[_key(key)] = text if len(text) <= _MAX_VALUE else text[: _MAX_VALUE - 1] + "…"
    return out


def metrics(dump: Dump) -> dict[str, float]:
    """The headline metrics and the usage (`usage.<field>`), numbers only (None and booleans left out)."""
    out: dict[str, float] = {}
    for key, value in [*dump.metrics.items(), *((f"usage.{k}", v) for k, v in dump.usage.items())]:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or math.isinf(value):
            continue
        out[_key(key)] = float(value)
    return out


def _flat(value: Any, prefix: str) -> Iterator[tuple[str, Any]]:
    if isinstance(value, Mapping):
        for key, inner in value.items():
            yield from _flat(inner, f"{prefix}.{key}")
    elif isinstance(value, list) and any(isinstance(v, (Mapping, list)) for v in value):
        for index, inner in enumerate(value):
            yield from _flat(inner, f"{prefix}.{index}")
    elif value is not None:
        yield prefix, value


def _key(key: str) -> str:
    """A name MLflow accepts: letters, digits, _ - . / and spaces (others become _), at most 250 characters."""
    return _KEY.sub("_", key)[:250]


def _per_item(result: Any) -> Any:
    """The result's per-item table (`to_df()`, or the result itself when it is a DataFrame), if it has one."""
    import pandas as pd

    if isinstance(result, pd.DataFrame):
        return pd.DataFrame(result)
    to_df = getattr(result, "to_df", None)
    return to_df() if callable(to_df) else None


def _log_chart(mlflow: Any, result: Any, folder: Path, png: bool) -> None:
    try:
        drawn = result.chart()
        html = folder / "chart.html"
        drawn.save(str(html))
        mlflow.log_artifact(str(html))
        if png:
            image = folder / "chart.png"
            drawn.save(str(image))
            mlflow.log_artifact(str(image))
    except Exception as exc:  # a chart is a view: its failure must not lose the run
        mlflow.set_tag("judgewidgets.chart_error", f"{type(exc).__name__}: {exc}"[:500])
