"""Every chart the package returns draws with no network and no setup: what a notebook receives is the Vega-Lite
spec under the type JupyterLab renders itself plus an SVG for exports, with no script from a CDN; altair's
renderer setting is never touched; a renderer the user chose is honoured; terminal IPython gets a file."""

from __future__ import annotations

import io
import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import altair as alt
import pandas as pd
import pytest
import vl_convert
from IPython.core.formatters import DisplayFormatter

import judgewidgets as jw
from judgewidgets import _charts
from judgewidgets.jupyter._chart_widget import chart_widget, offline_widget_class
from judgewidgets.testing import ScriptedTransport
from tests.alignment.helpers import lenient, likert_judge, pointwise_set
from tests.aspects.test_aspects import judge as aspect_judge
from tests.aspects.test_aspects import per_aspect
from tests.cascade.helpers import pairwise_judge
from tests.cascade.test_cascade import LABELLED, NEW, cheap_p, strong_p
from tests.conversations.samples import AGENT, CHAT
from tests.estimates.test_quality import scores_and_labels
from tests.jupyter.test_conversation_explorer import panel_result as per_turn_panel_result
from tests.jupyter.test_conversation_explorer import scripted as scripted_judge
from tests.meta_eval.test_meta_evaluate import first_slot_pairwise
from tests.pairwise.test_tournament import CANDIDATES, QUESTIONS, exact_judge
from tests.runs.test_compare import BEFORE
from tests.runs.test_compare import run as saved_run
from tests.sequential.test_rater import rater

VEGALITE = "application/vnd.vegalite.v5+json"
# The URLs a drawn chart may name: the spec's $schema and the SVG namespaces. Nothing that is fetched.
ALLOWED_URLS = {
    "https://vega.github.io/schema/vega-lite/v5.json",
    "http://www.w3.org/2000/svg",
    "http://www.w3.org/1999/xlink",
}


def panel_result() -> jw.PanelResult:
    judges = [
        jw.LLMJudge(f"openai/{name}", name=name, transport=ScriptedTransport(lambda r, a, s=score: f'{{"score": {s}}}'))
        for name, score in (("strict", 2), ("lenient", 5))
    ]
    return jw.LLMPanel(judges).score(["What is 2+2?", "Capital of France?"], ["4", "Paris"], progress=False)


def grading_result() -> Any:
    verdict = ScriptedTransport(lambda request, attempt: '{"verdict": "MET", "explanation": "fine"}')
    grader = jw.CriterionGrader(judges=[jw.LLMJudge("openai/g", transport=verdict)], seed=0)
    rubric = jw.Rubric([jw.Criterion("Answers the question", name="answers")])
    frame = pd.DataFrame({"prompt": ["q1", "q2"], "response": ["r1", "r2"]})
    return grader.grade_many(rubric, frame, progress=False)


def tournament() -> Any:
    return jw.Tournament(exact_judge(), format="adaptive", seed=0, bootstrap=50).run(
        QUESTIONS, CANDIDATES, progress=False
    )


def cascade() -> jw.Cascade:
    stages = [pairwise_judge(cheap_p, "cheap"), pairwise_judge(strong_p, "strong")]
    calibrated = jw.Cascade(stages, target_agreement=0.9, delta=0.2)
    calibrated.calibrate(LABELLED, progress=False)
    return calibrated


# Each chart-returning method the package has.
CHARTS: dict[str, Callable[[], Any]] = {
    "PanelResult.chart": lambda: panel_result().chart(),
    "PanelResult.turn_chart": lambda: per_turn_panel_result([CHAT, AGENT]).turn_chart(),
    "JudgeResult.turn_chart": lambda: (
        scripted_judge("s").score(conversations=[CHAT, AGENT], target="each_turn", progress=False).turn_chart()
    ),
    "TournamentResult.chart": lambda: tournament().chart(),
    "TournamentResult.ratings_chart": lambda: tournament().ratings_chart(),
    "TournamentResult.win_matrix_chart": lambda: tournament().win_matrix_chart(),
    "GradingResult.verdict_chart": lambda: grading_result().verdict_chart(),
    "GradingResult.agreement_chart": lambda: grading_result().agreement_chart(),
    "SequentialResult.chart": lambda: rater(judges=("openai/a", "openai/b")).rate("q", "a").chart(),
    "SequentialFrame.chart": lambda: rater().rate_many(["q1", "q2"], ["a1", "a2"], progress=False).chart(),
    "AspectResult.chart": lambda: (
        jw.AspectEvaluator(["relevance"], judge=aspect_judge(per_aspect({"relevance": 4})))
        .evaluate(["q1"], ["r1"], progress=False)
        .chart()
    ),
    "QualityEstimate.chart": lambda: jw.estimate_quality(*scores_and_labels()).chart(),
    "AlignmentReport.chart": lambda: (
        likert_judge(lenient)[0].align(pointwise_set(), levers=("rule",), progress=False).alignment_report.chart()
    ),
    "CascadeResult.chart": lambda: cascade().run(NEW, progress=False).chart(),
    "RunComparison.chart": lambda: jw.compare(saved_run(BEFORE), saved_run(1.0 - BEFORE)).chart(),
    "MetaEvaluation.chart": lambda: jw.meta_evaluate(
        first_slot_pairwise(), "llmbar", subsets=["Natural"], n=2, progress=False
    ).chart(),
}


@pytest.fixture(autouse=True)
def in_a_kernel(monkeypatch: pytest.MonkeyPatch) -> None:
    """Charts shown as a notebook's kernel shows them (an earlier test's IPython shell would otherwise make this
    process look like terminal IPython)."""
    monkeypatch.setattr(_charts, "notebook_frontend", lambda: True)


@pytest.fixture
def default_renderer() -> Iterator[None]:
    """The renderer a fresh session has (altair's "default"), whatever an earlier test left."""
    with alt.renderers.enable("default"):
        yield


def shown(chart: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """What IPython's display machinery makes of `chart` (the bundle a kernel sends)."""
    return DisplayFormatter().format(chart)


def assert_offline(data: dict[str, Any]) -> None:
    text = json.dumps(data)
    assert "cdn" not in text.lower() and "<script" not in text.lower()
    assert set(re.findall(r"https?://[^\s\"'<>)\\]+", text)) <= ALLOWED_URLS


@pytest.mark.parametrize("name", sorted(CHARTS))
def test_every_chart_draws_offline_without_touching_the_renderer(name: str, default_renderer: None) -> None:
    chart = CHARTS[name]()
    assert isinstance(chart, alt.TopLevelMixin) and type(chart).__module__ == "judgewidgets._charts"
    data, metadata = shown(chart)
    assert alt.renderers.active == "default"
    assert list(data) == [VEGALITE, "image/svg+xml", "text/plain"]
    assert data["image/svg+xml"].lstrip().startswith("<svg")
    assert data[VEGALITE]["$schema"].endswith("/v5.json")
    assert metadata[VEGALITE]["embed_options"] == {"renderer": "canvas"}
    assert_offline(data)
    # JupyterLab 4.6 draws Vega-Lite 5.6: the spec compiles under the oldest 5.x vl-convert ships.
    assert vl_convert.vegalite_to_vega(data[VEGALITE], vl_version="5.8")["marks"]


def test_the_chart_is_still_an_altair_chart(default_renderer: None, tmp_path: Path) -> None:
    chart = panel_result().chart()
    assert isinstance(chart, alt.HConcatChart) and repr(chart) == "alt.HConcatChart(...)"
    assert chart.to_dict()["hconcat"] and chart.hconcat[0].to_dict()
    titled = chart.properties(title="mine")
    assert type(titled) is type(chart) and titled.to_dict()["title"] == "mine"
    points = _charts.offline(alt.Chart(pd.DataFrame({"x": [1, 2]})).mark_point().encode(x="x:Q"))
    for composed in (chart | chart, chart & chart, points + points):
        assert type(composed).__module__ == "judgewidgets._charts"
        assert_offline(shown(composed)[0])
    chart.save(tmp_path / "chart.html")
    saved = (tmp_path / "chart.html").read_text()
    assert "vegaEmbed" in saved and "cdn.jsdelivr" not in saved  # the JavaScript travels in the file
    chart.save(tmp_path / "chart.json")
    assert json.loads((tmp_path / "chart.json").read_text())["hconcat"]
    buffer = io.StringIO()
    chart.save(buffer, format="html", inline=False)  # the caller may still ask for the CDN version
    assert "cdn.jsdelivr" in buffer.getvalue()


def test_a_renderer_the_user_chose_shows_the_chart() -> None:
    chart = panel_result().chart()
    with alt.renderers.enable("json"):
        data = shown(chart)[0]
        assert "application/json" in data and VEGALITE not in data
        assert alt.renderers.active == "json"


def test_the_users_embed_options_of_the_default_renderer_are_kept() -> None:
    with alt.renderers.enable("default", embed_options={"actions": False}):
        metadata = shown(panel_result().chart())[1]
    assert metadata[VEGALITE]["embed_options"] == {"renderer": "canvas", "actions": False}


def test_in_terminal_ipython_a_chart_is_a_saved_file(
    default_renderer: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from IPython.core.interactiveshell import InteractiveShell

    InteractiveShell.instance()  # a shell, and no kernel: terminal IPython
    monkeypatch.setattr(_charts, "notebook_frontend", lambda: False)
    monkeypatch.setattr(_charts, "chart_folder", lambda: tmp_path)
    chart = panel_result().chart()
    data = shown(chart)[0]
    (saved,) = tmp_path.glob("chart-*.html")
    assert data == {"text/plain": f"<chart of 2 views saved to {saved}: open it in a browser>"}
    assert "https://cdn" not in saved.read_text()
    assert alt.renderers.active == "default"


def test_a_spec_vl_convert_cannot_draw_still_shows_as_vega_lite() -> None:
    data, _ = _charts.notebook_bundle({"mark": "point", "data": {"url": "https://example.com/data.csv"}})
    assert list(data) == [VEGALITE, "text/plain"]  # the data URL is never fetched here


def test_chart_widgets_carry_their_javascript() -> None:
    theirs = alt.JupyterChart._esm
    widget = chart_widget(panel_result().chart())
    assert isinstance(widget, offline_widget_class()) and isinstance(widget, alt.JupyterChart)
    assert widget._esm == offline_widget_class()._esm != theirs
    assert "cdn.jsdelivr" not in widget._esm and "https://" not in widget._esm.split("\n", 1)[0]
    assert widget.embed_options == {"renderer": "canvas"}
    assert alt.JupyterChart._esm == theirs  # the user's own JupyterChart is left as it was


def test_a_judge_that_gives_one_score_everywhere_still_shows_in_the_distribution() -> None:
    """A box of no height draws nothing under Vega-Lite 5 (JupyterLab's): a tick per score stands beside it."""
    spec = panel_result().chart().to_dict()  # each judge gives the same score to both items
    distribution = spec["hconcat"][1]
    marks = [
        layer["mark"]["type"] if isinstance(layer["mark"], dict) else layer["mark"] for layer in distribution["layer"]
    ]
    assert marks == ["boxplot", "tick"]
