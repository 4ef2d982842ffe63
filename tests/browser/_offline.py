"""The page as a user without a network sees it: a Chromium page that may reach only the loopback Jupyter server,
recording every console error, uncaught page error, failed request and error response; and what the tests do with
it (open a notebook, run it, assert the page stayed clean, find a chart's mark by hovering it).

`run_offline(offline, lab, "cascade.ipynb")` is the whole check for any notebook the server's folder holds (the
tutorials are copied there): it runs every cell, waits for every chart to draw, keeps a full-page screenshot and
fails on a traceback, a blocked request, a console error or a failed request."""

from __future__ import annotations

import json
import re
import time
import urllib.request
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from .test_jupyterlab import SHOTS, TOKEN, Lab, _assert_no_tracebacks, _open_and_run_all

LOOPBACK = ("127.0.0.1", "localhost")

# What JupyterLab itself logs as a console error in a healthy session, each with why it is no fault of the page
# under test. Empty so far: JupyterLab 4.6 with news and update checks off (the `lab` fixture's settings) logs no
# error in these tests. Add a pattern here only with the reason it is JupyterLab's and not ours.
JUPYTERLAB_NOISE: tuple[tuple[re.Pattern[str], str], ...] = ()


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
        self.page.on("response", lambda r: self.failed.append(f"{r.url}: HTTP {r.status}") if r.status >= 400 else None)

    def _route(self, route: Any) -> None:
        url = route.request.url
        parts = urlparse(url)
        if parts.scheme in ("http", "https", "ws", "wss") and parts.hostname not in LOOPBACK:
            self.blocked.append(url)
            route.abort("internetdisconnected")
        else:
            route.continue_()

    def problems(self) -> dict[str, list[str]]:
        """What went wrong so far: blocked and failed requests, console errors (less JupyterLab's own noise)."""
        errors = [e for e in self.errors if not any(pattern.search(e) for pattern, _ in JUPYTERLAB_NOISE)]
        found = {"blocked requests": self.blocked, "console errors": errors, "failed requests": self.failed}
        return {kind: list(entries) for kind, entries in found.items() if entries}

    def assert_clean(self) -> None:
        problems = self.problems()
        assert not problems, json.dumps(problems, indent=1)[:4000]


def shut_down_kernels(lab: Lab) -> None:
    """End every session the server runs (a notebook's kernel stays up when the page moves on)."""
    headers = {"Authorization": f"token {TOKEN}"}
    with urllib.request.urlopen(urllib.request.Request(f"{lab.url}/api/sessions", headers=headers)) as response:
        sessions = json.load(response)
    for session in sessions:
        request = urllib.request.Request(f"{lab.url}/api/sessions/{session['id']}", headers=headers, method="DELETE")
        urllib.request.urlopen(request).close()


def wait_for_charts(page: Any, timeout_s: float = 60) -> int:
    """Until every Vega chart on the page has drawn (a canvas or an SVG inside it); how many there are."""
    deadline = time.monotonic() + timeout_s
    script = """() => [...document.querySelectorAll('.vega-embed, .jp-RenderedVegaLite')]
        .map(e => e.querySelector('canvas, svg.marks') !== null)"""
    while True:
        drawn = page.evaluate(script)
        if all(drawn) or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    assert all(drawn), f"{drawn.count(False)} of {len(drawn)} charts not drawn after {timeout_s} s"
    return len(drawn)


def run_offline(offline: Offline, lab: Lab, notebook: str, timeout_s: float = 1500) -> Path:
    """Open `notebook` (a path under the server's folder) with the network blocked, run every cell, wait for the
    charts; keep a full-page screenshot (returned) and fail on a traceback or anything `Offline` recorded."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    page = offline.page
    _open_and_run_all(page, lab, notebook, timeout_s)
    charts = wait_for_charts(page)
    shot = SHOTS / f"offline-{Path(notebook).stem}.png"
    page.screenshot(path=str(shot), full_page=True)
    _assert_no_tracebacks(page)
    offline.assert_clean()
    print(f"{notebook}: {charts} charts drawn offline, no console error, no failed request; {shot}")
    return shot


def tooltip(page: Any) -> dict[str, str]:
    """The Vega tooltip shown now, as field -> value ({} when none is shown)."""
    rows = page.evaluate(
        """() => { const t = document.getElementById('vg-tooltip-element');
                   if (!t || !t.classList.contains('visible')) return [];
                   const cells = (row) => [...row.querySelectorAll('td')].map(d => d.textContent);
                   return [...t.querySelectorAll('tr')].map(cells); }"""
    )
    return {row[0].strip().removesuffix(":"): row[1].strip() for row in rows if len(row) == 2}


_SCAN = """(canvas, [step, left, right]) => {
    // Hover the canvas on a grid as a mouse would (Vega listens for pointer moves on it), reading the tooltip.
    const box = canvas.getBoundingClientRect(), tip = () => document.getElementById('vg-tooltip-element');
    const found = [];
    for (let y = step / 2; y < box.height; y += step / 2) {
        for (let x = left * box.width + step / 2; x < right * box.width; x += step) {
            const at = {clientX: box.left + x, clientY: box.top + y, bubbles: true, pointerType: 'mouse'};
            canvas.dispatchEvent(new PointerEvent('pointermove', at));
            canvas.dispatchEvent(new MouseEvent('mousemove', at));
            const t = tip();
            if (t && t.classList.contains('visible')) {
                const cells = (row) => [...row.querySelectorAll('td')].map(d => d.textContent);
                found.push([box.left + x, box.top + y, [...t.querySelectorAll('tr')].map(cells)]);
            }
        }
    }
    return found;
}"""


def find_mark(
    page: Any, canvas: Any, wanted: dict[str, str], left: float = 0.0, right: float = 1.0, step: float = 8
) -> tuple[float, float]:
    """Page coordinates of a mark whose tooltip shows every field of `wanted`, found by hovering `canvas` on a grid
    (from `left` to `right`, fractions of its width; in the page, one pass), then hovered there with the mouse to
    check that a person pointing there sees that tooltip. Fails when no mark answers."""
    seen: list[dict[str, str]] = []
    for x, y, rows in canvas.evaluate(_SCAN, [step, left, right]):
        shown = {row[0].strip().removesuffix(":"): row[1].strip() for row in rows if len(row) == 2}
        if all(shown.get(k) == v for k, v in wanted.items()):
            page.mouse.move(x, y)
            assert all(tooltip(page).get(k) == v for k, v in wanted.items()), (wanted, tooltip(page))
            return x, y
        if shown not in seen:
            seen.append(shown)
    raise AssertionError(f"no mark with tooltip {wanted}; tooltips seen: {seen[:8]}")
