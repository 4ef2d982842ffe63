"""Where a notebook user looks, a run whose calls failed says so: under the cell (the warning, as a real kernel
records it), above `%%judge`'s table and on the panel builder's status line."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import judgewidgets as jw
from judgewidgets.testing import OpenAITestServer, json_score
from tests.jupyter.shell import magic_shell

FAILING = """prompt: What is the capital of Australia?
response: Canberra.

prompt: How many bones does an adult have?
response: About 206. [[fault:500]]
"""
LINE = "1 of 2 calls failed: infrastructure: InternalServerError"


@pytest.fixture(scope="module")
def server() -> Iterator[OpenAITestServer]:
    with OpenAITestServer(json_score(4)) as running:
        yield running


@pytest.fixture
def ip(server: OpenAITestServer, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    yield from magic_shell(server, monkeypatch, judges="openai/a")


def test_the_magic_warns_and_shows_the_line_above_its_table(ip, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    shown: list[Any] = []
    monkeypatch.setattr("judgewidgets.jupyter._magics.display", lambda obj, **_: shown.append(obj))
    with pytest.warns(jw.CallsFailedWarning, match=f"^{LINE}"):
        ip.run_cell_magic("judge", "--out r --no-chart", FAILING)
    line = ip.user_ns["r"].calls_failed
    assert line.startswith(LINE)
    assert shown[0]["text/plain"] == line and line in shown[0]["text/html"]
    assert isinstance(shown[1], pd.DataFrame)  # the table comes after the line


def test_the_builder_says_it_on_its_status_line_and_above_its_table(
    server: OpenAITestServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("judgewidgets._charts.notebook_frontend", lambda: True)
    data = pd.DataFrame({"prompt": ["2+2?", "Largest planet?"], "response": ["4", "Jupiter [[fault:500]]"]})
    builder = jw.PanelBuilder(data, api_base=server.base_url, api_key="sk-test")
    builder.add_judge("openai/a")
    with pytest.warns(jw.CallsFailedWarning):
        builder.run_button.click()
        builder.wait(timeout=60)
    assert "done: 2 rows" in builder.status.value and LINE in builder.status.value
    first = builder.output.outputs[0]["data"]
    assert LINE in first["text/html"] and "judgewidgets-calls-failed" in first["text/html"]
    assert len(builder.output.outputs) == 3  # the line, the table, the chart


def test_a_real_kernel_shows_the_warning_under_the_cell_and_the_line_above_the_table(tmp_path: Path) -> None:
    from tests.jupyter.test_kernel_output import run_notebook

    cell = """import judgewidgets as jw
from judgewidgets.testing import ScriptedTransport

def reply(request, attempt):
    if "BAD" in str(request.messages):
        raise jw.CallFailure("Incorrect API key provided", 401)
    return '{"score": 5}'

judge = jw.LLMJudge("openai/a", transport=ScriptedTransport(reply), cache=False)
judge.score(["2+2?", "Capital of France?", "Largest planet?"], ["4", "BAD Paris", "BAD Jupiter"], progress=False)"""
    notebook = run_notebook([cell], tmp_path)
    outputs = notebook.cells[0].outputs
    stderr = "".join(o.get("text", "") for o in outputs if o.get("name") == "stderr")
    assert "CallsFailedWarning: 2 of 3 calls failed:" in stderr and "Incorrect API key provided" in stderr
    (result,) = [o for o in outputs if o["output_type"] == "execute_result"]
    html = result["data"]["text/html"]
    assert html.startswith('<p class="judgewidgets-calls-failed"') and "2 of 3 calls failed" in html
    assert result["data"]["text/plain"].startswith("2 of 3 calls failed")
