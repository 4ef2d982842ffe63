"""The regression pager and the runs browser: their models without a browser, the widgets by clicking."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import judgewidgets as jw
from judgewidgets.runs import RegressionPages, RunsBrowser

from .helpers import PROMPTS, RESPONSES, judge
from .test_compare import BEFORE, QUESTIONS, run


def comparison() -> jw.RunComparison:
    after = BEFORE.copy()
    after[:12] = np.maximum(0.0, BEFORE[:12] - 0.1 * np.arange(1, 13) / 12)  # 12 regressions, the 12th worst
    return jw.compare(run(BEFORE), run(after, why="now"))


def test_the_pages_hold_the_regressions_worst_first() -> None:
    cmp = comparison()
    pages = RegressionPages(cmp, page_size=5)
    assert pages.judge == "j" and pages.pages == 3 and len(pages.current()) == 5
    assert pages.current()["delta"].tolist() == cmp.regressions(n=5)["delta"].tolist()
    assert pages.status() == "j: 12 regressions · page 1 of 3"
    pages.next()
    pages.next()
    pages.next()  # stays on the last page
    assert pages.page == 2 and len(pages.current()) == 2
    pages.previous()
    assert pages.page == 1 and "#6" in pages.html() and "now " in pages.html()
    with pytest.raises(jw.ConfigurationError):
        RegressionPages(cmp, page_size=0)
    same = jw.compare(run(BEFORE), run(BEFORE))
    assert "No item got worse" in RegressionPages(same).html()


def test_the_pager_widget_moves_by_clicks_and_switches_judges() -> None:
    before = jw.LLMPanel([judge("a"), judge("b")]).score(PROMPTS, RESPONSES, progress=False)
    after = jw.LLMPanel([judge("a"), judge("b")]).score(PROMPTS, [f"{r} score=1" for r in RESPONSES], progress=False)
    pager = jw.compare(before, after).pager(page_size=3)
    assert pager.judge.options == ("overall", "a", "b") and pager.previous.disabled
    first = pager.page.value
    pager.next.click()
    assert pager.model.page == 1 and pager.page.value != first and pager.next.disabled
    pager.previous.click()
    assert pager.model.page == 0
    pager.judge.value = "b"
    assert pager.model.judge == "b" and pager.status.value.startswith("b: 4 regressions")
    assert QUESTIONS[0] not in pager.page.value and PROMPTS[0] in pager.page.value


def test_the_browser_compares_two_runs_of_a_folder(tmp_path: Path) -> None:
    runs = jw.Runs(tmp_path)
    runs.save(run(BEFORE), "v1")
    after = BEFORE.copy()
    after[3] = 0.0
    runs.save(run(after), "v2")
    browser = runs.browser()
    assert isinstance(browser, RunsBrowser) and (browser.before.value, browser.after.value) == ("v1", "v2")
    assert "v1" in browser.table.value and "judge" in browser.table.value
    browser.button.click()
    summary, pager = browser.result.children
    assert "v1 → v2" in summary.value and pager.children[1].value.count("#1") == 1
    assert browser.model.comparison is not None and browser.model.comparison.regressions()["input"].tolist() == [
        QUESTIONS[3]
    ]
    runs.save(run(BEFORE, prompts=[f"other {i}" for i in range(len(BEFORE))]), "v3")
    browser.refresh_button.click()
    browser.after.value = "v3"
    browser.button.click()
    assert "Cannot compare" in browser.result.children[0].value
