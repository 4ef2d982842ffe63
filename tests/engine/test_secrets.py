"""No key leaves the call path, whatever its source: a server that repeats the caller's key in its 401 answers every
request here, and the key must appear in no error, vote, table, repr, log line or cache file, on both transports."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import pytest

import judgewidgets as jw
from judgewidgets.testing import OpenAITestServer, json_score

SECRET = "sk-proj-leakcheck-8f3a9c2e71d4b605"


@pytest.fixture(scope="module")
def server() -> Iterator[OpenAITestServer]:
    with OpenAITestServer(json_score(4), api_key="sk-the-only-good-key") as running:
        yield running


def test_the_server_echoes_the_key_it_was_sent(server: OpenAITestServer) -> None:
    import json
    import urllib.error
    import urllib.request

    request = urllib.request.Request(
        server.base_url + "/chat/completions",
        data=json.dumps({"model": "test", "messages": [{"role": "user", "content": "hi"}]}).encode(),
        headers={"Authorization": f"Bearer {SECRET}", "Content-Type": "application/json"},
    )
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with pytest.raises(urllib.error.HTTPError) as caught:
        opener.open(request, timeout=10)
    assert caught.value.code == 401 and SECRET in caught.value.read().decode()


def _judge(source: str, transport: str, server: OpenAITestServer, monkeypatch: pytest.MonkeyPatch) -> jw.LLMJudge:
    """A judge whose calls carry SECRET from `source`: an argument, the environment, litellm's settings, a header."""
    kwargs: dict[str, object] = {"api_base": server.base_url, "transport": transport}
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    if source == "argument":
        kwargs["api_key"] = SECRET
    elif source == "environment":
        monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    elif source == "litellm":
        litellm = pytest.importorskip("litellm")
        monkeypatch.setattr(litellm, "api_key", SECRET)
    elif source == "header":
        kwargs["api_key"] = "sk-unused"  # the header's bearer token replaces it
        kwargs["extra_headers"] = {"Authorization": f"Bearer {SECRET}"}
    return jw.LLMJudge("openai/test", template="likert", **kwargs)  # type: ignore[arg-type]


CASES = [
    ("argument", "litellm"),
    ("argument", "fast"),
    ("environment", "litellm"),
    ("environment", "fast"),
    ("litellm", "litellm"),  # the fast path never reads litellm's settings (a litellm-configured key routes there)
    ("header", "litellm"),
    ("header", "fast"),
]


@pytest.mark.parametrize(("source", "transport"), CASES)
def test_a_key_echoed_in_a_401_is_redacted_everywhere(
    source: str,
    transport: str,
    server: OpenAITestServer,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
    judge = _judge(source, transport, server, monkeypatch).with_options(cache=str(tmp_path / "calls.sqlite"))
    server.reset_stats()
    with caplog.at_level(logging.DEBUG):
        result = judge.score(["What is 2+2?", "Capital of France?"], ["4", "Paris"], progress=False)
        panel = jw.LLMPanel([judge]).score(["What is 2+2?"], ["4"], progress=False)
    assert server.stats.by_status.get(401, 0) >= 2, "the key reached the server, which echoed it"
    errors = [v.error for v in result.vote_list]
    assert all(e is not None and e.startswith("infrastructure: ") and "***" in e for e in errors), errors
    judge.settings.cache.close()  # type: ignore[union-attr]
    cache_bytes = b"".join(p.read_bytes() for p in tmp_path.rglob("*") if p.is_file())
    out = capsys.readouterr()
    texts = {
        "vote errors": " ".join(errors),  # type: ignore[arg-type]
        "to_df": result.to_df().to_csv(),
        "votes": result.votes_df.to_csv(),
        "result repr": repr(result),
        "panel votes": panel.votes.to_csv(),
        "panel errors": panel.errors.to_csv(),
        "judge repr": repr(judge),
        "logs": caplog.text,
        "output": out.out + out.err,
    }
    leaks = [where for where, text in texts.items() if SECRET in text]
    assert not leaks, f"the {source} key leaked into {leaks}"
    assert SECRET.encode() not in cache_bytes


def test_header_values_and_url_passwords_are_masked_in_reprs() -> None:
    judge = jw.LLMJudge(
        "openai/test",
        api_base="https://user:pa55word-secret@example.invalid/v1",
        extra_headers={"api-key": SECRET},
    )
    shown = repr(judge)
    assert SECRET not in shown and "pa55word-secret" not in shown and "***" in shown


def test_short_or_flag_like_environment_values_are_not_treated_as_secrets(monkeypatch: pytest.MonkeyPatch) -> None:
    from judgewidgets.engine._request import call_secrets, redact

    monkeypatch.setenv("HF_HUB_DISABLE_TOKEN", "1")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-environment-7731")
    found = call_secrets({})
    assert "1" not in found and "sk-ant-environment-7731" in found
    assert redact("rejected sk-ant-environment-7731 (1 try)", found) == "rejected *** (1 try)"
