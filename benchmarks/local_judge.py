"""Benchmark the embedded judge: weights verification, model load, seconds per likert judgment, memory.

Run: `python benchmarks/local_judge.py [--fresh-assembly] [--concurrency 4]`. Judgments go through
`litellm.acompletion(model="local/...")`, the path the engine uses. The target is a median of at most 5 s per
likert judgment on a 2-core machine. The probability-weighted (G-Eval) score is the expected score over the
digit alternatives in the top_logprobs of the token that carries the score.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from judgewidgets.local import LocalModel, ensure_registered, ensure_weights
from judgewidgets.local._weights import chunk_paths

TARGET_S = 5.0
DIGITS = ("1", "2", "3", "4", "5")
SYSTEM = (
    "You are a strict grader. Rate the response to the question on a 1-5 Likert scale, where 1 means "
    "completely wrong or unhelpful and 5 means fully correct and helpful. Answer with JSON only."
)
LIKERT_FORMAT = {
    "type": "json_schema",
    "json_schema": {
        "name": "likert",
        "strict": True,
        "schema": {
            "type": "object",
            "properties": {"score": {"type": "integer", "enum": [1, 2, 3, 4, 5]}},
            "required": ["score"],
        },
    },
}
# (question, good answer, bad answer)
CASES = [
    ("What is the capital of France?", "Paris.", "Berlin."),
    ("How many legs does a spider have?", "Eight.", "Six."),
    ("At what temperature does water boil at sea level, in Celsius?", "100 °C.", "About 40 °C."),
    ("Who wrote the play Hamlet?", "William Shakespeare.", "Charles Dickens."),
    ("What is the largest planet in the Solar System?", "Jupiter.", "Mars."),
]


def _peak_rss_mib() -> float:
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1024 * 1024) if sys.platform == "darwin" else peak / 1024


def _weighted_score(response: Any) -> tuple[float | None, int | None, list[tuple[str, float]]]:
    """(expected score, index of the digit token, the digit token's alternatives) of one judgment."""
    tokens = response.choices[0].logprobs.content
    for index, token in enumerate(tokens):
        if token.token.strip() in DIGITS:
            alternatives = [(alt.token, alt.logprob) for alt in token.top_logprobs]
            mass = {d: 0.0 for d in DIGITS}
            for text, logprob in alternatives:
                if text.strip() in mass:
                    mass[text.strip()] += math.exp(logprob)
            total = sum(mass.values())
            expected = sum(int(d) * p for d, p in mass.items()) / total if total > 0 else None
            return expected, index, alternatives
    return None, None, []


async def _judge(litellm: Any, model: str, question: str, answer: str) -> tuple[float, Any]:
    started = time.perf_counter()
    response = await litellm.acompletion(
        model=model,
        messages=[
            {"role": "system", "content": SYSTEM},
            {"role": "user", "content": f"Question: {question}\nResponse: {answer}"},
        ],
        response_format=LIKERT_FORMAT,
        temperature=0.0,
        max_tokens=16,
        logprobs=True,
        top_logprobs=5,
    )
    return time.perf_counter() - started, response


async def _run(args: argparse.Namespace) -> None:
    print(f"cores available: {len(os.sched_getaffinity(0))}, load average at start: {os.getloadavg()}")

    if args.fresh_assembly:
        with tempfile.TemporaryDirectory(dir=Path.home()) as scratch:
            started = time.perf_counter()
            ensure_weights(Path(scratch), parts=chunk_paths())
            seconds = time.perf_counter() - started
            print(f"weights assembly (22 chunks -> 1.1 GB, sha256 while writing): {seconds:.2f} s")
    started = time.perf_counter()
    path = ensure_weights()
    print(
        "weights ensure (assembly, a full sha256 check, or none when the file's verified marker still holds): "
        f"{time.perf_counter() - started:.2f} s"
    )
    started = time.perf_counter()
    ensure_weights(recheck=True, announce=False)
    print(f"weights full sha256 check (what the marker saves on later loads): {time.perf_counter() - started:.2f} s")

    model = LocalModel(str(path))  # the explicit path: loading it does not hash the file a second time
    started = time.perf_counter()
    model.load()
    print(f"model load: {time.perf_counter() - started:.2f} s (llama.cpp {model.load_seconds:.2f} s), {model!r}")

    started = time.perf_counter()
    import litellm

    ensure_registered()
    print(f"litellm import + registration: {time.perf_counter() - started:.2f} s")
    name = f"local/{path}"

    first, _ = await _judge(litellm, name, "What is 2 + 2?", "4")
    print(f"first judgment (cold prompt cache): {first:.2f} s")

    latencies: list[float] = []
    weighted: dict[str, list[float]] = {"good": [], "bad": []}
    scores: dict[str, list[int]] = {"good": [], "bad": []}
    shown = False
    for question, good, bad in CASES:
        for kind, answer in (("good", good), ("bad", bad)):
            seconds, response = await _judge(litellm, name, question, answer)
            latencies.append(seconds)
            content = response.choices[0].message.content
            scores[kind].append(json.loads(content)["score"])
            expected, index, alternatives = _weighted_score(response)
            if expected is not None:
                weighted[kind].append(expected)
            if not shown:
                tokens = [t.token for t in response.choices[0].logprobs.content]
                print(f"answer {content!r} as tokens {tokens}; the digit is token {index}")
                print(f"  its top_logprobs: {[(t, round(lp, 2)) for t, lp in alternatives]}")
                shown = True
            usage = response.usage
            print(
                f"  {kind:4} {seconds:5.2f} s  score {scores[kind][-1]}  weighted "
                f"{expected if expected is None else round(expected, 2)}  "
                f"tokens {usage.prompt_tokens} in ({usage.prompt_tokens_details.cached_tokens} cached) "
                f"{usage.completion_tokens} out  | {question[:40]} -> {answer}"
            )

    median = statistics.median(latencies)
    p90 = statistics.quantiles(latencies, n=10, method="inclusive")[-1]
    print(f"\nseconds per likert judgment over {len(latencies)}: median {median:.2f}, p90 {p90:.2f}")
    print(f"ratio of median to the {TARGET_S:g} s target: {median / TARGET_S:.2f}")
    for kind in ("good", "bad"):
        values = weighted[kind]
        mean = statistics.fmean(values) if values else float("nan")
        print(f"{kind} answers: argmax scores {scores[kind]}, probability-weighted mean {mean:.2f}")

    if args.concurrency > 1:
        pairs = [(q, a) for q, good, bad in CASES for a in (good, bad)][: args.concurrency]
        started = time.perf_counter()
        await asyncio.gather(*(_judge(litellm, name, q, a) for q, a in pairs))
        wall = time.perf_counter() - started
        print(f"{len(pairs)} concurrent judgments: {wall:.2f} s wall, {wall / len(pairs):.2f} s per judgment")

    print(f"peak RSS: {_peak_rss_mib():.0f} MiB; load average at end: {os.getloadavg()}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--fresh-assembly", action="store_true", help="also time assembling the weights into a scratch folder"
    )
    parser.add_argument("--concurrency", type=int, default=4, help="concurrent judgments in the last run (0: skip)")
    asyncio.run(_run(parser.parse_args()))


if __name__ == "__main__":
    main()
