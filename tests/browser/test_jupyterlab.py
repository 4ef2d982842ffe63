"""A real JupyterLab in headless Chromium: open the quickstart, run every cell, check that the widget and the
charts render, click the panel builder's Run button and wait for its table; then a gallery notebook of the other
widgets (disagreement explorer, tournament view, review queue, live convergence chart) on loopback test-server
judges, driven by clicks. Screenshots go to the folder printed at the start (artifacts/screenshots by default,
`$JUDGEWIDGETS_SCREENSHOTS` to move it)."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import NamedTuple

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
SHOTS = Path(os.environ.get("JUDGEWIDGETS_SCREENSHOTS", ROOT / "artifacts" / "screenshots"))
TOKEN = "judgewidgets-browser-test"

playwright_api = pytest.importorskip("playwright.sync_api")
pytestmark = [
    pytest.mark.browser,
    pytest.mark.local_model,
    pytest.mark.skipif(
        not Path(CHROMIUM).exists(), reason="Debian's chromium is not installed (apt-get install chromium)"
    ),
]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Lab(NamedTuple):
    url: str
    root: Path  # the folder JupyterLab serves


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    workdir = tmp_path_factory.mktemp("lab")
    shutil.copytree(ROOT / "notebooks", workdir / "notebooks")
    _write_gallery(workdir / "notebooks" / "widget_gallery.ipynb")
    settings = workdir / ".jupyter" / "lab" / "user-settings" / "@jupyterlab" / "apputils-extension"
    settings.mkdir(parents=True)  # no "get notified about Jupyter news?" toast over the screenshots
    (settings / "notification.jupyterlab-settings").write_text('{"fetchNews": "false", "checkForUpdates": false}')
    port = _free_port()
    # Jupyter's config, data (the notebook trust database) and runtime files stay out of the user's home; the
    # call cache and IPython's folder are the session's already (tests/conftest.py), inherited by the kernels.
    folders = {"JUPYTER_CONFIG_DIR": ".jupyter", "JUPYTER_DATA_DIR": "data", "JUPYTER_RUNTIME_DIR": "rt"}
    env = {**os.environ, **{name: str(workdir / sub) for name, sub in folders.items()}}
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "jupyterlab",
            "--no-browser",
            "--allow-root",
            f"--IdentityProvider.token={TOKEN}",
            "--ServerApp.ip=127.0.0.1",
            f"--ServerApp.port={port}",
            f"--ServerApp.root_dir={workdir / 'notebooks'}",
            "--ServerApp.open_browser=False",
            "--LabApp.news_url=",
            "--ServerApp.disable_check_xsrf=True",
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(f"{base}/api/status?token={TOKEN}", timeout=2)
            break
        except Exception:
            if server.poll() is not None:
                raise RuntimeError(server.stderr.read().decode()[-3000:]) from None
            time.sleep(0.5)
    else:
        server.kill()
        raise RuntimeError("JupyterLab did not start within 120 s")
    yield Lab(base, workdir / "notebooks")
    server.terminate()
    try:
        server.wait(20)
    except subprocess.TimeoutExpired:
        server.kill()


@pytest.fixture(scope="module")
def page(lab: Lab) -> Iterator[object]:
    SHOTS.mkdir(parents=True, exist_ok=True)
    print(f"\nscreenshots: {SHOTS}")
    with playwright_api.sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=CHROMIUM,
            args=["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"],
        )
        context = browser.new_context(viewport={"width": 1400, "height": 1000})
        page = context.new_page()
        yield page
        browser.close()


def _run_all(page) -> None:  # type: ignore[no-untyped-def]
    page.click("text=Run", timeout=30_000)  # the Run menu
    page.click("text=Run All Cells", timeout=30_000)


def _wait_idle(page, timeout_s: float) -> None:  # type: ignore[no-untyped-def]
    """Until no cell is queued or running ([*]) and the kernel is idle."""
    deadline = time.monotonic() + timeout_s
    time.sleep(2)
    while time.monotonic() < deadline:
        busy = page.locator(".jp-InputArea-prompt:has-text('[*]')").count()
        if busy == 0:
            return
        time.sleep(2)
    raise AssertionError(f"cells still running after {timeout_s} s")


def _open_and_run_all(  # type: ignore[no-untyped-def]
    page, lab: Lab, notebook: str, timeout_s: float, while_running: Callable[[], None] | None = None
) -> None:
    """Open `notebook` alone in its own workspace, wait for its kernel, run every cell (calling `while_running`
    once they are queued), wait until all ran."""
    workspace = notebook.removesuffix(".ipynb").replace("_", "-")
    page.goto(f"{lab.url}/lab/workspaces/{workspace}/tree/{notebook}?reset&token={TOKEN}")
    page.wait_for_selector(".jp-NotebookPanel", timeout=120_000)
    page.wait_for_selector(".jp-Notebook-cell", timeout=60_000)
    page.wait_for_selector("text=Python 3 (ipykernel) | Idle", timeout=120_000)
    not_run = page.locator(".jp-CodeCell .jp-InputArea-prompt:has-text('[ ]')")
    deadline = time.monotonic() + 120
    while True:  # "Idle" can show a moment before the kernel takes requests; Run All then queues nothing
        _run_all(page)
        time.sleep(3)
        if not_run.count() == 0 or time.monotonic() > deadline:
            break
    if while_running is not None:
        while_running()
    _wait_idle(page, timeout_s)
    assert not_run.count() == 0, f"{not_run.count()} cells of {notebook} never ran"


def _assert_no_tracebacks(page) -> None:  # type: ignore[no-untyped-def]
    errors = page.locator(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr'] .jp-RenderedText")
    tracebacks = [t for t in errors.all_inner_texts() if "Traceback" in t or "Error" in t.split("\n")[0]]
    assert not tracebacks, tracebacks[:2]


def test_quickstart_runs_and_renders(page, lab: Lab) -> None:  # type: ignore[no-untyped-def]
    _open_and_run_all(page, lab, "quickstart.ipynb", 1500)
    page.screenshot(path=str(SHOTS / "quickstart-after-run-all.png"), full_page=True)
    _assert_no_tracebacks(page)
    assert page.locator(".vega-embed").count() >= 2, "the panel chart and the %%judge chart should render"
    assert page.locator(".jp-RenderedHTMLCommon table.dataframe").count() >= 2
    builder = page.locator(".judgewidgets-panel-builder")
    builder.wait_for(timeout=60_000)
    builder.scroll_into_view_if_needed()
    page.screenshot(path=str(SHOTS / "quickstart-panel-builder.png"))
    builder.locator("button:has-text('Run')").click()
    builder.locator("text=done:").wait_for(timeout=900_000)
    builder.locator("table.dataframe").wait_for(timeout=60_000)
    builder.locator(".vega-embed").wait_for(timeout=60_000)
    builder.scroll_into_view_if_needed()
    page.screenshot(path=str(SHOTS / "quickstart-panel-builder-result.png"))
    assert builder.locator("table.dataframe tbody tr").count() == 4


# The gallery's judges answer from loopback test servers: a likert score hashed from the model and the request
# (so judges disagree),
# a pairwise judge that prefers the answer of higher stated quality, and noisy likert scores for the live chart.
GALLERY_CELLS = [
    """%load_ext judgewidgets
import hashlib
import json
import random
import re

import pandas as pd

import judgewidgets as jw
from judgewidgets.jupyter import LiveConvergence
from judgewidgets.testing import OpenAITestServer


def by_model(body):
    text = body["model"] + body["messages"][-1]["content"]
    score = 1 + int(hashlib.sha256(text.encode()).hexdigest(), 16) % 5
    return json.dumps({"explanation": f"{body['model']} gives {score} of 5.", "score": score})


def prefers_quality(body):
    text = body["messages"][-1]["content"]
    first, second = (int(q) for q in re.findall(r"quality (\\d+)", text)[:2])
    verdict = "A" if first > second else "B" if second > first else "tie"
    return json.dumps({"verdict": verdict, "confidence": 0.8})


rng = random.Random(0)
likert = OpenAITestServer(by_model).start()
pairwise = OpenAITestServer(prefers_quality).start()
noisy = OpenAITestServer(lambda body: json.dumps({"score": rng.randint(2, 5)}), latency=0.05).start()
data = pd.DataFrame(
    {
        "question": [f"Question {i}: what is {i} + {i}?" for i in range(6)],
        "answer": [f"It is {2 * i + (i % 3 == 0)}." for i in range(6)],
    }
)""",
    """panel = jw.LLMPanel(
    [
        jw.LLMJudge(f"openai/judge-{name}", name=name, api_base=likert.base_url, api_key="sk-test", explanations=True)
        for name in ("strict", "lenient", "third")
    ]
)
result = panel.score(data["question"], data["answer"])
jw.DisagreementExplorer(result)""",
    """questions = [f"Question {i}" for i in range(4)]
candidates = {f"v{q}": [f"Answer {i} of v{q} (quality {q})" for i in range(4)] for q in range(1, 5)}
judge = jw.PairwiseJudge("openai/pairwise", api_base=pairwise.base_url, api_key="sk-test")
ranked = jw.Tournament(judge, format="round_robin", seed=0, bootstrap=200).run(questions, candidates)
jw.TournamentView(ranked)""",
    """jw.ReviewQueue(result, jw.ReviewPolicy(max_disagreement=0.2))""",
    """live = LiveConvergence()
display(live.widget)
rater = jw.SequentialRater(
    judges=[jw.LLMJudge("openai/noisy", api_base=noisy.base_url, api_key="sk-test", cache=False)],
    scale=(1, 5),
    K=3,
    pilot=5,
    max_samples=60,
)
rating = rater.rate("What is 2 + 2?", "4", on_update=live.update)
print(f"live chart redrawn {live.updates} times in place; final n = {rating.n}")""",
    """import tempfile

slow = OpenAITestServer(by_model, latency=1.0).start()
slow_judge = jw.LLMJudge(
    "openai/slow", api_base=slow.base_url, api_key="sk-test", max_concurrency=2, cache=tempfile.mkdtemp() + "/c.db"
)
questions = [f"Question {i}: what is {i} + 1?" for i in range(40)]
answers = [str(i + 1) for i in range(40)]
print("slow run started", flush=True)
try:
    slow_judge.score(questions, answers)
except KeyboardInterrupt:
    print("interrupted", flush=True)""",
    """resumed = slow_judge.score(questions, answers)
print(f"resumed: {sum(v.cached for v in resumed.vote_list)} of {len(questions)} judgments came from the cache")""",
]


def _write_gallery(path: Path) -> None:
    import nbformat

    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell(source) for source in GALLERY_CELLS]
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
    nbformat.write(notebook, path)


def test_widget_gallery_renders_and_responds(page, lab: Lab) -> None:  # type: ignore[no-untyped-def]
    def interrupt_the_slow_run() -> None:
        """Kernel > Interrupt Kernel a few seconds into the gallery's slow run (40 calls, 1 s each, 2 at a time)."""
        page.locator(".jp-OutputArea-output", has_text="slow run started").first.wait_for(timeout=180_000)
        time.sleep(4)
        page.click("text=Kernel")
        page.click("text=Interrupt Kernel")

    _open_and_run_all(page, lab, "widget_gallery.ipynb", 300, while_running=interrupt_the_slow_run)
    page.screenshot(path=str(SHOTS / "gallery-after-run-all.png"), full_page=True)
    _assert_no_tracebacks(page)

    drawn = page.evaluate(
        """() => [...document.querySelectorAll('.vega-embed')].map(e => e.querySelector('canvas') !== null)"""
    )
    assert drawn and all(drawn), "every chart is drawn on canvas (SVG legends share gradient ids across charts)"

    explorer = page.locator(".judgewidgets-explorer")
    explorer.wait_for(timeout=60_000)
    explorer.locator(".vega-embed").first.wait_for(timeout=60_000)
    picker = explorer.locator("select")
    last = picker.locator("option").last
    picker.select_option(value=last.get_attribute("value"))
    chosen = last.inner_text().split("·")[-1].strip()
    details = explorer.locator(".widget-html").last
    playwright_api.expect(details).to_contain_text(chosen, timeout=30_000)
    assert details.locator("table tr").count() == 4, "a header and one row per judge"
    explorer.scroll_into_view_if_needed()
    page.screenshot(path=str(SHOTS / "gallery-disagreement-explorer.png"))

    tournament = page.locator(".judgewidgets-tournament")
    tournament.scroll_into_view_if_needed()
    tournament.locator(".vega-embed").nth(1).wait_for(timeout=60_000)
    ranking = tournament.locator("table tbody tr")
    assert ranking.count() == 4
    assert ranking.first.inner_text().split()[0] == "v4", "the highest-quality variant ranks first"
    page.screenshot(path=str(SHOTS / "gallery-tournament-view.png"))

    queue = page.locator(".judgewidgets-review-queue")
    queue.scroll_into_view_if_needed()
    assert "flagged" in queue.inner_text()
    queue.locator("button:has-text('fail')").click()
    queue.locator("text=Agreement with your labels").wait_for(timeout=30_000)
    page.wait_for_function(
        "() => [...document.querySelectorAll('.judgewidgets-review-queue td')].some(td => td.innerText.trim() === '1')",
        timeout=30_000,
    )
    page.screenshot(path=str(SHOTS / "gallery-review-queue.png"))

    redrawn = page.locator("text=/live chart redrawn \\d+ times in place/")
    redrawn.wait_for(timeout=60_000)
    assert int(redrawn.inner_text().split()[3]) > 1
    live_output = redrawn.locator("xpath=ancestor::div[contains(concat(' ', @class, ' '), ' jp-CodeCell ')]")
    live_output.scroll_into_view_if_needed()
    assert live_output.locator(".vega-embed").count() == 1, "one chart, updated in place"
    page.screenshot(path=str(SHOTS / "gallery-live-convergence.png"))

    # The kernel interrupt during the slow run kept what had finished: the next run took it from the cache.
    page.locator(".jp-OutputArea-output", has_text="interrupted").first.wait_for(timeout=60_000)
    resumed = page.locator("text=/resumed: \\d+ of 40 judgments came from the cache/")
    resumed.wait_for(timeout=120_000)
    reused = int(resumed.inner_text().split()[1])
    assert 0 < reused < 40, resumed.inner_text()
    resumed.scroll_into_view_if_needed()
    page.screenshot(path=str(SHOTS / "gallery-interrupt-and-resume.png"))


def test_the_agreement_tutorial_labels_aligns_and_shows_the_report(page, lab: Lab) -> None:  # type: ignore[no-untyped-def]
    """The labelling queue, the alignment report's chart and its tabbed view, in a real JupyterLab."""
    _open_and_run_all(page, lab, "agreement_calibration.ipynb", 900)
    page.screenshot(path=str(SHOTS / "agreement-after-run-all.png"), full_page=True)
    _assert_no_tracebacks(page)
    queue = page.locator(".judgewidgets-label-queue").first  # the tutorial's first queue; the active one comes later
    queue.wait_for(timeout=60_000)
    queue.scroll_into_view_if_needed()
    page.screenshot(path=str(SHOTS / "agreement-label-queue.png"))
    queue.locator("button:has-text('previous')").click()  # the widget redraws from its store
    page.wait_for_timeout(500)
    shown = queue.inner_text()
    assert "36 of 36 labelled" in shown and "(position 36 of 36)" in shown, shown[:300]
    tabs = page.locator(".judgewidgets-alignment")
    tabs.wait_for(timeout=60_000)
    tabs.scroll_into_view_if_needed()
    assert tabs.locator(".vega-embed").count() >= 1, "the alignment chart should render inside the view"
    page.screenshot(path=str(SHOTS / "agreement-alignment-view.png"))
    tabs.locator(".lm-TabBar-tab:has-text('disagreements')").click()
    page.wait_for_timeout(500)
    page.screenshot(path=str(SHOTS / "agreement-alignment-disagreements.png"))
    assert tabs.locator("table").count() >= 1
