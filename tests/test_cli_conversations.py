"""`judgewidgets score --conversation-col C [--target T]`: conversations read from JSONL, Parquet (nested message
lists) and CSV (their JSON text), judged against the loopback server; the output keeps each input row (one per
turn with each_turn); usage errors exit 2 before any call."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from judgewidgets._cli import main
from judgewidgets.testing import OpenAITestServer
from tests.conversations.samples import AGENT, CHAT


def verdict_or_score(body: dict[str, Any]) -> str:
    """The first label a verdict schema allows, else a likert 4."""
    schema = (body.get("response_format") or {}).get("json_schema", {}).get("schema", {})
    verdict = schema.get("properties", {}).get("verdict")
    return json.dumps({"verdict": verdict["enum"][0]}) if verdict else json.dumps({"score": 4})


@pytest.fixture(scope="module")
def server() -> Iterator[OpenAITestServer]:
    with OpenAITestServer(verdict_or_score) as running:
        yield running


def chats(tmp_path: Path, suffix: str) -> Path:
    frame = pd.DataFrame({"id": ["chat", "agent"], "messages": [CHAT, AGENT]})
    path = tmp_path / f"chats{suffix}"
    if suffix == ".jsonl":
        frame.to_json(path, orient="records", lines=True, force_ascii=False)
    elif suffix == ".parquet":
        frame.to_parquet(path)
    else:
        frame.assign(messages=[json.dumps(m) for m in frame["messages"]]).to_csv(path, index=False)
    return path


def score(server: OpenAITestServer, monkeypatch: pytest.MonkeyPatch, *argv: str) -> int:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    return main(["score", *argv, "--judge", "openai/a", "--api-base", server.base_url, "--quiet", "--no-cache"])


@pytest.mark.parametrize("suffix", [".jsonl", ".parquet", ".csv"])
def test_the_last_turn_of_each_conversation(
    server: OpenAITestServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, suffix: str
) -> None:
    out = tmp_path / "scored.csv"
    assert (
        score(server, monkeypatch, str(chats(tmp_path, suffix)), "--conversation-col", "messages", "-o", str(out)) == 0
    )
    table = pd.read_csv(out)
    assert table["id"].tolist() == ["chat", "agent"] and table["turn"].tolist() == [2, 1]
    assert table["openai/a"].tolist() == pytest.approx([0.75, 0.75], abs=0.03)


def test_each_turn_gives_a_row_per_turn_and_whole_none(
    server: OpenAITestServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source, out = chats(tmp_path, ".jsonl"), tmp_path / "turns.jsonl"
    argv = [str(source), "--conversation-col", "messages", "--target", "each_turn", "-o", str(out)]
    assert score(server, monkeypatch, *argv) == 0
    table = pd.read_json(out, lines=True)
    assert table["id"].tolist() == ["chat", "chat", "agent"] and table["turn"].tolist() == [1, 2, 1]
    whole = tmp_path / "whole.csv"
    argv = [str(source), "--conversation-col", "messages", "--target", "whole", "--template", "consistency"]
    assert score(server, monkeypatch, *argv, "-o", str(whole)) == 0
    assert "turn" not in pd.read_csv(whole).columns


def test_the_estimate_counts_the_conversations(
    server: OpenAITestServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = [str(chats(tmp_path, ".jsonl")), "--conversation-col", "messages", "--target", "each_turn", "--estimate"]
    assert score(server, monkeypatch, *argv) == 0
    assert "3 calls" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--conversation-col", "nope"], "has no column 'nope'"),
        (["--target", "whole"], "--target goes with --conversation-col"),
        (["--conversation-col", "id"], "conversation 0 is text but not JSON"),
    ],
)
def test_usage_errors_exit_2_before_any_call(
    server: OpenAITestServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    extra: list[str],
    message: str,
) -> None:
    calls = server.stats.total
    assert score(server, monkeypatch, str(chats(tmp_path, ".jsonl")), *extra, "-o", str(tmp_path / "x.csv")) == 2
    assert message in capsys.readouterr().err and server.stats.total == calls
