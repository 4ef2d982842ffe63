"""A real JupyterLab in headless Chromium: open the quickstart, run every cell, check that the widget and the
charts render, click the panel builder's Run button and wait for its table. Screenshots go to the folder
printed at the start (artifacts/screenshots by default, `$JUDGEWIDGETS_SCREENSHOTS` to move it)."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

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


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    workdir = tmp_path_factory.mktemp("lab")
    shutil.copytree(ROOT / "notebooks", workdir / "notebooks")
    port = _free_port()
    env = {**os.environ, "JUPYTER_CONFIG_DIR": str(workdir / ".jupyter"), "JUPYTER_RUNTIME_DIR": str(workdir / "rt")}
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
    yield base
    server.terminate()
    try:
        server.wait(20)
    except subprocess.TimeoutExpired:
        server.kill()


@pytest.fixture(scope="module")
def page(lab: str) -> Iterator[object]:
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


def test_quickstart_runs_and_renders(page, lab: str) -> None:  # type: ignore[no-untyped-def]
    page.goto(f"{lab}/lab/tree/quickstart.ipynb?token={TOKEN}")
    page.wait_for_selector(".jp-NotebookPanel", timeout=120_000)
    page.wait_for_selector(".jp-Notebook-cell", timeout=60_000)
    page.wait_for_selector("text=Python 3 (ipykernel) | Idle", timeout=120_000)
    _run_all(page)
    _wait_idle(page, 1500)
    page.screenshot(path=str(SHOTS / "quickstart-after-run-all.png"), full_page=True)
    errors = page.locator(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr'] .jp-RenderedText")
    tracebacks = [t for t in errors.all_inner_texts() if "Traceback" in t or "Error" in t.split("\n")[0]]
    assert not tracebacks, tracebacks[:2]
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
