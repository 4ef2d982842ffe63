"""The LabelQueue widget, driven by clicking its buttons and typing in its box."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

import judgewidgets as jw

DATA = pd.DataFrame(
    {
        "prompt": ["Boiling point of water?", "Author of Emma?", "2+2?"],
        "response": ["50 degrees Celsius", "Jane Austen", "4"],
        "judge_score": [0.8642, 0.9317, 0.9753],
        "judge_note": ["SAYS-CORRECT-1", "SAYS-CORRECT-2", "SAYS-CORRECT-3"],
    }
)


def _shown(queue: jw.LabelQueue) -> str:
    return queue.header.value + queue.card.value + queue.verdicts.value + queue.last.value


def test_clicking_labels_saves_them_and_reveals_the_verdicts_only_after(tmp_path: Path) -> None:
    store = tmp_path / "labels.jsonl"
    queue = jw.LabelQueue(DATA, store=store)
    assert [b.description for b in queue.buttons] == ["pass (p)", "fail (f)"]
    assert "0 of 3 labelled" in queue.header.value and "Boiling point" in queue.card.value
    assert "SAYS-CORRECT-1" not in _shown(queue) and "0.86" not in _shown(queue)
    assert "hidden until you have labelled" in queue.verdicts.value
    queue.note.value = "50 is wrong"
    queue.buttons[1].click()  # fail
    assert jw.LabelStore(store).labels["label"].tolist() == ["fail"]  # on disk at once
    assert "1 of 3 labelled" in queue.header.value and "Author of Emma" in queue.card.value  # moved on
    assert "you said <b>fail</b>" in queue.last.value and "SAYS-CORRECT-1" in queue.last.value
    assert "0.86" in queue.last.value and "SAYS-CORRECT-2" not in _shown(queue)  # the next item's stay hidden
    assert queue.note.value == "" and queue.labels.loc[0, "note"] == "50 is wrong"
    queue.prev_button.click()
    assert "Boiling point" in queue.card.value and "SAYS-CORRECT-1" in queue.verdicts.value
    assert queue.buttons[1].button_style == "success" and queue.buttons[0].button_style == ""
    queue.clear_button.click()
    assert "0 of 3 labelled" in queue.header.value and "hidden" in queue.verdicts.value


def test_typing_labels_and_commands(tmp_path: Path) -> None:
    queue = jw.LabelQueue(DATA, kind="score", scale=(1, 5), store=tmp_path / "scores.jsonl")
    assert [b.description for b in queue.buttons] == ["1 (1)", "2 (2)", "3 (3)", "4 (4)", "5 (5)"]
    queue.typed.value = "2"  # what Enter sends
    assert queue.typed.value == "" and "item 0 labelled 2" in queue.status.value
    assert "Author of Emma" in queue.card.value and "SAYS-CORRECT-1" in queue.last.value
    queue.typed.value = "9"
    assert "not a label" in queue.status.value and queue.model.n_labelled == 1
    queue.typed.value = "<"
    assert "Boiling point" in queue.card.value and "Your label: <b>2</b>" in queue.card.value
    queue.typed.value = ">"
    queue.typed.value = "5"
    queue.typed.value = "4"
    assert "every item is labelled" in queue.header.value
    assert queue.labels["label"].tolist() == [2, 5, 4]


def test_the_tab_order_runs_from_the_typing_box_to_the_labels_to_moving_on(tmp_path: Path) -> None:
    queue = jw.LabelQueue(DATA, kind="pairwise", store=None, response_a_col="response", response_b_col="prompt")
    children = queue.widget.children
    order = [children.index(w) for w in (queue.typed, queue.label_row, queue.note, queue.move_row)]
    assert order == sorted(order)
    assert [b.description for b in queue.buttons] == ["A (a)", "B (b)", "tie (t)"]
    assert queue.label_row.children[:3] == tuple(queue.buttons)
    assert all(b.tabbable for b in [*queue.buttons, queue.prev_button, queue.next_button])
    assert "<th>A</th><th>B</th>" in queue.card.value


def test_reopening_the_store_resumes_with_the_progress(tmp_path: Path) -> None:
    store = tmp_path / "labels.jsonl"
    first = jw.LabelQueue(DATA, store=store)
    first.buttons[0].click()
    first.typed.value = "f"
    del first  # a kernel restart
    again = jw.LabelQueue(DATA.iloc[::-1], store=store)  # the same items, another order
    assert "2 of 3 labelled" in again.header.value and "2+2?" in again.card.value
    assert "hidden" in again.verdicts.value
    again.unlabelled_button.click()  # already on the only unlabelled item
    assert "2+2?" in again.card.value
    assert again.labels["label"].to_dict() == {1: "fail", 0: "pass"}


def test_named_verdicts_hide_only_those(tmp_path: Path) -> None:
    data = DATA.assign(context="from the quiz", topic="TOPIC-SHOWN")
    queue = jw.LabelQueue(data, store=None, verdict_cols=["judge_score", "judge_note"])
    assert "from the quiz" in queue.card.value and "TOPIC-SHOWN" in queue.card.value
    assert "SAYS-CORRECT-1" not in _shown(queue)


def test_the_counts_follow_labels_given_from_another_cell_at_every_moment(tmp_path: Path) -> None:
    data = pd.DataFrame({"prompt": [f"question {i}" for i in range(36)], "response": "answer"})
    queue = jw.LabelQueue(data, store=tmp_path / "labels.jsonl")
    assert "0 of 36 labelled" in queue.header.value
    for row in range(36):  # the next cell labels every item through the model, as the tutorial does
        queue.model.label("pass" if row % 3 else "fail", row=row)
        assert f"<b>{row + 1} of 36 labelled</b>" in queue.header.value
    assert "every item is labelled" in queue.header.value
    queue.store.clear(queue.model.keys[5])  # straight to the store
    assert "35 of 36 labelled" in queue.header.value and "every item" not in queue.header.value


def test_items_are_numbered_one_way_everywhere(tmp_path: Path) -> None:
    data = DATA.set_axis([7, 3, 9])  # an index that is not the position
    queue = jw.LabelQueue(data, store=None, order="shuffled", seed=1)
    first = queue.model.frame.index[queue.model.current]
    assert f"showing item {first} (position 1 of 3)" in queue.header.value
    assert f"<b>item {first}</b>" in queue.card.value
    queue.typed.value = "p"
    assert f"item {first} labelled pass" in queue.status.value and f"<b>item {first}</b>: you said" in queue.last.value
    second = queue.model.frame.index[queue.model.current]
    assert f"showing item {second} (position 2 of 3)" in queue.header.value
    assert "Item 0" not in _shown(queue) and "item 1 of 3" not in queue.header.value


def test_an_active_queue_shows_the_interval_narrowing_and_the_labels_still_needed() -> None:
    import numpy as np

    rng = np.random.default_rng(5)
    n = 600
    confidence = np.where(rng.random(n) < 0.75, rng.uniform(0.95, 1, n), rng.uniform(0.5, 0.95, n))
    p = np.where(rng.random(n) < 0.6, confidence, 1 - confidence)
    truth = rng.random(n) < p
    data = pd.DataFrame({"prompt": [f"q{i}" for i in range(n)], "response": "r", "score": p})
    plan = jw.label_plan(data["score"], budget=60, seed=0, metric="pass_rate")
    queue = jw.LabelQueue(data, store=None, order="active", plan=plan, target_width=0.1)
    assert "the interval shows from 5 labels" in queue.readout.value
    widths = []
    for step in range(60):
        item = queue.model.frame.index[queue.model.current]
        assert item == plan.items[step]  # the plan's order
        queue.buttons[0 if truth[item] else 1].click()
        if step + 1 >= 10:
            estimate = queue.model.estimate()
            assert estimate is not None and f"width {estimate.width:.3f}" in queue.readout.value
            assert "more labels to reach width 0.1" in queue.readout.value or "reached" in queue.readout.value
            widths.append(estimate.width)
    assert widths[-1] < 0.6 * widths[0]
    assert queue.labels["probability"].notna().all() and set(queue.labels["plan"]) == {plan.id}
