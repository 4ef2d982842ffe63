"""judge.align on labelled conversations: one conversation and one label per row (message lists or their JSON),
judged under the target the aligned judge then keeps; examples and reflections show the conversation; pairs of
replies to a shared history; and every malformed conversation one InputError before any call."""

from __future__ import annotations

import json
import re
from typing import Any

import numpy as np
import pandas as pd
import pytest

import judgewidgets as jw
from judgewidgets._records import judged_items
from judgewidgets.alignment._calibration import calibration_key
from judgewidgets.labels import item_key
from judgewidgets.testing import ScriptedTransport

from .helpers import judged_quality, lenient, likert_judge, system_text

ITEM = re.compile(r"item-(\d+)")


def chat(i: int, quality: float) -> list[dict[str, Any]]:
    """A two-turn chat whose last reply states its quality; the first reply's quality is always 0.999, so a judge
    that read the wrong turn would pass everything."""
    return [
        {"role": "system", "content": "You are a helpful assistant."},
        {"role": "user", "content": f"First question {i}?"},
        {"role": "assistant", "content": "first answer quality=0.999"},
        {"role": "user", "content": f"Follow-up {i}?"},
        {"role": "assistant", "content": f"item-{i} quality={quality:.3f}"},
    ]


def conversation_set(n: int = 60, seed: int = 0, bar: float = 0.6) -> pd.DataFrame:
    """Labelled chats: a person passes those whose last reply's quality is above `bar`."""
    quality = np.random.default_rng(seed).uniform(0, 1, n)
    return pd.DataFrame(
        {
            "messages": [chat(i, q) for i, q in enumerate(quality)],
            "label": np.where(quality > bar, "pass", "fail"),
        }
    )


def user_message(request: Any) -> str:
    return next(m["content"] for m in request.messages if m["role"] == "user")


def test_a_judge_aligns_on_labelled_conversations_and_then_scores_conversations() -> None:
    data = conversation_set()
    judge, transport = likert_judge(lenient)
    aligned = judge.align(data, conversation_col="messages", levers=("rule",), progress=False)
    report = aligned.alignment_report
    assert report.before["accuracy"] < 0.65 and report.after["accuracy"] >= 0.85
    assert len(transport.requests) == len(data)
    assert all("<conversation>" in user_message(r) and "Follow-up" in user_message(r) for r in transport.requests)
    # the disagreements keep the labelled rows as given (the conversations)
    assert "messages" in report.disagreements.columns
    # the aligned judge judges conversations the same way: its calibrated score, its own kept on the vote
    assert aligned.target == "last_turn" and judge.target is None
    vote = aligned.score(conversations=[chat(999, 0.3)], progress=False).vote_list[0]
    assert vote.uncalibrated_score == pytest.approx(0.5) and vote.score < 0.5
    # its calibration names the conversations it was fitted on, not only their last exchange
    keys = set(aligned.calibration.items)
    assert len(keys) == len(data)
    first = judged_items(data=data.head(1), conversation_col="messages")[0]
    assert calibration_key(first) in keys and calibration_key(first) != item_key(first)


async def test_json_text_and_the_async_twin_give_the_same_report() -> None:
    data = conversation_set()
    as_json = data.assign(messages=data["messages"].map(json.dumps))
    judge, _ = likert_judge(lenient)
    aligned = await judge.aalign(as_json, conversation_col="messages", levers=("rule",), progress=False)
    sync = judge.align(data, conversation_col="messages", levers=("rule",), progress=False)
    pd.testing.assert_frame_equal(aligned.alignment_report.table, sync.alignment_report.table)


def test_the_whole_conversation_is_what_the_aligned_judge_keeps_judging() -> None:
    data = conversation_set()
    judge, transport = likert_judge(lenient)
    aligned = judge.align(data, conversation_col="messages", target="whole", levers=("rule",), progress=False)
    assert aligned.target == "whole" and aligned.default_target == "whole"
    assert all("<response>" not in user_message(r) for r in transport.requests)  # one fence, the whole chat
    before = len(transport.requests)
    aligned.score(conversations=[chat(7, 0.9)], progress=False)
    assert "<response>" not in user_message(transport.requests[before])


def test_examples_show_the_conversation_before_the_judged_reply() -> None:
    data = conversation_set()

    def answer(request: object) -> int:
        taught = "Calibration examples" in system_text(request)
        return 5 if judged_quality(request) > (0.6 if taught else 0.2) else 1

    judge, _ = likert_judge(answer)
    aligned = judge.align(data, conversation_col="messages", levers=("examples",), examples=4, progress=False)
    assert aligned.alignment_report.chosen["candidate"].startswith("as given + examples")
    assert len(aligned.anchors) == 4
    for anchor in aligned.anchors:
        assert anchor.prompt.startswith("system: You are a helpful assistant.") and "user: Follow-up" in anchor.prompt
        assert ITEM.fullmatch(anchor.response.split()[0]) and "quality=" in anchor.response  # the reply alone


def test_the_reflector_reads_the_fenced_conversations() -> None:
    data = conversation_set()
    judge, _ = likert_judge(lenient)
    seen: list[str] = []

    def reflect(request: object, attempt: int) -> str:
        seen.append(user_message(request))
        return "Rate the last reply 5 only when its quality is high; otherwise 1."

    reflector = jw.Generator("openai/reflector", transport=ScriptedTransport(reflect), api_key="sk-x")
    judge.align(data, conversation_col="messages", levers=(), reflector=reflector, progress=False)
    assert seen and all('<turn n="4" role="user">' in text for text in seen)


def test_a_panel_aligns_on_conversations_under_one_target() -> None:
    data = conversation_set(n=40)
    good, _ = likert_judge(lambda r: 5 if judged_quality(r) > 0.6 else 1, name="good")
    soft, _ = likert_judge(lenient, name="soft")
    aligned = jw.LLMPanel([good, soft]).align(data, conversation_col="messages", progress=False)
    assert isinstance(aligned, jw.LLMPanel) and aligned.default_target == "last_turn"
    assert aligned.alignment_report.after["accuracy"] >= 0.9
    result = aligned.score(conversations=[chat(1, 0.9), chat(2, 0.1)], progress=False)
    assert result.to_df()["turn"].tolist() == [2, 2]


BROKEN = [
    ([{"content": "no role"}, {"role": "assistant", "content": "x"}], "role"),
    ([{"role": "wizard", "content": "hi"}, {"role": "assistant", "content": "x"}], "wizard"),
    ([], "empty"),
    ([{"role": "user", "content": "hi"}, {"role": "tool", "tool_call_id": "c9", "content": "{}"}], "c9"),
    ('[{"role": "user", "content": "cut off', "JSON"),
]


@pytest.mark.parametrize(("broken", "message"), BROKEN)
def test_a_malformed_conversation_in_the_labelled_table_fails_before_any_call(broken: Any, message: str) -> None:
    data = conversation_set()
    data.at[17, "messages"] = broken
    judge, transport = likert_judge(lenient)
    with pytest.raises(jw.InputError, match=message) as caught:
        judge.align(data, conversation_col="messages", progress=False)
    assert "17" in str(caught.value)
    assert transport.requests == []


def test_other_conversation_mistakes_fail_before_any_call() -> None:
    data = conversation_set()
    judge, transport = likert_judge(lenient)
    with pytest.raises(jw.InputError, match="each_turn"):
        judge.align(data, conversation_col="messages", target="each_turn", progress=False)
    with pytest.raises(jw.InputError, match="each_turn"):  # a judge set to judge each turn must be told otherwise
        judge.with_options(target="each_turn").align(data, conversation_col="messages", progress=False)
    with pytest.raises(jw.InputError, match="lacks column"):
        judge.align(data, conversation_col="chat", progress=False)
    with pytest.raises(jw.InputError, match="target= applies to conversations"):
        judge.align(data.assign(prompt="q", response="r"), target="whole", progress=False)
    with pytest.raises(jw.InputError, match="unknown target"):
        judge.align(data, conversation_col="messages", target="middle", progress=False)
    ends_with_user = data.assign(messages=[m[:-1] for m in data["messages"]])
    with pytest.raises(jw.InputError, match="target='whole'"):
        judge.align(ends_with_user, conversation_col="messages", progress=False)
    assert transport.requests == []


# --- pairs of replies to a shared history ---------------------------------------------------------------------


def pair_set(n: int = 40, seed: int = 1) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    qa, qb = rng.uniform(0, 1, n), rng.uniform(0, 1, n)
    return pd.DataFrame(
        {
            "history": [chat(i, 0.5)[:-1] for i in range(n)],
            "response_a": [f"a{i} quality={a:.3f}" for i, a in enumerate(qa)],
            "response_b": [f"b{i} quality={b:.3f}" for i, b in enumerate(qb)],
            "label": np.where(qa > qb, "A", "B"),
        }
    )


def leaning_to_b(request: Any, attempt: int) -> str:
    """The pointwise method: each reply scored alone, b's overrated."""
    text = user_message(request)
    reply = text[text.index("<response>") :]
    q = float(re.findall(r"quality=([0-9.]+)", reply)[-1])
    bonus = 0.35 if re.search(r"\bb\d+ quality", reply) else 0.0
    return json.dumps({"score": int(np.clip(round(1 + 4 * min(q + bonus, 1)), 1, 5))})


def test_a_pairwise_judge_aligns_on_replies_to_shared_histories() -> None:
    data = pair_set()
    transport = ScriptedTransport(leaning_to_b)
    judge = jw.PairwiseJudge(
        "openai/scripted",
        method="pointwise",
        pointwise_template="likert",
        transport=transport,
        cache=False,
        api_key="sk-x",
        probability_weighted=False,
    )
    aligned = judge.align(data, levers=("rule",), progress=False)
    report = aligned.alignment_report
    assert aligned.lean < 0 and report.after["accuracy"] > report.before["accuracy"] + 0.1
    assert all("<conversation>" in user_message(r) for r in transport.requests)
    table = aligned.compare_many(pair_set(n=4, seed=9), progress=False)
    assert len(table) == 4 and table["winner"].notna().all()


def test_pairwise_examples_show_the_shared_history() -> None:
    data = pair_set(n=30)
    transport = ScriptedTransport(lambda r, a: json.dumps({"verdict": "A", "confidence": 0.9}))
    judge = jw.PairwiseJudge("openai/scripted", method="verdict", transport=transport, cache=False, api_key="sk-x")
    judge.align(data, levers=("examples",), examples=3, progress=False)
    shown = [system_text(r) for r in transport.requests if "Examples decided by a human reviewer" in system_text(r)]
    assert shown and all("user: Follow-up" in text for text in shown)


def test_pairs_of_whole_conversations_align_under_their_target() -> None:
    base = pair_set(n=30)
    data = pd.DataFrame(
        {
            "conversation_a": [
                [*h, {"role": "assistant", "content": a}] for h, a in zip(base["history"], base["response_a"])
            ],
            "conversation_b": [
                [*h, {"role": "assistant", "content": b}] for h, b in zip(base["history"], base["response_b"])
            ],
            "label": base["label"],
        }
    )
    transport = ScriptedTransport(lambda r, a: json.dumps({"verdict": "A", "confidence": 0.9}))
    judge = jw.PairwiseJudge("openai/scripted", method="verdict", transport=transport, cache=False, api_key="sk-x")
    judge.align(data, target="whole", levers=("rule",), progress=False)
    assert transport.requests and all('judged="yes"' not in user_message(r) for r in transport.requests)
    with pytest.raises(jw.InputError, match="last turns or whole"):
        judge.align(data, target="each_turn", progress=False)


def test_a_malformed_history_fails_the_pairwise_alignment_before_any_call() -> None:
    data = pair_set()
    data.at[5, "history"] = [{"role": "wizard", "content": "hi"}]
    transport = ScriptedTransport(lambda r, a: json.dumps({"verdict": "A", "confidence": 0.9}))
    judge = jw.PairwiseJudge("openai/scripted", method="verdict", transport=transport, cache=False, api_key="sk-x")
    with pytest.raises(jw.InputError, match="wizard"):
        judge.align(data, progress=False)
    assert transport.requests == []
