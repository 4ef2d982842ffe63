"""Building the documentation site for a test, and reading what its pages load (tests/docs, tests/browser)."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import time
from html.parser import HTMLParser
from pathlib import Path
from typing import ClassVar

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS_PACKAGES = ("mkdocs", "material", "mkdocstrings", "mkdocstrings_handlers.python", "mkdocs_jupyter")


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:  # its parent package is missing
        return False


def build_site(destination: Path, env: dict[str, str] | None = None) -> tuple[subprocess.CompletedProcess[str], float]:
    """`mkdocs build --strict` of the repository's site into `destination`, and its wall time."""
    missing = [name for name in DOCS_PACKAGES if not _installed(name)]
    if missing:
        pytest.skip(f"the docs packages are not installed ({', '.join(missing)}): pip install -e '.[docs]'")
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", ROOT / "mkdocs.yml", "-d", destination],
        cwd=ROOT,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1", **(env or {})},
        capture_output=True,
        text=True,
        check=False,
    )
    return done, time.monotonic() - started


class Loads(HTMLParser):
    """The URLs a page loads by itself: scripts, stylesheets and other <link>s, images, frames, media."""

    LOADED: ClassVar[dict[str, str]] = {
        tag: "src" for tag in ("script", "img", "iframe", "source", "video", "audio", "embed")
    }

    def __init__(self) -> None:
        super().__init__()
        self.urls: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        if tag == "link" and (values.get("rel") or "") not in {"canonical", "alternate"}:
            self.urls.append(values.get("href") or "")
        elif tag in self.LOADED:
            self.urls.append(values.get(self.LOADED[tag]) or "")
