"""Charts with no network and no setup, in a real JupyterLab in headless Chromium: the page may reach only the
loopback Jupyter server. A notebook without `%load_ext` shows `result.chart()` (JupyterLab's own Vega-Lite
renderer) and a TournamentView (chart widgets carrying their JavaScript); both draw, and the page logs no console
error and no failed request. The notebook run by nbclient and exported by nbconvert shows the chart as an image,
opened from the file with the network still off.
Judges answer from an in-kernel ScriptedTransport: no model, no server."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import nbclient
import nbformat
import pytest

from .test_jupyterlab import CHROMIUM, SHOTS, Lab, _assert_no_tracebacks, _open_and_run_all, lab, playwright_api

__all__ = ["lab"]  # the JupyterLab server fixture, shared with the other browser tests

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        not Path(CHROMIUM).exists(), reason="Debian's chromium is not installed (apt-get install chromium)"
    ),
]

NOTEBOOK = "offline_charts.ipynb"
CELLS = [
    """import re

import judgewidgets as jw
from judgewidgets.testing import ScriptedTransport

judges = [
    jw.LLMJudge(f"openai/{name}", name=name, transport=ScriptedTransport(lambda r, a, s=score: f'{{"score": {s}}}'))
    for name, score in (("strict", 2), ("lenient", 5))
]
questions = ["What is 2 + 2?", "What is the capital of France?", "Who wrote Hamlet?"]
result = jw.LLMPanel(judges).score(questions, ["4", "Paris", "Marlowe"], progress=False)""",
    "result.chart()",
    """strength = {"v1": 1, "v2": 2, "v3": 3}


def better(request, attempt):
    first, second = re.findall(r"answer of (v\\d)", request.messages[-1]["content"])[:2]
    return '{"verdict": "%s", "confidence": 0.9}' % ("A" if strength[first] > strength[second] else "B")


judge = jw.PairwiseJudge("openai/pairwise", transport=ScriptedTransport(better), cache=False)
candidates = {name: [f"answer of {name} to {q}" for q in questions] for name in strength}
jw.TournamentView(jw.Tournament(judge, seed=0, bootstrap=50).run(questions, candidates, progress=False))""",
    "print('cells done')",
]


def _write(path: Path) -> None:
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell(source) for source in CELLS]
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
    nbformat.write(notebook, path)


class Offline:
    """A browser page that can reach only 127.0.0.1 / localhost, recording console errors and failed requests."""

    def __init__(self, context: Any) -> None:
        self.blocked: list[str] = []
        self.errors: list[str] = []
        self.failed: list[str] = []
        context.route("**/*", self._route)
        self.page = context.new_page()
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.on("requestfailed", lambda r: self.failed.append(f"{r.url}: {r.failure}"))

    def _route(self, route: Any) -> None:
        url = route.request.url
        if urlparse(url).scheme in ("http", "https", "ws", "wss") and urlparse(url).hostname not in (
            "127.0.0.1",
            "localhost",
        ):
            self.blocked.append(url)
            route.abort("internetdisconnected")
        else:
            route.continue_()


@pytest.fixture(scope="module")
def offline(lab: Lab) -> Iterator[Offline]:
    SHOTS.mkdir(parents=True, exist_ok=True)
    with playwright_api.sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=CHROMIUM,
            args=["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"],
        )
        context = browser.new_context(viewport={"width": 1400, "height": 1000})
        yield Offline(context)
        browser.close()


def test_charts_draw_with_the_network_blocked_and_without_load_ext(offline: Offline, lab: Lab) -> None:
    from nbconvert import HTMLExporter

    page = offline.page
    _write(lab.root / NOTEBOOK)
    _open_and_run_all(page, lab, NOTEBOOK, 300)
    page.locator(".jp-OutputArea-output pre", has_text="cells done").wait_for(timeout=120_000)
    _assert_no_tracebacks(page)

    chart = page.locator(".jp-RenderedVegaLite").first  # JupyterLab's own Vega-Lite renderer drew it
    chart.wait_for(timeout=60_000)
    canvas = chart.locator("canvas").first
    canvas.wait_for(timeout=60_000)
    chart.scroll_into_view_if_needed()
    page.screenshot(path=str(SHOTS / "offline-result-chart.png"))
    size = canvas.bounding_box()

    tournament = page.locator(".judgewidgets-tournament")
    tournament.wait_for(timeout=60_000)
    tournament.scroll_into_view_if_needed()
    tournament.locator(".vega-embed canvas").nth(1).wait_for(timeout=60_000)  # the widgets' bundled vega drew
    page.screenshot(path=str(SHOTS / "offline-tournament-view.png"))
    page.screenshot(path=str(SHOTS / "offline-notebook.png"), full_page=True)
    blocked, errors, failed = list(offline.blocked), list(offline.errors), list(offline.failed)

    # The same notebook run as nbconvert runs it, exported to HTML, opened from a file with the network still off.
    executed = nbformat.read(lab.root / NOTEBOOK, as_version=4)
    nbclient.NotebookClient(executed, timeout=180, kernel_name="python3").execute()
    exported, _ = HTMLExporter().from_notebook_node(executed)
    (lab.root / "offline_charts.html").write_text(exported, encoding="utf-8")
    page.goto(f"file://{lab.root / 'offline_charts.html'}")  # nbconvert's own CDN scripts stay blocked
    image = page.locator("img[src^='data:image/svg+xml']").first
    image.wait_for(timeout=30_000)
    image.scroll_into_view_if_needed()
    page.screenshot(path=str(SHOTS / "offline-nbconvert-export.png"))
    assert page.evaluate("(img) => img.naturalWidth", image.element_handle()) > 200

    assert size is not None and size["width"] > 200 and size["height"] > 100, size
    assert not any("cdn" in url or "jsdelivr" in url for url in blocked), blocked
    assert errors == [], errors
    assert failed == [], failed
