"""What is sent for `anthropic/<name>`: Anthropic's own API keeps the response schema (litellm sends it as a forced
tool or as native structured output) with a bounded answer; a server that speaks Anthropic's Messages API but is not
Anthropic's (llama.cpp's `/v1/messages`, named by `api_base`) drops schemas, so the answer is started for the model
instead. No model and no server: requests are captured by a ScriptedTransport."""

from __future__ import annotations

import json
from types import SimpleNamespace

import judgewidgets as jw
from judgewidgets._constants import LOCAL_ANSWER_MAX_TOKENS, PREFILLED_MAX_TOKENS
from judgewidgets.engine import Caller, CallSession, Completion
from judgewidgets.engine._ask import Answer
from judgewidgets.engine._caller import ANSWER_RESERVE_TOKENS
from judgewidgets.engine._litellm import tool_arguments
from judgewidgets.testing import ScriptedTransport

SERVER = "http://127.0.0.1:9"  # a Messages API server that is not Anthropic's (never called: transports are scripted)
SCHEMA = {"type": "object", "properties": {"explanation": {"type": "string"}, "score": {"type": "integer"}}}
ASKED = ({"role": "user", "content": "rate"},)


def read(text: str) -> tuple[str, int]:
    answer = json.loads(text)
    return answer["explanation"], int(answer["score"])


def test_anthropics_own_api_keeps_the_schema_and_a_bounded_answer() -> None:
    caller = Caller("anthropic/claude-haiku-4-5")
    params = caller.request_params(SCHEMA)
    assert params["response_format"]["json_schema"]["schema"] == SCHEMA
    assert params["max_tokens"] == ANSWER_RESERVE_TOKENS  # not litellm's 4,096 for Anthropic
    assert not caller.messages_api_elsewhere() and not caller.uses_prefill()
    assert Caller("anthropic/claude-haiku-4-5", max_tokens=64).request_params(SCHEMA)["max_tokens"] == 64
    thinking = Caller("anthropic/claude-sonnet-4-5", thinking={"type": "enabled", "budget_tokens": 2048})
    assert "max_tokens" not in thinking.request_params(SCHEMA)  # the thinking budget counts in it
    assert "max_tokens" not in Caller("openai/gpt-4o-mini").request_params(SCHEMA)


async def test_anthropics_own_api_is_asked_with_the_schema_unchanged() -> None:
    transport = ScriptedTransport(lambda request, attempt: '{"explanation": "Right.", "score": 5}')
    caller = Caller("anthropic/claude-haiku-4-5", transport=transport, cache=False)
    answer = await caller.ask(CallSession(), ASKED, caller.request_params(SCHEMA), read)
    assert answer.value == ("Right.", 5)
    sent = transport.requests[0]
    assert sent.messages == ASKED and "response_format" in sent.params


async def test_a_messages_api_server_gets_the_answer_started_at_the_schemas_first_field() -> None:
    transport = ScriptedTransport(lambda request, attempt: '{"explanation": "Right.", "score": 5}')
    caller = Caller("anthropic/qwen", api_base=SERVER, transport=transport, cache=False)
    assert caller.messages_api_elsewhere()
    answer = await caller.ask(CallSession(), ASKED, caller.request_params(SCHEMA), read)
    sent = transport.requests[0]
    assert sent.messages == (*ASKED, {"role": "assistant", "content": '{"explanation":'})
    assert "response_format" not in sent.params and sent.params["max_tokens"] == LOCAL_ANSWER_MAX_TOKENS
    assert answer.value == ("Right.", 5) and answer.error is None


async def test_a_continuation_without_the_prefill_is_read_with_it() -> None:
    """Anthropic's API returns only what follows a prefill; llama.cpp returns them joined. Both read alike."""
    transport = ScriptedTransport(lambda request, attempt: ' "Wrong city.", "score": 1}')
    caller = Caller("anthropic/qwen", api_base=SERVER, transport=transport, cache=False)
    answer = await caller.ask(CallSession(), ASKED, caller.request_params(SCHEMA), read)
    assert answer.value == ("Wrong city.", 1) and answer.content == '{"explanation": "Wrong city.", "score": 1}'


def test_an_answer_joined_to_a_prefill_litellm_stripped_is_not_prefixed_twice() -> None:
    """litellm strips the trailing space of a final assistant message for Anthropic's API, so llama.cpp joins its
    continuation to `{"score":`, not to the `{"score": ` the judge sent."""
    answer: Answer[int] = Answer(value=None)
    answer._add(Completion('{"score":4}'), '{"score": ')
    assert answer.content == '{"score":4}'
    answer._add(Completion(" 4}"), '{"score": ')
    assert answer.content == '{"score":  4}'


def test_a_likert_judge_on_a_messages_api_server_prefills_its_verdict_and_reads_the_written_score() -> None:
    transport = ScriptedTransport(lambda request, attempt: '{"score":5}')
    judge = jw.LLMJudge("anthropic/qwen", api_base=SERVER, transport=transport, cache=False)
    vote = judge.score(["What is 2+2?"], ["4"], progress=False).vote_list[0]
    sent = transport.requests[0]
    assert sent.messages[-1]["role"] == "assistant" and sent.messages[-1]["content"].startswith('{"score":')
    assert sent.params["max_tokens"] == PREFILLED_MAX_TOKENS and "response_format" not in sent.params
    assert "logprobs" not in sent.params  # Anthropic's protocol has no token probabilities
    assert vote.error is None and vote.score == 1.0 and vote.score_source == "answer" and vote.probabilities is None


def test_a_pairwise_judge_on_a_messages_api_server_is_asked_for_its_verdict_field_first() -> None:
    transport = ScriptedTransport(lambda request, attempt: '{"verdict": "B"}')
    judge = jw.PairwiseJudge("anthropic/qwen", api_base=SERVER, transport=transport, cache=False, swap=False)
    result = judge.compare("What is 2+2?", "5", "4")
    sent = transport.requests[0]
    assert judge.method == "verdict" and "response_format" not in sent.params
    assert sent.messages[-1]["role"] == "assistant" and sent.messages[-1]["content"].startswith('{"')
    assert result.error is None and result.winner == "B"


def test_a_forced_tool_reply_without_text_is_read_from_the_tool_call() -> None:
    call = SimpleNamespace(function=SimpleNamespace(name="json_tool_call", arguments='{"score": 4}'))
    assert tool_arguments(SimpleNamespace(content=None, tool_calls=[call])) == '{"score": 4}'
    assert tool_arguments(SimpleNamespace(content=None, tool_calls=None)) == ""
