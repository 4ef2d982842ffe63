"""Loading a script of benchmarks/ as a module, so tests drive its `main` on the loopback test server."""

from __future__ import annotations

import asyncio
import importlib.util
from collections.abc import Callable
from pathlib import Path
from typing import Any

from judgewidgets.testing import OpenAITestServer

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


def load_benchmark(name: str) -> Any:
    """benchmarks/<name>.py as a fresh module."""
    spec = importlib.util.spec_from_file_location(f"{name}_benchmark", BENCHMARKS / f"{name}.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run_on_server(name: str, argv: list[str], reply: Callable[[dict[str, Any]], str]) -> list[dict[str, Any]]:
    """The rows of benchmarks/<name>.py's async `main` run with `argv`, its judge served by the loopback server
    answering every request body with `reply`."""
    with OpenAITestServer(reply) as server:
        return asyncio.run(load_benchmark(name).main([*argv, "--api-base", server.base_url]))
