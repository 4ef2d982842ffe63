"""Judging conversations: how often does the embedded judge tell a good last reply from its bad twin?

Run: `python benchmarks/conversations.py [--limit N] [--templates true_false,likert,own,likelihood]
[--methods default,probability,likelihood] [--mt-bench] [--fresh] [--out rows.csv]`.

Data: `jw.datasets.conversations()`, 45 pairs of twin conversations written for judgewidgets (Apache-2.0): each pair
shares its history and differs only in the assistant's last reply, one good and one bad for a reason that is not a
matter of taste, nine pairs of each kind: the reply breaks a constraint the user set in the first turn
(forgets_constraint), contradicts the assistant's own earlier statement (contradicts), uses what the user corrected
(ignores_correction), gives in substance what it refused before (unsafe_repeat), or calls the wrong tool or the right
one with arguments against the user (wrong_tool). Three ways of judging them:

- last turn: the last reply in the context of the history (`target="last_turn"`) under each of `--templates`, general
  ones (`true_false`, `likert`) and "own" (each record's conversation template: knowledge_retention, consistency,
  role_adherence or task_completion); pass = score >= 0.5 (the package's pass threshold), right when it matches the
  label; twins ordered = the good twin scored strictly above the bad one. "likelihood" asks nothing:
  `jw.LikelihoodJudge` reads the model's own probability of the reply with and without the history (its score is
  σ of their log ratio, so pass means the history makes the reply more likely).
- whole: the whole conversation (`target="whole"`) under each record's own conversation template.
- pairwise: `jw.PairwiseJudge` on the two replies to the shared history (`compare_many(histories=...)`), both orders,
  under each of `--methods` ("default" is the judge as given: for the embedded judge the pointwise method, which
  scores each reply alone, so no order can decide); accuracy averaged over the two orders, both orders right, and
  positional agreement (the two orders name the same winner). The good reply is response a in every other pair.
  "likelihood" compares the two replies' readings (`PairwiseJudge(method="likelihood")`); the pointwise and pairwise
  likelihood settings force the same requests, so the second is answered by the call cache.

Every accuracy has a 95 % percentile bootstrap interval over conversations (pairs for pairwise); seconds per judgment
are the median of uncached calls (nan when every call came from the cache). A failed call counts as wrong.
Targets (issue 26): accuracy >= 90 % on the clear-cut set, positional agreement >= 95 %.

`--limit N`: the first N pairs, taken in turn from each kind. Calls go through the persistent call cache unless
`--fresh`; `--api-base URL --model NAME` judges with a model on an OpenAI-compatible server (how the tests drive this
script).

Measured on 2026-11-25, two cores, the embedded judge: at chance in every setting (45-52 %; pairwise with the
probability method 47.8 % with positional agreement 20 %); the table is in docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np
import pandas as pd
from _labelled import add_judge_options, write_rows

import judgewidgets as jw
from judgewidgets.agreement import bootstrap_ci
from judgewidgets.conversations import Target
from judgewidgets.datasets import CONVERSATION_KINDS

TARGETS = {"accuracy": 0.90, "positional_agreement": 0.95}
TEMPLATES = "true_false,likert,own,likelihood"
METHODS = "default,probability,likelihood"
PASS = 0.5


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--limit", type=int, default=None, help="the first N pairs, in turn from each kind (all 45)")
    parser.add_argument(
        "--templates", default=TEMPLATES, help=f"last-turn templates, 'own' = each record's ({TEMPLATES})"
    )
    parser.add_argument("--methods", default=METHODS, help=f"pairwise methods, 'default' = as given ({METHODS})")
    parser.add_argument(
        "--mt-bench",
        action="store_true",
        help="also compare the 27 second-turn pairs on MT-Bench's questions (jw.datasets.mt_bench_pairs())",
    )
    add_judge_options(parser)
    return parser.parse_args(argv)


def chosen_pairs(limit: int | None) -> list[str]:
    """The pair ids to judge: every pair, or the first `limit` taken in turn from each kind."""
    pairs = jw.datasets.conversation_pairs()
    pairs["rank"] = pairs.groupby("kind").cumcount()
    pairs["order"] = pairs["kind"].map({k: i for i, k in enumerate(CONVERSATION_KINDS)})
    ordered = pairs.sort_values(["rank", "order"], kind="stable")
    return ordered["pair_id"].head(limit).tolist() if limit is not None else pairs["pair_id"].tolist()


class Judges:
    """The judges the options name, all on one call cache: the model as given, or served at --api-base."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.cache: bool | str = str(Path(tempfile.mkdtemp()) / "calls.sqlite") if args.fresh else True
        self.server = {"api_base": args.api_base, "api_key": "sk-benchmark"} if args.api_base else {}
        self.model = f"openai/{args.model}" if args.api_base else args.model

    def pointwise(self, template: str, name: str) -> jw.LLMJudge:
        return jw.LLMJudge(self.model, template=template, name=name, cache=self.cache, **self.server)

    def pairwise(self, method: str) -> jw.PairwiseJudge:
        chosen: Any = None if method == "default" else method  # PairwiseJudge checks the name
        return jw.PairwiseJudge(self.model, method=chosen, name=method, cache=self.cache, **self.server)

    def likelihood(self, name: str) -> jw.LikelihoodJudge:
        return jw.LikelihoodJudge(self.model, name=name, cache=self.cache, **self.server)


async def score(
    judge: jw.LLMJudge | jw.LikelihoodJudge, frame: pd.DataFrame, target: Target, setting: str, template: str
) -> list[dict[str, Any]]:
    """One row per conversation of `frame` judged under `target`."""
    if frame.empty:
        return []
    result = await judge.ascore(conversations=frame["messages"].tolist(), target=target, progress=False)
    rows = []
    for vote in result.vote_list:
        record = frame.iloc[vote.item]
        passed = bool(vote.score >= PASS) if not np.isnan(vote.score) else None
        rows.append(
            {
                "setting": setting,
                "template": template,
                "id": record["id"],
                "pair_id": record["pair_id"],
                "kind": record["kind"],
                "label": int(record["label"]),
                "score": vote.score,
                "passed": passed,
                "correct": passed is not None and passed == bool(record["label"]),
                "error": vote.error,
                "seconds": vote.latency_s,
                "cached": vote.cached,
            }
        )
    return rows


async def pointwise_rows(judges: Judges, frame: pd.DataFrame, templates: Sequence[str]) -> list[dict[str, Any]]:
    """The last turn under each template ("own": each record's), then the whole under each record's template."""
    rows: list[dict[str, Any]] = []
    plan: list[tuple[str, str, Target]] = [(f"last turn, {t}", t, "last_turn") for t in templates if t != "own"]
    if "own" in templates:
        plan += [("last turn, own template", own, "last_turn") for own in sorted(set(frame["template"]))]
    if any(t != "likelihood" for t in templates):
        plan += [("whole, own template", own, "whole") for own in sorted(set(frame["template"]))]
    for setting, template, target in plan:
        part = frame if "own" not in setting else frame[frame["template"] == template]
        judge = (
            judges.likelihood(setting)
            if template == "likelihood"
            else judges.pointwise(template, f"{setting} ({template})")
        )
        rows += await score(judge, part, target, setting, template)
    return rows


async def pairwise_rows(
    judges: Judges, pairs: pd.DataFrame, methods: Sequence[str], name: str = "pairwise"
) -> list[dict[str, Any]]:
    """One row per pair and method: each order's winner against the label, and the debiased winner."""
    rows = []
    for method in methods:
        judge = judges.pairwise(method)
        setting = f"{name}, {method}" + (f" ({judge.method})" if method == "default" else "")
        table = await judge.acompare_many(
            histories=pairs["history"].tolist(),
            responses_a=pairs["response_a"].tolist(),
            responses_b=pairs["response_b"].tolist(),
            progress=False,
        )
        for pair, result in zip(pairs.to_dict("records"), table.to_dict("records")):
            orders = [result["winner_ab"], result["winner_ba"]]
            rows.append(
                {
                    "setting": setting,
                    "template": method,
                    "pair_id": pair["pair_id"],
                    "kind": pair["kind"],
                    "label": pair["label"],
                    "winner": result["winner"],
                    "winner_ab": orders[0],
                    "winner_ba": orders[1],
                    "correct": sum(o == pair["label"] for o in orders) / 2,
                    "both_correct": all(o == pair["label"] for o in orders),
                    "consistent": orders[0] is not None and orders[0] == orders[1],
                    "error": result["error"] if isinstance(result["error"], str) else None,  # a table's NaN: none
                    "seconds": result["latency_s"] / 2,  # two calls per pair, in either method
                    "cached": bool(result["cached"]),
                }
            )
    return rows


def interval(values: Sequence[float]) -> tuple[float, float, float]:
    """The mean of `values` and its 95 % percentile bootstrap interval (NaN when empty)."""
    if not values:
        return (float("nan"),) * 3
    ci = bootstrap_ci(lambda v: v.mean(axis=-1), np.asarray(values, dtype=float), vectorized=True, seed=0)
    return ci.estimate, ci.low, ci.high


def seconds(rows: Sequence[dict[str, Any]]) -> float:
    fresh = [r["seconds"] for r in rows if not r["cached"] and r["error"] is None]
    return statistics.median(fresh) if fresh else float("nan")


def summarise(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """One summary per setting: judged, accuracy with its interval, twins ordered (pointwise) or both orders right
    and positional agreement (pairwise), failed calls, seconds per judgment."""
    out = []
    for setting in dict.fromkeys(r["setting"] for r in rows):
        mine = [r for r in rows if r["setting"] == setting]
        accuracy = interval([float(r["correct"]) for r in mine])
        summary: dict[str, Any] = {
            "setting": setting,
            "judged": len(mine),
            "accuracy": accuracy[0],
            "accuracy_low": accuracy[1],
            "accuracy_high": accuracy[2],
            "failed": sum(r["error"] is not None for r in mine),
            "s_per_judgment": seconds(mine),
        }
        if setting.startswith("pairwise"):
            agreement = interval([float(r["consistent"]) for r in mine])
            summary |= {
                "both_orders_right": statistics.fmean(float(r["both_correct"]) for r in mine),
                "positional_agreement": agreement[0],
                "agreement_low": agreement[1],
                "agreement_high": agreement[2],
            }
        else:
            scores = {(r["pair_id"], r["label"]): r["score"] for r in mine}
            twins = [p for p, label in scores if label == 1 and (p, 0) in scores]
            summary["twins_ordered"] = sum(bool(scores[p, 1] > scores[p, 0]) for p in twins)
            summary["twins"] = len(twins)
        out.append(summary)
    return out


def by_kind(rows: Sequence[dict[str, Any]]) -> pd.DataFrame:
    """Accuracy per setting (rows) and kind (columns): the clear-cut set's kinds in their order, then any other
    (the MT-Bench pairs' with --mt-bench); NaN where a setting has no pair of that kind."""
    frame = pd.DataFrame([{**r, "correct": float(r["correct"])} for r in rows])
    table = frame.pivot_table(index="setting", columns="kind", values="correct", aggfunc="mean", sort=False)
    ours = [k for k in CONVERSATION_KINDS if k in table.columns]
    return table[ours + [k for k in table.columns if k not in ours]]


def met(value: float, target: float) -> str:
    return f"{value / target:.2f}× target, " + ("met" if value >= target else "NOT met")


def percent(value: float, digits: int = 1) -> str:
    return "nan" if np.isnan(value) else f"{value:.{digits}%}"


def print_tables(summaries: Sequence[dict[str, Any]], rows: Sequence[dict[str, Any]], judge: str) -> None:
    print(
        f"\n{'setting (judge ' + judge + ')':48s} {'judged':>6s} {'accuracy [95 % CI]':>21s} {'twins ordered':>13s} "
        f"{'both orders':>11s} {'positional agreement':>24s} {'failed':>6s} {'s/judgment':>10s}"
    )
    for s in summaries:
        accuracy = f"{percent(s['accuracy'])} [{percent(s['accuracy_low'], 0)}, {percent(s['accuracy_high'], 0)}]"
        if "positional_agreement" in s:
            twins, both = "", percent(s["both_orders_right"])
            position = f"{percent(s['positional_agreement'])} [{percent(s['agreement_low'], 0)}, "
            position += f"{percent(s['agreement_high'], 0)}]"
        else:
            twins, both, position = f"{s['twins_ordered']}/{s['twins']}", "", ""
        print(
            f"{s['setting']:48s} {s['judged']:6d} {accuracy:>21s} {twins:>13s} {both:>11s} {position:>24s} "
            f"{s['failed']:6d} {s['s_per_judgment']:10.2f}"
        )
    print(f"{'targets':48s} {'':6s} {'>= 90 %':>21s} {'':13s} {'':11s} {'>= 95 %':>24s}")
    print("(s/judgment: median of uncached calls; nan when every call came from the cache)")
    print("\naccuracy by kind")
    print(by_kind(rows).map(lambda v: "" if np.isnan(v) else f"{v:.0%}").to_string())
    print()
    for s in summaries:
        line = f"targets, {s['setting']}: accuracy {percent(s['accuracy'])} ({met(s['accuracy'], TARGETS['accuracy'])})"
        if "positional_agreement" in s:
            agreement = s["positional_agreement"]
            line += f"; positional agreement {percent(agreement)} ({met(agreement, TARGETS['positional_agreement'])})"
        print(line)


async def main(argv: list[str] | None = None) -> list[dict[str, Any]]:
    args = parse_args(argv)
    chosen = chosen_pairs(args.limit)
    frame = jw.datasets.conversations()
    frame = frame[frame["pair_id"].isin(chosen)].reset_index(drop=True)
    pairs = jw.datasets.conversation_pairs()
    pairs = pairs[pairs["pair_id"].isin(chosen)].reset_index(drop=True)
    templates = [t.strip() for t in args.templates.split(",") if t.strip()]
    methods = [m.strip() for m in args.methods.split(",") if m.strip()]
    judges = Judges(args)
    print(
        f"{len(pairs)} twin pairs ({len(frame)} conversations: "
        + ", ".join(f"{k} {n}" for k, n in pairs["kind"].value_counts(sort=False).items())
        + f"), judge {args.model!r}, last-turn templates {templates}, pairwise methods {methods}"
    )
    rows = await pointwise_rows(judges, frame, templates)
    rows += await pairwise_rows(judges, pairs, methods)
    if args.mt_bench:
        mt_bench = jw.datasets.mt_bench_pairs()
        mt_bench = mt_bench.assign(kind="mt_bench " + mt_bench["kind"])
        rows += await pairwise_rows(judges, mt_bench, methods, "pairwise, MT-Bench turn 2")
    summaries = summarise(rows)
    print_tables(summaries, rows, args.model)
    write_rows(rows, args.out)
    return summaries


if __name__ == "__main__":
    asyncio.run(main())
