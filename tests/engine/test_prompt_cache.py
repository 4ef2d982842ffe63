"""Requests laid out for the providers' prompt caches (prompt_cache="auto" by default): the fixed part first and, on
Anthropic, marked with a cache_control breakpoint when long enough; on OpenAI a prompt_cache_key per judge; the
first request of a prefix answered before the rest go. Measured against the loopback server's bill, on every judge
kind and both protocols; verdicts are the same with and without."""

from __future__ import annotations

import pandas as pd
import pytest

import judgewidgets as jw
from judgewidgets._errors import ConfigurationError
from judgewidgets.engine import ChatRequest
from judgewidgets.engine._prompt_cache import laid_out, minimum_cacheable
from judgewidgets.pairwise import PairExample
from judgewidgets.templates import get_template
from judgewidgets.testing import OpenAITestServer
from judgewidgets.testing._responders import last_user_text

RULES = "\n".join(f"Rule {i}: weigh the response's claim number {i} against the question." for i in range(300))
LONG = get_template("likert").model_copy(update={"instruction": get_template("likert").instruction + "\n" + RULES})
ITEMS = 24


def verdicts(result) -> list:
    if isinstance(result, pd.DataFrame):
        return result["winner"].tolist()
    return result.votes["score"].tolist() if "score" in result.votes else result.votes["verdict"].tolist()


def answer(body: dict) -> str:
    """A pairwise judge is told which response wins, a rubric's criterion is met, any other judge gives 4 of 5."""
    if "<response_a>" in last_user_text(body):
        return '{"verdict": "A"}'
    if "<submission>" in last_user_text(body):
        return '{"explanation": "It is.", "verdict": "MET"}'
    return '{"score": 4}'


def request(system: str, model: str = "anthropic/claude-sonnet-4-5") -> ChatRequest:
    return ChatRequest(model, ({"role": "system", "content": system}, {"role": "user", "content": "item"}), {})


def test_anthropic_marks_a_long_fixed_part_and_openai_gets_a_key_per_judge() -> None:
    marked, prefix = laid_out(request(RULES), "anthropic", "auto")
    system = marked.messages[0]["content"]
    assert system == [{"type": "text", "text": RULES, "cache_control": {"type": "ephemeral"}}] and prefix
    assert marked.messages[1] == {"role": "user", "content": "item"}  # the item stays last, unmarked
    hour, _ = laid_out(request(RULES), "anthropic", "1h")
    assert hour.messages[0]["content"][0]["cache_control"] == {"type": "ephemeral", "ttl": "1h"}
    keyed, key = laid_out(request(RULES, "openai/gpt-4o-mini"), "openai", "auto")
    assert keyed.params["prompt_cache_key"] == key and keyed.messages == request(RULES, "openai/gpt-4o-mini").messages
    assert laid_out(request(RULES), None, "auto") == (request(RULES), None)  # no provider cache to lay out for
    assert laid_out(request(RULES), "anthropic", False) == (request(RULES), None)
    assert laid_out(request("Rate it."), "anthropic", "auto")[1] is None  # too short to be cached


def test_the_minimum_cacheable_length_is_the_models() -> None:
    assert minimum_cacheable("anthropic", "anthropic/claude-sonnet-4-5") == 1024
    assert minimum_cacheable("anthropic", "claude-haiku-4-5-20251001") == 4096
    assert minimum_cacheable("anthropic", "anthropic/claude-3-5-haiku-latest") == 2048
    assert minimum_cacheable("anthropic", "anthropic/claude-opus-4-5") == 4096
    assert minimum_cacheable("openai", "openai/gpt-4o-mini") == 1024
    half = "\n".join(RULES.split("\n")[:150])  # about 2,000 tokens
    haiku, _ = laid_out(request(half, "anthropic/claude-haiku-4-5"), "anthropic", "auto")
    assert isinstance(haiku.messages[0]["content"], str)  # under Haiku 4.5's 4,096: not marked
    sonnet, _ = laid_out(request(half), "anthropic", "auto")
    assert isinstance(sonnet.messages[0]["content"], list)  # over Sonnet 4.5's 1,024: marked


def test_prompt_cache_takes_auto_1h_or_false() -> None:
    assert jw.LLMJudge("openai/gpt-4o-mini", prompt_cache=False).caller.prompt_cache is False
    assert jw.LLMJudge("openai/gpt-4o-mini").caller.prompt_cache == "auto"
    with pytest.raises(ConfigurationError, match="prompt_cache"):
        jw.LLMJudge("openai/gpt-4o-mini", prompt_cache="forever")


@pytest.fixture(scope="module")
def server():
    with OpenAITestServer(answer, latency=0.05) as server:
        yield server


@pytest.fixture
def anthropic_base(server, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)  # Anthropic at another address: behaves as Anthropic


def judges(protocol: str, server, prompt_cache) -> dict[str, tuple[object, str]]:
    """Every judge kind with a fixed part of ~2,000 words, on `protocol`."""
    model = "openai/gpt-4o-mini" if protocol == "openai" else "anthropic/claude-sonnet-4-5"
    where = {"api_base": server.base_url} if protocol == "openai" else {}
    kw = {"api_key": "sk-test", "cache": False, "prompt_cache": prompt_cache, **where}
    examples = [
        PairExample(question=f"q{i} " + RULES[:600], response_a="a", response_b="b", winner="A") for i in range(8)
    ]
    rubric = jw.Rubric([jw.Criterion(RULES, name="rules"), jw.Criterion("It answers. " + RULES, name="answers")])
    return {
        "rubric": ((rubric, jw.CriterionGrader([jw.LLMJudge(model, **kw)])), model),
        "judge": (jw.LLMJudge(model, template=LONG, **kw), model),
        "pairwise": (jw.PairwiseJudge(model, examples=examples, **kw), model),
    }


def run(kind: str, judge, n: int = ITEMS):
    prompts, responses = [f"question {i}" for i in range(n)], [f"answer {i}" for i in range(n)]
    if kind == "pairwise":
        return judge.compare_many(prompts, responses, [f"other {i}" for i in range(n)], progress=False)
    if kind == "rubric":
        rubric, grader = judge
        return grader.grade_many(rubric, pd.DataFrame({"prompt": prompts, "response": responses}), progress=False)
    return judge.score(prompts, responses, progress=False)


@pytest.mark.parametrize("protocol", ["openai", "anthropic"])
@pytest.mark.parametrize("kind", ["judge", "pairwise", "rubric"])
def test_every_judge_kind_is_cached_and_reports_the_bill(server, anthropic_base, protocol: str, kind: str) -> None:
    results = {}
    for choice in ("auto", False):
        server.reset_stats()
        judge, _ = judges(protocol, server, choice)[kind]
        result = run(kind, judge)
        bill = server.stats.bill
        assert result.usage.cost_usd == pytest.approx(bill.cost_usd, rel=1e-9)  # reported cost = the bill
        summary = result.summary()  # every result kind: per judge, each kind of token and both costs
        assert summary["cost_usd"].sum() == pytest.approx(bill.cost_usd, rel=1e-9)
        assert summary["list_cost_usd"].sum() == pytest.approx(bill.list_cost_usd, rel=1e-9)
        assert summary["prompt_cache_read_tokens"].fillna(0).sum() == sum(
            b.cache_read_tokens for b in bill.models.values()
        )
        results[choice] = (result, bill)
    cached, bill = results["auto"]
    share = sum(b.cache_read_tokens for b in bill.models.values()) / sum(
        b.input_tokens + b.cache_read_tokens + b.cache_write_tokens for b in bill.models.values()
    )
    if protocol == "openai":
        assert share >= 0.6
    else:
        assert bill.cost_usd <= 0.35 * bill.list_cost_usd
        assert results[False][1].cost_usd == pytest.approx(results[False][1].list_cost_usd)  # unmarked: no cache
    assert verdicts(cached) == verdicts(results[False][0])  # verdicts unchanged
    assert all(v is not None and v == v for v in verdicts(cached))  # every row judged


def test_the_first_request_of_a_prefix_goes_alone(server) -> None:
    server.reset_stats()
    judge = jw.LLMJudge("openai/gpt-4o-mini", template=LONG, api_base=server.base_url, api_key="sk-test", cache=False)
    run("judge", judge, 16)
    bill = server.stats.bill.models["gpt-4o-mini"]
    assert bill.requests == 16 and bill.cache_read_tokens > 0
    sent = [r.body for r in server.stats.requests if r.body]
    assert len({b["prompt_cache_key"] for b in sent}) == 1  # one key per judge
    assert sum(1 for b in sent if b) == 16


@pytest.mark.parametrize(("model", "most"), [("openai/gpt-4o-mini", 0.6), ("anthropic/claude-sonnet-4-5", 0.35)])
def test_estimate_cost_counts_the_caches_effect(model: str, most: float) -> None:
    prompts, responses = [f"question {i}" for i in range(100)], [f"answer {i}" for i in range(100)]
    cached = jw.LLMJudge(model, template=LONG).estimate_cost(prompts, responses).total_usd
    listed = jw.LLMJudge(model, template=LONG, prompt_cache=False).estimate_cost(prompts, responses).total_usd
    assert cached is not None and listed is not None
    assert cached <= most * listed


def test_the_costs_benchmark_reports_the_bill(monkeypatch) -> None:
    from tests.benchmark_scripts import load_benchmark

    monkeypatch.setenv("ANTHROPIC_BASE_URL", "unset")  # the benchmark points it at its server; restored after
    rows = load_benchmark("costs").main(["--items", "20", "--latency", "0.01", "--delay", "0.2"])
    assert len(rows) == 8 and all(r["lost"] == 0 for r in rows)
    assert all(abs(r["diff"]) < 0.01 for r in rows)  # reported cost within 1 % of the bill, every row
    cached = {(r["protocol"], r["run"]): r for r in rows}
    assert cached["anthropic", "live, cached"]["share"] <= 0.35 and cached["openai", "live, cached"]["cached"] >= 0.6


def test_a_judge_that_ran_still_pickles(server) -> None:
    import pickle

    judge = jw.LLMJudge("openai/gpt-4o-mini", template=LONG, api_base=server.base_url, api_key="sk-test", cache=False)
    run("judge", judge, 2)
    again = pickle.loads(pickle.dumps(judge))  # a resumed batch, a Ray worker
    assert again.caller.prompt_cache == "auto" and not again.caller._warmers


def test_a_known_claude_model_at_another_address_is_cached_an_unknown_name_is_not(server) -> None:
    from judgewidgets.engine import Caller

    assert Caller("anthropic/claude-sonnet-4-5", api_base=server.url).cache_provider() == "anthropic"  # a gateway
    assert Caller("anthropic/qwen", api_base=server.url).cache_provider() is None  # llama.cpp's Messages route
    assert Caller("openai/qwen", api_base=server.base_url).cache_provider() is None  # vLLM
    assert Caller("ollama/llama3").cache_provider() is None and Caller("local").cache_provider() is None
    server.reset_stats()
    judge = jw.LLMJudge(
        "anthropic/claude-sonnet-4-5", template=LONG, api_base=server.url, api_key="sk-test", cache=False
    )
    result = run("judge", judge, 8)
    bill = server.stats.bill.models["claude-sonnet-4-5"]
    assert result.votes["error"].isna().all() and bill.cache_read_tokens > 0
    assert result.usage.cost_usd == pytest.approx(bill.cost_usd, rel=1e-9)


async def test_a_first_request_that_hangs_holds_the_rest_no_longer_than_the_warm_wait(monkeypatch) -> None:
    import asyncio

    from judgewidgets.engine import _prompt_cache

    monkeypatch.setattr(_prompt_cache, "WARM_WAIT_S", 0.05)
    warmer = _prompt_cache.PrefixWarmer()
    assert await warmer.enter("k")  # the first goes, and never answers
    assert await asyncio.wait_for(warmer.enter("k"), 1.0) is False  # the next goes after the wait
    warmer.answered("k")
    assert await warmer.enter("k") is False
