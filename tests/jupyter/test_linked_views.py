"""Linked views on the model side, without a browser (issue 25, part 2): the charts carry the selections a click or
a drag makes, and the widgets answer when a selection comes back from the page (set here as the page would set it,
through JupyterChart's `_vl_selections`)."""

from __future__ import annotations

from typing import Any

import pandas as pd
import pytest
import vl_convert

import judgewidgets as jw
from judgewidgets.jupyter import DisagreementModel, TournamentModel
from judgewidgets.testing import ScriptedTransport
from tests.pairwise.test_tournament import CANDIDATES, QUESTIONS, exact_judge


def panel_result() -> jw.PanelResult:
    """Two judges on three items: `strict` scores 2, 3, 4 of 5 and explains; `lenient` always 5, no explanation."""
    scores = {"What is 2+2?": 2, "Capital of France?": 3, "Largest planet?": 4}

    def strict(request: Any, attempt: int) -> str:
        score = next(v for k, v in scores.items() if k in request.messages[-1]["content"])
        return f'{{"explanation": "strict gives {score}", "score": {score}}}'

    judges = [
        jw.LLMJudge("openai/s", name="strict", explanations=True, transport=ScriptedTransport(strict)),
        jw.LLMJudge("openai/l", name="lenient", transport=ScriptedTransport(lambda r, a: '{"score": 5}')),
    ]
    return jw.LLMPanel(judges).score(list(scores), ["4", "Paris", "Jupiter"], ["4", "Paris", "Jupiter"], progress=False)


def set_selection(widget: Any, name: str, signal: Any) -> None:
    """What the page sends when a selection changes: the Vega signal of selection `name`."""
    widget._vl_selections = {**widget._vl_selections, name: {"value": signal, "store": []}}


def params(spec: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {p["name"]: p for p in spec.get("params", [])}


def test_the_panel_chart_links_a_click_a_legend_and_a_brush() -> None:
    spec = panel_result().chart().to_dict()
    found = params(spec)
    assert found["pick"]["select"] == {"type": "point", "fields": ["item"], "on": "click"}
    assert found["judge"]["select"] == {"type": "point", "fields": ["judge"]} and found["judge"]["bind"] == "legend"
    assert found["brush"]["select"] == {"type": "interval", "encodings": ["y"]}
    heat = spec["hconcat"][0]["layer"][0]
    test = heat["encoding"]["opacity"]["condition"]["test"]
    assert test == {"and": [{"and": [{"param": "pick"}, {"param": "judge"}]}, {"param": "brush"}]}
    # explanations exist (strict's), errors do not: no tooltip row that is empty for every mark
    fields = [t["field"] for t in heat["encoding"]["tooltip"]]
    assert "explanation" in fields and "error" not in fields
    v5 = {**spec, "$schema": "https://vega.github.io/schema/vega-lite/v5.json"}
    signals = {s["name"] for s in vl_convert.vegalite_to_vega(v5, vl_version="5.8")["signals"]}
    assert {"pick", "judge", "brush"} <= signals  # JupyterLab's Vega-Lite 5 builds all three


def _legends(vega: Any) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    if isinstance(vega, dict):
        found += vega.get("legends", [])
        for value in vega.values():
            found += _legends(value)
    elif isinstance(vega, list):
        for value in vega:
            found += _legends(value)
    return found


@pytest.mark.parametrize("version", ["5.8", "5.20", "6.4"])
def test_the_judge_legend_answers_clicks(version: str) -> None:
    """The legend bound to the `judge` selection carries its click handlers (named, interactive entries) in the
    Vega that JupyterLab (its Vega-Lite 5.6; 5.8 is the oldest vl-convert has) and the widgets and saved files
    (Vega-Lite 6, which also gives the entries a pointer cursor) build: without them a click on a judge did
    nothing."""
    spec = panel_result().chart().to_dict()
    if version.startswith("5"):
        spec = {**spec, "$schema": "https://vega.github.io/schema/vega-lite/v5.json"}
    legends = _legends(vl_convert.vegalite_to_vega(spec, vl_version=version))
    judge = [legend for legend in legends if legend.get("title") == "judge (click to light)"]
    assert len(judge) == 1, legends  # one judge legend: the boxes' colours do not add a second
    for part in ("symbols", "labels", "entries"):
        encode = judge[0]["encode"][part]
        assert encode["name"] == f"judge_legend_{part}" and encode["interactive"] is True
        if version.startswith("6"):
            assert encode["update"]["cursor"] == {"value": "pointer"}


def test_clicking_a_judge_in_the_legend_lights_it_and_narrows_the_brush() -> None:
    result = panel_result()
    assert DisagreementModel(result).judge_summary("strict") == {
        "judge": "strict",
        "mean": pytest.approx(0.5),
        "scored": 3,
        "failed": 0,
        "furthest_item": 0,
        "furthest_score": 0.25,
        "others_mean": 1.0,
    }
    with pytest.raises(jw.InputError, match="no judge 'nobody'"):
        DisagreementModel(result).judge_summary("nobody")
    explorer = jw.DisagreementExplorer(result)
    set_selection(explorer.chart, "brush", {"score": [0.7, 1.0]})
    assert "4 scores in [0.70, 1.00]" in explorer.in_range.value
    set_selection(explorer.chart, "judge", {"vlPoint": {"or": [{"judge": "strict"}]}})
    assert explorer.lit_judge == "strict"
    assert "<b>strict</b> (lit in the chart): mean score 0.50 over 3 items, none failed" in explorer.judge_line.value
    assert "furthest from the other judges on item #0 (0.25 against their 1.00)" in explorer.judge_line.value
    assert "1 score by strict in [0.70, 1.00]" in explorer.in_range.value  # the brush lists strict's only
    set_selection(explorer.chart, "judge", None)  # a click beside the legend clears it
    assert explorer.lit_judge is None and explorer.judge_line.value == ""
    assert "4 scores in [0.70, 1.00]" in explorer.in_range.value


def test_clicking_a_cell_shows_the_items_texts_and_every_judges_answer() -> None:
    explorer = jw.DisagreementExplorer(panel_result())
    assert set(explorer.chart._vl_selections) == {"pick", "judge", "brush"}
    set_selection(explorer.chart, "pick", {"vlPoint": {"or": [{"item": 2}]}})
    assert explorer.picker.value == 2
    shown = explorer.details.value
    assert "Largest planet?" in shown and "Jupiter" in shown and "Reference" in shown
    assert "strict gives 4" in shown and "&quot;score&quot;: 5" in shown  # the explanation and the raw answer
    set_selection(explorer.chart, "pick", None)  # a double-click clears the pick: the item stays shown
    assert explorer.picker.value == 2


def test_dragging_over_the_distribution_lists_the_scores_in_range() -> None:
    result = panel_result()
    model = DisagreementModel(result)
    between = model.scored_between(0.5, 0.8)
    assert between[["item", "judge"]].values.tolist() == [[1, "strict"], [2, "strict"]]
    assert model.scored_between(0.8, 0.5).equals(between)  # a brush dragged upwards
    assert model.scored_between(0, 1, judge="lenient")["item"].tolist() == [0, 1, 2]
    explorer = jw.DisagreementExplorer(result)
    set_selection(explorer.chart, "brush", {"score": [0.7, 1.0]})
    assert "4 scores in [0.70, 1.00]" in explorer.in_range.value
    set_selection(explorer.chart, "brush", None)
    assert explorer.in_range.value == ""


@pytest.fixture(scope="module")
def tournament() -> Any:
    candidates = {name: answers[:2] for name, answers in CANDIDATES.items()}
    return jw.Tournament(exact_judge(), seed=0, bootstrap=50).run(QUESTIONS[:2], candidates, progress=False)


def test_the_ratings_chart_picks_a_candidate_and_every_mark_has_a_tooltip(tournament: Any) -> None:
    spec = tournament.ratings_chart().to_dict()
    assert params(spec)["candidate"]["select"] == {"type": "point", "fields": ["candidate"], "on": "click"}
    for layer in spec["layer"]:  # the interval bars too: hovering a bar gives the numbers
        assert "rating" in [t["field"] for t in layer["encoding"]["tooltip"]]
    assert params(tournament.chart().to_dict())["candidate"]  # the combined chart keeps it, once


def test_clicking_a_candidate_lights_its_row_and_column_and_lists_its_games(tournament: Any) -> None:
    model = TournamentModel(tournament)
    games = model.games("best")
    assert len(games) == 2 * 2 * 4  # two questions, four opponents, both orders
    assert set(games["result"]) == {"won"} and games["shown_first"].sum() == len(games) / 2
    assert set(games["question"]) == set(QUESTIONS[:2])
    with pytest.raises(jw.InputError, match="no candidate 'nobody'"):
        model.games("nobody")
    view = jw.TournamentView(tournament)
    set_selection(view.ratings, "candidate", {"vlPoint": {"or": [{"candidate": "weak"}]}})
    matrix = view.matrix.chart.to_dict()
    data = pd.DataFrame(next(iter(matrix["datasets"].values())))
    lit = data[data["lit"]]
    assert ((lit["candidate"] == "weak") | (lit["opponent"] == "weak")).all() and len(lit) == 2 * 5 - 1
    assert matrix["title"].endswith(": weak")
    assert "<b>weak</b>: 16 judged comparisons, won 0" in view.games.value
    set_selection(view.ratings, "candidate", None)
    assert (
        view.games.value == ""
        and pd.DataFrame(next(iter(view.matrix.chart.to_dict()["datasets"].values())))["lit"].all()
    )


def grading_result() -> Any:
    """Two judges grade three answers on a binary and a multi-choice criterion; `b` calls answer 2 incorrect, and
    its call on answer 1's tone fails."""
    import json
    import re

    rubric = jw.Rubric.from_yaml(
        """
- name: correct
  requirement: The answer is correct
- name: tone
  requirement: The tone of the answer
  scale_type: nominal
  options: [{label: rude, value: 0.0}, {label: friendly, value: 1.0}]
"""
    )

    def reply(name: str) -> Any:
        def answer(request: Any, attempt: int) -> str:
            system, user = request.messages[0]["content"], request.messages[-1]["content"]
            if "The tone" in system:
                if name == "b" and "Answer 1" in user:
                    raise jw.CallFailure("InternalServerError: provider down", 500)
                shown = {label: n for n, label in re.findall(r"^(\d+)\. (.+)$", system, re.M)}
                return json.dumps({"selected_option": int(shown["friendly"]), "explanation": f"{name}: friendly"})
            verdict = "UNMET" if name == "b" and "Answer 2" in user else "MET"
            return json.dumps({"verdict": verdict, "explanation": f"{name} says {verdict}"})

        return answer

    judges = [
        jw.LLMJudge(
            "openai/m",
            name=name,
            structured_output=True,
            retry=jw.RetryPolicy(max_retries=0),
            transport=ScriptedTransport(reply(name)),
        )
        for name in ("a", "b")
    ]
    answers = pd.DataFrame({"response": [f"Answer {i}" for i in range(3)]})
    return jw.CriterionGrader(judges=judges, seed=0).grade_many(rubric, answers, progress=False)


def test_clicking_a_rubric_criterion_lists_its_votes() -> None:
    from judgewidgets.jupyter import RubricModel, RubricView

    result = grading_result()
    spec = result.agreement_chart().to_dict()
    assert params(spec)["criterion"]["select"] == {"type": "point", "fields": ["criterion"], "on": "click"}
    v5 = {**spec, "$schema": "https://vega.github.io/schema/vega-lite/v5.json"}
    assert "criterion" in {s["name"] for s in vl_convert.vegalite_to_vega(v5, vl_version="5.8")["signals"]}

    votes = RubricModel(result).votes("correct")
    assert votes[["item", "judge", "outcome"]].values.tolist() == [
        [0, "a", "MET"], [0, "b", "MET"], [1, "a", "MET"], [1, "b", "MET"], [2, "a", "MET"], [2, "b", "UNMET"]
    ]  # fmt: skip
    assert votes["submission"].tolist()[4:] == ["Answer 2", "Answer 2"] and "b says UNMET" in set(votes["explanation"])
    tone = RubricModel(result).votes("tone").set_index(["item", "judge"])
    assert tone.loc[(1, "b"), "outcome"] == "(failed)" and "provider down" in tone.loc[(1, "b"), "error"]
    assert tone.loc[(0, "a"), "outcome"] == "friendly"
    with pytest.raises(jw.InputError, match="no criterion 'nope'"):
        RubricModel(result).votes("nope")

    view = RubricView(result)
    assert view.votes.value == ""
    set_selection(view.chart, "criterion", {"vlPoint": {"or": [{"criterion": "correct"}]}})
    assert "<b>correct</b>: 6 votes (5 MET, 1 UNMET)" in view.votes.value and "b says UNMET" in view.votes.value
    set_selection(view.chart, "criterion", {"vlPoint": {"or": [{"criterion": "tone"}]}})
    assert "(failed)" in view.votes.value and "provider down" in view.votes.value
    set_selection(view.chart, "criterion", None)
    assert view.votes.value == ""
