"""Charts and linked views with no network and no setup, in a real JupyterLab in headless Chromium: the page may
reach only the loopback Jupyter server, and every test fails on a console error, a failed request or a blocked one
(tests/browser/_offline.py). Judges answer from in-kernel ScriptedTransports: no model, no server.

- A notebook without `%load_ext` shows `result.chart()` (JupyterLab's own Vega-Lite renderer) and a TournamentView
  (chart widgets carrying their JavaScript); the same notebook run by nbclient and exported by nbconvert shows the
  chart as an image, opened from the file with the network still off.
- Linked views: clicking a heatmap cell shows that item in the DisagreementExplorer; clicking a candidate in the
  TournamentView's ratings chart lights its row and column of the win-rate matrix and lists its games.
- Any notebook, the tutorials too (they need the embedded model, so only on request):
  `JUDGEWIDGETS_OFFLINE_NOTEBOOKS=cascade,quickstart python -m pytest tests/browser/test_offline_charts.py -k tutorial`
  (`all` for every tutorial) runs each the same way: every cell, every chart drawn, nothing logged.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nbclient
import nbformat
import pytest

from ._offline import Offline, find_mark, run_offline, shut_down_kernels, wait_for_charts
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
jw.DisagreementExplorer(panel.score(conversations=chats, target="each_turn", progress=False))""",
    "print('cells done')",
]


def _write(path: Path, cells: list[str]) -> None:
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell(source) for source in cells]
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
    nbformat.write(notebook, path)


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
    _write(lab.root / "linked_views.ipynb", LINKED_CELLS)
    run_offline(offline, lab, "linked_views.ipynb", 300)  # what the tutorials' test does, on scripted judges
    page.locator(".jp-OutputArea-output pre", has_text="cells done").wait_for(timeout=120_000)

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


def test_clicking_a_turn_in_the_per_turn_heatmap_shows_that_turn(offline: Offline, lab: Lab) -> None:
    page = offline.page
    expect = playwright_api.expect
    _write(lab.root / "turn_views.ipynb", TURN_CELLS)
    run_offline(offline, lab, "turn_views.ipynb", 300)
    page.locator(".jp-OutputArea-output pre", has_text="cells done").wait_for(timeout=120_000)

    # The explorer opens on the most disputed turn (chat 0's first); clicking chat 1's second turn shows it.
    explorer = page.locator(".judgewidgets-explorer")
    explorer.scroll_into_view_if_needed()
    expect(explorer).to_contain_text("Day one: the Colosseum.")
    expect(explorer).not_to_contain_text("A green salad with lemon.")
    heatmap = explorer.locator(".vega-embed canvas").first
    x, y = find_mark(page, heatmap, {"conversation": "1", "turn": "2"})
    page.mouse.click(x, y)
    expect(explorer).to_contain_text("A green salad with lemon.", timeout=30_000)
    expect(explorer).to_contain_text("judged")
    page.mouse.move(0, 0)
    page.screenshot(path=str(SHOTS / "turn-explorer-clicked.png"))
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
