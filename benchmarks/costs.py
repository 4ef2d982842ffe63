"""What a judge's calls cost, against a loopback server that bills as the providers do (issue 45).

    python benchmarks/costs.py [--items 1000] [--examples 12] [--latency 0.05] [--delay 0.5]

An aligned judge (likert, with `--examples` scored examples in its fixed part: about 2,000 tokens) scores the same
`--items` items on each protocol (OpenAI's chat completions as gpt-4o-mini, Anthropic's Messages API as
claude-sonnet-4-5 through ANTHROPIC_BASE_URL), four ways: live with `prompt_cache=False`, live with the default
`prompt_cache="auto"`, and the same two through the providers' batch APIs (`batch=True`). The server
(`judgewidgets.testing.BatchTestServer`) caches a prefix only once a request carrying it was answered, as the
providers do (OpenAI: prompts of 1,024 tokens and more, in 128-token steps; Anthropic: at `cache_control`
breakpoints of at least the model's minimum), and keeps its own bill at published prices. Each row: the server's
bill, what the same tokens cost at list price live, the bill as a share of that, the share of prompt tokens read
from the cache, judgewidgets' reported cost and its difference from the bill (target: within 1 %), the estimate
`estimate_cost` gave before the run, and rows lost.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("JUDGEWIDGETS_CACHE_DIR", tempfile.mkdtemp(prefix="jw-costs-"))  # batches kept apart
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import judgewidgets as jw
from judgewidgets.testing import BatchTestServer, json_score

PROTOCOLS = (("openai", "openai/gpt-4o-mini"), ("anthropic", "anthropic/claude-sonnet-4-5"))
MODES = (("live, uncached", False, False), ("live, cached", "auto", False))
BATCH_MODES = (("batch, uncached", False, True), ("batch, cached", "auto", True))
_WORDS = ("the", "answer", "states", "a", "claim", "that", "is", "checked", "against", "what", "was", "asked")


def anchors(n: int) -> list[jw.Anchor]:
    """`n` scored examples of about 150 words each: the few-shot examples an aligned judge carries."""
    out = []
    for i in range(n):
        text = " ".join(f"{_WORDS[(i + k) % len(_WORDS)]}{k % 7 if k % 11 == 0 else ''}" for k in range(140))
        out.append(jw.Anchor(prompt=f"Example question {i}: what does item {i} say?", response=text, score=1 + i % 5))
    return out


def judge(model: str, server: BatchTestServer, examples: int, prompt_cache: Any) -> jw.LLMJudge:
    where = {"api_base": server.base_url} if model.startswith("openai/") else {}
    return jw.LLMJudge(
        model,
        template="likert",
        anchors=anchors(examples),
        api_key="sk-test",
        cache=False,
        prompt_cache=prompt_cache,
        **where,
    )


def measure(protocol: str, model: str, mode: tuple[str, Any, bool], server: BatchTestServer, args: Any) -> dict:
    name, prompt_cache, batch = mode
    prompts = [f"Question {i}: is statement {i} true?" for i in range(args.items)]
    responses = [f"Statement {i} is true because of reason {i}." for i in range(args.items)]
    server.reset_stats()
    scorer = judge(model, server, args.examples, prompt_cache)
    estimate = scorer.estimate_cost(prompts, responses, batch=batch).total_usd
    result = scorer.score(prompts, responses, progress=False, batch=batch)
    bill = server.stats.bill
    models = bill.models.values()
    prompt_tokens = sum(
        b.input_tokens + b.cache_read_tokens + b.cache_write_tokens + b.cache_write_1h_tokens for b in models
    )
    read = sum(b.cache_read_tokens for b in models)
    reported = result.usage.cost_usd
    return {
        "protocol": protocol,
        "run": name,
        "bill": bill.cost_usd,
        "list": bill.list_cost_usd,
        "share": bill.cost_usd / bill.list_cost_usd if bill.list_cost_usd else float("nan"),
        "cached": read / prompt_tokens if prompt_tokens else 0.0,
        "reported": reported,
        "diff": (reported - bill.cost_usd) / bill.cost_usd if reported is not None and bill.cost_usd else float("nan"),
        "estimate": estimate,
        "lost": int(result.votes["score"].isna().sum()),
    }


def table(rows: list[dict]) -> str:
    head = f"{'protocol':<10} {'run':<16} {'bill $':>9} {'list $':>9} {'bill/list':>9} {'cached':>7} "
    head += f"{'reported $':>10} {'vs bill':>8} {'estimate $':>10} {'lost':>5}"
    lines = [head, "-" * len(head)]
    for r in rows:
        if r.get("note"):
            lines.append(f"{r['protocol']:<10} {r['run']:<16} {r['note']}")
            continue
        estimate = "?" if r["estimate"] is None else f"{r['estimate']:.4f}"
        reported = "?" if r["reported"] is None else f"{r['reported']:.4f}"
        lines.append(
            f"{r['protocol']:<10} {r['run']:<16} {r['bill']:>9.4f} {r['list']:>9.4f} {r['share']:>9.1%} "
            f"{r['cached']:>7.1%} {reported:>10} {r['diff']:>+8.2%} {estimate:>10} {r['lost']:>5}"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> list[dict]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--items", type=int, default=1000)
    parser.add_argument("--examples", type=int, default=12, help="scored examples in the judge's fixed part")
    parser.add_argument("--latency", type=float, default=0.05, help="seconds each live answer takes")
    parser.add_argument("--delay", type=float, default=0.5, help="seconds from a batch's creation to its end")
    parser.add_argument("--no-batch", action="store_true", help="live rows only")
    args = parser.parse_args(argv)
    rows: list[dict] = []
    with BatchTestServer(json_score(4), latency=args.latency, delay=args.delay) as server:
        os.environ["ANTHROPIC_BASE_URL"] = server.url  # Anthropic at another address: behaves as Anthropic
        for protocol, model in PROTOCOLS:
            for mode in (*MODES, *(() if args.no_batch else BATCH_MODES)):
                rows.append(measure(protocol, model, mode, server, args))
                print(table(rows[-1:]).splitlines()[-1], flush=True)
    print()
    print(table(rows))
    return rows


if __name__ == "__main__":
    main()
