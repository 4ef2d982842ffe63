"""No reference given: do the embedded judge's defaults pass right answers and fail subtly wrong ones?

Run: `python benchmarks/no_reference.py [--templates a,b] [--sets ours,held_out,later] [--llmbar-n N] [--fresh]
[--out rows.csv]`.

Three sets of short questions, each with a right answer worded unlike the reference and a subtly wrong one (a wrong
year, a wrong unit, an off-by-one, a swapped name), judged with no reference at all:
- `ours`: benchmarks/data/reference_qa.csv, the 50 questions the commit-first work was tuned on (issue 35);
- `held_out`: benchmarks/data/no_reference_qa.csv, 40 questions written for issue 46 after the default was chosen
  (ours, CC0: ten each of years, units, off-by-ones and swapped names; the references are only for the report);
- `later`: benchmarks/data/no_reference_later_qa.csv, 20 more written after the one-fact rule was chosen (ours, CC0;
  one without a question mark, one "Name the ...").
Each correctness template judges every answer twice: *today*, `commit_first=False` (the judge reads the question
and the response alone), and *default*, `LLMJudge("local", template=...)` with nothing set: the embedded judge
answers each question first (its short answer, once per question) and grades against that answer when it is short
(`commit_first="short"`). Printed per set, template and setting: the share of questions whose wrong answer scores
<= 0.3 *and* whose right answer scores >= 0.7 (the target: >= 90 %), each half alone, both means, and the made
answers the judge got wrong (the only way commit-first fails a right answer), and what the setting's tokens would
cost at gpt-4o-mini's list prices (the measured price of the default, were it on for a hosted judge).

LLMBar (`--llmbar-n`, per subset; 0 skips it; default all 419 pairs): its open instructions have no one right
answer, and a default that graded them against the judge's own answer would hurt. Under the default, the solver
answers first only an instruction that asks for one fact (`scoring._commit.asks_for_a_fact`: a short one-line
question, not for a judgement nor for one example of many), and a pair is graded against the made answer only when
that answer is short too (`checkable`); every other pair sends exactly today's request. Only the pairs the default
touches are judged both ways (each output scored alone, the higher score wins, a tie is half): printed per subset,
how many pairs the default touches and their accuracy today and by default. A subset is worse than today only if
that accuracy drops.

Calls go through the persistent call cache unless `--fresh`.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import pandas as pd
from _labelled import add_judge_options, call_cache, judge_factory, write_rows

import judgewidgets as jw
from judgewidgets._records import Item
from judgewidgets.engine import CallSession
from judgewidgets.scoring._commit import asks_for_a_fact, checkable, question_of

DATA = Path(__file__).resolve().parent / "data"
SETS = {
    "ours": DATA / "reference_qa.csv",
    "held_out": DATA / "no_reference_qa.csv",
    "later": DATA / "no_reference_later_qa.csv",
}
TEMPLATES = ("true_false_uncertain", "likert")
SETTINGS = {"today": False, "default": None}
WRONG_AT_MOST, RIGHT_AT_LEAST, SHARE = 0.3, 0.7, 0.9
# What the tokens would cost at a hosted judge's list prices (gpt-4o-mini: $0.15 and $0.60 per million input and
# output tokens): the price of the default's extra call and longer grounded prompt, were it on for a hosted judge.
PRICED_AS, PRICE = "gpt-4o-mini", (0.15e-6, 0.60e-6)
LLMBAR_SUBSETS = ("Natural", "Adversarial-Neighbor", "Adversarial-GPTInst", "Adversarial-GPTOut", "Adversarial-Manual")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--templates", default=",".join(TEMPLATES), help="comma-separated correctness templates")
    parser.add_argument(
        "--sets", default=",".join(SETS), help="comma-separated question sets (ours, held_out, later; '': none)"
    )
    parser.add_argument("--llmbar-n", type=int, default=None, help="LLMBar pairs per subset (0: none; default all)")
    parser.add_argument("--llmbar-template", default="likert", help="the template LLMBar's outputs are scored under")
    add_judge_options(parser)
    return parser.parse_args(argv)


async def judged(judge: jw.LLMJudge, cases: pd.DataFrame) -> list[dict[str, Any]]:
    """Every question's right and wrong answer judged without a reference: one row per answer."""
    prompts = [q for q in cases["question"] for _ in range(2)]
    responses = [a for right, wrong in zip(cases["right"], cases["wrong"]) for a in (right, wrong)]
    result = await judge.ascore(prompts, responses, progress=False)
    rows = []
    for vote in result.vote_list:
        case = cases.iloc[vote.item // 2]
        rows.append(
            {
                "question": case["question"],
                "kind": case.get("kind", case.get("category")),
                "reference": case["reference"],
                "answer": ("right", "wrong")[vote.item % 2],
                "response": responses[vote.item],
                "score": vote.score,
                "error": vote.error,
                "seconds": vote.latency_s,
                "prompt_tokens": vote.prompt_tokens,
                "completion_tokens": vote.completion_tokens,
                "cached": vote.cached,
                "reference_source": vote.reference_source,
                "made_reference": vote.made_reference,
            }
        )
    return rows


def summarise(rows: list[dict[str, Any]]) -> dict[str, float]:
    """The shares and means of one setting's rows (a missing score meets no target)."""
    right = {r["question"]: r["score"] for r in rows if r["answer"] == "right"}
    wrong = {r["question"]: r["score"] for r in rows if r["answer"] == "wrong"}
    low = {q: wrong[q] <= WRONG_AT_MOST for q in wrong}
    high = {q: right[q] >= RIGHT_AT_LEAST for q in right}
    return {
        "both": sum(low[q] and high[q] for q in right) / len(right),
        "wrong_low": sum(low.values()) / len(low),
        "right_high": sum(high.values()) / len(high),
        "wrong_mean": statistics.fmean(wrong.values()),
        "right_mean": statistics.fmean(right.values()),
        "graded_against_made": sum(r["reference_source"] == "judge" for r in rows) / len(rows),
        "failed": sum(r["error"] is not None for r in rows),
        "usd": sum(PRICE[0] * r["prompt_tokens"] + PRICE[1] * r["completion_tokens"] for r in rows),
    }


def print_questions(args: argparse.Namespace, make_judge: Any) -> list[dict[str, Any]]:
    """The question sets, per template and setting; returns every judged row."""
    rows: list[dict[str, Any]] = []
    print(
        f"{'set':9s} {'template':21s} {'setting':8s} {'both':>6s} {'wrong<=.3':>10s} {'right>=.7':>10s} "
        f"{'wrong':>6s} {'right':>6s} {'vs made':>8s} {'failed':>6s} {'$ ' + PRICED_AS:>18s}"
    )
    for set_name in filter(None, args.sets.split(",")):
        cases = pd.read_csv(SETS[set_name])
        for template in args.templates.split(","):
            for setting, commit_first in SETTINGS.items():
                judge = make_judge(template=template, name=f"{template} ({setting})", commit_first=commit_first)
                judged_rows = asyncio.run(judged(judge, cases))
                s = summarise(judged_rows)
                rows += [{"set": set_name, "template": template, "setting": setting, **r} for r in judged_rows]
                target = "met" if s["both"] >= SHARE else "not met"
                print(
                    f"{set_name:9s} {template:21s} {setting:8s} {s['both']:6.0%} {s['wrong_low']:10.0%} "
                    f"{s['right_high']:10.0%} {s['wrong_mean']:6.2f} {s['right_mean']:6.2f} "
                    f"{s['graded_against_made']:8.0%} {s['failed']:6d} {s['usd']:18.5f}  {target}",
                    flush=True,
                )
    return rows


def print_misses(rows: list[dict[str, Any]]) -> None:
    """Under the default: every question whose pair misses the target, with the answer made first."""
    frame = pd.DataFrame([r for r in rows if r["setting"] == "default"])
    if frame.empty:
        return
    print(f"\nquestions that miss the target by default (wrong > {WRONG_AT_MOST} or right < {RIGHT_AT_LEAST}):")
    for (set_name, template, question), group in frame.groupby(["set", "template", "question"], sort=False):
        scores = dict(zip(group["answer"], group["score"]))
        if scores["wrong"] <= WRONG_AT_MOST and scores["right"] >= RIGHT_AT_LEAST:
            continue
        made = group["made_reference"].iloc[0]
        print(
            f"  {set_name}/{template}: {question!r} right {scores['right']:.2f} wrong {scores['wrong']:.2f}, "
            f"made {made!r}, reference {group['reference'].iloc[0]!r}"
        )


async def made_answers(model: str, questions: list[str], cache: bool | str) -> dict[str, str | None]:
    """The answer the default judge's own model makes first to each question (once each, cached)."""
    committer = jw.LLMJudge(model, template="likert", cache=cache).committer
    assert committer is not None, "the default commits first only for the embedded judge"
    session = CallSession()
    made = {}
    for question in questions:
        asked = question_of(Item(question, ""))
        assert asked is not None
        solution, _ = await committer.solution(asked, session)
        made[question] = solution.answer
    return made


def pair_accuracy(scores: dict[int, float], pairs: pd.DataFrame) -> float:
    """LLMBar's accuracy of pointwise scores: the better output's score higher wins, a tie counts half."""
    won = []
    for i, label in enumerate(pairs["label"]):
        a, b = scores[2 * i], scores[2 * i + 1]
        better, worse = (a, b) if label == "A" else (b, a)
        won.append(1.0 if better > worse else 0.5 if better == worse else 0.0)
    return statistics.fmean(won) if won else float("nan")


def print_llmbar(args: argparse.Namespace, make_judge: Any) -> list[dict[str, Any]]:
    """Per LLMBar subset: the pairs the default grades against a made answer, their accuracy today and by default."""
    cache = call_cache(args)
    template = args.llmbar_template
    print(f"\nLLMBar, each output scored alone under {template!r}; only pairs with a short made answer differ")
    print(f"{'subset':22s} {'pairs':>5s} {'asked':>5s} {'short':>5s} {'today':>6s} {'default':>8s} {'seconds':>8s}")
    rows = []
    for subset in LLMBAR_SUBSETS:
        pairs = jw.datasets.llmbar(subset)
        if args.llmbar_n:
            pairs = pairs.head(args.llmbar_n)
        started = time.perf_counter()
        asked = [q for q in dict.fromkeys(pairs["question"]) if asks_for_a_fact(q)]
        made = asyncio.run(made_answers(args.model, asked, cache))
        short = pairs[[made.get(q) is not None and checkable(made[q], q) for q in pairs["question"]]]
        prompts = [p for p in short["question"] for _ in range(2)]
        outputs = [o for a, b in zip(short["response_a"], short["response_b"]) for o in (a, b)]
        accuracy = {}
        for setting, commit_first in SETTINGS.items():
            judge = make_judge(template=args.llmbar_template, commit_first=commit_first)
            result = judge.score(prompts, outputs, progress=False) if prompts else None
            scores = {v.item: v.score for v in result.vote_list} if result else {}
            accuracy[setting] = pair_accuracy(scores, short)
        seconds = time.perf_counter() - started
        counts = {"pairs": len(pairs), "asked": len(asked), "short": len(short)}
        rows.append({"subset": subset, **counts, **accuracy, "seconds": seconds})
        print(
            f"{subset:22s} {len(pairs):5d} {len(asked):5d} {len(short):5d} {accuracy['today']:6.1%} "
            f"{accuracy['default']:8.1%} {seconds:8.0f}",
            flush=True,
        )
    return rows


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    make_judge = judge_factory(args)
    rows = print_questions(args, make_judge)
    print_misses(rows)
    write_rows(rows, args.out)
    if args.llmbar_n != 0:
        print_llmbar(args, make_judge)


if __name__ == "__main__":
    main()
