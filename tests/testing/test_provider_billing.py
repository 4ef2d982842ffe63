"""The test server bills as the providers do, checked through the official SDKs (openai, anthropic): prompt caches
(a prefix readable only after its first answer; OpenAI's automatic 1,024-token/128-step cache; Anthropic's
breakpoints and minimum lengths), reasoning models' refusals, reasoning tokens and truncation, and the bill."""

from __future__ import annotations

import asyncio

import anthropic
import openai
import pytest

from judgewidgets.testing import OpenAITestServer, json_score
from judgewidgets.testing._anthropic import anthropic_message_body
from judgewidgets.testing._billing import Billing, price_of

FIXED = " ".join(f"w{i}" for i in range(2000))  # 2,000 tokens of fixed instructions
REPLY = '{"score": 4, "explanation": "Test explanation."}'  # 5 tokens


@pytest.fixture(scope="module")
def server():
    with OpenAITestServer(json_score(4)) as server:
        yield server


@pytest.fixture
def fresh(server):
    server.reset_stats()
    return server


def chat(server) -> openai.OpenAI:
    return openai.OpenAI(base_url=server.base_url, api_key="sk-test", max_retries=0)


def messages(server) -> anthropic.Anthropic:
    return anthropic.Anthropic(base_url=server.url, api_key="sk-test", max_retries=0)


def test_openai_caches_a_long_prefix_in_128_token_steps_once_answered(fresh) -> None:
    client = chat(fresh)
    usages = []
    for item in ("first item", "second item"):
        asked = [{"role": "system", "content": FIXED}, {"role": "user", "content": item}]
        usages.append(client.chat.completions.create(model="gpt-4o-mini", messages=asked, temperature=0).usage)
    assert [u.prompt_tokens for u in usages] == [2002, 2002]
    assert [u.prompt_tokens_details.cached_tokens for u in usages] == [0, 1920]  # 1,024 + 7 x 128
    bill = fresh.stats.bill.models["gpt-4o-mini"]
    assert (bill.requests, bill.input_tokens, bill.cache_read_tokens, bill.output_tokens) == (2, 2084, 1920, 10)
    price = price_of("gpt-4o-mini")
    assert price is not None
    expected = (2084 * price.input + 1920 * price.cache_read + 10 * price.output) / 1e6
    assert bill.cost_usd == pytest.approx(expected)
    assert bill.list_cost_usd == pytest.approx((4004 * 0.15 + 10 * 0.60) / 1e6)


def test_a_prompt_under_1024_tokens_is_never_cached(fresh) -> None:
    client = chat(fresh)
    short = " ".join(["word"] * 1000)
    for _ in range(2):
        usage = client.chat.completions.create(model="gpt-4o-mini", messages=[{"role": "user", "content": short}]).usage
    assert usage.prompt_tokens_details.cached_tokens == 0


async def test_requests_that_arrive_before_the_first_answer_all_miss() -> None:
    with OpenAITestServer(json_score(4), latency=0.3) as server:
        client = openai.AsyncOpenAI(base_url=server.base_url, api_key="sk-test", max_retries=0)
        asked = [{"role": "system", "content": FIXED}, {"role": "user", "content": "item"}]
        answers = await asyncio.gather(
            *(client.chat.completions.create(model="gpt-4o-mini", messages=asked) for _ in range(4))
        )
        late = await client.chat.completions.create(model="gpt-4o-mini", messages=asked)
    assert [a.usage.prompt_tokens_details.cached_tokens for a in answers] == [0, 0, 0, 0]
    assert late.usage.prompt_tokens_details.cached_tokens == 1920


@pytest.mark.parametrize(
    ("params", "param", "code", "message"),
    [
        (
            {"temperature": 0.0},
            "temperature",
            "unsupported_value",
            "Unsupported value: 'temperature' does not support 0.0 with this model. Only the default (1) value is "
            "supported.",
        ),
        ({"top_p": 0.9}, "top_p", "unsupported_parameter", "Unsupported parameter: 'top_p' is not supported"),
        ({"logprobs": True}, "logprobs", "unsupported_parameter", "Unsupported parameter: 'logprobs'"),
        (
            {"max_tokens": 100},
            "max_tokens",
            "unsupported_parameter",
            "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' "
            "instead.",
        ),
    ],
)
def test_reasoning_models_refuse_what_chat_models_take(fresh, params, param, code, message) -> None:
    with pytest.raises(openai.BadRequestError) as raised:
        chat(fresh).chat.completions.create(model="o4-mini", messages=[{"role": "user", "content": "x"}], **params)
    error = raised.value.body
    assert raised.value.status_code == 400
    assert error["type"] == "invalid_request_error" and error["param"] == param and error["code"] == code
    assert error["message"].startswith(message)


def test_reasoning_tokens_are_billed_as_output_and_a_spent_budget_answers_nothing(fresh) -> None:
    client = chat(fresh)
    asked = [{"role": "user", "content": "x"}]
    answer = client.chat.completions.create(model="o4-mini", messages=asked, reasoning_effort="low", temperature=1)
    assert answer.choices[0].message.content == REPLY and answer.choices[0].finish_reason == "stop"
    assert answer.usage.completion_tokens_details.reasoning_tokens == 96 and answer.usage.completion_tokens == 101
    cut = client.chat.completions.create(model="o4-mini", messages=asked, max_completion_tokens=50)
    assert cut.choices[0].finish_reason == "length" and cut.choices[0].message.content == ""
    assert cut.usage.completion_tokens == 50 == cut.usage.completion_tokens_details.reasoning_tokens
    with pytest.raises(openai.BadRequestError, match="reasoning_effort"):
        client.chat.completions.create(model="gpt-4o-mini", messages=asked, reasoning_effort="low")


def cached_system(text: str = FIXED, **mark: str) -> list[dict]:
    return [{"type": "text", "text": text, "cache_control": {"type": "ephemeral", **mark}}]


def test_anthropic_caches_at_a_breakpoint_once_answered(fresh) -> None:
    client = messages(fresh)
    usages = [
        client.messages.create(
            model="claude-sonnet-4-5", max_tokens=100, system=cached_system(), messages=[{"role": "user", "content": q}]
        )
        for q in ("one", "two")
    ]
    first, second = (m.usage for m in usages)
    assert (first.input_tokens, first.cache_creation_input_tokens, first.cache_read_input_tokens) == (1, 2000, 0)
    assert first.cache_creation.ephemeral_5m_input_tokens == 2000
    assert (second.input_tokens, second.cache_creation_input_tokens, second.cache_read_input_tokens) == (1, 0, 2000)
    assert usages[0].content[0].text == REPLY and usages[0].stop_reason == "end_turn"
    bill = fresh.stats.bill.models["claude-sonnet-4-5"]
    assert bill.cost_usd == pytest.approx((2 * 1 * 3 + 2000 * 3.75 + 2000 * 0.30 + 10 * 15) / 1e6)
    assert bill.list_cost_usd == pytest.approx((4002 * 3 + 10 * 15) / 1e6)


def test_anthropic_caches_nothing_unmarked_or_below_the_models_minimum(fresh) -> None:
    client = messages(fresh)
    unmarked = [{"type": "text", "text": FIXED}]
    short = cached_system(" ".join(["w"] * 3000))  # under Haiku 4.5's 4,096
    for _ in range(2):
        plain = client.messages.create(
            model="claude-sonnet-4-5", max_tokens=100, system=unmarked, messages=[{"role": "user", "content": "q"}]
        )
        haiku = client.messages.create(
            model="claude-haiku-4-5", max_tokens=100, system=short, messages=[{"role": "user", "content": "q"}]
        )
    for usage in (plain.usage, haiku.usage):
        assert usage.cache_read_input_tokens == 0 and usage.cache_creation_input_tokens == 0
    assert haiku.usage.input_tokens == 3001


def test_anthropic_one_hour_writes_are_billed_at_twice_the_input_price(fresh) -> None:
    messages(fresh).messages.create(
        model="claude-sonnet-4-5",
        max_tokens=100,
        system=cached_system(ttl="1h"),
        messages=[{"role": "user", "content": "q"}],
    )
    bill = fresh.stats.bill.models["claude-sonnet-4-5"]
    assert bill.cache_write_1h_tokens == 2000 and bill.cost_usd == pytest.approx((1 * 3 + 2000 * 6 + 5 * 15) / 1e6)


def test_anthropic_errors_are_anthropics(fresh) -> None:
    client = messages(fresh)
    five = [{"type": "text", "text": f"part {i}", "cache_control": {"type": "ephemeral"}} for i in range(5)]
    with pytest.raises(anthropic.BadRequestError) as raised:
        client.messages.create(
            model="claude-sonnet-4-5", max_tokens=10, system=five, messages=[{"role": "user", "content": "q"}]
        )
    assert raised.value.body == {
        "type": "error",
        "error": {
            "type": "invalid_request_error",
            "message": "A maximum of 4 blocks with cache_control may be provided. Found 5.",
        },
    }
    with pytest.raises(anthropic.BadRequestError, match="temperature` may only be set to 1 when thinking"):
        client.messages.create(
            model="claude-sonnet-4-5",
            max_tokens=2048,
            thinking={"type": "enabled", "budget_tokens": 1024},
            messages=[{"role": "user", "content": "q"}],
            extra_body={"temperature": 0},
        )
    with pytest.raises(anthropic.RateLimitError):
        client.messages.create(
            model="claude-sonnet-4-5", max_tokens=10, messages=[{"role": "user", "content": "q [[fault:429]]"}]
        )


def test_thinking_is_a_block_of_its_own_billed_as_output_and_can_spend_the_budget(fresh) -> None:
    client = messages(fresh)
    thinking = {"type": "enabled", "budget_tokens": 1024}
    answer = client.messages.create(
        model="claude-sonnet-4-5", max_tokens=2048, thinking=thinking, messages=[{"role": "user", "content": "q"}]
    )
    assert [b.type for b in answer.content] == ["thinking", "text"]
    assert answer.content[1].text == REPLY and answer.usage.output_tokens == 1024 + 5
    cut = client.messages.create(
        model="claude-sonnet-4-5", max_tokens=1026, thinking=thinking, messages=[{"role": "user", "content": "q"}]
    )
    assert cut.stop_reason == "max_tokens" and cut.usage.output_tokens == 1026
    assert fresh.stats.bill.models["claude-sonnet-4-5"].output_tokens == 2055


def test_a_request_body_answers_without_a_server_at_the_batch_price() -> None:
    billing = Billing()
    body = {
        "model": "claude-sonnet-4-5",
        "max_tokens": 50,
        "system": cached_system(),
        "messages": [{"role": "user", "content": "q"}],
    }
    first = anthropic_message_body(body, REPLY, message_id="msg_1", billing=billing, batch=True)
    second = anthropic_message_body(body, REPLY, message_id="msg_2", billing=billing, batch=True)
    assert first["usage"]["cache_creation_input_tokens"] == 2000 and second["usage"]["cache_read_input_tokens"] == 2000
    assert first["content"] == [{"type": "text", "text": REPLY}] and second["usage"]["service_tier"] == "batch"
    live = (2 * 3 + 2000 * 3.75 + 2000 * 0.3 + 10 * 15) / 1e6
    assert billing.snapshot().cost_usd == pytest.approx(live / 2)
