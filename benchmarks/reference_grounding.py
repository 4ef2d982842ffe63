"""Reference-grounded verdicts: with a reference answer given, do wrong answers score low and right ones high?

Run: `python benchmarks/reference_grounding.py [--quick] [--n 50] [--templates a,b] [--fresh] [--out rows.csv]`;
`--commit-first [--llmbar-n 100] [--solver MODEL]` for the commit-first comparison (issue 35, below).
`benchmarks/data/reference_qa.csv`: 50 short questions written for this benchmark (ours, CC0): facts,
arithmetic, units, dates and names, each with a reference answer, a right answer worded unlike the reference
("Four: two atria and two ventricles." against "4", "Eric Blair, under his pen name Orwell.") and a plausible
wrong one (0 °F for water's freezing point, 360 seconds in an hour, 1799 for the French Revolution). Every
built-in template judges every answer against its reference twice: *before*, the template with
`reference_grounding=False` (the prompt as it was: the reference after the response, one verdict); *after*, as
shipped. Printed per template and version: the mean score of right and of wrong answers, the share of wrong answers
scored <= 0.5 and of right ones >= 0.5, the pairs (one question's right and wrong answer) ordered right (strictly),
failed calls and the median seconds per uncached judgment, beside the targets (issue 23): wrong answers average
<= 0.3 and >= 90 % of them <= 0.5; right answers average >= 0.8 and >= 90 % of them >= 0.5; every pair ordered
right. `--quick`: the first 10 questions under true_false_uncertain, true_false and likert. Calls go through the
persistent call cache unless `--fresh` (then the seconds are a cold model's); `--api-base URL --model NAME`
judges with a model on an OpenAI-compatible server (how the tests drive this script).

Measured before the number check below (embedded judge, all 50 questions, 2 cores, ~1.0-1.6 s per judgment;
before → after):

| template | right mean | wrong mean | wrong <= .5 | right >= .5 | pairs ordered right |
|---|---|---|---|---|---|
| true_false_uncertain | .78 → .89 | .59 → .18 | 32 % → 82 % | 96 % → 92 % | 40 → 46 / 50 |
| true_false | .72 → .87 | .52 → .18 | 44 % → 80 % | 88 % → 94 % | 41 → 46 |
| likert | .71 → .66 | .60 → .28 | 24 % → 90 % | 100 % → 74 % | 40 → 47 |
| instruction_following | .79 → .72 | .72 → .29 | 10 % → 86 % | 100 % → 80 % | 36 → 45 |
| follows_instruction | .76 → .89 | .58 → .22 | 32 % → 82 % | 100 % → 92 % | 38 → 46 |
| continuous | 1.00 → .74 | .90 → .14 | 10 % → 86 % | 100 % → 74 % | 5 → 31 |

Targets met: wrong mean <= .3 on all six (before: none); right mean >= .8 and >= 90 % of right answers >= .5 on
true_false_uncertain, true_false and follows_instruction; >= 90 % of wrong answers <= .5 on likert only (the others
80-86 %); every pair ordered right on none (45-47 of 50, continuous 31: it answers 0 or 100 and ties).
What is left is the 1.5B judge's reading of numbers: of true_false_uncertain's 9 wrong answers above 0.5, 8 state a
different number or date (0 °F for 32 °F, 360 for 3600 s, 100 g in a kilogram, 1991 for 1989, 1799 for 1789), and 3
of its 4 right answers below 0.5 are dates or names the judge called different ("November of 1989" against 1989).
That was before the number check (issue 35): a reference-grounded judgment whose reference's answer is one number now
compares the response's numbers with it in code (`judgewidgets/templates/_numbers.py`: digits and number words, so
"fifty-six" and "one thousand and twenty-four" read right, the question's own numbers left out) and tells the judge
what it found, prefilling its `matches_reference`; the commit-first tables in docs/benchmarks.md are measured with it.

Designs measured on the embedded judge (Qwen2.5-Coder-1.5B Q4_K_M, 2 cores), all 50 questions, right mean /
wrong mean, wrong <= 0.5 / right >= 0.5, pairs ordered right; true_false_uncertain, then likert:
- before (reference after the response, one verdict token): .78/.59, 32 %/96 %, 80 %; likert .72/.60, 24 %/100 %,
  80 %. true_false .72/.52, 44 %/88 %, 82 %.
- (c) the reference before the response, nothing else: .75/.19, 88 %/84 %, 94 %; likert .63/.36, 84 %/86 %, 94 %.
  Most of the gain is here: the judge compares the response with what it has just read.
- (c) + the question "Does the response give the same answer as the reference?" asked last: .80/.24, 88 %/90 %,
  94 %; likert .62/.36, 84 %/86 %, 94 %; true_false .76/.21, 88 %/88 %, 92 %; follows_instruction .71/.21.
- (a) + (c): the system message says a response whose answer differs from the reference is wrong and gets the
  lowest verdict: .69/.17, 88 %/80 %; likert .61/.34, 84 %/82 %. Every sentence of that kind (also inside (b))
  pushed the small judge towards "different" for right answers too (with (b): right .55–.64 on every template).
- (b) a `same_answer` field first, prefilled, the reference after the response: .74/.29, 76 %/72 %, 92 %. The order
  matters more than the field: P(same) alone gave right .56 / wrong .41.
- (b) + (c) + the question asked last (shipped): .92/.20, 82 %/92 %, 94 %; likert .67/.32, 88 %/78 %, 90 %
  (scratch runs, before the prompt's final wording; the table this script prints is the shipped prompt's).
- score rules on the same (b) + (c) answers: the verdict read after the judge's own same_answer (shipped) beat
  P(same) alone (.84/.33 and likert .68/.17), P(same) × the verdict's expected score given "same" (.83/.32; likert
  .54/.15: the judge's verdict for a right answer is 4 of 5, so the product sinks right answers), a hard gate at the
  bottom after "no" (ties: likert pairs 76 %) and the full mixture over both branches (.83/.34; likert .58/.34).
- the judge first writing the response's answer out (`response_answer`, ~10 more tokens): .93/.19, 84 %/92 %, 94 %,
  twice the time: no better.
Other wordings of the question and the field (match / same / different labels, the reference quoted again in the
question, "check numbers exactly", few-shot examples of same and different answers in the system message) moved
P(same) for right and wrong answers together (right .54–.84, wrong .13–.33) and never lifted the pairs above 94 %:
the 1.5B judge accepts 100 for 1000 g, 360 for 3,600 s and 0 °F for 32 °F whatever it is asked.

Commit-first (`--commit-first`, issue 35; measured tables in docs/benchmarks.md): the same questions judged four
ways side by side, per template (default true_false_uncertain and likert): *no reference*; *commit-first*, the
judge's own model answering each question first (its short answer, temperature 0; `--solver MODEL` names another)
and grading against that answer; *commit-first short*, the same but only when the answer is short (a word, number,
name or date), else without a reference; *true reference*. Printed per setting: the measures above, the seconds per
judgment with the answer's share included (the answer is made once per question, for its right and its wrong
response), and the targets for commit-first without a reference: wrong answers' mean <= 0.3, >= 85 % of them <= 0.5,
right answers' mean >= 0.8. Then every question whose made answer the judge itself finds different from the true
reference (graded under true_false_uncertain against it), for a person to check, and LLMBar Natural (`--llmbar-n`, 0
skips it: LLMBar has no references) compared by the default pairwise judge without and with commit-first (both
kinds)."""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import pandas as pd
from _labelled import add_judge_options, call_cache, judge_factory, write_rows

import judgewidgets as jw

CASES = Path(__file__).with_name("data") / "reference_qa.csv"
TEMPLATES = (
    "true_false_uncertain",
    "true_false",
    "likert",
    "instruction_following",
    "follows_instruction",
    "continuous",
)
QUICK_TEMPLATES = ("true_false_uncertain", "true_false", "likert")
QUICK_N = 10
TARGETS = {"wrong_mean": 0.3, "wrong_low": 0.9, "right_mean": 0.8, "right_high": 0.9, "pairs": 1.0}
COMMIT_TEMPLATES = ("true_false_uncertain", "likert")
COMMIT_TARGETS = {"wrong_mean": 0.3, "wrong_low": 0.85, "right_mean": 0.8}
SETTINGS = ("no reference", "commit-first", "commit-first short", "true reference")
COMMITTING = {"commit-first": True, "commit-first short": "short"}


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help=f"the first {QUICK_N} questions, three templates")
    parser.add_argument("--n", type=int, default=None, help="the first N questions (default: all)")
    parser.add_argument("--templates", default=None, help="comma-separated built-in templates (default: all six)")
    parser.add_argument(
        "--commit-first", action="store_true", help="no reference / commit-first / true reference, side by side"
    )
    parser.add_argument("--solver", default=None, help="with --commit-first: this model answers first")
    parser.add_argument("--llmbar-n", type=int, default=100, help="with --commit-first: LLMBar Natural pairs (0: none)")
    add_judge_options(parser)
    return parser.parse_args(argv)


def versions(name: str) -> dict[str, jw.Template]:
    """The template as it was (reference_grounding off) and as shipped."""
    shipped = jw.templates.get_template(name)
    return {"before": shipped.model_copy(update={"reference_grounding": False}), "after": shipped}


async def judge_all(judge: jw.LLMJudge, cases: pd.DataFrame, given: bool = True) -> list[dict[str, Any]]:
    """Every case's right and wrong answer judged (against its reference when `given`): one row per answer."""
    prompts = [q for q in cases["question"] for _ in range(2)]
    references = [r if given else None for r in cases["reference"] for _ in range(2)]
    responses = [a for right, wrong in zip(cases["right"], cases["wrong"]) for a in (right, wrong)]
    result = await judge.ascore(prompts, responses, references, progress=False)
    rows = []
    for vote in result.vote_list:
        case = cases.iloc[vote.item // 2]
        rows.append(
            {
                "question": case["question"],
                "category": case["category"],
                "reference": case["reference"],
                "kind": ("right", "wrong")[vote.item % 2],
                "response": responses[vote.item],
                "score": vote.score,
                "raw": vote.raw,
                "error": vote.error,
                "seconds": vote.latency_s,
                "cached": vote.cached,
                "reference_source": vote.reference_source,
                "made_reference": vote.made_reference,
            }
        )
    return rows


def summarise(rows: list[dict[str, Any]]) -> dict[str, float]:
    """The measures of one template version's rows (NaN scores count against every target). Seconds: the median
    uncached judgment; `s_mean` the mean over uncached judgments, an answer made first included in its vote."""
    right = {r["question"]: r["score"] for r in rows if r["kind"] == "right"}
    wrong = {r["question"]: r["score"] for r in rows if r["kind"] == "wrong"}
    fresh = [r["seconds"] for r in rows if not r["cached"] and r["error"] is None]
    return {
        "right_mean": statistics.fmean(right.values()),
        "wrong_mean": statistics.fmean(wrong.values()),
        "wrong_low": sum(v <= 0.5 for v in wrong.values()) / len(wrong),
        "right_high": sum(v >= 0.5 for v in right.values()) / len(right),
        "pairs": sum(right[q] > wrong[q] for q in right) / len(right),
        "failed": sum(r["error"] is not None for r in rows),
        "s_per_judgment": statistics.median(fresh) if fresh else float("nan"),
        "s_mean": statistics.fmean(fresh) if fresh else float("nan"),
    }


def met(summary: dict[str, float]) -> dict[str, bool]:
    """Each target, met or not (NaN means never meet one)."""
    return {
        "wrong_mean": summary["wrong_mean"] <= TARGETS["wrong_mean"],
        "wrong_low": summary["wrong_low"] >= TARGETS["wrong_low"],
        "right_mean": summary["right_mean"] >= TARGETS["right_mean"],
        "right_high": summary["right_high"] >= TARGETS["right_high"],
        "pairs": summary["pairs"] >= TARGETS["pairs"],
    }


def print_rows(summaries: dict[tuple[str, str], dict[str, float]], n: int, kind: str, seconds: str) -> None:
    """One row per (template, `kind`): the measures, the failed calls and the seconds per judgment (`seconds`)."""
    width = 18 if kind == "setting" else 7
    print(
        f"\n{'template':22s} {kind:{width}s} {'right':>6s} {'wrong':>6s} {'wrong<=.5':>10s} {'right>=.5':>10s} "
        f"{'pairs':>9s} {'failed':>6s} {'s/judgment':>10s}"
    )
    for (name, label), s in summaries.items():
        pairs = round(s["pairs"] * n)
        print(
            f"{name:22s} {label:{width}s} {s['right_mean']:6.2f} {s['wrong_mean']:6.2f} {s['wrong_low']:10.0%} "
            f"{s['right_high']:10.0%} {pairs:>4d}/{n:<4d} {int(s['failed']):6d} {s[seconds]:10.2f}"
        )


def print_table(summaries: dict[tuple[str, str], dict[str, float]], n: int) -> None:
    print_rows(summaries, n, "version", "s_per_judgment")
    print(
        f"{'targets':30s} {'>=0.80':>6s} {'<=0.30':>6s} {'>=90%':>10s} {'>=90%':>10s} {f'{n}/{n}':>9s}"
        "   (s/judgment nan: every call came from the cache)"
    )
    for (name, version), s in summaries.items():
        if version == "after":
            ok = met(s)
            missed = [k for k, v in ok.items() if not v]
            verdict = "every target met" if not missed else "NOT met: " + ", ".join(missed)
            print(f"targets, {name}: {sum(ok.values())}/{len(ok)} — {verdict}")


def print_commit_table(summaries: dict[tuple[str, str], dict[str, float]], n: int) -> None:
    print_rows(summaries, n, "setting", "s_mean")
    print(
        f"{'targets (commit-first)':41s} {'>=0.80':>6s} {'<=0.30':>6s} {'>=85%':>10s}"
        "   (s/judgment: mean over uncached judgments, the answer's share included; nan: all cached)"
    )
    for (name, setting), s in summaries.items():
        if setting in COMMITTING:
            ok = {
                "wrong_mean": s["wrong_mean"] <= COMMIT_TARGETS["wrong_mean"],
                "wrong_low": s["wrong_low"] >= COMMIT_TARGETS["wrong_low"],
                "right_mean": s["right_mean"] >= COMMIT_TARGETS["right_mean"],
            }
            missed = [k for k, v in ok.items() if not v]
            verdict = "every target met" if not missed else "NOT met: " + ", ".join(missed)
            print(f"targets, {name} {setting}: {sum(ok.values())}/{len(ok)} — {verdict}")


async def made_answers_checked(
    make_judge: Any, rows: list[dict[str, Any]], cases: pd.DataFrame
) -> list[dict[str, Any]]:
    """Each question's made answer graded against its true reference (true_false_uncertain): the ones the judge
    finds different, for a person to check."""
    made = {r["question"]: r["made_reference"] for r in rows if r["made_reference"]}
    asked = [q for q in cases["question"] if q in made]
    truth = dict(zip(cases["question"], cases["reference"]))
    judge = make_judge(template="true_false_uncertain", name="made answer vs reference")
    result = await judge.ascore(asked, [made[q] for q in asked], [truth[q] for q in asked], progress=False)
    return [
        {"question": q, "reference": truth[q], "made": made[q], "score": v.score}
        for q, v in zip(asked, sorted(result.vote_list, key=lambda v: v.item))
    ]


async def llmbar_natural(args: argparse.Namespace, cache: bool | str) -> pd.DataFrame:
    """LLMBar Natural compared by the default pairwise judge, without and with commit-first."""
    server = {"api_base": args.api_base, "api_key": "sk-benchmark"} if args.api_base else {}
    model = f"openai/{args.model}" if args.api_base else args.model
    rows = []
    for setting in ("no reference", *COMMITTING):
        options: dict[str, Any] = {"commit_first": COMMITTING.get(setting, False)}
        if args.solver and setting in COMMITTING:
            options["solver"] = args.solver
        judge = jw.PairwiseJudge(model, name=f"pairwise ({setting})", cache=cache, **server, **options)
        report = await jw.ameta_evaluate(judge, "llmbar", subsets=["Natural"], n=args.llmbar_n, progress=False)
        row = report.measured.iloc[0]
        fresh = report.verdicts[~report.verdicts["swapped"]]["seconds"]
        fresh = fresh[fresh > 0]
        rows.append(
            {
                "setting": setting,
                "pairs": int(row["n"]) if "n" in row else args.llmbar_n,
                "accuracy": row["accuracy"],
                "positional_agreement": row["positional_agreement"],
                "s_per_pair": float(fresh.median()) if len(fresh) else float("nan"),
            }
        )
    return pd.DataFrame(rows)


async def commit_first(args: argparse.Namespace, cases: pd.DataFrame) -> list[dict[str, Any]]:
    """No reference, commit-first and the true reference side by side; the made answers checked; LLMBar Natural."""
    names = args.templates.split(",") if args.templates else list(COMMIT_TEMPLATES)
    make_judge = judge_factory(args)
    print(f"{len(cases)} questions × (right, wrong) answers, judge {args.model!r}, templates {names}, commit-first")
    rows: list[dict[str, Any]] = []
    summaries: dict[tuple[str, str], dict[str, float]] = {}
    for name in names:
        for setting in SETTINGS:
            committing = COMMITTING.get(setting, False)
            options: dict[str, Any] = {"commit_first": committing}
            if committing and args.solver:
                options["solver"] = f"openai/{args.solver}" if args.api_base else args.solver
            judge = make_judge(template=name, name=f"{name} ({setting})", **options)
            judged = await judge_all(judge, cases, given=setting == "true reference")
            summaries[name, setting] = summarise(judged)
            rows += [{"template": name, "setting": setting, **row} for row in judged]
    print_commit_table(summaries, len(cases))
    checked = await made_answers_checked(make_judge, [r for r in rows if r["setting"] == "commit-first"], cases)
    different = [c for c in checked if c["score"] < 0.5]
    print(f"\nmade answers the judge finds different from the true reference: {len(different)} of {len(checked)}")
    for c in different:
        print(f"  {c['score']:.2f}  {c['question']!r}: made {c['made']!r}, reference {c['reference']!r}")
    if args.llmbar_n:
        cache = call_cache(args)
        table = await llmbar_natural(args, cache)
        print("\nLLMBar Natural, default PairwiseJudge (both presentations; LLMBar has no references)")
        print(table.to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    return rows


async def main(argv: list[str] | None = None) -> list[dict[str, Any]]:
    args = parse_args(argv)
    cases = pd.read_csv(CASES)
    n = QUICK_N if args.quick and args.n is None else (args.n or len(cases))
    cases = cases.head(n)
    if args.commit_first:
        rows = await commit_first(args, cases)
        write_rows(rows, args.out)
        return rows
    names = args.templates.split(",") if args.templates else list(QUICK_TEMPLATES if args.quick else TEMPLATES)
    make_judge = judge_factory(args)
    print(f"{len(cases)} questions × (right, wrong) answers with references, judge {args.model!r}, templates {names}")
    rows: list[dict[str, Any]] = []
    summaries: dict[tuple[str, str], dict[str, float]] = {}
    for name in names:
        for version, template in versions(name).items():
            judged = await judge_all(make_judge(template=template, name=f"{name} ({version})"), cases)
            summaries[name, version] = summarise(judged)
            rows += [{"template": name, "version": version, **row} for row in judged]
    print_table(summaries, len(cases))
    write_rows(rows, args.out)
    return rows


if __name__ == "__main__":
    asyncio.run(main())
