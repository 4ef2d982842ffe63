"""The likelihood method (`jw.LikelihoodJudge`, `PairwiseJudge(method="likelihood")`) on a scripted llama.cpp model.

The script plays a model with a memory: a forced word costs 1 nat when an earlier message of the request holds it and
3 nats when none does, and ending the turn costs 0.1. So the history supports a reply by 2 nats for each of its
words that only the history (not the last user turn) mentions, and the numbers every test expects are worked out by
hand. The tokenizer is one token per space-separated word.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

import pytest

import judgewidgets as jw
from judgewidgets._errors import ConfigurationError, InputError, JudgeCallError
from judgewidgets.engine import CallFailure, ChatRequest, Completion
from judgewidgets.engine._forced import forced_params, read_forced, token_grammar
from judgewidgets.testing import OpenAITestServer, ScriptedTransport, fixed

SUPPORTED, UNSUPPORTED, END = -1.0, -3.0, -0.1


class WordTokenizer:
    """One token per space-separated word, ids given in order of first sight; `fail` makes it fail."""

    def __init__(self, fail: bool = False) -> None:
        self.ids: dict[str, int] = {}
        self.fail = fail
        self.calls = 0

    async def tokenize(self, text: str) -> list[int]:
        self.calls += 1
        if self.fail:
            raise JudgeCallError("the tokenizer is down")
        return [self.ids.setdefault(word, len(self.ids) + 1) for word in text.split(" ")]

    def word(self, token: int) -> str:
        return next(w for w, i in self.ids.items() if i == token)


def grammar_of(request: ChatRequest) -> str:
    params = request.params
    return params.get("grammar") or params["extra_body"]["grammar"]


def memory_model(tokenizer: WordTokenizer, ignore_grammar: bool = False) -> ScriptedTransport:
    """The scripted llama.cpp server: writes the grammar's tokens with logprobs from the request's messages."""

    def reply(request: ChatRequest, attempt: int) -> Completion:
        words = [tokenizer.word(int(t)) for t in re.findall(r"<\[(\d+)\]>", grammar_of(request))]
        seen = " ".join(m["content"] for m in request.messages).split()
        logprobs = [{"token": w, "logprob": SUPPORTED if w in seen else UNSUPPORTED, "top_logprobs": []} for w in words]
        logprobs.append({"token": "", "logprob": END, "top_logprobs": []})
        text = "something else entirely" if ignore_grammar else " ".join(words)
        return Completion(content=text, logprobs=logprobs, prompt_tokens=20, completion_tokens=len(words) + 1)

    return ScriptedTransport(reply)


def chat(*turns: str, system: str | None = None) -> list[dict[str, str]]:
    """Messages alternating user and assistant, starting with the user."""
    roles = ["user", "assistant"]
    out = [{"role": "system", "content": system}] if system else []
    return out + [{"role": roles[i % 2], "content": text} for i, text in enumerate(turns)]


HISTORY = chat("I am vegetarian so no meat please", "Noted a chickpea curry then", "Lunch for six friends?")
GOOD = "a vegetarian lasagne"  # "a" and "vegetarian" are supported by the history (not the last user turn): 4 nats
BAD = "a pork roast"  # "a" only: 2 nats


def judge(tokenizer: WordTokenizer, transport: ScriptedTransport, **options: Any) -> jw.LikelihoodJudge:
    return jw.LikelihoodJudge("local", transport=transport, tokenizer=tokenizer, cache=False, **options)


def test_a_reply_the_history_supports_scores_above_one_it_contradicts() -> None:
    tokenizer = WordTokenizer()
    transport = memory_model(tokenizer)
    conversations = [[*HISTORY, {"role": "assistant", "content": reply}] for reply in (GOOD, BAD)]
    good, bad = judge(tokenizer, transport).score(conversations=conversations).vote_list
    assert json.loads(good.raw)["value"] == pytest.approx(4.0)
    assert json.loads(bad.raw)["value"] == pytest.approx(2.0)
    assert good.score == pytest.approx(1 / (1 + math.exp(-4.0)))
    assert bad.score == pytest.approx(1 / (1 + math.exp(-2.0)))
    assert good.score > bad.score and good.score_source == "probabilities" and good.error is None
    raw = json.loads(good.raw)
    assert raw["measure"] == "pmi" and raw["tokens"] == 4  # three words and the end of the turn
    assert raw["loglik"] == pytest.approx(2 * SUPPORTED + UNSUPPORTED + END)
    assert raw["loglik_without_history"] == pytest.approx(3 * UNSUPPORTED + END)
    assert len(transport.requests) == 4  # each reply with its conversation and without its history


def test_the_requests_force_the_replys_own_tokens_after_each_context() -> None:
    tokenizer = WordTokenizer()
    transport = memory_model(tokenizer)
    messages = [*chat("Hi", system="Be brief."), {"role": "assistant", "content": "Hello there"}]
    judge(tokenizer, transport).score(conversations=[messages])
    with_history, without = transport.requests
    tokens = [tokenizer.ids["Hello"], tokenizer.ids["there"]]
    assert with_history.params["grammar"] == token_grammar(tokens) == f"root ::= <[{tokens[0]}]> <[{tokens[1]}]>"
    assert with_history.params["max_tokens"] == 3 and with_history.params["temperature"] == 0
    assert with_history.params["logprobs"] is True
    assert with_history.messages == ({"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"})
    # a reply to the first user turn has no history: without it, the system message and an empty user turn
    assert without.messages == ({"role": "system", "content": "Be brief."}, {"role": "user", "content": ""})


def test_without_the_history_keeps_the_system_message_and_the_last_user_turn() -> None:
    tokenizer = WordTokenizer()
    transport = memory_model(tokenizer)
    messages = [*chat("first", "answer", "second", system="rules"), {"role": "assistant", "content": "ok"}]
    judge(tokenizer, transport).score(conversations=[messages])
    assert [m["content"] for m in transport.requests[0].messages] == ["rules", "first", "answer", "second"]
    assert [m["content"] for m in transport.requests[1].messages] == ["rules", "second"]


def test_tool_calls_and_results_are_forced_as_the_judge_reads_them() -> None:
    tokenizer = WordTokenizer()
    transport = memory_model(tokenizer)
    call = {"id": "c1", "type": "function", "function": {"name": "weather", "arguments": '{"city": "Paris"}'}}
    reply = [
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c1", "content": "18 C"},
        {"role": "assistant", "content": "It is 18 C."},
    ]
    judge(tokenizer, transport).score(conversations=[[*chat("Weather in Paris?"), *reply]])
    forced = " ".join(tokenizer.word(int(t)) for t in re.findall(r"<\[(\d+)\]>", grammar_of(transport.requests[0])))
    call_text = '[calls weather (call c1) with arguments {"city": "Paris"}]'
    assert forced == f"{call_text}\n[result of weather (call c1)]\n18 C\nIt is 18 C."


def test_pairwise_likelihood_orders_the_pair_whichever_slot_the_good_reply_is_in() -> None:
    tokenizer = WordTokenizer()
    transport = memory_model(tokenizer)
    pj = jw.PairwiseJudge("local", method="likelihood", transport=transport, cache=False)
    pj.likelihood_judge.tokenizer = tokenizer
    table = pj.compare_many(histories=[HISTORY, HISTORY], responses_a=[GOOD, BAD], responses_b=[BAD, GOOD])
    p = 1 / (1 + math.exp(-(4.0 - 2.0)))
    assert table["winner"].tolist() == ["A", "B"]
    assert table["p_a_better"].tolist() == pytest.approx([p, 1 - p])
    assert table["consistent"].tolist() == [True, True]
    assert table["confidence"].tolist() == pytest.approx([p, p])
    assert len(table.attrs["verdicts"]) == 4  # each pair's two orders
    bias = jw.position_bias(table.assign(label=["A", "B"])).iloc[0]
    assert bias["consistency"] == 1.0 and bias["accuracy"] == 1.0 and bias["first_slot_preference"] == 0.5


def test_pairwise_likelihood_ties_replies_the_model_finds_equally_likely() -> None:
    tokenizer = WordTokenizer()
    pj = jw.PairwiseJudge("local", method="likelihood", transport=memory_model(tokenizer), cache=False)
    pj.likelihood_judge.tokenizer = tokenizer
    result = pj.compare(history=HISTORY, response_a="a lentil stew", response_b="a bean stew")
    assert result.winner == "tie" and result.p_a_better == pytest.approx(0.5)


def test_a_server_that_ignores_the_grammar_is_recorded_and_the_batch_goes_on() -> None:
    tokenizer = WordTokenizer()
    result = judge(tokenizer, memory_model(tokenizer, ignore_grammar=True)).score(["q1", "q2"], ["r one", "r two"])
    assert all(math.isnan(v.score) for v in result.vote_list)
    assert all(v.error and v.error.startswith("parse:") and "grammar" in v.error for v in result.vote_list)


def test_a_failed_call_is_retried_then_recorded_and_the_other_items_are_judged() -> None:
    tokenizer = WordTokenizer()
    good = memory_model(tokenizer)

    def reply(request: ChatRequest, attempt: int) -> Completion:
        if "boom" in request.messages[-1]["content"]:
            raise CallFailure("InternalServerError: the server broke", 500)
        return good.reply(request, attempt)

    transport = ScriptedTransport(reply)
    retry = jw.RetryPolicy(max_retries=1, initial_delay=0.0)
    result = judge(tokenizer, transport, retry=retry).score(["boom", "fine"], ["x y", "x y"])
    failed, fine = result.vote_list
    assert failed.error.startswith("infrastructure:") and failed.attempts == 2 and math.isnan(failed.score)
    assert fine.error is None and not math.isnan(fine.score)


def test_a_tokenizer_failure_is_recorded_not_raised() -> None:
    tokenizer = WordTokenizer(fail=True)
    transport = memory_model(WordTokenizer())
    vote = judge(tokenizer, transport).score(["q"], ["r"]).vote_list[0]
    assert vote.error == "infrastructure: the tokenizer is down" and transport.requests == []


def test_models_that_cannot_be_read_are_refused_before_any_call() -> None:
    for make in (
        lambda: jw.LikelihoodJudge("openai/gpt-4o-mini"),
        lambda: jw.PairwiseJudge("openai/gpt-4o-mini", method="likelihood"),
        lambda: jw.PairwiseJudge("anthropic/claude-3-5-haiku-latest", method="likelihood"),
    ):
        with pytest.raises(ConfigurationError, match=r"llama\.cpp"):
            make()
    # a self-hosted OpenAI-compatible server may be llama.cpp's: accepted (its answer is checked)
    jw.PairwiseJudge("openai/qwen", method="likelihood", api_base="http://127.0.0.1:9/v1")
    with pytest.raises(ConfigurationError, match="aspects"):
        jw.PairwiseJudge("local", method="likelihood", aspects=["accuracy"])
    with pytest.raises(ConfigurationError, match="ab_tie"):
        jw.PairwiseJudge("local", method="likelihood", scale="five_level")
    with pytest.raises(ConfigurationError, match="measure"):
        jw.LikelihoodJudge("local", measure="perplexity")  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match="reference"):  # an answer made first would go unused
        jw.PairwiseJudge("local", method="likelihood", commit_first=True)
    with pytest.raises(ConfigurationError, match="reference"):
        jw.PairwiseJudge("local", method="likelihood", solver="openai/gpt-4o")


def test_a_whole_conversation_is_refused_before_any_call() -> None:
    tokenizer = WordTokenizer()
    transport = memory_model(tokenizer)
    messages = [*HISTORY, {"role": "assistant", "content": GOOD}]
    with pytest.raises(InputError, match="one reply"):
        judge(tokenizer, transport).score(conversations=[messages], target="whole")
    with pytest.raises(ConfigurationError, match="one reply"):
        judge(tokenizer, transport, target="whole")
    pj = jw.PairwiseJudge("local", method="likelihood", transport=transport, cache=False)
    with pytest.raises(InputError, match="one reply"):
        pj.compare(conversation_a=messages, conversation_b=messages, target="whole")
    assert transport.requests == [] and tokenizer.calls == 0


def test_loglik_per_token_reads_each_reply_once() -> None:
    tokenizer = WordTokenizer()
    transport = memory_model(tokenizer)
    reader = judge(tokenizer, transport, measure="loglik_per_token")
    vote = reader.score(conversations=[[*HISTORY, {"role": "assistant", "content": GOOD}]]).vote_list[0]
    assert len(transport.requests) == 1
    assert vote.score == pytest.approx(math.exp((2 * SUPPORTED + UNSUPPORTED + END) / 4))


def test_a_second_run_comes_from_the_call_cache(tmp_path) -> None:  # type: ignore[no-untyped-def]
    tokenizer = WordTokenizer()
    transport = memory_model(tokenizer)
    reader = jw.LikelihoodJudge("local", transport=transport, tokenizer=tokenizer, cache=str(tmp_path / "c.sqlite"))
    first = reader.score(["q"], ["some reply"]).vote_list[0]
    again = reader.score(["q"], ["some reply"]).vote_list[0]
    assert len(transport.requests) == 2 and again.cached and again.score == first.score


def test_a_long_conversation_is_shortened_to_fit_and_says_so() -> None:
    tokenizer = WordTokenizer()
    transport = memory_model(tokenizer)
    turns = [f"turn {k} " + "word " * 60 for k in range(12)]
    messages = [*chat(*turns, "last question"), {"role": "assistant", "content": "short reply"}]
    vote = judge(tokenizer, transport, context_window=600).score(conversations=[messages]).vote_list[0]
    assert vote.error is None and vote.shortened and "left out" in vote.shortened
    assert len(transport.requests[0].messages) < len(messages) - 1


def test_estimates_and_previews_make_no_call() -> None:
    tokenizer = WordTokenizer()
    transport = memory_model(tokenizer)
    reader = judge(tokenizer, transport)
    messages = [*HISTORY, {"role": "assistant", "content": GOOD}]
    estimate = reader.estimate_cost(conversations=[messages])
    assert estimate.calls == 2 and estimate.judges[0].prompt_tokens > 0
    text = reader.preview(conversations=[messages])
    assert "forced reply" in text and "without its history" in text and "Lunch for six" in text
    pj = jw.PairwiseJudge("local", method="likelihood", transport=transport, cache=False)
    assert pj.estimate_cost(histories=[HISTORY], responses_a=[GOOD], responses_b=[BAD]).calls == 4
    preview = pj.preview(histories=[HISTORY], responses_a=[GOOD], responses_b=[BAD])
    assert preview.count("--- request") == 4 and "Lunch for six" in preview
    assert transport.requests == [] and tokenizer.calls == 0


def test_forced_params_put_the_grammar_where_each_kind_of_model_reads_it() -> None:
    assert forced_params([5, 7], local=True)["grammar"] == "root ::= <[5]> <[7]>"
    assert forced_params([5, 7], local=False)["extra_body"] == {"grammar": "root ::= <[5]> <[7]>"}


def test_read_forced_needs_the_reply_and_its_logprobs() -> None:
    entries = [("a", -1.0), ("b", -2.0), ("", -0.5)]
    ok = Completion("a b", logprobs=[{"token": t, "logprob": p} for t, p in entries])
    assert read_forced(ok, "a b", [1, 2]).total == pytest.approx(-3.5)
    with pytest.raises(ValueError, match="no logprobs"):
        read_forced(Completion("a b"), "a b", [1, 2])
    with pytest.raises(ValueError, match="did not write"):
        read_forced(Completion("c", logprobs=ok.logprobs), "a b", [1, 2])
    with pytest.raises(ValueError, match="no usable logprobs"):
        read_forced(Completion("a b", logprobs=[{"token": "a", "logprob": float("nan")}]), "a b", [1, 2])
    # "≈" spelled by two tokens, reported by llama.cpp as one entry (its last token's): read, not failed
    merged = [("The", -0.1), (" ≈", -0.2), ("", -0.5)]
    reading = read_forced(
        Completion("The ≈", logprobs=[{"token": t, "logprob": p} for t, p in merged]), "The ≈", [1, 2, 3]
    )
    assert reading.tokens == 3 and reading.total == pytest.approx(-0.8)


def test_a_server_that_is_not_llama_cpp_is_recorded_on_the_vote() -> None:
    with OpenAITestServer(fixed("not the reply")) as server:  # ignores `grammar`, has no /tokenize
        vote = (
            jw.LikelihoodJudge("openai/test", api_base=server.base_url, cache=False)
            .score(["q"], ["a reply"], progress=False)
            .vote_list[0]
        )
    assert vote.error is not None and vote.error.startswith("infrastructure:") and "tokenize" in vote.error


def test_with_options_copies_the_judge_with_a_change() -> None:
    tokenizer = WordTokenizer()
    reader = judge(tokenizer, memory_model(tokenizer), rpm=60)
    other = reader.with_options(measure="loglik", name="ll")
    assert (other.measure, other.name, other.tokenizer, other.settings.rpm) == ("loglik", "ll", tokenizer, 60)
    assert reader.measure == "pmi" and "measure='loglik'" in repr(other)


def test_one_token_cannot_outweigh_the_rest_of_the_reply() -> None:
    """ "pmi" sums each token's change within ±TOKEN_CLIP nats: a token the history makes 10 nats likelier counts 3."""
    from judgewidgets.scoring._likelihood import TOKEN_CLIP

    tokenizer = WordTokenizer()

    def reply(request: ChatRequest, attempt: int) -> Completion:
        words = [tokenizer.word(int(t)) for t in re.findall(r"<\[(\d+)\]>", grammar_of(request))]
        with_history = len(request.messages) > 2
        shares = [-1.0 if with_history else -11.0, -2.0 if with_history else -1.0]  # +10 nats, then -1
        logprobs = [{"token": w, "logprob": lp, "top_logprobs": []} for w, lp in zip(words, shares, strict=True)]
        logprobs.append({"token": "", "logprob": END, "top_logprobs": []})
        return Completion(content=" ".join(words), logprobs=logprobs, prompt_tokens=20, completion_tokens=3)

    conversation = [*HISTORY, {"role": "assistant", "content": "Zanzibar lasagne"}]
    vote = judge(tokenizer, ScriptedTransport(reply)).score(conversations=[conversation]).vote_list[0]
    raw = json.loads(vote.raw)
    assert TOKEN_CLIP == 3.0
    assert raw["value"] == pytest.approx(TOKEN_CLIP - 1.0)  # not the plain difference of the totals, 9
    assert raw["loglik"] - raw["loglik_without_history"] == pytest.approx(9.0)
    assert vote.score == pytest.approx(1 / (1 + math.exp(-2.0)))
