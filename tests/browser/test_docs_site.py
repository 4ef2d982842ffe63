"""The documentation site in headless Chromium, served from 127.0.0.1 with every other host blocked: the home page
(its chart picture drawn), a tutorial page (the notebook's cells) and an API reference page render, search answers
offline, and no page asks for anything from another host (no web font, no CDN script) or logs a JavaScript error.
Screenshots go to artifacts/screenshots/ (`$JUDGEWIDGETS_SCREENSHOTS` moves them): docs-home.png,
docs-tutorial-quickstart.png, docs-reference-scoring.png. No model is run."""

from __future__ import annotations

import functools
import threading
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from ..docs.site import build_site
from ._offline import Offline
from .test_jupyterlab import CHROMIUM, SHOTS, playwright_api

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        not Path(CHROMIUM).exists(), reason="Debian's chromium is not installed (apt-get install chromium)"
    ),
]


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The site, built with --strict, on an http.server of 127.0.0.1 (a free port)."""
    site = tmp_path_factory.mktemp("site")
    done, _ = build_site(site)
    assert done.returncode == 0, done.stderr[-4000:]
    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(site)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


class _Site:
    """An `Offline` page (only loopback reachable; console errors, failed, blocked and 4xx/5xx requests recorded)
    on the served site."""

    def __init__(self, context: Any, origin: str) -> None:
        self.origin = origin
        self.offline = Offline(context)

    def open(self, path: str) -> Any:
        self.offline.page.goto(f"{self.origin}/{path}", wait_until="networkidle", timeout=60_000)
        return self.offline.page


@pytest.fixture(scope="module")
def browser_page(served: str) -> Iterator[_Site]:
    SHOTS.mkdir(parents=True, exist_ok=True)
    print(f"\nscreenshots: {SHOTS}")
    with playwright_api.sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=CHROMIUM,
            args=["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"],
        )
        context = browser.new_context(viewport={"width": 1400, "height": 1000})
        yield _Site(context, served)
        browser.close()


def test_the_home_page_reads_and_draws_its_chart(browser_page: _Site) -> None:
    page = browser_page.open("index.html")
    assert page.locator("article h1").first.inner_text().rstrip("¶") == "judgewidgets"  # ¶: its permalink
    chart = page.locator("article img[src$='panel-chart.png']")
    assert chart.evaluate("img => img.complete && img.naturalWidth > 600")
    assert page.locator("nav >> text=Getting started").first.is_visible()
    page.screenshot(path=str(SHOTS / "docs-home.png"))
    page.click("input.md-search__input")  # the search index and its worker are served by the site itself
    page.keyboard.type("cascade", delay=20)  # typed: Material's search answers key presses, not fill()
    page.wait_for_selector(".md-search-result__item", timeout=30_000)
    browser_page.offline.assert_clean()


def test_a_tutorial_page_shows_the_notebook(browser_page: _Site) -> None:
    page = browser_page.open("tutorials/quickstart.html")
    assert page.locator(".jupyter-wrapper .jp-CodeCell").count() >= 5
    assert "jw.load_example()" in page.locator(".jupyter-wrapper").first.inner_text()
    page.screenshot(path=str(SHOTS / "docs-tutorial-quickstart.png"))
    browser_page.offline.assert_clean()


def test_an_api_reference_page_lists_the_names(browser_page: _Site) -> None:
    page = browser_page.open("reference/scoring.html")
    assert page.locator("[id='judgewidgets.scoring.LLMJudge']").count() == 1
    page.screenshot(path=str(SHOTS / "docs-reference-scoring.png"))
    browser_page.offline.assert_clean()
