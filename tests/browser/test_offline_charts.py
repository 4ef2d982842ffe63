"""Charts and linked views with no network and no setup, in a real JupyterLab in headless Chromium: the page may
reach only the loopback Jupyter server, and every test fails on a console error, a failed request or a blocked one
(tests/browser/_offline.py). Judges answer from in-kernel ScriptedTransports: no model, no server.

- A notebook without `%load_ext` shows `result.chart()` (JupyterLab's own Vega-Lite renderer) and a TournamentView
  (chart widgets carrying their JavaScript); the same notebook run by nbclient and exported by nbconvert shows the
  chart as an image, opened from the file with the network still off.
- Linked views: clicking a heatmap cell shows that item in the DisagreementExplorer; clicking a candidate in the
  TournamentView's ratings chart lights its row and column of the win-rate matrix and lists its games.
- Every other click the notebooks guide promises, each checked by what the kernel then holds (a probe widget beside
  the chart shows its `selections` and `params` as the kernel has them), by which marks are lit or faded (read from
  the pixels, tests/browser/_marks.py) and by the detail the widget shows: a judge in the explorer's legend, a drag
  over its score distribution, a click beside the legend; a judge in the legend of the same chart drawn by
  JupyterLab's own renderer and saved as an HTML file; a criterion in the RubricView; a turn in the per-turn
  heatmap and the list under it that picks the judge the turns are coloured by.
- Any notebook, the tutorials too (they need the embedded model, so only on request):
  `JUDGEWIDGETS_OFFLINE_NOTEBOOKS=cascade,quickstart python -m pytest tests/browser/test_offline_charts.py -k tutorial`
  (`all` for every tutorial) runs each the same way: every cell, every chart drawn, nothing logged.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import nbclient
import nbformat
import pytest

from ._marks import colour_at, cursor_at, legend_entries, lightness
from ._offline import Offline, find_mark, run_offline, shut_down_kernels, tooltip, wait_for_charts
from .test_jupyterlab import (
    CHROMIUM,
    ROOT,
    SHOTS,
    Lab,
    _assert_no_tracebacks,
    _open_and_run_all,
    lab,
    playwright_api,
)

__all__ = ["lab"]  # the JupyterLab server fixture, shared with the other browser tests

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        not Path(CHROMIUM).exists(), reason="Debian's chromium is not installed (apt-get install chromium)"
    ),
]

OFFLINE_CELLS = [
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

# Three judges that disagree most on item 1 (shown first) and differently on item 3 (the one the test clicks).
LINKED_CELLS = [
    """import re

import judgewidgets as jw
from judgewidgets.testing import ScriptedTransport

items = {
    "What is 2 + 2?": ("4", {"strict": 5, "lenient": 5, "third": 5}),
    "What is the capital of France?": ("Lyon", {"strict": 1, "lenient": 5, "third": 3}),
    "Who wrote Hamlet?": ("Marlowe", {"strict": 1, "lenient": 2, "third": 1}),
    "Who painted the Mona Lisa?": ("Leonardo da Vinci, around 1503", {"strict": 4, "lenient": 5, "third": 2}),
}


def scripted(name):
    def reply(request, attempt):
        question = next(q for q in items if q in request.messages[-1]["content"])
        score = items[question][1][name]
        return f'{{"explanation": "{name} gives {score} of 5", "score": {score}}}'

    return jw.LLMJudge(f"openai/{name}", name=name, explanations=True, transport=ScriptedTransport(reply), cache=False)


panel = jw.LLMPanel([scripted(name) for name in ("strict", "lenient", "third")])
result = panel.score(list(items), [answer for answer, _ in items.values()], progress=False)
jw.DisagreementExplorer(result)""",
    """strength = {"v1": 1, "v2": 2, "v3": 3, "v4": 4}


def better(request, attempt):
    first, second = re.findall(r"answer of (v\\d)", request.messages[-1]["content"])[:2]
    return '{"verdict": "%s", "confidence": 0.9}' % ("A" if strength[first] > strength[second] else "B")


questions = list(items)[:3]
candidates = {name: [f"answer of {name} to {q}" for q in questions] for name in strength}
judge = jw.PairwiseJudge("openai/pairwise", transport=ScriptedTransport(better), cache=False)
jw.TournamentView(jw.Tournament(judge, seed=0, bootstrap=50).run(questions, candidates, progress=False))""",
    "print('cells done')",
]


# A widget beside a chart showing what the kernel holds of the chart's selections and params, as the page changes
# them: the test reads it to check that a click reached the kernel, not just the page.
PROBE = """import html
import json

import ipywidgets as w


def probe(chart, name):
    shown = w.HTML()
    shown.add_class(f"probe-{name}")

    def update(_=None):
        state = {key: value.value for key, value in chart.selections.trait_values().items()}
        state.update(chart.params.trait_values())
        shown.value = "<pre>" + html.escape(json.dumps(state, sort_keys=True, default=str)) + "</pre>"

    chart.selections.observe(update)
    chart.params.observe(update)
    update()
    return shown"""

# LINKED_CELLS' three judges in an explorer with a probe, the same chart drawn by JupyterLab and saved as a file,
# and a rubric graded by two judges that disagree on response 2 (b finds it rude and the answer wrong).
CLICK_CELLS = [
    LINKED_CELLS[0].removesuffix("jw.DisagreementExplorer(result)"),
    PROBE,
    """explorer = jw.DisagreementExplorer(result)
display(explorer, probe(explorer.chart, "explorer"))""",
    """result.chart().save("panel_chart.html")
result.chart()""",
    """import pandas as pd

from judgewidgets.jupyter import RubricView

rubric = jw.Rubric.from_yaml(
    \"\"\"
- name: correct
  requirement: The answer is correct
- name: tone
  requirement: The tone of the answer
  scale_type: nominal
  options: [{label: rude, value: 0.0}, {label: friendly, value: 1.0}]
\"\"\"
)


def grades(name):
    def answer(request, attempt):
        system, user = request.messages[0]["content"], request.messages[-1]["content"]
        if "The tone" in system:
            shown = {label: n for n, label in re.findall(r"^(\\d+)\\. (.+)$", system, re.M)}
            pick = "rude" if name == "b" and "Answer 2" in user else "friendly"
            return json.dumps({"selected_option": int(shown[pick]), "explanation": f"{name}: {pick}"})
        verdict = "UNMET" if name == "b" and "Answer 2" in user else "MET"
        return json.dumps({"verdict": verdict, "explanation": f"{name} says {verdict}"})

    return jw.LLMJudge(
        f"openai/{name}", name=name, structured_output=True, transport=ScriptedTransport(answer), cache=False
    )


graded = jw.CriterionGrader(judges=[grades("a"), grades("b")], seed=0).grade_many(
    rubric, pd.DataFrame({"response": [f"Answer {i}" for i in range(3)]}), progress=False
)
rubric_view = RubricView(graded)
display(rubric_view, probe(rubric_view.chart, "rubric"))""",
    "print('cells done')",
]


# Two judges on two chats judged turn by turn: they disagree most on chat 0's first turn (shown first); the test
# clicks chat 1's second turn in the per-turn heatmap.
TURN_CELLS = [
    """import re

import judgewidgets as jw
from judgewidgets.testing import ScriptedTransport

chats = [
    [
        {"role": "user", "content": "Plan two days in Rome."},
        {"role": "assistant", "content": "Day one: the Colosseum."},
        {"role": "user", "content": "And day two?"},
        {"role": "assistant", "content": "Day two: the Vatican museums."},
    ],
    [
        {"role": "user", "content": "Suggest a dinner."},
        {"role": "assistant", "content": "Mushroom risotto."},
        {"role": "user", "content": "Something lighter?"},
        {"role": "assistant", "content": "A green salad with lemon."},
    ],
]


def scripted(name):
    def reply(request, attempt):
        judged = re.search(r"<response>\\n(.*?)\\n</response>", request.messages[-1]["content"], re.S).group(1)
        return '{"score": %d}' % (1 if name == "strict" and "Colosseum" in judged else 4 if name == "strict" else 5)

    return jw.LLMJudge(f"openai/{name}", name=name, transport=ScriptedTransport(reply), cache=False)


panel = jw.LLMPanel([scripted("strict"), scripted("lenient")])
turns = jw.DisagreementExplorer(panel.score(conversations=chats, target="each_turn", progress=False))""",
    PROBE,
    """display(turns, probe(turns.turn_chart, "turns"))""",
    "print('cells done')",
]


def _write(path: Path, cells: list[str]) -> None:
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell(source) for source in cells]
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
    nbformat.write(notebook, path)


def _run_cells(offline: Offline, lab: Lab, notebook: str, cells: list[str]) -> None:
    """Write `cells` as `notebook` in the server's folder, run it with the network blocked (`run_offline`) and wait
    for its last cell's "cells done"."""
    _write(lab.root / notebook, cells)
    run_offline(offline, lab, notebook, 300)
    offline.page.locator(".jp-OutputArea-output pre", has_text="cells done").wait_for(timeout=120_000)


@pytest.fixture(scope="module")
def browser(lab: Lab) -> Iterator[Any]:
    SHOTS.mkdir(parents=True, exist_ok=True)
    print(f"\nscreenshots: {SHOTS}")
    with playwright_api.sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=CHROMIUM,
            args=["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"],
        )
        yield browser
        browser.close()


@pytest.fixture
def offline(browser: Any, lab: Lab) -> Iterator[Offline]:
    """A fresh page (its own context: nothing recorded by an earlier test) that reaches only the Jupyter server;
    the notebook's kernel is shut down afterwards."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    yield Offline(context)
    context.close()
    shut_down_kernels(lab)


def test_charts_draw_with_the_network_blocked_and_without_load_ext(offline: Offline, lab: Lab, browser: Any) -> None:
    from nbconvert import HTMLExporter

    page = offline.page
    _write(lab.root / "offline_charts.ipynb", OFFLINE_CELLS)
    _open_and_run_all(page, lab, "offline_charts.ipynb", 300)
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
    wait_for_charts(page)

    offline.assert_clean()

    # The same notebook run as nbconvert runs it, exported to HTML, opened from a file with the network still off.
    executed = nbformat.read(lab.root / "offline_charts.ipynb", as_version=4)
    nbclient.NotebookClient(executed, timeout=180, kernel_name="python3").execute()
    exported, _ = HTMLExporter().from_notebook_node(executed)
    (lab.root / "offline_charts.html").write_text(exported, encoding="utf-8")
    export = Offline(browser.new_context(viewport={"width": 1400, "height": 1000}))
    export.page.goto(f"file://{lab.root / 'offline_charts.html'}")
    image = export.page.locator("img[src^='data:image/svg+xml']").first
    image.wait_for(timeout=30_000)
    image.scroll_into_view_if_needed()
    export.page.screenshot(path=str(SHOTS / "offline-nbconvert-export.png"))
    assert export.page.evaluate("(img) => img.naturalWidth", image.element_handle()) > 200
    assert size is not None and size["width"] > 200 and size["height"] > 100, size
    # nbconvert's own template asks a CDN for require.js, MathJax and (for the widget state it embeds) the widget
    # manager; those fail offline, one console line each. Our charts ask for nothing: no other request is allowed.
    template = (
        "cdnjs.cloudflare.com/ajax/libs/require.js/",
        "cdnjs.cloudflare.com/ajax/libs/mathjax/",
        "unpkg.com/@jupyter-widgets/html-manager@",
    )
    assert all(any(t in url for t in template) for url in export.blocked), export.blocked
    assert set(export.errors) <= {"Failed to load resource: net::ERR_INTERNET_DISCONNECTED"}, export.errors
    assert len(export.errors) == len(export.blocked) and len(export.failed) == len(export.blocked), export.failed


def test_clicking_a_heatmap_cell_and_a_candidate_changes_the_linked_view(offline: Offline, lab: Lab) -> None:
    page = offline.page
    expect = playwright_api.expect
    _run_cells(offline, lab, "linked_views.ipynb", LINKED_CELLS)  # what the tutorials' test does, on scripted judges

    # The explorer opens on the most disputed item; clicking item 3's cell in the strict column shows item 3.
    explorer = page.locator(".judgewidgets-explorer")
    explorer.scroll_into_view_if_needed()
    details = explorer.locator(".widget-html", has_text="Prompt:")
    expect(details).to_contain_text("What is the capital of France?")
    heatmap = explorer.locator(".vega-embed canvas").first
    x, y = find_mark(page, heatmap, {"item": "3", "judge": "strict"}, right=0.5)
    page.screenshot(path=str(SHOTS / "linked-explorer-hover.png"))  # the cell's tooltip
    page.mouse.click(x, y)
    expect(details).to_contain_text("Who painted the Mona Lisa?", timeout=30_000)
    expect(details).to_contain_text("Leonardo da Vinci, around 1503")
    for explanation in ("strict gives 4 of 5", "lenient gives 5 of 5", "third gives 2 of 5"):
        expect(details).to_contain_text(explanation)
    chosen = explorer.locator("select option:checked").inner_text()
    assert chosen.split()[0] == "#3", f"the item list follows the click: {chosen}"
    page.mouse.move(0, 0)
    page.screenshot(path=str(SHOTS / "linked-explorer-clicked.png"))

    # Clicking v2 in the ratings chart lights v2's row and column of the matrix and lists its games.
    tournament = page.locator(".judgewidgets-tournament")
    tournament.scroll_into_view_if_needed()
    games = tournament.locator(".widget-html", has_text="judged comparisons")
    assert games.count() == 0
    ratings, matrix = tournament.locator(".vega-embed canvas").nth(0), tournament.locator(".vega-embed").nth(1)
    before = matrix.screenshot()
    x, y = find_mark(page, ratings, {"candidate": "v2"}, step=6)
    page.mouse.click(x, y)
    expect(games).to_contain_text("v2: 18 judged comparisons, won 6", timeout=30_000)  # 3 questions, 3 rivals, 2 orders
    assert games.locator("tbody tr").count() == 18
    page.mouse.move(0, 0)
    page.wait_for_timeout(500)  # the matrix redraws from the spec the kernel sent
    assert matrix.screenshot() != before, "the win-rate matrix did not change"
    page.screenshot(path=str(SHOTS / "linked-tournament-clicked.png"))
    offline.assert_clean()


def kernel_state(page: Any, name: str, wanted: Callable[[dict[str, Any]], bool], timeout_s: float = 30) -> dict:
    """What the probe beside chart `name` shows (the kernel's selections and params), once `wanted(state)`."""
    deadline = time.monotonic() + timeout_s
    while True:
        state = json.loads(page.locator(f".probe-{name} pre").inner_text())
        if wanted(state) or time.monotonic() > deadline:
            break
        time.sleep(0.25)
    assert wanted(state), f"the kernel's selections of {name}: {state}"
    return state


def _seen(page: Any, points: dict[str, tuple[float, float]]) -> dict[str, int]:
    """How light each point looks now (the mouse moved away first, so that no tooltip covers it)."""
    page.mouse.move(5, 5)
    page.wait_for_timeout(400)
    return {name: lightness(colour_at(page, x, y)) for name, (x, y) in points.items()}


def _faded(before: dict[str, int], after: dict[str, int], name: str) -> bool:
    return after[name] - before[name] > 60


def _same(before: dict[str, int], after: dict[str, int], name: str) -> bool:
    return abs(after[name] - before[name]) <= 20


def test_clicking_a_legend_entry_a_range_and_a_criterion_changes_the_selection_and_the_view(
    offline: Offline, lab: Lab, browser: Any
) -> None:
    page = offline.page
    expect = playwright_api.expect
    _run_cells(offline, lab, "clicks.ipynb", CLICK_CELLS)

    # --- The explorer: cells and ticks located by hovering for their tooltips, the legend from the pixels.
    explorer = page.locator(".judgewidgets-explorer")
    explorer.scroll_into_view_if_needed()
    chart = explorer.locator(".vega-embed").first
    canvas = chart.locator("canvas").first
    cells = {
        "item 1 lenient": find_mark(page, canvas, {"item": "1", "judge": "lenient"}, right=0.5),  # 1.00
        "item 0 third": find_mark(page, canvas, {"item": "0", "judge": "third"}, right=0.5),  # 1.00
        "item 2 lenient": find_mark(page, canvas, {"item": "2", "judge": "lenient"}, right=0.5),  # 0.25
    }
    top = find_mark(page, canvas, {"judge": "strict", "score": "0.75"}, left=0.5, step=4)
    bottom = find_mark(page, canvas, {"judge": "strict", "score": "0.00"}, left=0.5, step=4)
    entries = legend_entries(page, canvas)  # the canvas: the widget's box can be shorter than its drawing
    assert len(entries) == 3, f"the legend shows strict, lenient and third: found {entries}"
    before = _seen(page, cells)
    assert kernel_state(page, "explorer", lambda s: True) == {"brush": {}, "judge": [], "pick": []}

    # Click "lenient" in the legend (the pointer is a hand there): the kernel holds lenient, its column stays lit
    # while the others fade, and its summary shows.
    page.screenshot(path=str(SHOTS / "clicks-explorer-before.png"))
    pointers = {"explorer": cursor_at(page, *entries[1])}  # checked at the end, after what the clicks do
    page.mouse.click(*entries[1])
    kernel_state(page, "explorer", lambda s: s["judge"] == [{"judge": "lenient"}])
    summary = "lenient (lit in the chart): mean score 0.81 over 4 items, none failed; furthest from the other judges"
    expect(explorer).to_contain_text(summary, timeout=30_000)
    lit = _seen(page, cells)
    assert _faded(before, lit, "item 0 third") and _same(before, lit, "item 1 lenient"), (before, lit)
    page.screenshot(path=str(SHOTS / "clicks-explorer-legend.png"))

    # Drag over the distribution from score 0.1 to 0.4 (ending inside the plot: a drag ends with a click, and a
    # click on nothing clears the legend's pick): lenient's one score in the range is listed (item 2's 0.25) and
    # its other cells fade too.
    per_score = (bottom[1] - top[1]) / 0.75  # pixels per unit of score (y grows downwards)
    page.mouse.move(top[0], bottom[1] - 0.1 * per_score)
    page.mouse.down()
    page.mouse.move(top[0], bottom[1] - 0.4 * per_score, steps=8)
    page.mouse.up()
    state = kernel_state(page, "explorer", lambda s: bool(s["brush"]) and max(s["brush"]["score"]) > 0.37)
    low, high = sorted(state["brush"]["score"])
    assert 0.05 < low < 0.15 and 0.35 < high < 0.45, state
    assert state["judge"] == [{"judge": "lenient"}], "the drag kept the judge lit"
    in_range = explorer.locator(".widget-html", has_text="by lenient in")
    expect(in_range).to_contain_text("1 score by lenient in [0.", timeout=30_000)
    assert in_range.locator("tr").count() == 2, in_range.inner_text()  # a header and item 2's 0.25
    expect(in_range).to_contain_text("Who wrote Hamlet?")
    brushed = _seen(page, cells)
    # lenient's 1.00 on item 1 fades; its 0.25 on item 2, in the range, stays the less faded of the two
    assert _faded(lit, brushed, "item 1 lenient") and brushed["item 2 lenient"] < brushed["item 1 lenient"] - 60, (
        lit,
        brushed,
    )
    page.screenshot(path=str(SHOTS / "clicks-explorer-brush.png"))

    # Click beside the legend (on the chart's empty ground below it): the judge is no longer lit, nor its summary.
    box = chart.bounding_box()
    assert box is not None
    page.mouse.click(entries[-1][0] + 60, entries[-1][1])
    kernel_state(page, "explorer", lambda s: s["judge"] == [])
    expect(explorer).not_to_contain_text("(lit in the chart)", timeout=30_000)
    page.screenshot(path=str(SHOTS / "clicks-explorer-cleared.png"))

    # --- The same chart drawn by JupyterLab's own renderer (its Vega-Lite 5.6): the legend lights a column.
    rendered = page.locator(".jp-RenderedVegaLite").first
    rendered.scroll_into_view_if_needed()
    canvas = rendered.locator("canvas").first
    cells = {
        "item 0 third": find_mark(page, canvas, {"item": "0", "judge": "third"}, right=0.5),
        "item 1 lenient": find_mark(page, canvas, {"item": "1", "judge": "lenient"}, right=0.5),
    }
    entries = legend_entries(page, canvas)
    assert len(entries) == 3, entries
    before = _seen(page, cells)
    pointers["JupyterLab's renderer"] = cursor_at(page, *entries[1])
    page.mouse.click(*entries[1])
    lit = _seen(page, cells)
    page.screenshot(path=str(SHOTS / "clicks-jupyterlab-chart-legend.png"))
    assert _faded(before, lit, "item 0 third") and _same(before, lit, "item 1 lenient"), (before, lit)

    # --- The rubric view: clicking a criterion lists every vote on it; the other criterion's row fades.
    rubric = page.locator(".judgewidgets-rubric")
    rubric.scroll_into_view_if_needed()
    canvas = rubric.locator(".vega-embed canvas").first
    tone = find_mark(page, canvas, {"criterion": "tone", "judge": "a"})
    cells = {
        "correct b": find_mark(page, canvas, {"criterion": "correct", "judge": "b"}),
        "tone b": find_mark(page, canvas, {"criterion": "tone", "judge": "b"}),
    }
    before = _seen(page, cells)
    assert kernel_state(page, "rubric", lambda s: True) == {"criterion": []}
    page.mouse.click(*tone)
    kernel_state(page, "rubric", lambda s: s["criterion"] == [{"criterion": "tone"}])
    votes = rubric.locator(".widget-html", has_text="votes (")
    expect(votes).to_contain_text("tone: 6 votes (5 friendly, 1 rude)", timeout=30_000)
    expect(votes).to_contain_text("b: rude")
    assert votes.locator("tbody tr").count() == 6
    lit = _seen(page, cells)
    assert _faded(before, lit, "correct b") and _same(before, lit, "tone b"), (before, lit)
    page.screenshot(path=str(SHOTS / "clicks-rubric.png"))
    offline.assert_clean()

    # --- The chart saved as HTML and opened from disk, network still cut: the legend lights a column.
    saved = Offline(browser.new_context(viewport={"width": 1200, "height": 700}))
    page = saved.page
    page.goto(f"file://{lab.root / 'panel_chart.html'}")
    page.wait_for_selector(".vega-embed svg.marks, .vega-embed canvas", timeout=30_000)
    chart = page.locator(".vega-embed").first

    def cell(item: int, judge: str) -> tuple[float, float]:
        """The heatmap cell's middle, found by the description Vega gives each SVG mark."""
        box = page.locator(f'path[aria-label^="judge: {judge}; item: {item};"]').first.bounding_box()
        assert box is not None, f"no cell for item {item}, judge {judge}"
        return box["x"] + box["width"] / 2, box["y"] + box["height"] / 2

    cells = {"item 0 third": cell(0, "third"), "item 1 lenient": cell(1, "lenient")}
    entries = legend_entries(page, chart)
    assert len(entries) == 3, entries
    before = _seen(page, cells)
    pointers["saved file"] = cursor_at(page, *entries[1])
    page.mouse.click(*entries[1])
    lit = _seen(page, cells)
    page.screenshot(path=str(SHOTS / "clicks-saved-chart-legend.png"))
    assert _faded(before, lit, "item 0 third") and _same(before, lit, "item 1 lenient"), (before, lit)
    saved.assert_clean()
    # The pointer over a legend entry: a hand where the chart is drawn by the widgets' and the saved file's Vega.
    print("pointer over a legend entry:", json.dumps(pointers, indent=1))
    hands = {where: pointer.split(":")[0] for where, pointer in pointers.items()}
    assert hands["explorer"] == hands["saved file"] == "pointer", pointers


def test_clicking_a_turn_in_the_per_turn_heatmap_shows_that_turn(offline: Offline, lab: Lab) -> None:
    page = offline.page
    expect = playwright_api.expect
    _run_cells(offline, lab, "turn_views.ipynb", TURN_CELLS)

    # The explorer opens on the most disputed turn (chat 0's first); clicking chat 1's second turn shows it.
    explorer = page.locator(".judgewidgets-explorer")
    explorer.scroll_into_view_if_needed()
    expect(explorer).to_contain_text("Day one: the Colosseum.")
    expect(explorer).not_to_contain_text("A green salad with lemon.")
    heatmap = explorer.locator(".vega-embed canvas").first
    target = find_mark(page, heatmap, {"conversation": "1", "turn": "2"})
    cells = {"chat 0 turn 1": find_mark(page, heatmap, {"conversation": "0", "turn": "1"}), "chat 1 turn 2": target}
    before = _seen(page, cells)
    page.mouse.click(*target)
    kernel_state(page, "turns", lambda s: s["pick"] == [{"item": 3}])  # chat 0's two turns are items 0 and 1
    expect(explorer).to_contain_text("A green salad with lemon.", timeout=30_000)
    expect(explorer).to_contain_text("judged")
    lit = _seen(page, cells)
    assert _faded(before, lit, "chat 0 turn 1") and _same(before, lit, "chat 1 turn 2"), (before, lit)
    page.screenshot(path=str(SHOTS / "turn-explorer-clicked.png"))

    # The list under the chart colours the turns by one judge: the title and the kernel follow, and strict's 1 on
    # chat 0's first turn shows (the consensus there is 0.5).
    assert kernel_state(page, "turns", lambda s: True)["shown"] == "consensus"
    choices = explorer.locator(".vega-bindings select")
    assert choices.locator("option").all_inner_texts() == ["consensus", "strict", "lenient"]
    x, y = cells["chat 0 turn 1"]
    page.mouse.move(x, y)
    page.wait_for_timeout(300)
    assert tooltip(page).get("judge") == "consensus" and tooltip(page).get("score") == "0.50", tooltip(page)
    choices.select_option(label="strict")
    kernel_state(page, "turns", lambda s: s["shown"] == "strict")
    page.mouse.move(5, 5)
    page.mouse.move(x, y)
    page.wait_for_timeout(300)
    assert tooltip(page).get("judge") == "strict" and tooltip(page).get("score") == "0.00", tooltip(page)
    page.mouse.move(5, 5)
    page.screenshot(path=str(SHOTS / "turn-explorer-strict.png"))
    offline.assert_clean()


# The tutorials need the embedded model (minutes each on two cores): opt-in, by name or `all`.
_ASKED = os.environ.get("JUDGEWIDGETS_OFFLINE_NOTEBOOKS", "")
_TUTORIALS = sorted(p.name for p in (ROOT / "notebooks").glob("*.ipynb"))
_CHOSEN = (
    _TUTORIALS if _ASKED == "all" else [n if n.endswith(".ipynb") else f"{n}.ipynb" for n in _ASKED.split(",") if n]
)


@pytest.mark.local_model
@pytest.mark.parametrize(
    "notebook",
    _CHOSEN or [pytest.param("", id="none-asked", marks=pytest.mark.skip(reason="set JUDGEWIDGETS_OFFLINE_NOTEBOOKS"))],
)
def test_a_tutorial_runs_clean_offline(offline: Offline, lab: Lab, notebook: str) -> None:
    """Every cell runs, every chart draws, and the page logs no error with the network blocked."""
    assert notebook in _TUTORIALS, f"no tutorial {notebook!r}; there are {_TUTORIALS}"
    run_offline(offline, lab, notebook)
