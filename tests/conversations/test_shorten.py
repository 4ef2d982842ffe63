"""Conversations too long for the judge's context: shortened by the stated rule (the opening and the latest turns
kept, whole exchanges in the middle left out), the judge told which turns are missing, every vote saying so, and
estimates counting the request as it is sent."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import pandas as pd
import pytest

import judgewidgets as jw
from judgewidgets.conversations import JudgedConversation, fit_to_context, judged_views, parse_conversation
from judgewidgets.conversations._render import history_block, pair_blocks
from judgewidgets.engine import Caller
from judgewidgets.testing import ScriptedTransport
from tests.fakes import user_text

from .samples import AGENT


def long_chat(exchanges: int = 12, words: int = 60) -> list[dict[str, Any]]:
    """A system message, then `exchanges` question-and-answer pairs of about `words` words each."""
    messages: list[dict[str, Any]] = [{"role": "system", "content": "You are a travel assistant. Prices in euros."}]
    for k in range(1, exchanges + 1):
        messages.append({"role": "user", "content": f"Question {k}: " + " ".join(["where"] * words)})
        messages.append({"role": "assistant", "content": f"Answer {k}: " + " ".join(["there"] * words)})
    return messages


def by_characters(messages: tuple[dict[str, str], ...]) -> int:
    """A stand-in tokenizer: four characters a token."""
    return sum(len(m["content"]) for m in messages) // 4


def render(views: list[JudgedConversation]) -> tuple[dict[str, str], ...]:
    return ({"role": "user", "content": history_block(views[0])},)


def test_a_conversation_that_fits_is_read_whole() -> None:
    view = judged_views([parse_conversation(long_chat(2))], "last_turn")[0]
    shown, messages = fit_to_context([view], render, 10_000, by_characters)
    assert shown[0].omitted is None and shown[0].shortening is None
    assert "left out" not in messages[0]["content"]


def test_the_opening_and_the_latest_turns_are_kept() -> None:
    view = judged_views([parse_conversation(long_chat(12))], "last_turn")[0]
    full = by_characters(render([view]))
    shown, messages = fit_to_context([view], render, full // 2, by_characters)
    text = messages[0]["content"]
    start, end = shown[0].omitted or (0, 0)
    assert by_characters(messages) <= full // 2
    assert start == 2  # the system message and the first user turn stay
    assert shown[0].conversation.messages[end].role == "user"  # the kept latest part opens with a user turn
    assert "Question 1:" in text and "Question 12:" in text and "Answer 1:" not in text
    assert f"[turns 3-{end} left out: the conversation was shortened to fit the judge's context]" in text
    # what is left out is as little as fits: one exchange fewer would not
    assert by_characters(render([JudgedConversation(view.conversation, 0, view.judged, view.turn, (2, end - 2))])) > (
        full // 2
    )
    assert shown[0].shortening == (
        f"messages 3-{end} left out to fit the judge's context: it read messages 1-2 (up to the first user "
        f"turn) and {end + 1} on (the latest)"
    )


def test_a_conversation_that_cannot_fit_keeps_only_its_opening_and_latest_user_turn() -> None:
    view = judged_views([parse_conversation(long_chat(6))], "last_turn")[0]
    shown, messages = fit_to_context([view], render, 1, by_characters)
    assert shown[0].omitted == (2, 11)  # messages 3-11 left out; the last question (12) and the judged reply stay
    assert "Question 6:" in messages[0]["content"] and "Answer 5:" not in messages[0]["content"]


def test_the_cut_never_separates_a_tool_result_from_its_call() -> None:
    agent = [*AGENT, {"role": "user", "content": "And tomorrow?"}, {"role": "assistant", "content": "Rain."}]
    chat = parse_conversation([{"role": "user", "content": "Hi " * 50}, *agent[:-2] * 1, *agent[-2:]])
    view = judged_views([chat], "last_turn")[0]
    shown, _ = fit_to_context([view], render, 1, by_characters)
    start, end = shown[0].omitted or (0, 0)
    kept = [m for i, m in enumerate(chat.messages) if not start <= i < end]
    assert all(m.role != "tool" for m in kept)  # the call and its result went together
    parse_conversation([m.to_openai() for m in kept])  # what is shown is a valid conversation


def long_judge(**options: Any) -> tuple[jw.LLMJudge, ScriptedTransport]:
    transport = ScriptedTransport(lambda request, attempt: json.dumps({"score": 4}))
    judge = jw.LLMJudge("openai/m", transport=transport, cache=False, context_window=2_600, **options)
    return judge, transport


def test_a_judge_shortens_what_does_not_fit_its_context_and_the_vote_says_so() -> None:
    judge, transport = long_judge()
    result = judge.score(conversations=[long_chat(12), long_chat(2)], progress=False)
    votes = sorted(result.vote_list, key=lambda v: v.item)
    assert votes[0].shortened is not None and votes[0].shortened.startswith("messages 3-")
    assert votes[1].shortened is None
    first, second = (r for r in sorted(transport.requests, key=lambda r: len(user_text(r)), reverse=True))
    assert judge.caller.count_tokens(first.messages) <= judge.caller.prompt_budget()  # type: ignore[operator]
    assert "left out" in user_text(first) and "turns in the middle were left out" in first.messages[0]["content"]
    assert "left out" not in user_text(second) and "left out" not in second.messages[0]["content"]
    assert "shortened" in result.votes.columns


def test_the_estimate_counts_the_request_as_sent() -> None:
    judge, transport = long_judge()
    estimate = judge.estimate_cost(conversations=[long_chat(12)]).judges[0]
    judge.score(conversations=[long_chat(12)], progress=False)
    assert estimate.prompt_tokens == judge.caller.count_tokens(transport.requests[0].messages)
    whole = jw.LLMJudge("openai/m", cache=False, context_window=100_000).estimate_cost(conversations=[long_chat(12)])
    assert whole.judges[0].prompt_tokens > estimate.prompt_tokens


def test_the_context_comes_from_the_model_unless_given() -> None:
    assert Caller("local").prompt_budget() == int(4096 * 0.95) - 300
    assert Caller("gpt-4o-mini").prompt_budget() == int(128_000 * 0.95) - 1_024
    assert Caller("openai/some-server-model").prompt_budget() is None  # unknown: sent as it is
    assert Caller("openai/m", context_window=8_192, max_tokens=100).prompt_budget() == int(8_192 * 0.95) - 100
    assert jw.LLMJudge("openai/m", context_window=2_000).with_options(name="x").caller.context_window == 2_000
    for bad in (0, 100, 2.5, True, "4k"):
        with pytest.raises(jw.ConfigurationError, match="context_window"):
            Caller("openai/m", context_window=bad)  # type: ignore[arg-type]


def test_a_pairwise_judge_shortens_a_shared_history_once_for_both_replies() -> None:
    transport = ScriptedTransport(lambda request, attempt: json.dumps({"verdict": "A"}))
    pj = jw.PairwiseJudge("openai/m", method="verdict", transport=transport, cache=False, context_window=2_600)
    history = long_chat(12)[:-1]
    result = pj.compare(history=history, response_a="Paris.", response_b=AGENT[1:])  # replies of 1 and 3 messages
    assert len(transport.requests) == 2
    for request in transport.requests:
        assert user_text(request).count("left out") == 1 and "Question 12:" in user_text(request)
    notes = {order.shortened for order in result.verdicts}
    assert all(";" not in (note or "") for note in notes)  # one note for the shared history, not one per reply
    assert len(notes) == 1 and next(iter(notes), "").startswith("messages 3-")  # type: ignore[union-attr]


def test_a_rubric_grader_shortens_the_conversation_it_grades() -> None:
    transport = ScriptedTransport(lambda request, attempt: json.dumps({"verdict": "MET", "explanation": "ok"}))
    judge = jw.LLMJudge("openai/m", transport=transport, cache=False, context_window=2_600)
    grader = jw.CriterionGrader(judges=[judge], binary_prompt="met_unmet")
    rubric = jw.Rubric.from_yaml("- name: euros\n  requirement: Prices are given in euros\n")
    report = grader.grade(rubric, conversation=long_chat(12))
    vote = report.criteria[0].votes[0]
    assert vote.shortened is not None and vote.shortened.startswith("messages 3-")
    assert "left out" in user_text(transport.requests[0])


def test_preview_shows_the_request_as_sent_without_a_call() -> None:
    judge, transport = long_judge()
    text = judge.preview(conversations=[long_chat(12)])
    heading, request = text.split("\n", 1)  # which turn is judged, in the tables' numbering and the request's
    assert (
        heading
        == "--- judged: conversation 0, assistant turn 12 of 12 (the table's turn 12): message 25 of the request"
    )
    assert request.startswith("[system]\nYou are an impartial") and "\n\n[user]\n<conversation>\n" in text
    assert "left out: the conversation was shortened" in text and not transport.requests
    assert "[user]\n<question>\nq\n</question>" in judge.preview(["q"], ["a"])


def test_a_user_turn_of_several_messages_is_kept_or_left_out_whole() -> None:
    """A user turn can be several user messages in a row (a document, then the question about it): the cut keeps
    every message of the first user turn and of the turn the judged reply answers, and never splits one."""
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": "I am vegetarian."},
        {"role": "user", "content": "And I cook for four."},
        {"role": "assistant", "content": "Noted: vegetarian, four people."},
    ]
    for k in range(1, 7):
        messages += [
            {"role": "user", "content": f"Question {k}: " + "where " * 60},
            {"role": "assistant", "content": f"Answer {k}: " + "there " * 60},
        ]
    messages += [
        {"role": "user", "content": "Here is the menu: soup, steak, risotto."},
        {"role": "user", "content": "What should I order?"},
        {"role": "assistant", "content": "The risotto."},
    ]
    chat = parse_conversation(messages)
    view = judged_views([chat], "last_turn")[0]
    shown, rendered = fit_to_context([view], render, 1, by_characters)
    start, end = shown[0].omitted or (0, 0)
    assert (start, end) == (2, len(messages) - 3)  # the two opening messages and the two latest user ones stay
    assert chat.messages[start - 1].role == "user" and chat.messages[start].role != "user"
    assert chat.messages[end - 1].role != "user"  # the cut does not end inside the latest user turn
    text = rendered[0]["content"]
    assert "And I cook for four." in text and "Here is the menu" in text and "What should I order?" in text
    cuts = {fit_to_context([view], render, budget, by_characters)[0][0].omitted for budget in range(1, 1_000, 20)}
    assert len(cuts - {None}) >= 3  # several steps of the cut, not only the last
    for start, end in cuts - {None}:
        assert chat.messages[start - 1].role == "user" != chat.messages[start].role
        assert chat.messages[end].role == "user" != chat.messages[end - 1].role


def test_two_conversations_of_one_length_are_shortened_alike_in_both_orders() -> None:
    """Of two separate conversations equally long, the one cut first does not depend on which is shown first: in
    both orders each conversation reads the same turns (else the slot, not the conversation, decides what is read)."""
    a, b = long_chat(12), long_chat(12)
    b[2] = {"role": "assistant", "content": b[2]["content"].replace("Answer", "Reply!")}  # same length, not shared
    first, second = (judged_views([parse_conversation(c)], "last_turn")[0] for c in (a, b))

    def pair(views: Sequence[JudgedConversation]) -> tuple[dict[str, str], ...]:
        return ({"role": "user", "content": "\n".join(pair_blocks(views[0], views[1]))},)

    full = by_characters(pair([first, second]))
    for budget in (full - 10, full - 200, full // 2):
        ab, _ = fit_to_context([first, second], pair, budget, by_characters)
        ba, _ = fit_to_context([second, first], pair, budget, by_characters)
        assert ab[0].omitted is not None or ab[1].omitted is not None  # shortened at all
        assert (ab[0].omitted, ab[1].omitted) == (ba[1].omitted, ba[0].omitted), budget


def test_a_long_transcript_is_counted_a_few_times_not_once_per_exchange() -> None:
    view = judged_views([parse_conversation(long_chat(200, words=5))], "last_turn")[0]
    counted: list[int] = []

    def count(messages: tuple[dict[str, str], ...]) -> int:
        counted.append(1)
        return by_characters(messages)

    budget = by_characters(render([view])) // 3
    shown, messages = fit_to_context([view], render, budget, count)
    assert by_characters(messages) <= budget and len(counted) <= 12
    start, end = shown[0].omitted or (0, 0)
    # the least cut that fits: one exchange fewer left out would not
    fewer = JudgedConversation(view.conversation, 0, view.judged, view.turn, (start, end - 2))
    assert by_characters(render([fewer])) > budget


def test_a_model_the_map_gives_no_input_limit_is_not_shortened() -> None:
    # litellm's map has max_tokens (the output limit) but no max_input_tokens for this one
    assert Caller("gemini/gemini-gemma-2-9b-it").prompt_budget() is None


def test_the_explorer_shows_which_turns_a_judge_left_out() -> None:
    from judgewidgets.jupyter._explorer import DisagreementModel

    short, _ = long_judge(name="short")
    transport = ScriptedTransport(lambda request, attempt: json.dumps({"score": 4}))
    roomy = jw.LLMJudge("openai/m", transport=transport, cache=False, context_window=100_000, name="roomy")
    result = jw.LLMPanel([short, roomy]).score(conversations=[long_chat(12)], progress=False)
    details = DisagreementModel(result).details(0).set_index("judge")
    assert details.loc["short", "shortened"].startswith("messages 3-") and pd.isna(details.loc["roomy", "shortened"])


def test_a_saved_run_keeps_what_was_left_out(tmp_path: Any) -> None:
    judge, _ = long_judge()
    result = judge.score(conversations=[long_chat(12), long_chat(2)], progress=False)
    result.save(tmp_path / "run")
    loaded = jw.load(tmp_path / "run")
    assert [v.shortened for v in loaded.vote_list] == [v.shortened for v in result.vote_list]
    assert loaded.vote_list[1].shortened is None


def test_a_pairwise_preview_shows_both_orders_without_a_call() -> None:
    transport = ScriptedTransport(lambda request, attempt: json.dumps({"verdict": "A"}))
    pj = jw.PairwiseJudge("openai/m", method="verdict", transport=transport, cache=False, context_window=2_600)
    text = pj.preview(histories=[long_chat(12)[:-1]], responses_a=["Paris."], responses_b=["Lyon."])
    first, second = text.split("--- request 2 of 2\n")
    assert first.startswith("--- request 1 of 2\n[system]\n") and "left out" in first and not transport.requests
    assert first.index("Paris.") < first.index("Lyon.") and second.index("Lyon.") < second.index("Paris.")
