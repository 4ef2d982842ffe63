"""Reading the model instead of asking it: does the conversation make the good twin's reply more likely?

Run: `python benchmarks/conversation_likelihood.py [--limit N]` (the embedded model; about 15 s a pair on two cores).

`benchmarks/conversations.py` finds the embedded judge at chance on the clear-cut twin conversations whichever way
it is asked. This probe asks nothing: it forces the embedded model to write each twin's last reply (a llama.cpp
grammar that allows only that text, with logprobs, which are the model's own probabilities before the grammar) and
compares, between the two twins of a pair,

- `pmi`: log P(reply | the conversation so far) − log P(reply | the system message and the last user turn only),
  how much the history supports the reply (a reply that drops a constraint set earlier loses support);
- `loglik`: log P(reply | the conversation so far);
- `per token`: that log-likelihood per forced token.

A pair is right when the good twin scores higher. Nothing depends on which twin is shown first. The numbers are in
docs/benchmarks.md ("Judging conversations"): pmi 73 %, per token 76 % (45 pairs, 2026-11-25), against the judge's
45–52 % and the 90 % target. It is the first probe; the package's judging method is
`PairwiseJudge(method="likelihood")` / `jw.LikelihoodJudge` (the reply's own tokens forced, each token's share of
pmi clipped: 36 of 45, `python benchmarks/conversations.py --templates likelihood --methods likelihood`).
"""

from __future__ import annotations

import argparse
import collections
import os
import sys
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import judgewidgets as jw
from judgewidgets.conversations import Message, parse_conversation
from judgewidgets.conversations._render import _message_text, _tool_names
from judgewidgets.local._runtime import LocalModel

TARGET = 0.90
JUDGE_AS_ASKED = 0.478  # pairwise, probability method, benchmarks/conversations.py on the same 45 pairs
MEASURES = ("pmi", "loglik", "per token")


def literal(text: str) -> str:
    """A GBNF grammar that allows exactly `text`."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'root ::= "{escaped}"'


def chat_messages(messages: tuple[Message, ...], before: tuple[Message, ...] = ()) -> list[dict[str, str]]:
    """Messages as plain chat turns (a tool result as the user's), tool calls and results written out as a judge
    reads them (`before`: the messages that came earlier, whose tool calls results may answer)."""
    return [
        {
            "role": m.role if m.role in ("system", "user", "assistant") else "user",
            "content": _message_text(m, _tool_names((*before, *messages[:i]))),
        }
        for i, m in enumerate(messages)
    ]


def forced(model: LocalModel, messages: list[dict[str, str]], reply: str) -> tuple[float, int]:
    """The model's log-probability of writing `reply` after `messages`, and the number of tokens it took."""
    answer = model.chat(
        {
            "messages": messages,
            "max_tokens": 1024,
            "temperature": 0,
            "grammar": literal(reply),
            "logprobs": True,
            "top_logprobs": 1,
        }
    )
    tokens = answer["choices"][0]["logprobs"]["content"]
    return sum(t["logprob"] for t in tokens), len(tokens)


def measure(model: LocalModel, pair: dict[str, Any]) -> dict[str, Any]:
    """Each measure's verdict on one pair: True when the good twin scores higher."""
    history = parse_conversation(pair["history"]).messages
    context = chat_messages(history)
    alone = [m for m in context if m["role"] == "system"] + [context[-1]]
    scores: dict[str, dict[str, float]] = {}
    for twin in ("good", "bad"):
        reply = pair[twin] if isinstance(pair[twin], list) else [{"role": "assistant", "content": pair[twin]}]
        whole = parse_conversation([*pair["history"], *reply]).messages
        text = "\n".join(m["content"] for m in chat_messages(whole[len(history) :], history))
        with_history, n = forced(model, context, text)
        without, _ = forced(model, alone, text)
        scores[twin] = {"pmi": with_history - without, "loglik": with_history, "per token": with_history / n}
    return {"kind": pair["kind"], **{m: scores["good"][m] > scores["bad"][m] for m in MEASURES}}


def main(argv: list[str] | None = None) -> dict[str, float]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=None, help="the first N pairs (all 45)")
    args = parser.parse_args(argv)
    pairs = jw.datasets.conversation_pairs().to_dict("records")[: args.limit]
    model = LocalModel()
    started = time.perf_counter()
    rows = [measure(model, pair) for pair in pairs]
    seconds = (time.perf_counter() - started) / len(rows)
    print(f"{len(rows)} twin pairs, embedded model, {seconds:.1f} s a pair (4 forced replies)\n")
    print(f"{'measure':10s} {'right':>7s} {'accuracy':>9s} {'× target':>9s} {'× judge as asked':>17s}")
    results = {}
    for name in MEASURES:
        right = sum(r[name] for r in rows)
        accuracy = right / len(rows)
        results[name] = accuracy
        ratios = f"{accuracy / TARGET:9.2f} {accuracy / JUDGE_AS_ASKED:17.2f}"
        print(f"{name:10s} {right:3d}/{len(rows):<3d} {accuracy:9.1%} {ratios}")
    print(f"(target {TARGET:.0%}; the judge as asked, pairwise with probabilities: {JUDGE_AS_ASKED:.1%})\n")
    by_kind: dict[str, list[bool]] = collections.defaultdict(list)
    for row in rows:
        by_kind[row["kind"]].append(row["pmi"])
    print("pmi by kind: " + ", ".join(f"{k} {sum(v)}/{len(v)}" for k, v in by_kind.items()))
    return results


if __name__ == "__main__":
    main()
