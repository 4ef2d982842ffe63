"""Cascades over conversations: pointwise stages judging a column of conversations (message lists or their JSON)
under one target, pairwise stages comparing two replies to a shared history; run judges what calibrate judged;
an aligned stage is never certified on the conversations it was aligned on; every malformed conversation is one
InputError before any call."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
import pytest

import judgewidgets as jw
from judgewidgets.testing import ScriptedTransport
from tests.cascade.helpers import pairwise_transport, verdict_completion
from tests.fakes import user_text


def last_user_turn(text: str) -> str:
    return re.findall(r'<turn n="\d+" role="user">\n(.*?)\n</turn>', text, re.S)[-1]


def verdicts(p_correct: Callable[[str, str], float], requests: list[str] | None = None) -> ScriptedTransport:
    """A true_false judge of a conversation's last reply: P("correct") = p_correct(last user turn, reply)."""

    def reply(request, attempt):  # type: ignore[no-untyped-def]
        text = user_text(request)
        if requests is not None:
            requests.append(text)
        judged = re.search(r"<response>\n(.*?)\n</response>", text, re.S)
        answer = judged.group(1) if judged else re.findall(r'role="assistant">\n(.*?)\n</turn>', text, re.S)[-1]
        p = p_correct(last_user_turn(text), answer)
        dist = {"correct": p, "in": 1 - p} if p >= 0.5 else {"in": 1 - p, "correct": p}
        return verdict_completion("correct" if p >= 0.5 else "incorrect", dist, 40, 0.0005)

    return ScriptedTransport(reply)


def scorer(p_correct: Callable[[str, str], float], name: str, **options: Any) -> jw.LLMJudge:
    return jw.LLMJudge(
        f"openai/{name}",
        name=name,
        template="true_false",
        probability_weighted=True,
        transport=verdicts(p_correct),
        cache=False,
        **options,
    )


def cheap(question: str, answer: str) -> float:
    """Sure and right on easy chats; 60 % "correct" on hard ones whatever the reply."""
    if question.startswith("easy"):
        return 0.98 if answer.startswith("right") else 0.02
    return 0.6


def strong(question: str, answer: str) -> float:
    return 0.92 if answer.startswith("right") else 0.08


def chats(kinds: list[str], offset: int = 0) -> pd.DataFrame:
    """One chat per kind: the last user turn names its kind ("easy 3"), the last reply is right on even rows."""
    rows = []
    for i, kind in enumerate(kinds):
        right = i % 2 == 0
        messages = [
            {"role": "user", "content": f"Opening question {offset + i}"},
            {"role": "assistant", "content": "An opening answer."},
            {"role": "user", "content": f"{kind} {offset + i}"},
            {"role": "assistant", "content": f"{'right' if right else 'wrong'} {offset + i}"},
        ]
        rows.append({"messages": messages, "label": "correct" if right else "incorrect"})
    return pd.DataFrame(rows)


LABELLED = chats(["easy"] * 40 + ["hard"] * 40)
NEW = chats(["easy"] * 10 + ["hard"] * 10, offset=500)


def cascade() -> jw.Cascade:
    return jw.Cascade([scorer(cheap, "cheap"), scorer(strong, "strong")], target_agreement=0.9, delta=0.2)


def test_pointwise_stages_judge_a_column_of_conversations() -> None:
    chosen = cascade()
    calibration = chosen.calibrate(LABELLED, conversation_col="messages", progress=False)
    assert calibration.thresholds == [pytest.approx(0.98), pytest.approx(0.92)]
    result = chosen.run(NEW, conversation_col="messages", progress=False)
    assert result.table["stage"].tolist() == ["cheap"] * 10 + ["strong"] * 10
    assert result.table["verdict"].tolist() == NEW["label"].tolist() and result.agreement == 1.0
    assert "messages" in result.table.columns  # the rows as given, the outcome beside them
    requests = chosen.judges[0].settings.transport.requests
    assert all("<conversation>" in user_text(r) for r in requests)


async def test_json_text_and_the_async_twins() -> None:
    as_json = LABELLED.assign(messages=LABELLED["messages"].map(json.dumps))
    chosen = cascade()
    calibration = await chosen.acalibrate(as_json, conversation_col="messages", progress=False)
    same = cascade().calibrate(LABELLED, conversation_col="messages", progress=False)
    assert calibration.thresholds == same.thresholds
    result = await chosen.arun(NEW.assign(messages=NEW["messages"].map(json.dumps)), conversation_col="messages")
    assert result.agreement == 1.0


def test_estimate_cost_counts_the_conversations() -> None:
    chosen = cascade()
    short = chosen.estimate_cost(NEW, conversation_col="messages")
    longer = NEW.assign(messages=[[*m[:2], {"role": "user", "content": "x " * 400}, *m[2:]] for m in NEW["messages"]])
    assert chosen.estimate_cost(longer, conversation_col="messages").total_calls == short.total_calls == 40
    assert chosen.judges[0].settings.transport.requests == []
    whole = chosen.estimate_cost(NEW, conversation_col="messages", target="whole")
    assert whole.total_calls == 40


def test_run_judges_what_calibrate_judged() -> None:
    requests: list[str] = []  # what the first stage was asked
    first = scorer(cheap, "cheap").with_options(transport=verdicts(cheap, requests))
    chosen = jw.Cascade([first, scorer(strong, "strong")], target_agreement=0.9, delta=0.2)
    chosen.calibrate(LABELLED, conversation_col="messages", target="whole", progress=False)
    calls = len(requests)
    assert all("<response>" not in text for text in requests)
    chosen.run(NEW, conversation_col="messages", progress=False)  # the calibration's target, by default
    assert all("<response>" not in text for text in requests[calls:])
    calls = len(requests)
    with pytest.raises(jw.InputError, match="calibrated on whole conversations"):
        chosen.run(NEW, conversation_col="messages", target="last_turn", progress=False)
    texts = pd.DataFrame({"prompt": ["easy 1"], "response": ["right 1"]})
    with pytest.raises(jw.InputError, match="texts"):
        chosen.run(texts, progress=False)
    assert chosen.with_target(0.85).run(NEW, conversation_col="messages", progress=False).table["verdict"].notna().any()
    assert len(requests) > calls  # the copy judged the same way, and only the refused runs made no call
    assert all("<response>" not in text for text in requests)


BROKEN = [
    ([{"content": "no role"}, {"role": "assistant", "content": "x"}], "role"),
    ([{"role": "wizard", "content": "hi"}, {"role": "assistant", "content": "x"}], "wizard"),
    ([], "empty"),
    ([{"role": "user", "content": "hi"}, {"role": "tool", "tool_call_id": "c9", "content": "{}"}], "c9"),
]


@pytest.mark.parametrize(("broken", "message"), BROKEN)
def test_a_malformed_conversation_fails_before_any_call(broken: Any, message: str) -> None:
    labelled = LABELLED.copy()
    labelled.at[33, "messages"] = broken
    chosen = cascade()
    with pytest.raises(jw.InputError, match=message) as caught:
        chosen.calibrate(labelled, conversation_col="messages", progress=False)
    assert "conversation 33" in str(caught.value)
    with pytest.raises(jw.InputError, match=message):
        chosen.estimate_cost(labelled, conversation_col="messages")
    assert all(judge.settings.transport.requests == [] for judge in chosen.judges)


def test_conversation_options_that_cannot_apply_fail_before_any_call() -> None:
    chosen = cascade()
    with pytest.raises(jw.InputError, match="each_turn"):
        chosen.calibrate(LABELLED, conversation_col="messages", target="each_turn", progress=False)
    with pytest.raises(jw.InputError, match="no column 'chat'"):
        chosen.calibrate(LABELLED, conversation_col="chat", progress=False)
    with pytest.raises(jw.InputError, match="conversation_col="):
        chosen.calibrate(LABELLED.assign(prompt="p", response="r"), target="whole", progress=False)
    with pytest.raises(jw.InputError, match="unknown target"):
        chosen.calibrate(LABELLED, conversation_col="messages", target="sideways", progress=False)
    assert all(judge.settings.transport.requests == [] for judge in chosen.judges)


# --- pairwise stages: two replies to a shared history ---------------------------------------------------------


def pair_transport(p_good: Callable[[str], float]) -> ScriptedTransport:
    """P(the slot holding the "good" reply is better) = p_good(the history's last user turn)."""
    return pairwise_transport(p_good, lambda request: last_user_turn(user_text(request)), prompt_tokens=30)


def pair_judge(p_good: Callable[[str], float], name: str) -> jw.PairwiseJudge:
    return jw.PairwiseJudge(
        f"openai/{name}", name=name, method="probability", transport=pair_transport(p_good), cache=False
    )


def histories(kinds: list[str], offset: int = 0) -> pd.DataFrame:
    rows = []
    for i, kind in enumerate(kinds):
        good_first = i % 2 == 0
        good, bad = f"good {offset + i}", f"bad {offset + i}"
        history = [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": f"{kind} {offset + i}"},
        ]
        rows.append(
            {
                "history": history,
                "response_a": good if good_first else bad,
                "response_b": bad if good_first else good,
                "label": "A" if good_first else "B",
            }
        )
    return pd.DataFrame(rows)


def p_good(question: str) -> float:
    """Sure and right on easy pairs; on hard ones 55 % sure, and wrong on every third."""
    kind, number = question.split()
    if kind == "easy":
        return 0.95
    return 0.45 if int(number) % 3 == 0 else 0.55


def test_pairwise_stages_compare_replies_to_shared_histories() -> None:
    chosen = jw.Cascade([pair_judge(p_good, "cheap"), pair_judge(lambda q: 0.9, "strong")], 0.85, 0.2)
    calibration = chosen.calibrate(histories(["easy"] * 40 + ["hard"] * 40), progress=False)
    assert calibration.thresholds[0] == pytest.approx(0.95)
    result = chosen.run(histories(["easy"] * 6 + ["hard"] * 6, offset=300), progress=False)
    assert result.table["stage"].tolist() == ["cheap"] * 6 + ["strong"] * 6 and result.agreement == 1.0
    assert chosen.estimate_cost(histories(["easy"] * 3)).total_calls > 0
    with pytest.raises(jw.InputError, match="pointwise stages"):
        chosen.run(histories(["easy"]), conversation_col="history", progress=False)
    broken = histories(["easy"] * 40 + ["hard"] * 40)
    broken.at[3, "history"] = [{"role": "user", "content": "hi"}, {"role": "tool", "tool_call_id": "z", "content": ""}]
    calls = len(chosen.judges[0].settings.transport.requests)
    with pytest.raises(jw.InputError, match="without its call"):
        chosen.calibrate(broken, progress=False)
    assert len(chosen.judges[0].settings.transport.requests) == calls


def test_an_aligned_stage_is_not_certified_on_the_conversations_it_was_aligned_on() -> None:
    align_on = chats(["easy"] * 30, offset=900)

    def lenient(question: str, answer: str) -> float:  # says "correct" to everything, surer when right
        return 0.9 if answer.startswith("right") else 0.7

    aligned = scorer(lenient, "aligned").align(
        align_on.assign(label=np.where(align_on["label"] == "correct", "pass", "fail")),
        conversation_col="messages",
        levers=("rule",),
        progress=False,
    )
    assert aligned.calibration is not None
    chosen = jw.Cascade([aligned], target_agreement=0.8, delta=0.2, pass_threshold=0.5)
    mixed = pd.concat([LABELLED.head(40), align_on.head(4)], ignore_index=True)
    mixed["label"] = np.where(mixed["label"] == "correct", "pass", "fail")
    calls = len(aligned.settings.transport.requests)
    with pytest.raises(jw.InputError, match=r"aligned on 4 of these 44 labelled rows \(rows 40, 41, 42, 43\)"):
        chosen.calibrate(mixed, conversation_col="messages", progress=False)
    assert len(aligned.settings.transport.requests) == calls
    # the same last exchange after another history is another conversation: not refused
    same_ending = align_on.assign(
        messages=[[{"role": "system", "content": "Another chat."}, *m] for m in align_on["messages"]]
    )
    fresh = pd.concat([LABELLED.head(40), same_ending.head(4)], ignore_index=True)
    fresh["label"] = np.where(fresh["label"] == "correct", "pass", "fail")
    assert chosen.calibrate(fresh, conversation_col="messages", progress=False).rows == 44


def as_conversations(frame: pd.DataFrame) -> pd.DataFrame:
    """Each pair's history with each reply appended: two whole conversations per row."""
    return pd.DataFrame(
        {
            "conversation_a": [
                [*h, {"role": "assistant", "content": a}] for h, a in zip(frame["history"], frame["response_a"])
            ],
            "conversation_b": [
                [*h, {"role": "assistant", "content": b}] for h, b in zip(frame["history"], frame["response_b"])
            ],
            "label": frame["label"],
        }
    )


def test_pairwise_stages_compare_whole_conversations_as_calibrated() -> None:
    def good_slot(request, attempt):  # type: ignore[no-untyped-def]
        text = user_text(request)
        assert 'judged="yes"' not in text  # whole conversations: no turn singled out
        first = text.split("<response_a>", 1)[1].split("</response_a>", 1)[0]
        return json.dumps({"verdict": "A" if "good" in first else "B", "confidence": 0.95})

    judge = jw.PairwiseJudge("openai/v", method="verdict", transport=ScriptedTransport(good_slot), cache=False)
    chosen = jw.Cascade([judge], target_agreement=0.8, delta=0.2)
    chosen.calibrate(as_conversations(histories(["easy"] * 40)), target="whole", progress=False)
    new = as_conversations(histories(["easy"] * 4, offset=700))
    assert chosen.run(new, progress=False).agreement == 1.0  # judged whole, as calibrated
    assert chosen.estimate_cost(new).total_calls > 0
    with pytest.raises(jw.InputError, match="calibrated on whole conversations"):
        chosen.run(new, target="last_turn", progress=False)


# --- the calibration records what its labelled rows were, and every cascade it is given to checks it ----------


def test_a_calibration_given_to_another_cascade_still_refuses_other_material(tmp_path: Any) -> None:
    calibration = cascade().calibrate(LABELLED, conversation_col="messages", target="whole", progress=False)
    assert calibration.material == "conversations/whole"
    assert calibration.summary()["material"] == "conversations/whole"
    texts = pd.DataFrame({"prompt": ["easy 1"], "response": ["right 1"]})
    saved = cascade()
    saved.calibration = calibration
    result = saved.run(NEW, conversation_col="messages", progress=False)  # judged whole, the calibration's target
    result.save(tmp_path / "run")
    loaded = jw.load(tmp_path / "run").calibration
    assert loaded.material == "conversations/whole"
    for given in (calibration, loaded):
        other = cascade()  # a new cascade of the same judges, never calibrated itself
        other.calibration = given
        with pytest.raises(jw.InputError, match=r"calibrated on whole conversations .* judged as texts"):
            other.run(texts, progress=False)
        with pytest.raises(jw.InputError, match=r"calibrated on whole conversations .* judged as conversations' last"):
            other.run(NEW, conversation_col="messages", target="last_turn", progress=False)
        with pytest.raises(jw.InputError, match="calibrated on whole conversations"):
            other.estimate_cost(texts)
        assert all(judge.settings.transport.requests == [] for judge in other.judges)
        assert other.run(NEW, conversation_col="messages", progress=False).agreement == 1.0
        requests = [user_text(r) for r in other.judges[0].settings.transport.requests]
        assert requests and all("<response>" not in text for text in requests)  # judged whole, as calibrated


def test_a_calibration_that_did_not_record_its_material_checks_nothing() -> None:
    from judgewidgets.cascade._calibration import calibration_from, calibration_parts

    calibration = cascade().calibrate(LABELLED, conversation_col="messages", target="whole", progress=False)
    state, rows, fits = calibration_parts(calibration)
    del state["material"]  # as a run saved before calibrations recorded it
    old = calibration_from(state, rows, fits)
    assert old.material is None and old.thresholds == calibration.thresholds
    other = cascade()
    other.calibration = old
    assert other.run(NEW, conversation_col="messages", target="last_turn", progress=False).agreement == 1.0
    texts = pd.DataFrame({"prompt": ["easy 1", "hard 2"], "response": ["right 1", "wrong 2"]})
    assert len(other.run(texts, progress=False).judgments) > 0  # judged, as before materials were recorded
    assert other.with_target(0.85).calibration.material is None  # type: ignore[union-attr]


def test_replies_to_a_shared_history_and_two_conversations_are_different_material() -> None:
    def chosen() -> jw.Cascade:
        return jw.Cascade([pair_judge(p_good, "cheap"), pair_judge(lambda q: 0.9, "strong")], 0.85, 0.2)

    labelled = histories(["easy"] * 40 + ["hard"] * 40)
    new = histories(["easy"] * 3 + ["hard"] * 3, offset=300)
    on_histories = chosen()
    assert on_histories.calibrate(labelled, progress=False).material == "history_replies"
    on_conversations = chosen()
    calibration = on_conversations.calibrate(as_conversations(labelled), progress=False)
    assert calibration.material == "conversation_pairs/last_turn"
    for calibrated, other, named in (
        (on_histories, as_conversations(new), r"shared history .* last turns of two conversations"),
        (on_conversations, new, r"last turns of two conversations .* shared history"),
    ):
        copy = chosen()
        copy.calibration = calibrated.calibration
        for refuse in (calibrated, copy, calibrated.with_target(0.8)):
            calls = [len(j.settings.transport.requests) for j in refuse.judges]
            with pytest.raises(jw.InputError, match=named):
                refuse.run(other, progress=False)
            with pytest.raises(jw.InputError, match=named):
                refuse.estimate_cost(other)
            assert [len(j.settings.transport.requests) for j in refuse.judges] == calls
    assert on_histories.run(new, progress=False).agreement == 1.0
    assert on_conversations.run(as_conversations(new), progress=False).agreement == 1.0
    whole = chosen()
    whole.calibration = calibration.at(0.85)
    with pytest.raises(jw.InputError, match=r"calibrated on the last turns of two conversations .* whole"):
        whole.run(as_conversations(new), target="whole", progress=False)
