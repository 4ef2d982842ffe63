"""`%judge --data DF --conversation-col C [--target T]`: a column of message lists (or their JSON) judged in a real
IPython shell against the loopback server, in score, rubric and sequential mode, and a pairwise DataFrame of
conversations; options that cannot apply are UsageErrors before any call."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pandas as pd
import pytest
from IPython.core.error import UsageError

import judgewidgets as jw
from judgewidgets.testing import OpenAITestServer, json_score
from tests.conversations.samples import AGENT, CHAT
from tests.jupyter.shell import magic_shell


@pytest.fixture(scope="module")
def server() -> Iterator[OpenAITestServer]:
    with OpenAITestServer(json_score(4)) as running:
        yield running


@pytest.fixture
def ip(server: OpenAITestServer, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    for shell in magic_shell(server, monkeypatch):
        shell.user_ns["chats"] = pd.DataFrame({"messages": [CHAT, json.dumps(AGENT)], "expected": ["tofu", None]})
        yield shell


def test_score_mode_judges_each_turn(ip) -> None:  # type: ignore[no-untyped-def]
    ip.run_line_magic("judge", "--data chats --conversation-col messages --target each_turn --out r --no-chart")
    frame = ip.user_ns["r"].to_df()
    assert frame[["conversation", "turn"]].values.tolist() == [[0, 1], [0, 2], [1, 1]]
    assert frame["avg"].tolist() == pytest.approx([0.75] * 3, abs=0.03)
    assert ip.user_ns["r"].by_conversation()["turns"].tolist() == [2, 1]


def test_score_mode_with_references_and_the_default_target(ip) -> None:  # type: ignore[no-untyped-def]
    ip.run_line_magic("judge", "--data chats -c messages --reference-col expected --out r --no-chart")
    result = ip.user_ns["r"]
    assert result.to_df()["turn"].tolist() == [2, 1] and [i.reference for i in result.items] == ["tofu", None]


def test_rubric_and_sequential_modes(ip) -> None:  # type: ignore[no-untyped-def]
    ip.user_ns["rub"] = jw.Rubric([jw.Criterion("Suggests only vegetarian dishes", name="veg")])
    ip.run_line_magic("judge", "--rubric rub --data chats --conversation-col messages --out g --no-chart")
    assert len(ip.user_ns["g"].reports) == 2
    ip.run_line_magic("judge", "--mode sequential --K 2 --data chats -c messages --out s --no-chart")
    assert ip.user_ns["s"]["turn"].tolist() == [2, 1]


def test_pairwise_mode_reads_a_dataframe_of_conversations(ip) -> None:  # type: ignore[no-untyped-def]
    ip.user_ns["pairs"] = pd.DataFrame(
        {"history": [CHAT[:-1]], "response_a": ["Tofu curry."], "response_b": ["Chicken."]}
    )
    ip.run_line_magic("judge", "--mode pairwise --data pairs --out p --no-chart")
    assert len(ip.user_ns["p"]) == 1


def test_method_decides_the_pairs_and_likelihood_needs_llama_cpps_tokens(ip) -> None:  # type: ignore[no-untyped-def]
    ip.user_ns["pairs"] = pd.DataFrame(
        {"history": [CHAT[:-1]], "response_a": ["Tofu curry."], "response_b": ["Chicken."]}
    )
    ip.run_line_magic("judge", "--mode pairwise --data pairs --method verdict --out p --no-chart")
    assert ip.user_ns["p"].attrs["provenance"]["method"] == "verdict"
    # the loopback server is not llama.cpp: reading a reply needs its /tokenize, so each pair records the failure
    ip.run_line_magic("judge", "--mode pairwise --data pairs --method likelihood --out q --no-chart")
    table = ip.user_ns["q"]
    assert table.attrs["provenance"]["method"] == "likelihood" and table["winner"].isna().all()
    assert "/tokenize" in table["error"].iloc[0]
    with pytest.raises(UsageError, match="--method decides a pair"):
        ip.run_line_magic("judge", "--data chats -c messages --method likelihood")


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("--conversation-col messages", "names a column of --data"),
        ("--data chats --target whole", "--target goes with --conversation-col"),
        ("--data chats --conversation-col nope", "no column 'nope'"),
        ("--data chats -c messages --target sideways", "invalid choice"),
        ("--data chats -c messages --mode tournament", "--mode tournament"),
        ("--data chats -c messages --target each_turn --labels x.csv", "one label per conversation"),
    ],
)
def test_bad_conversation_options_are_usage_errors(ip, line: str, message: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(UsageError, match=message):
        ip.run_line_magic("judge", line)


def test_help_documents_the_conversation_options(ip) -> None:  # type: ignore[no-untyped-def]
    doc = ip.magics_manager.registry["JudgeMagics"].judge.__doc__
    assert "--conversation-col" in doc and "--target" in doc
