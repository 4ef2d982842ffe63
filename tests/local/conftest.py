"""Fixtures of the tests that run the embedded judge's weights."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.llama_server import llama_server


@pytest.fixture(scope="session")
def llama_server_url() -> Iterator[str]:
    """The OpenAI base URL (`.../v1`) of llama.cpp's own HTTP server serving the embedded judge's weights (xllamacpp,
    a subprocess on loopback), started once per session when a test asks for it."""
    with llama_server() as url:
        yield url
