"""Records written column by column (`record_columns`, the fast path) give the very file the same records give
written row by row (`record_rows`), whatever their fields hold."""

from __future__ import annotations

import enum
import math
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow.parquet as pq
import pytest
from pydantic import BaseModel

from judgewidgets._records import Vote
from judgewidgets._saved import record_columns, record_rows
from judgewidgets._tables import read_rows, write_rows


class Colour(enum.Enum):
    RED = "red"
    BLUE = "blue"


class Inner(BaseModel):
    label: str
    weight: float


class Odd(BaseModel):
    """Fields a vote does not have: an enum, a nested record, a tuple, a numpy scalar, mixed types."""

    colour: Colour
    inner: Inner | None
    pair: tuple[int, int]
    count: Any
    mixed: Any


def votes() -> list[Vote]:
    return [
        Vote(item=0, judge="a", score=0.75, raw='{"score": 4}', latency_s=0.5, prompt_tokens=10, completion_tokens=2),
        Vote(item=1, judge="a", score=math.nan, error="parse: no verdict", cost_usd=None, attempts=2),
        Vote(
            item=0,
            judge="b",
            score=0.6,
            explanation="",
            score_source="probabilities",
            probabilities={"4": 0.6, "5": 0.4},
            confidence=0.6,
            uncalibrated_score=0.7,
            cached=True,
            cost_usd=1e-5,
        ),
        Vote(item=1, judge="b", score=1.0, explanation="fine \ud83d", score_source="answer"),  # a lone surrogate
    ]


def odd() -> list[Odd]:
    return [
        Odd(colour=Colour.RED, inner=Inner(label="x", weight=1.0), pair=(1, 2), count=np.int64(3), mixed=1),
        Odd(colour=Colour.BLUE, inner=None, pair=(3, 4), count=np.int64(4), mixed="one"),
    ]


@pytest.mark.parametrize("make", [votes, odd])
def test_columns_and_rows_write_the_same_file(make: Any, tmp_path: Path) -> None:
    records = make()
    extra = {"result": list(range(len(records))), "judge_name": ["x"] * len(records)}
    by_rows = write_rows(record_rows(records, **extra), tmp_path / "rows.parquet")
    by_columns = write_rows(record_columns(records, **extra), tmp_path / "columns.parquet")
    assert by_rows == {**by_columns, "file": "rows.parquet"}
    written = [pq.read_table(tmp_path / f"{name}.parquet") for name in ("rows", "columns")]
    assert written[0].schema.equals(written[1].schema)
    assert str(written[0].to_pylist()) == str(written[1].to_pylist())  # NaN as nan in both
    back = read_rows(tmp_path / "columns.parquet", by_columns)
    assert str(back) == str(read_rows(tmp_path / "rows.parquet", by_rows))  # NaN == NaN in text
    assert list(back[0])[:2] == ["result", "judge_name"]


def test_vote_columns_keep_none_and_nan_apart_and_come_back_as_votes(tmp_path: Path) -> None:
    records = votes()
    entry = write_rows(record_columns(records), tmp_path / "votes.parquet")
    assert entry["json_columns"] == ["explanation", "probabilities"] and entry["rows"] == 4  # the surrogate: JSON
    back = [Vote.model_validate(row) for row in read_rows(tmp_path / "votes.parquet", entry)]
    assert math.isnan(back[1].score) and back[1].cost_usd is None and back[0].cost_usd is None
    assert back[2].probabilities == {"4": 0.6, "5": 0.4} and back[2].explanation == ""
    assert back[3].explanation == "fine \ud83d"
    assert [v.model_dump(exclude={"score"}) for v in back] == [v.model_dump(exclude={"score"}) for v in records]


def test_no_records_and_mismatched_columns(tmp_path: Path) -> None:
    assert write_rows(record_columns([]), tmp_path / "empty.parquet")["rows"] == 0
    assert read_rows(tmp_path / "empty.parquet", {}) == []
    with pytest.raises(ValueError, match="column 'result' has 1 values for 4 records"):
        record_columns(votes(), result=[0])
    assert record_columns(votes()[:2]).rows()[1]["error"] == "parse: no verdict"
