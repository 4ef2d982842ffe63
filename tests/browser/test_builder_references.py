"""The panel builder judges with references, in a real JupyterLab in headless Chromium with the page's network cut
(tests/browser/_offline.py): the reference column is chosen by default when the data has one, "(none)" judges
without it, and the commit-first picker is there (issue 46 item 1). The judge answers from an in-kernel
ScriptedTransport that fails '350 bones' only when the reference 206 is in its prompt."""

from __future__ import annotations

from pathlib import Path

import pytest

from ._offline import Offline
from .test_jupyterlab import CHROMIUM, SHOTS, Lab, lab, playwright_api
from .test_offline_charts import _run_cells, browser, offline

__all__ = ["browser", "lab", "offline"]  # the fixtures this module's test uses

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        not Path(CHROMIUM).exists(), reason="Debian's chromium is not installed (apt-get install chromium)"
    ),
]

CELLS = [
    """import json

import pandas as pd

import judgewidgets as jw
from judgewidgets.testing import ScriptedTransport

def grades(request, attempt):
    wrong = "206" in str(request.messages)  # the reference reached the judge: 350 bones is wrong
    return json.dumps({"matches_reference": "no" if wrong else "yes", "score": 1 if wrong else 5})

examples = pd.DataFrame({
    "prompt": ["How many bones does an adult have?", "How many legs does a spider have?"],
    "response": ["Adults have about 350 bones.", "Eight."],
    "reference": ["206", None],
})
builder = jw.PanelBuilder(examples, transport=ScriptedTransport(grades), cache=False, probability_weighted=False)
builder.add_judge("openai/strict")
builder""",
    'print("cells done")',
]


def test_the_builder_picks_the_reference_column_and_judges_with_it_offline(offline: Offline, lab: Lab) -> None:
    page = offline.page
    expect = playwright_api.expect
    _run_cells(offline, lab, "builder_references.ipynb", CELLS)
    builder = page.locator(".judgewidgets-panel-builder")
    builder.scroll_into_view_if_needed()
    reference = builder.locator(".widget-dropdown", has_text="reference col").locator("select")
    commit = builder.locator(".widget-dropdown", has_text="commit first").locator("select")
    assert reference.locator("option").all_inner_texts() == ["(none)", "prompt", "response", "reference"]
    assert reference.locator("option:checked").inner_text() == "reference"  # chosen: the data has that column
    options = [" ".join(text.split()) for text in commit.locator("option").all_inner_texts()]  # &nbsp; as spaces
    assert options == ["judge's default", "on", "short answers", "off"]

    builder.locator("button:has-text('Run')").click()
    expect(builder.locator(".widget-html", has_text="done:")).to_contain_text("done: 2 rows", timeout=120_000)
    table = builder.locator("table.dataframe")
    table.wait_for(timeout=60_000)
    assert "reference" in table.locator("thead").inner_text()
    rows = [r.split("\t") for r in table.locator("tbody tr").all_inner_texts()]
    assert "206" in rows[0] and rows[0][rows[0].index("206") + 1] == "0.0", rows  # judge_1: 350 bones fails
    page.screenshot(path=str(SHOTS / "builder-with-references.png"), full_page=True)

    reference.select_option(label="(none)")
    builder.locator("button:has-text('Run')").click()
    # the run clears the old table as it draws its own: the table to read is the one without the reference column
    table = builder.locator("table.dataframe").filter(has_not_text="reference").first
    table.wait_for(timeout=120_000)
    expect(builder.locator("table.dataframe")).to_have_count(1)  # the last run's table is gone
    assert "reference" not in table.locator("thead").inner_text()
    rows = [r.split("\t") for r in table.locator("tbody tr").all_inner_texts()]
    assert rows[0][rows[0].index("Adults have about 350 bones.") + 1] == "1.0", rows  # without it, it passes
    page.screenshot(path=str(SHOTS / "builder-without-references.png"), full_page=True)
    offline.assert_clean()
