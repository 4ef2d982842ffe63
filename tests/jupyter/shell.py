"""The IPython shell the magic tests drive: the extension loaded, judges pointed at a loopback server."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from IPython.core.interactiveshell import InteractiveShell

from judgewidgets.testing import OpenAITestServer


def magic_shell(
    server: OpenAITestServer, monkeypatch: pytest.MonkeyPatch, judges: str = "openai/a"
) -> Iterator[InteractiveShell]:
    """A shell whose `%judge` defaults are `judges` (likert) on `server`; the api base is reset afterwards."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    shell = InteractiveShell.instance()
    shell.run_line_magic("load_ext", "judgewidgets")
    shell.run_line_magic("judge_config", f"--judges {judges} --template likert --api-base {server.base_url}")
    yield shell
    shell.run_line_magic("judge_config", "--api-base ''")
