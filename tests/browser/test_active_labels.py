"""Active labelling in a real JupyterLab in headless Chromium, the page reaching only the loopback Jupyter server:
a label plan, the queue asking for the plan's items, labels given by clicking, the counts and the interval so far
updating after every click, and the labels on disk with the plan's probabilities. No model: a simulated
calibrated judge's scores, the truth written into each response for the test to read (as a person would judge)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import nbformat
import pytest

from ._offline import Offline
from .test_jupyterlab import CHROMIUM, SHOTS, Lab, _assert_no_tracebacks, _open_and_run_all, lab, playwright_api
from .test_offline_charts import browser, offline

__all__ = ["browser", "lab", "offline"]  # the shared server, browser and offline-page fixtures

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        not Path(CHROMIUM).exists(), reason="Debian's chromium is not installed (apt-get install chromium)"
    ),
]

BUDGET = 24
CELLS = [
    """import numpy as np
import pandas as pd

import judgewidgets as jw

rng = np.random.default_rng(3)
n = 400
sure = rng.random(n) < 0.75
confidence = np.where(sure, rng.uniform(0.95, 1, n), rng.uniform(0.5, 0.95, n))
p = np.where(rng.random(n) < 0.6, confidence, 1 - confidence)  # a calibrated judge's P(pass)
truth = np.where(rng.random(n) < p, "pass", "fail")
items = pd.DataFrame(
    {
        "prompt": [f"Question {i}" for i in range(n)],
        "response": [f"Answer {i}. (For the test: a person would say {t.upper()}.)" for i, t in enumerate(truth)],
        "judge_score": p,
    }
)
plan = jw.label_plan(items["judge_score"], budget=BUDGET, seed=0, metric="pass_rate")
queue = jw.LabelQueue(items, kind="pass_fail", store="active_labels.jsonl", order="active", plan=plan,
                      target_width=0.25)
queue""".replace("BUDGET", str(BUDGET)),
    "print('cells done', plan.id)",
]


def _write(path: Path) -> None:
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell(source) for source in CELLS]
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
    nbformat.write(notebook, path)


def test_labels_clicked_in_an_active_queue_narrow_the_interval(offline: Offline, lab: Lab) -> None:
    page = offline.page
    _write(lab.root / "active_labels.ipynb")
    _open_and_run_all(page, lab, "active_labels.ipynb", 300)
    done = page.locator(".jp-OutputArea-output pre", has_text="cells done")
    done.wait_for(timeout=120_000)
    plan_id = done.inner_text().split()[-1]
    _assert_no_tracebacks(page)
    queue = page.locator(".judgewidgets-label-queue")
    queue.wait_for(timeout=60_000)
    header = queue.locator(".widget-html").first
    readout = queue.locator(".judgewidgets-readout")
    playwright_api.expect(header).to_contain_text(f"0 of {BUDGET} labelled", timeout=30_000)
    queue.scroll_into_view_if_needed()
    page.screenshot(path=str(SHOTS / "active-queue-before.png"))
    widths = []
    for k in range(1, BUDGET + 1):
        shown = queue.inner_text()
        item = re.search(r"showing item (\d+) \(position (\d+) of (\d+)\)", shown)
        assert item is not None and item.group(2) == str(k) and item.group(3) == str(BUDGET), shown[:300]
        assert f"Answer {item.group(1)}." in shown  # the card shows the item the header names
        said = re.search(r"a person would say (PASS|FAIL)", shown)
        assert said is not None
        queue.locator(f"button:has-text('{said.group(1).lower()} (')").click()
        playwright_api.expect(header).to_contain_text(f"{k} of {BUDGET} labelled", timeout=30_000)
        if k >= 5:
            playwright_api.expect(readout).to_contain_text(f"from {k} labels", timeout=30_000)
            widths.append(float(re.search(r"width (\d\.\d+)\)", readout.inner_text()).group(1)))  # type: ignore[union-attr]
        if k == 12:
            page.screenshot(path=str(SHOTS / "active-queue-halfway.png"))
    playwright_api.expect(header).to_contain_text("every item is labelled", timeout=30_000)
    text = readout.inner_text()
    assert "more labels to reach width 0.25" in text or "target width 0.25 is reached" in text, text
    assert widths[-1] < 0.7 * widths[0], widths
    queue.scroll_into_view_if_needed()
    page.screenshot(path=str(SHOTS / "active-queue-done.png"))
    records = [json.loads(line) for line in (lab.root / "active_labels.jsonl").read_text().splitlines()]
    assert len(records) == BUDGET and {r["plan"] for r in records} == {plan_id}
    assert all(0 < r["probability"] <= 1 for r in records)
    offline.assert_clean()
    print(f"widths as labels were clicked: {widths[0]:.3f} → {widths[-1]:.3f}; readout: {text}")
