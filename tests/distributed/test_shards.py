"""Sharding, shard files, resuming and the local runner: the distributed machinery without Ray."""

from __future__ import annotations

import math
import sys
import warnings
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest

import judgewidgets as jw
from judgewidgets import distributed
from judgewidgets.distributed._shards import OutputStore, cut_shards, load_table, votes_from_frame, votes_to_frame
from judgewidgets.testing import OpenAITestServer
from tests.fakes import schema_aware

from .judges import LengthJudge


@pytest.fixture(scope="module")
def server() -> Iterator[OpenAITestServer]:
    with OpenAITestServer(schema_aware) as running:
        yield running


def table(rows: int = 25) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "question": [f"Question {i}?" for i in range(rows)],
            "answer": [f"Answer {'x' * (i % 7)} {i}." for i in range(rows)],
            "gold": [f"Gold {i}" if i % 3 else None for i in range(rows)],
        }
    )


def panel(server: OpenAITestServer, **judge_options: object) -> jw.LLMPanel:
    options: dict[str, object] = {"api_base": server.base_url, "api_key": "sk-test", "cache": False}
    options.update(judge_options)
    return jw.LLMPanel(
        [
            jw.LLMJudge("openai/likert", template="likert", name="likert", **options),  # type: ignore[arg-type]
            jw.LLMJudge("openai/tfu", template="true_false_uncertain", name="tfu", explanations=True, **options),  # type: ignore[arg-type]
            LengthJudge(),
        ]
    )


def single(p: jw.LLMPanel, data: pd.DataFrame) -> pd.DataFrame:
    return p.score(data["question"], data["answer"], data["gold"], progress=False).to_df()


COLUMNS = {"prompt_col": "question", "response_col": "answer", "reference_col": "gold", "progress": False}


def test_shards_cover_every_row_once() -> None:
    rows = [str(i) for i in range(10)]
    shards = cut_shards(rows, rows, None, 3)
    assert [(s.start, s.rows) for s in shards] == [(0, 4), (4, 3), (7, 3)]
    assert [p for s in shards for p in s.prompts] == rows
    assert len(cut_shards(rows[:2], rows[:2], None, 5)) == 2
    assert shards[1].name == "shard-00001-of-00003"


def test_input_from_parquet_and_jsonl_files(tmp_path: Path) -> None:
    data = table(6)
    data.iloc[:3].to_parquet(tmp_path / "a.parquet")
    data.iloc[3:].to_json(tmp_path / "b.jsonl", orient="records", lines=True)
    pd.testing.assert_frame_equal(load_table(tmp_path), data)
    pd.testing.assert_frame_equal(load_table([tmp_path / "a.parquet", tmp_path / "b.jsonl"]), data)
    with pytest.raises(jw.InputError, match="not found"):
        load_table(tmp_path / "missing.parquet")


@pytest.mark.parametrize("file_format", ["parquet", "jsonl"])
def test_votes_survive_the_shard_files(tmp_path: Path, file_format: str) -> None:
    votes = [
        jw.Vote(item=0, judge="a", score=0.5, raw="4", explanation="why", prompt_tokens=3, completion_tokens=1),
        jw.Vote(item=1, judge="a", score=math.nan, raw="", error="infrastructure: boom", cost_usd=0.25, attempts=3),
        jw.Vote(item=2, judge="b", score=1.0, raw='{"score": 5}', cached=True, latency_s=0.1),
    ]
    store = OutputStore(tmp_path, file_format)
    shard = cut_shards(["p"] * 3, ["r"] * 3, None, 1)[0]
    store.write(shard, votes)
    back = store.read(shard)
    dump = [v.model_dump() for v in back]
    assert math.isnan(dump[1].pop("score")) and math.isnan(votes[1].model_dump().pop("score"))
    expected = [v.model_dump() for v in votes]
    expected[1].pop("score")
    assert dump == expected
    assert votes_from_frame(votes_to_frame(votes))[0].model_dump() == expected[0]


def test_local_engine_gives_the_single_machine_table(server: OpenAITestServer) -> None:
    data = table()
    p = panel(server)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = single(p, data)
        got = distributed.score(p, data, engine="local", shards=4, **COLUMNS)
    pd.testing.assert_frame_equal(got, expected)
    assert "tfu_explanation" in got and "reference" in got


def test_a_run_resumes_by_skipping_finished_shards(server: OpenAITestServer, tmp_path: Path) -> None:
    data = table()
    p = panel(server)
    out = tmp_path / "run"
    first = distributed.run(p, data, engine="local", shards=5, output=out, **COLUMNS)
    files = sorted(out.glob("shard-*.parquet"))
    assert len(files) == 5 and (out / "manifest.json").exists()
    for lost in files[1:3]:  # as if the run had been killed before these shards finished
        lost.unlink()
    server.reset_stats()
    again = distributed.run(p, data, engine="local", output=out, **COLUMNS)
    assert server.stats.total == 10 * 2  # only the two missing shards (5 rows each), by the two model judges
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pd.testing.assert_frame_equal(again.to_df(), first.to_df())
    pd.testing.assert_frame_equal(again.votes.drop(columns="latency_s"), first.votes.drop(columns="latency_s"))
    server.reset_stats()
    distributed.run(p, data, engine="local", output=out, **COLUMNS)
    assert server.stats.total == 0


def test_output_of_another_run_is_refused(server: OpenAITestServer, tmp_path: Path) -> None:
    p = panel(server)
    distributed.run(p, table(4), engine="local", shards=2, output=tmp_path, **COLUMNS)
    with pytest.raises(jw.ConfigurationError, match="another run"):
        distributed.run(p, table(5), engine="local", output=tmp_path, **COLUMNS)
    with pytest.raises(jw.ConfigurationError, match="2 shards"):
        distributed.run(p, table(4), engine="local", shards=3, output=tmp_path, **COLUMNS)


def test_bad_input_fails_before_any_call(server: OpenAITestServer) -> None:
    p = panel(server)
    server.reset_stats()
    with pytest.raises(jw.InputError, match="'answer'"):
        distributed.score(p, table().drop(columns="answer"), engine="local", **COLUMNS)
    broken = table()
    broken.loc[3, "question"] = None
    with pytest.raises(jw.InputError, match="prompts"):
        distributed.score(p, broken, engine="local", **COLUMNS)
    with pytest.raises(jw.ConfigurationError, match="LLMPanel"):
        distributed.score(p.judges[0], table(), engine="local", **COLUMNS)  # type: ignore[arg-type]
    with pytest.raises(jw.ConfigurationError, match="engine"):
        distributed.score(p, table(), engine="dask", **COLUMNS)  # type: ignore[arg-type]
    assert server.stats.total == 0


def test_without_ray_the_error_names_the_extra(server: OpenAITestServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)
    with pytest.raises(ImportError, match=r"judgewidgets\[ray\]"):
        distributed.score(panel(server), table(3), engine="ray", **COLUMNS)
