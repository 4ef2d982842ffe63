"""Distributed runs on a real local Ray cluster (127.0.0.1, two worker CPUs): equality with a single-process run,
a worker killed mid-run, the shared call cache and resuming from shard files."""

from __future__ import annotations

import os
import shutil
import tempfile
import warnings
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest

ray = pytest.importorskip("ray", reason="Ray is an optional extra: pip install 'judgewidgets[ray]'")

import judgewidgets as jw  # noqa: E402
from judgewidgets import distributed  # noqa: E402
from judgewidgets.testing import OpenAITestServer  # noqa: E402
from tests.fakes import schema_aware  # noqa: E402

from .judges import KillOnceJudge, LengthJudge, SigkillOnceJudge  # noqa: E402

_REPO = str(Path(__file__).resolve().parents[2])
_STARTS = 3  # Ray's raylet gives its agents a fixed 15 s to start; a loaded machine can miss that (ray#65983)


@pytest.fixture(scope="module")
def cluster() -> Iterator[None]:
    """A two-CPU Ray cluster on loopback, started by this module and shut down after it."""
    saved = {k: os.environ.get(k) for k in ("RAY_USAGE_STATS_ENABLED", "RAY_worker_niceness", "PYTHONPATH")}
    os.environ["RAY_USAGE_STATS_ENABLED"] = "0"  # no usage report to the network
    os.environ["RAY_worker_niceness"] = "0"  # noqa: SIM112 -- Ray reads this exact name; its nice 15 starves workers
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (_REPO, saved["PYTHONPATH"]) if p)  # workers import tests.*
    temp = tempfile.mkdtemp(prefix="jwray-", dir="/tmp")  # short: Ray's unix socket paths must stay < 108 bytes
    # Ray swaps 127.0.0.1 for the machine's address unless it runs in its single-machine mode (the one it uses
    # on macOS and Windows, `RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0`): that mode keeps the cluster on loopback.
    import ray._private.ray_constants as ray_constants

    multi_node = ray_constants.ENABLE_RAY_CLUSTER
    ray_constants.ENABLE_RAY_CLUSTER = False
    error: Exception | None = None
    for _ in range(_STARTS):
        try:
            ray.init(
                num_cpus=2,
                include_dashboard=False,
                log_to_driver=False,
                object_store_memory=100 * 1024**2,
                _node_ip_address="127.0.0.1",
                _temp_dir=temp,
            )
            break
        except Exception as exc:  # the raylet's agent-startup deadline: try again with warm caches
            error = exc
            ray.shutdown()
    else:
        ray_constants.ENABLE_RAY_CLUSTER = multi_node
        shutil.rmtree(temp, ignore_errors=True)
        pytest.skip(f"could not start a local Ray cluster in {_STARTS} tries: {error}")
    try:
        yield
    finally:
        ray.shutdown()
        ray_constants.ENABLE_RAY_CLUSTER = multi_node
        shutil.rmtree(temp, ignore_errors=True)
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


@pytest.fixture(scope="module")
def server() -> Iterator[OpenAITestServer]:
    with OpenAITestServer(schema_aware) as running:
        yield running


class CountingProgress:
    """A Progress that counts what it is told."""

    def __init__(self) -> None:
        self.count = 0
        self.closed = False

    def advance(self, n: int = 1) -> None:
        self.count += n

    def close(self) -> None:
        self.closed = True


def data(rows: int = 40) -> pd.DataFrame:
    answers = [f"Answer {'y' * (i % 6)} {i}." for i in range(rows)]
    answers[27] = "Answer KILL 27."  # the row whose shard loses its worker
    return pd.DataFrame({"prompt": [f"Question {i}?" for i in range(rows)], "response": answers})


def model_judges(server: OpenAITestServer, cache: object) -> list[jw.LLMJudge]:
    common = {"api_base": server.base_url, "api_key": "sk-test", "cache": cache}
    return [
        jw.LLMJudge("openai/likert", template="likert", name="likert", **common),  # type: ignore[arg-type]
        jw.LLMJudge("openai/tfu", template="true_false_uncertain", name="tfu", explanations=True, **common),  # type: ignore[arg-type]
    ]


@pytest.mark.parametrize("killer", [KillOnceJudge, SigkillOnceJudge], ids=["exit-after-flush", "sigkill"])
def test_result_equals_single_process_run_when_a_worker_dies(
    cluster: None, server: OpenAITestServer, tmp_path: Path, killer: type[KillOnceJudge]
) -> None:
    frame = data()
    reference = jw.LLMPanel([*model_judges(server, False), LengthJudge("killer")])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = reference.score(frame["prompt"], frame["response"], progress=False).to_df()

    marker = tmp_path / "killed"
    cache = str(tmp_path / "shared" / "calls.sqlite")  # one SQLite file, one connection per worker
    panel = jw.LLMPanel([*model_judges(server, cache), killer(marker)])
    server.reset_stats()
    out = tmp_path / "out"
    runner = distributed.RayRunner(workers=2)
    got = distributed.score(panel, frame, engine=runner, shards=4, output=out, progress=False)

    assert marker.exists()  # a worker did die mid-shard
    pd.testing.assert_frame_equal(got, expected)
    assert len(list(out.glob("shard-*.parquet"))) == 4
    # Every row was judged once by each model judge: the retried shard found its finished calls in the cache.
    assert server.stats.total == len(frame) * 2


def test_files_in_and_resume_from_shard_files(cluster: None, server: OpenAITestServer, tmp_path: Path) -> None:
    frame = data(30)
    frame["response"] = frame["response"].str.replace("KILL", "kill")
    inputs = tmp_path / "in"
    inputs.mkdir()
    frame.iloc[:12].to_parquet(inputs / "part-0.parquet")
    frame.iloc[12:].to_json(inputs / "part-1.jsonl", orient="records", lines=True)
    panel = jw.LLMPanel([*model_judges(server, False), LengthJudge()])
    out = tmp_path / "out"
    bar = CountingProgress()
    first = distributed.score(panel, inputs, shards=3, output=out, output_format="jsonl", progress=bar)
    assert bar.count == 30 * 3 and bar.closed  # the workers' reports reach the driver's bar
    (out / "shard-00001-of-00003.jsonl").unlink()  # as if the run had died before this shard finished
    server.reset_stats()
    again = distributed.score(panel, inputs, output=out, output_format="jsonl", progress=False)
    assert server.stats.total == 10 * 2  # the missing shard only
    pd.testing.assert_frame_equal(again, first)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        single = panel.score(frame["prompt"], frame["response"], progress=False).to_df()
    pd.testing.assert_frame_equal(first, single)
