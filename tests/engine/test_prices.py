"""Each kind of token at its own published price, from the usage the provider reported, on both transports and both
protocols; the reported cost equals the bill of a server that bills as the providers do."""

from __future__ import annotations

import json

import pytest

import judgewidgets as jw
from judgewidgets.engine import Completion
from judgewidgets.engine._litellm import usage_of
from judgewidgets.engine._openai_http import parse_completion
from judgewidgets.engine._prices import call_cost, prices_of
from judgewidgets.engine._usage import Usage
from judgewidgets.testing import OpenAITestServer, json_score

M = 1e-6
FIXED = " ".join(f"w{i}" for i in range(2000))


@pytest.mark.parametrize(
    ("model", "expected"),
    [
        # OpenAI: cached input at the model's own cached price (half for gpt-4o-mini, a quarter for o4-mini)
        ("openai/gpt-4o-mini", (0.15, 0.60, 0.075, 0.15, 0.15)),
        ("openai/o4-mini", (1.10, 4.40, 0.275, 1.10, 1.10)),
        ("gpt-5-mini", (0.25, 2.00, 0.025, 0.25, 0.25)),
        # Anthropic: reads 0.1x, writes 1.25x, one-hour writes 2x
        ("anthropic/claude-sonnet-4-5", (3, 15, 0.30, 3.75, 6)),
        ("anthropic/claude-haiku-4-5", (1, 5, 0.10, 1.25, 2)),
        # litellm 1.106.2's map says $0 for these (or lacks them): corrected
        ("anthropic/claude-opus-4-1", (15, 75, 1.5, 18.75, 30)),
        ("anthropic/claude-sonnet-4-20250514", (3, 15, 0.30, 3.75, 6)),
        ("anthropic/claude-3-5-haiku-latest", (0.80, 4, 0.08, 1, 1.6)),
    ],
)
def test_published_prices_per_kind(model: str, expected: tuple[float, ...]) -> None:
    prices = prices_of(model)
    assert prices is not None
    got = (prices.input, prices.output, prices.cache_read, prices.cache_write, prices.cache_write_1h)
    assert got == pytest.approx(tuple(p * M for p in expected))


def test_a_call_is_priced_by_kind_and_a_batch_at_half() -> None:
    # Anthropic: 2,001 prompt tokens of which 2,000 written for an hour, 5 output tokens
    cost = call_cost(
        "anthropic/claude-sonnet-4-5", 2001, 5, cache_read_tokens=0, cache_write_tokens=2000, cache_write_1h_tokens=2000
    )
    assert cost == pytest.approx((1 * 3 + 2000 * 6 + 5 * 15) * M)
    read = call_cost("openai/gpt-4o-mini", 2002, 5, cache_read_tokens=1920)
    assert read == pytest.approx((82 * 0.15 + 1920 * 0.075 + 5 * 0.60) * M)
    batch = call_cost("openai/gpt-4o-mini", 2002, 5, cache_read_tokens=1920, batch=True)
    assert batch == pytest.approx(read / 2)
    assert call_cost("openai/unknown-model-xyz", 10, 1) is None


def test_the_fast_path_reads_cache_reasoning_and_finish_reason() -> None:
    body = {
        "choices": [{"message": {"content": ""}, "finish_reason": "length"}],
        "usage": {
            "prompt_tokens": 2002,
            "completion_tokens": 50,
            "prompt_tokens_details": {"cached_tokens": 1920},
            "completion_tokens_details": {"reasoning_tokens": 50},
        },
    }
    completion = parse_completion("openai/o4-mini", json.dumps(body).encode(), 0.1)
    assert (completion.prompt_cache_read_tokens, completion.reasoning_tokens) == (1920, 50)
    assert completion.prompt_cache_write_tokens is None and completion.finish_reason == "length"
    assert completion.cost_usd == pytest.approx((82 * 1.10 + 1920 * 0.275 + 50 * 4.40) * M)
    assert completion.list_cost_usd == pytest.approx((2002 * 1.10 + 50 * 4.40) * M)
    assert parse_completion("openai/o4-mini", json.dumps(body).encode(), 0.1, batch=True).cost_usd == pytest.approx(
        completion.cost_usd / 2
    )


def test_litellms_anthropic_usage_is_read_by_kind() -> None:
    from litellm.types.utils import Usage as LitellmUsage

    usage = LitellmUsage(
        prompt_tokens=2001, completion_tokens=5, cache_creation_input_tokens=2000, cache_read_input_tokens=0
    )
    fields = usage_of("anthropic/claude-sonnet-4-5", usage)
    assert fields["prompt_cache_read_tokens"] == 0 and fields["prompt_cache_write_tokens"] == 2000
    assert fields["reasoning_tokens"] is None  # Anthropic reports thinking inside output tokens
    assert fields["cost_usd"] == pytest.approx((1 * 3 + 2000 * 3.75 + 5 * 15) * M)


def test_said_counts_add_up_and_stay_none_when_never_said() -> None:
    parts = [
        Usage(prompt_tokens=10, completion_tokens=1, cost_usd=0.1, prompt_cache_read_tokens=8),
        Usage(prompt_tokens=10, completion_tokens=1, cost_usd=0.1),
    ]
    total = Usage.total(parts)
    assert total.prompt_cache_read_tokens == 8 and total.reasoning_tokens is None
    cached = Completion("x", prompt_tokens=3, completion_tokens=1, prompt_cache_read_tokens=2, finish_reason="stop")
    again = Completion.from_cached_json(cached.to_json())
    assert again.prompt_cache_read_tokens == 2 and again.finish_reason == "stop" and again.cached
    assert "reasoning" not in json.loads(Completion("x").to_json())  # old cached answers read back the same


@pytest.fixture(scope="module")
def server():
    with OpenAITestServer(json_score(4)) as server:
        yield server


@pytest.mark.parametrize("transport", ["fast", "litellm"])
def test_the_reported_cost_is_the_openai_bill(server, transport: str) -> None:
    server.reset_stats()
    judge = jw.LLMJudge(
        "openai/gpt-4o-mini", api_base=server.base_url, api_key="sk-test", cache=False, transport=transport
    )
    result = judge.score([f"{FIXED} q{i}" for i in range(6)], ["a"] * 6, progress=False)
    bill = server.stats.bill.models["gpt-4o-mini"]
    summary = result.summary()
    assert summary.loc["openai/gpt-4o-mini", "cost_usd"] == pytest.approx(bill.cost_usd, rel=1e-9)
    assert summary.loc["openai/gpt-4o-mini", "list_cost_usd"] == pytest.approx(bill.list_cost_usd, rel=1e-9)
    assert summary.loc["openai/gpt-4o-mini", "prompt_cache_read_tokens"] == bill.cache_read_tokens > 0
    assert summary.loc["openai/gpt-4o-mini", "calls"] == 6
    assert result.votes["prompt_cache_read_tokens"].dtype == "Int64"


def test_the_reported_cost_is_the_anthropic_bill(server, monkeypatch) -> None:
    server.reset_stats()
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)  # Anthropic at another address: behaves as Anthropic
    judge = jw.LLMJudge("anthropic/claude-sonnet-4-5", api_key="sk-test", cache=False)
    result = judge.score([f"q{i}" for i in range(3)], ["a"] * 3, progress=False)
    assert result.votes["error"].isna().all()
    bill = server.stats.bill.models["claude-sonnet-4-5"]
    assert result.usage.cost_usd == pytest.approx(bill.cost_usd, rel=1e-9)
    assert result.usage.prompt_cache_read_tokens == bill.cache_read_tokens
