"""Widget models without a browser, and the widgets driven by setting traits and clicking."""

from __future__ import annotations

import re
import warnings
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest

import judgewidgets as jw
from judgewidgets.jupyter import DisagreementModel, PanelBuilderModel, ReviewQueueModel
from judgewidgets.testing import OpenAITestServer, json_score

DATA = pd.DataFrame(
    {
        "question": ["2+2?", "Capital of France?", "Largest planet?"],
        "answer": ["4", "Paris", 'Mars [[reply:{"score": 1, "explanation": "wrong planet"}]]'],
    }
)


@pytest.fixture(scope="module")
def server() -> Iterator[OpenAITestServer]:
    with OpenAITestServer(json_score(5)) as running:
        yield running


def test_builder_model(server: OpenAITestServer) -> None:
    judge_kwargs = {"api_base": server.base_url, "api_key": "sk-test", "probability_weighted": False}
    model = PanelBuilderModel(data=DATA, judge_kwargs=judge_kwargs)
    assert (model.prompt_col, model.response_col) == ("question", "answer")
    with pytest.raises(jw.ConfigurationError, match="add at least one judge"):
        model.build()
    model.add_judge("openai/a")
    model.add_judge("openai/b", weight=3)
    with pytest.raises(jw.ConfigurationError, match="positive"):
        model.add_judge("openai/c", weight=0)
    with pytest.raises(jw.ConfigurationError, match="type a model"):
        model.add_judge("  ")
    panel = model.build()
    assert isinstance(panel, jw.LLMPanel) and panel.weights == [1.0, 3.0]
    assert "judge calls" in model.estimate()
    result = jw.run_sync(model.arun(progress=False))
    assert model.result is result
    table = model.table()
    assert table["judge_1"].tolist() == [1.0, 1.0, 0.0]
    model.remove_judge(0)
    assert [j.model for j in model.judges] == ["openai/b"]


def test_builder_with_a_rubric(server: OpenAITestServer) -> None:
    model = PanelBuilderModel(
        data=DATA, template="rubric (YAML)", judge_kwargs={"api_base": server.base_url, "api_key": "k"}
    )
    model.add_judge("openai/a")
    model.rubric_yaml = "- name: ok\n  requirement: Answers correctly\n"
    grader = model.build()
    assert isinstance(grader, jw.CriterionGrader)
    data = DATA.assign(answer=[a + ' [[reply:{"verdict": "MET", "explanation": "x"}]]' for a in DATA["answer"]])
    model.data = data
    jw.run_sync(model.arun(progress=False))
    assert model.table()["ok"].tolist() == ["MET"] * 3


def test_builder_widget_click_to_run(server: OpenAITestServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("judgewidgets._charts.notebook_frontend", lambda: True)  # a kernel draws the widget
    builder = jw.PanelBuilder(DATA, api_base=server.base_url, api_key="sk-test")
    builder.add_judge("openai/a")
    builder.model_input.value = "openai/b"
    builder.add_button.click()
    assert len(builder.judge_list.children) == 2
    builder.template.value = "likert"
    builder.aggregation.value = "median"
    assert "judge calls" in builder.cost.value
    builder.run_button.click()
    result = builder.wait(timeout=60)
    assert isinstance(builder.panel, jw.LLMPanel) and builder.result is result
    assert builder.progress.value == builder.progress.max == 6
    assert "done: 3 rows" in builder.status.value
    assert len(builder.output.outputs) == 2  # the table and the chart
    chart_output = builder.output.outputs[1]["data"]
    # the Vega-Lite spec JupyterLab draws itself, and an SVG for exports: nothing from a CDN
    assert "Scores by judge and item" in str(chart_output["application/vnd.vegalite.v5+json"])
    assert chart_output["image/svg+xml"].lstrip().startswith("<svg") and "cdn" not in str(chart_output)


def test_builder_widget_reports_problems_instead_of_raising() -> None:
    builder = jw.PanelBuilder(DATA)
    builder.run_button.click()
    assert "add at least one judge" in builder.status.value
    builder.add_judge("")
    assert "type a model" in builder.status.value


def _panel_result(server: OpenAITestServer) -> jw.PanelResult:
    panel = jw.LLMPanel(
        [
            jw.LLMJudge(
                "openai/a", api_base=server.base_url, api_key="k", explanations=True, probability_weighted=False
            ),
            jw.LLMJudge("openai/b", api_base=server.base_url, api_key="k", probability_weighted=False),
        ]
    )
    data = DATA.assign(answer=["4", "Paris", "Mars [[fault:500]]"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return panel.score(data["question"], data["answer"], progress=False)


def test_disagreement_explorer(server: OpenAITestServer) -> None:
    result = _panel_result(server)
    model = DisagreementModel(result)
    details = model.details(0)
    assert details["judge"].tolist() == ["judge_1", "judge_2"]
    explorer = jw.DisagreementExplorer(result)
    explorer.picker.value = 2
    assert "Mars" in explorer.details.value and "InternalServerError" in explorer.details.value
    # the vote table's headers are cells apart (padded, ruled), not "explanation error" run together
    headers = re.findall(r"<th style='([^']*)'>(\w+)</th>", explorer.details.value)
    assert [name for _, name in headers] == ["judge", "score", "answer", "explanation", "error"]
    assert all("padding: 2px 14px 2px 0" in style for style, _ in headers)
    assert explorer.details.value.count("<td style='padding") == 5 * 2  # two judges' rows of five cells


def test_chart_widgets_draw_on_canvas(server: OpenAITestServer) -> None:
    """On SVG, every chart widget's copy of vega names its legend gradient "gradient_0": on a page with two
    legends the second shows the first's colours (seen in a real browser). Canvas has no such ids."""
    explorer = jw.DisagreementExplorer(_panel_result(server))
    assert explorer.chart.embed_options == {"renderer": "canvas"}


def test_review_queue_labels_and_agreement(server: OpenAITestServer) -> None:
    result = _panel_result(server)
    model = ReviewQueueModel(result, jw.ReviewPolicy(max_disagreement=0.1, min_score=0.99))
    assert model.queue == [2]
    model.label(2, "fail")
    with pytest.raises(ValueError):
        model.label(2, "maybe")
    agreement = model.agreement().set_index("judge")
    assert agreement.loc["judge_1", "labelled"] == 0  # judge_1's call failed on that item
    queue = jw.ReviewQueue(result, jw.ReviewPolicy(max_disagreement=0.1, min_score=0.99))
    assert "1 of 1 flagged" in queue.card.value
    queue.choice.value = "fail"
    assert queue.model.labels == {2: "fail"}
    assert "Agreement with your labels" in queue.agreement.value


def test_review_queue_labels_survive_a_rebuilt_queue(server: OpenAITestServer, tmp_path: Path) -> None:
    result = _panel_result(server)
    policy = jw.ReviewPolicy(max_disagreement=0.1, min_score=0.99)
    store = tmp_path / "review.jsonl"
    queue = jw.ReviewQueue(result, policy, store=store)
    queue.choice.value = "fail"
    queue.next_button.click()  # showing the item again sets the buttons from the store: no second record
    assert queue.choice.value == "fail" and len(jw.LabelStore(store).records()) == 1
    del queue  # a kernel restart
    rebuilt = ReviewQueueModel(result, policy, store=store)
    assert rebuilt.labels == {2: "fail"} and rebuilt.labels.get(0) is None
    # A LabelQueue on the same items and file finds the review label: both key items by their texts.
    labelled = jw.LabelQueue(result, store=store).labels
    assert labelled.index.tolist() == [2] and labelled["label"].tolist() == ["fail"]
    assert ReviewQueueModel(result, policy).labels == {}  # no store: in memory, nothing carried over


def test_live_convergence_redraws_in_place() -> None:
    from judgewidgets.jupyter import LiveConvergence

    rater = jw.SequentialRater(
        judges=[
            jw.LLMJudge(
                "openai/m",
                template=jw.Template(name="ten", instruction="Rate", scale=(1, 10)),
                mock_response='{"score": 8}',
            )
        ],
        K=2,
        pilot=5,
        max_samples=20,
    )
    live = LiveConvergence(min_interval=0)
    result = rater.rate("q", "a", on_update=live.update)
    assert live.updates >= result.n
    assert live.chart is not None and "mean" in live.status.value


BONES = pd.DataFrame(
    {
        "prompt": ["How many bones does an adult have?", "How many legs does a spider have?"],
        "response": ["Adults have about 350 bones.", "Eight."],
        "reference": ["206", None],
    }
)


def _grades_by_reference(body: dict) -> str:
    """A judge that fails '350 bones' only when the reference (206) is in its prompt: what a reference changes."""
    import json

    from judgewidgets.testing._responders import last_user_text

    text = last_user_text(body)
    score = 1 if "206" in text else 5
    return json.dumps({"matches_reference": "no" if score == 1 else "yes", "score": score, "explanation": "x"})


def test_builder_model_judges_against_the_reference_column_by_default() -> None:
    with OpenAITestServer(_grades_by_reference) as running:
        kwargs = {"api_base": running.base_url, "api_key": "k", "probability_weighted": False}
        model = PanelBuilderModel(data=BONES, judge_kwargs=kwargs)
        assert model.reference_col == "reference" and model.commit_first is None
        assert model.references() == ["206", None]  # a blank cell is no reference
        model.add_judge("openai/a")
        result = jw.run_sync(model.arun(progress=False))
        assert [item.reference for item in result.items] == ["206", None]
        assert model.table()["judge_1"].tolist() == [0.0, 1.0]  # 350 bones fails against 206
        model.reference_col = None  # "(none)"
        assert model.references() is None
        jw.run_sync(model.arun(progress=False))
        assert model.table()["judge_1"].tolist() == [1.0, 1.0]
        assert "reference" not in model.table()
    assert PanelBuilderModel(data=DATA).reference_col is None  # no reference column: none chosen
    assert PanelBuilderModel(data=BONES, reference_col=None).reference_col is None
    with pytest.raises(jw.InputError, match="no column 'gold'"):
        PanelBuilderModel(data=BONES, reference_col="gold", judges=[]).estimate()


def test_builder_model_commit_first_reaches_every_judge() -> None:
    model = PanelBuilderModel(data=BONES, commit_first="short")
    model.add_judge("openai/a")
    model.add_judge("openai/b")
    panel = model.build()
    assert [judge.commit_first for judge in panel.judges] == ["short", "short"]
    model.commit_first = False
    assert [judge.commit_first for judge in model.build().judges] == [False, False]


def test_builder_widget_reference_and_commit_first_pickers() -> None:
    builder = jw.PanelBuilder(BONES)
    assert builder.reference_col.options == ("(none)", "prompt", "response", "reference")
    assert builder.reference_col.value == "reference" and builder.model.reference_col == "reference"
    assert builder.commit_first.options == ("judge's default", "on", "short answers", "off")
    builder.reference_col.value = "(none)"
    builder.commit_first.value = "on"
    assert builder.model.reference_col is None and builder.model.commit_first is True
    builder.add_judge("openai/a")
    assert all(judge.commit_first is True for judge in builder.panel.judges)
    assert jw.PanelBuilder(DATA).reference_col.value == "(none)"
