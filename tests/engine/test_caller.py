"""The Caller every judge asks through, the one logprob reader, and the one run scope."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

import judgewidgets as jw
from judgewidgets._constants import (
    DEFAULT_MAX_CONCURRENCY,
    DEFAULT_TIMEOUT_S,
    LOCAL_ANSWER_MAX_TOKENS,
    LOCAL_MAX_CONCURRENCY,
    LOCAL_TIMEOUT_S,
    PREFILLED_MAX_TOKENS,
)
from judgewidgets._run import run_scope
from judgewidgets.engine import Caller, CallSession
from judgewidgets.engine._ask import RESUMED_MAX_TOKENS, resumed_explanation
from judgewidgets.engine._request import Completion, token_logprobs
from judgewidgets.testing import ScriptedTransport

TOKENS = [
    {"token": '{"', "logprob": -0.01, "top_logprobs": [{"token": '{"', "logprob": -0.01}]},
    {"token": "4", "logprob": -0.2, "top_logprobs": [{"token": "4", "logprob": -0.2}, {"token": "5", "logprob": -1.7}]},
]


def test_local_and_hosted_call_defaults_are_decided_by_the_caller() -> None:
    local, hosted = Caller("local").settings, Caller("openai/gpt-4o-mini").settings
    assert (local.timeout, local.max_concurrency) == (LOCAL_TIMEOUT_S, LOCAL_MAX_CONCURRENCY)
    assert (hosted.timeout, hosted.max_concurrency) == (DEFAULT_TIMEOUT_S, DEFAULT_MAX_CONCURRENCY)
    # Every judge kind gets them from its caller, so none can pass the hosted defaults to the embedded judge.
    for judge in (jw.LLMJudge("local"), jw.PairwiseJudge("local")):
        assert judge.settings.max_concurrency == LOCAL_MAX_CONCURRENCY and judge.settings.timeout == LOCAL_TIMEOUT_S
    assert jw.Generator("local").settings.max_concurrency == LOCAL_MAX_CONCURRENCY


def test_a_pairwise_judge_scores_pointwise_through_its_own_caller() -> None:
    judge = jw.PairwiseJudge("local", max_concurrency=3)
    assert judge.pointwise_judge.caller is judge.caller and judge.pointwise_judge.settings.max_concurrency == 3


@pytest.mark.parametrize("bad", [{"model": ""}, {"temperature": -1}, {"reasks": -1}, {"timeout": 0}])
def test_bad_caller_options_are_configuration_errors(bad: dict) -> None:
    with pytest.raises(jw.ConfigurationError):
        Caller(**{"model": "openai/x", **bad})


def test_with_options_rebuilds_the_caller_and_leaves_the_original() -> None:
    caller = Caller("openai/x", temperature=0.3, api_base="http://127.0.0.1:9/v1", max_concurrency=4)
    changed = caller.with_options(temperature=0.9)
    assert (caller.temperature, changed.temperature) == (0.3, 0.9)
    assert changed.settings.max_concurrency == 4 and changed.litellm_kwargs == {"api_base": "http://127.0.0.1:9/v1"}


async def test_ask_reasks_an_unreadable_answer_and_keeps_every_attempts_accounting() -> None:
    replies = iter(["no idea", '{"score": 4}'])
    transport = ScriptedTransport(lambda request, attempt: next(replies))
    caller = Caller("openai/x", transport=transport, cache=False)
    answer = await caller.ask(CallSession(), ({"role": "user", "content": "rate"},), {}, read_score)
    assert answer.value == 4 and answer.error is None
    assert answer.prompt_tokens == 20 and answer.completion_tokens == 6 and answer.cost_usd == pytest.approx(0.002)
    second = transport.requests[1].messages
    assert second[-2] == {"role": "assistant", "content": "no idea"} and "could not be read" in second[-1]["content"]


def read_score(text: str) -> int:
    return int(json.loads(text)["score"])


SCHEMA = {"type": "object", "properties": {"explanation": {"type": "string"}, "score": {"type": "integer"}}}
RUNAWAY = '{"explanation":"It is safe. It tells the user what to do. It is safe. It tells the user what to do. It'


def test_the_embedded_judges_answers_to_a_schema_are_capped_and_nothing_else_is() -> None:
    local, hosted = Caller("local"), Caller("openai/x")
    assert local.request_params(SCHEMA)["max_tokens"] == LOCAL_ANSWER_MAX_TOKENS
    assert local.request_params(SCHEMA, prefilled=True)["max_tokens"] == PREFILLED_MAX_TOKENS
    assert "max_tokens" not in local.request_params()  # generation: plain text, as long as it needs
    assert "max_tokens" not in hosted.request_params(SCHEMA)  # hosted reasoning models count their thinking in it
    assert Caller("local", max_tokens=50).request_params(SCHEMA)["max_tokens"] == 50


async def test_an_answer_cut_off_in_its_explanation_is_resumed_from_its_first_two_sentences() -> None:
    """A small judge can fall into repeating its explanation until the token limit; re-asked in conversation it
    copied the error message into its new explanation. Its first sentences are kept and it finishes the verdict."""
    replies = iter([Completion(RUNAWAY, completion_tokens=LOCAL_ANSWER_MAX_TOKENS), 'score": 2}'])
    transport = ScriptedTransport(lambda request, attempt: next(replies))
    caller = Caller("local", transport=transport, cache=False)
    asked = ({"role": "user", "content": "rate"},)
    answer = await caller.ask(CallSession(), asked, caller.request_params(SCHEMA), read_score)
    start = '{"explanation":"It is safe. It tells the user what to do.", "'
    assert answer.value == 2 and answer.error is None and answer.attempts == 2
    assert answer.content == start + 'score": 2}'  # the prefill and its continuation, read as one answer
    resumed = transport.requests[1]
    assert resumed.messages == (*asked, {"role": "assistant", "content": start})
    assert "response_format" not in resumed.params and resumed.params["max_tokens"] == RESUMED_MAX_TOKENS


async def test_a_cut_off_answer_that_cannot_be_resumed_is_reasked_saying_it_was_cut_off() -> None:
    transport = ScriptedTransport(lambda request, attempt: "rate it four because", completion_tokens=5)
    caller = Caller("openai/x", transport=transport, cache=False, max_tokens=5)
    answer = await caller.ask(
        CallSession(), ({"role": "user", "content": "rate"},), caller.request_params(), read_score
    )
    reask = transport.requests[1].messages[-1]["content"]
    assert "cut off after 5 tokens" in reask and "could not be read" not in reask
    assert answer.value is None and answer.error is not None
    assert answer.error.startswith("parse: the answer was cut off at its limit of 5 tokens")


@pytest.mark.parametrize(
    ("content", "start"),
    [
        (RUNAWAY, '{"explanation":"It is safe. It tells the user what to do.", "'),
        ('{\n  "explanation": "Only one sentence. And then', '{\n  "explanation": "Only one sentence.", "'),
        ('{"explanation": "no whole sentence yet', None),
        ('{"explanation": "Closed.", "score": 3} and more. Text.', None),  # the explanation had ended
        ('{"score": 3, "explanation": "Later. Key.', None),  # the verdict came first: nothing to resume
        ('{"explanation": "He said \\"no\\". Then left. And', '{"explanation": "He said \\"no\\". Then left.", "'),
    ],
)
def test_resumed_explanation_keeps_whole_sentences_of_an_open_explanation(content: str, start: str | None) -> None:
    assert resumed_explanation(content) == start


def test_one_logprob_reader_reads_json_and_litellm_objects_alike() -> None:
    as_json = {"content": TOKENS}

    class Token(SimpleNamespace):
        def model_dump(self) -> dict:
            return dict(self.__dict__)

    as_objects = SimpleNamespace(content=[Token(**t) for t in TOKENS])
    assert token_logprobs(as_json) == token_logprobs(as_objects) == TOKENS
    assert token_logprobs(None) is None and token_logprobs({"content": []}) is None


async def test_the_run_scope_closes_its_bar_and_flushes_even_when_the_run_fails() -> None:
    events: list[str] = []

    class Bar:
        def advance(self, n: int = 1) -> None:
            events.append("advance")

        def close(self) -> None:
            events.append("close")

    session = CallSession()
    session.flush = lambda: events.append("flush")  # type: ignore[method-assign]
    with pytest.raises(RuntimeError):
        async with run_scope(Bar(), 1, "x", session=session) as run:
            assert run.session is session
            run.progress.advance()
            raise RuntimeError("a failing batch")
    assert events == ["advance", "close", "flush"]
