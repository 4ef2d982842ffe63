"""LabelQueueModel without a browser: resuming, verdicts hidden until labelled, orders, results as data, the
labels frame, and each error raised at construction."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import judgewidgets as jw
from judgewidgets.labels import LabelQueueModel, LabelStore
from judgewidgets.pairwise._records import OrderVerdict, PairwiseResult

DATA = pd.DataFrame(
    {
        "prompt": ["Boiling point of water?", "Author of Emma?", "2+2?", "Capital of Peru?"],
        "response": ["50 degrees Celsius", "Jane Austen", "4", "Lima"],
        "reference": ["100 °C", "Jane Austen", "4", "Lima"],
        "judge_score": [0.86, 0.93, 0.97, 0.91],
    },
    index=[10, 11, 12, 13],
)


def test_resumes_at_the_first_unlabelled_item_whatever_the_order(tmp_path: Path) -> None:
    store = tmp_path / "labels.jsonl"
    first = LabelQueueModel(DATA, store=store)
    assert first.current == 0 and first.progress() == "0 of 4 labelled"
    first.label("fail", advance=True)
    first.label("pass", advance=True)
    assert first.current == 2
    # The same items in another order (and with other column names) resume where the person stopped.
    shuffled = DATA.iloc[[3, 1, 0, 2]].rename(columns={"prompt": "q", "response": "a"})
    again = LabelQueueModel(shuffled, store=store, prompt_col="q", response_col="a")
    assert again.progress() == "2 of 4 labelled"
    assert again.frame.index[again.current] == 13  # the first unlabelled in this order
    assert again.record(2) is not None and again.record(2).label == "fail"  # type: ignore[union-attr]
    again.label("pass", row=0)
    again.label("pass", row=3)
    done = LabelQueueModel(DATA, store=store)
    assert done.n_labelled == 4 and done.next_unlabelled() is None and done.current == 0


def test_verdicts_stay_hidden_until_the_item_is_labelled(tmp_path: Path) -> None:
    model = LabelQueueModel(DATA, store=None)
    assert model.verdict_cols == ["judge_score"]
    assert model.verdicts() is None and model.verdicts(1) is None
    assert "judge_score" not in model.texts() and set(model.texts()) == {"prompt", "response", "reference"}
    model.label("fail")
    assert model.verdicts() == {"judge_score": 0.86}
    assert model.verdicts(1) is None  # the others stay hidden
    model.clear()
    assert model.verdicts() is None  # a cleared label hides them again


def test_a_panel_result_is_labelled_with_its_judges_hidden() -> None:
    items = [jw.Item("2+2?", "5", "4"), jw.Item("2+3?", "5", "5")]
    votes = [
        jw.Vote(item=i, judge=judge, score=score, explanation=f"{judge} on {i}")
        for i, scores in enumerate([(0.8, 0.6), (1.0, 0.9)])
        for judge, score in zip(("j1", "j2"), scores)
    ]
    result = jw.PanelResult(items=items, vote_list=votes, judges=["j1", "j2"])
    model = LabelQueueModel(result, store=None)
    assert model.text_cols == {"prompt": "prompt", "response": "response", "reference": "reference"}
    assert {"j1", "j2", "avg", "disagreement"} <= set(model.verdict_cols)
    assert model.verdicts() is None
    model.label("fail")
    assert model.verdicts()["j1"] == 0.8  # type: ignore[index]
    judge = jw.JudgeResult(items=items, vote_list=votes[::2], judge="j1")
    assert LabelQueueModel(judge, store=None).verdict_cols == ["score", "raw", "explanation", "error"]


def _pair(question: str, winner: str) -> PairwiseResult:
    verdict = OrderVerdict(judge="j", swapped=False, verdict=winner, winner=winner)  # type: ignore[arg-type]
    return PairwiseResult(
        question=question,
        response_a=f"{question} a",
        response_b=f"{question} b",
        judge="j",
        winner=winner,  # type: ignore[arg-type]
        consistent=None,
        confidence=0.7,
        verdicts=[verdict],
    )


def test_pairwise_results_are_labelled_a_b_or_tie() -> None:
    model = LabelQueueModel([_pair("q1", "A"), _pair("q2", "B")], kind="pairwise", store=None)
    assert model.text_cols == {"prompt": "question", "response_a": "response_a", "response_b": "response_b"}
    assert model.verdict_cols == ["winner", "confidence"]
    assert model.texts()["response_b"] == "q1 b"
    assert model.submit("t") == "item 0 labelled tie" and model.current == 1
    assert model.verdicts(0) == {"winner": "A", "confidence": 0.7}
    model.submit("a")
    assert model.labels["label"].tolist() == ["tie", "A"]
    single = LabelQueueModel(_pair("q3", "B"), kind="pairwise", store=None)
    assert single.n_items == 1


def test_typed_labels_and_commands() -> None:
    model = LabelQueueModel(DATA, kind="score", scale=(1, 5), store=None)
    assert model.submit("2") == "item 10 labelled 2" and model.current == 1
    assert model.submit("<") == "previous item" and model.current == 0
    assert model.submit(">") == "next item" and model.current == 1
    with pytest.raises(jw.InputError, match="'7' is not a label: type a whole number from 1 to 5"):
        model.submit("7")
    model.go_to(0)
    assert model.submit("c") == "label cleared" and model.n_labelled == 0


def test_orders_shuffled_by_seed_or_given() -> None:
    shuffled = LabelQueueModel(DATA, order="shuffled", seed=3, store=None)
    assert sorted(shuffled.order) == [0, 1, 2, 3] and shuffled.order != [0, 1, 2, 3]
    assert LabelQueueModel(DATA, order="shuffled", seed=3, store=None).order == shuffled.order
    assert LabelQueueModel(DATA, order="shuffled", seed=4, store=None).order != shuffled.order
    given = LabelQueueModel(DATA, order=[12, 10], store=None)
    assert given.order == [2, 0] and given.n_items == 2 and given.progress() == "0 of 2 labelled"
    with pytest.raises(jw.InputError, match="does not have"):
        LabelQueueModel(DATA, order=[99], store=None)
    with pytest.raises(jw.InputError, match="each item once"):
        LabelQueueModel(DATA, order=[10, 10], store=None)
    with pytest.raises(jw.InputError, match="'shuffled'"):
        LabelQueueModel(DATA, order="random", store=None)


def test_labels_frame_keeps_the_data_and_is_ready_for_align(tmp_path: Path) -> None:
    data = DATA.assign(label=["gold-fail", "gold-pass", "gold-pass", "gold-pass"])  # a gold column of its own
    model = LabelQueueModel(data, store=tmp_path / "labels.jsonl", who="ana")
    model.label("fail", row=2, note="no working shown")
    model.label("pass", row=0)
    labels = model.labels
    assert labels.index.tolist() == [10, 12]  # the data's own index, in its order
    assert labels.columns.tolist() == [
        *["prompt", "response", "reference", "judge_score", "label_data"],
        *["item", "label", "who", "when", "note"],
    ]
    assert labels["label"].tolist() == ["pass", "fail"] and labels["who"].tolist() == ["ana", "ana"]
    assert labels.loc[12, "note"] == "no working shown" and labels.loc[10, "label_data"] == "gold-fail"
    assert labels["item"].tolist() == [model.keys[0], model.keys[2]]
    assert model.verdict_cols == ["judge_score", "label"]  # a gold label would anchor too: hidden
    scores = LabelQueueModel(DATA, kind="score", store=None)
    scores.label(4)
    assert scores.labels["label"].tolist() == [4] and list(scores.labels.columns)[-1] == "when"


def test_an_id_column_keys_the_items(tmp_path: Path) -> None:
    store = tmp_path / "labels.jsonl"
    data = DATA.assign(id=["a", "b", "c", "d"])
    LabelQueueModel(data, store=store, id_col="id").label("pass", row=1)
    edited = data.assign(response=["edited"] * 4)  # the texts changed; the ids did not
    again = LabelQueueModel(edited, store=store, id_col="id")
    assert again.labels["item"].tolist() == ["b"] and again.n_labelled == 1
    assert "id" not in again.verdict_cols
    with pytest.raises(jw.InputError, match="repeats ids"):
        LabelQueueModel(data.assign(id=["a", "a", "c", "d"]), store=None, id_col="id")
    with pytest.raises(jw.InputError, match="missing values"):
        LabelQueueModel(data.assign(id=["a", None, "c", "d"]), store=None, id_col="id")
    with pytest.raises(jw.InputError, match="no column 'nope'"):
        LabelQueueModel(data, store=None, id_col="nope")


def test_errors_at_construction(tmp_path: Path) -> None:
    with pytest.raises(jw.InputError, match="unknown label kind 'likert'"):
        LabelQueueModel(DATA, kind="likert", store=None)
    with pytest.raises(jw.InputError, match=r"no column 'response'.*use kind='pairwise'"):
        LabelQueueModel(DATA.rename(columns={"response": "response_a"}).assign(response_b="x"), store=None)
    with pytest.raises(
        jw.InputError, match=r"no column 'response_a', 'response_b' for a pairwise queue.*response_a_col="
    ):
        LabelQueueModel(DATA, kind="pairwise", store=None)
    with pytest.raises(jw.InputError, match="no items to label"):
        LabelQueueModel(DATA.iloc[:0], store=None)
    with pytest.raises(jw.InputError, match="got str"):
        LabelQueueModel("prompts.csv", store=None)
    with pytest.raises(jw.InputError, match="no column 'verdict'"):
        LabelQueueModel(DATA, store=None, verdict_cols=["verdict"])
    path = tmp_path / "labels.jsonl"
    LabelQueueModel(DATA, kind="score", store=path).label(5)
    with pytest.raises(jw.InputError, match="holds score labels, not pass_fail"):
        LabelQueueModel(DATA, kind="pass_fail", store=path)
    with pytest.raises(jw.InputError, match=r"holds label 5 .*\(a whole number from 1 to 3\)"):
        LabelQueueModel(DATA, kind="score", scale=(1, 3), store=path)
    pairs = DATA.assign(response_a="x", response_b="y")
    with pytest.raises(jw.InputError, match="holds score labels"):
        LabelQueueModel(pairs, kind="pairwise", store=LabelStore(path))


def test_a_label_outside_the_kind_is_refused_and_not_stored(tmp_path: Path) -> None:
    model = LabelQueueModel(DATA, store=tmp_path / "labels.jsonl")
    for bad in ("maybe", 1, "A"):
        with pytest.raises(jw.InputError, match="not a pass_fail label"):
            model.label(bad)
    assert model.store.records() == [] and not (tmp_path / "labels.jsonl").exists()


def test_two_queues_on_one_file_see_each_others_labels(tmp_path: Path) -> None:
    store = tmp_path / "labels.jsonl"
    mine, theirs = LabelQueueModel(DATA, store=store), LabelQueueModel(DATA, store=store)
    mine.label("pass", row=0)
    theirs.label("fail", row=3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert mine.n_labelled == theirs.n_labelled == 2
        assert mine.next_unlabelled(start=0) == 1


def test_context_is_read_and_named_verdicts_leave_the_rest_as_details() -> None:
    data = DATA.assign(context=["a thermometer", "a novel", "arithmetic", "geography"], topic="science")
    model = LabelQueueModel(data, store=None, verdict_cols=["judge_score"])
    assert model.texts()["context"] == "a thermometer"
    assert model.verdict_cols == ["judge_score"] and model.details() == {"topic": "science"}
    assert model.verdicts() is None  # the named verdicts stay hidden; the details do not
    assert model.keys != LabelQueueModel(DATA, store=None).keys  # the context is part of what is labelled
    assert LabelQueueModel(data, store=None).verdict_cols == ["judge_score", "topic"]  # by default all hidden


def _planned(n: int = 40) -> tuple[pd.DataFrame, jw.LabelPlan]:
    scores = pd.Series(np.linspace(0.01, 0.99, n) ** 3, index=[f"id{i}" for i in range(n)])
    data = pd.DataFrame({"prompt": [f"q{i}" for i in range(n)], "response": "r", "score": scores}, index=scores.index)
    return data, jw.label_plan(scores, budget=10, seed=2, metric="pass_rate")


def test_an_active_queue_asks_for_the_plans_items_and_records_their_probabilities() -> None:
    data, plan = _planned()
    model = LabelQueueModel(data, store=None, order="active", plan=plan, estimator=jw.estimate_quality)
    assert [model.frame.index[row] for row in model.order] == plan.items and model.n_items == 10
    assert model.name() == f"item {plan.items[0]}" and model.where() == "position 1 of 10"
    model.label("pass", advance=True)
    record = model.store.get(model.keys[model.frame.index.get_loc(plan.items[0])])
    assert record is not None and record.plan == plan.id
    assert record.probability == pytest.approx(plan.probability(plan.items[0]))
    # Any other item can be labelled by hand: kept apart, without a probability.
    outside = next(i for i in data.index if i not in plan.items)
    assert model.submit(f"go {outside}") == f"showing item {outside} (outside the queue: a label here is by hand)"
    assert model.submit("f") == f"item {outside} labelled fail"
    assert model.progress() == "1 of 10 labelled (+1 by hand)" and model.where() == "position 2 of 10"
    labels = model.labels
    assert pd.isna(labels.loc[outside, "plan"]) and np.isnan(labels.loc[outside, "probability"])
    assert labels.loc[plan.items[0], "plan"] == plan.id
    for item in plan.items[1:]:
        model.label("pass" if data.loc[item, "score"] > 0.5 else "fail", row=data.index.get_loc(item))
    est = model.estimate()
    assert est is not None and est.plan == plan.id and est.n_labelled == 10 and est.n_by_hand == 1
    assert "interval" in model.readout()
    # The queue sits below the estimates: without an estimator handed in, it says how to get the interval.
    bare = LabelQueueModel(data, store=model.store, plan=plan)
    assert bare.estimate() is None and "estimator=jw.estimate_quality" in bare.readout()


def test_an_active_queue_refuses_a_missing_or_foreign_plan() -> None:
    data, plan = _planned()
    with pytest.raises(jw.InputError, match="order='active' asks in a plan's order"):
        LabelQueueModel(data, store=None, order="active")
    with pytest.raises(jw.InputError, match="made for other items"):
        LabelQueueModel(data.iloc[:30], store=None, plan=plan)
    with pytest.raises(jw.InputError, match="a plan sets the order"):
        LabelQueueModel(data, store=None, order="shuffled", plan=plan)
    with pytest.raises(jw.InputError, match="target_width= needs plan="):
        LabelQueueModel(data, store=None, target_width=0.1)
    with pytest.raises(jw.InputError, match="target_width is the interval width"):
        LabelQueueModel(data, store=None, plan=plan, target_width=2)


def test_listeners_hear_labels_given_anywhere_once_the_queue_has_moved_on() -> None:
    model = LabelQueueModel(DATA, store=None)
    seen: list[tuple[int, str]] = []
    model.subscribe(lambda: seen.append((model.n_labelled, model.where())))
    model.label("pass", advance=True)  # the listener hears it after the queue moved on
    model.store.add(model.keys[3], "fail")  # written straight to the store, as another cell might
    assert seen == [(1, "position 2 of 4"), (2, "position 2 of 4")]
