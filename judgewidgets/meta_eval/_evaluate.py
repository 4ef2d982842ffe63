"""Measuring a judge against human labels on the shipped sets, the way the literature measures judges.

Every pair is presented to the judge in both orders (a then b, b then a), as LLMBar does: accuracy is averaged
over the two presentations, positional agreement is the share of pairs whose two presentations give the same
winner, and first-slot preference the share of decided presentations won by the response shown first. A
pairwise judge that itself judges both orders reuses its own cached calls for the second presentation.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from .._errors import ConfigurationError, InputError
from .._progress import Progress
from .._run import run_scope
from .._runner import run_sync
from .._saved import Dump, Keepable
from ..agreement import cohen_kappa, f1
from ..datasets import LLMBAR_SUBSETS, llmbar, pandalm
from ..datasets._load import subset_name
from ..engine import CallSession
from ..pairwise._judge import PairwiseComparer
from ..pairwise._records import PairItem, a_better, pointwise_outcome
from ..pairwise._scales import swap_slot
from ..scoring._judge import LLMJudge
from ..scoring._panel import LLMPanel
from ._published import published

if TYPE_CHECKING:
    import altair as alt

DATASETS = ("llmbar", "pandalm")
TABLE_COLUMNS = [
    "judge",
    "dataset",
    "subset",
    "n",
    "accuracy",
    "positional_agreement",
    "first_slot_preference",
    "accuracy_both",
    "ties",
    "kappa",
    "macro_f1",
    "f1_A",
    "f1_B",
    "f1_tie",
    "failed",
    "s_per_pair",
    "source",
]


def sample(frame: pd.DataFrame, n: int | None, seed: int) -> pd.DataFrame:
    """`n` rows drawn without replacement with `seed` (all rows when n is None or larger), in their order."""
    if n is None or n >= len(frame):
        return frame.reset_index(drop=True)
    if n < 1:
        raise InputError(f"n must be at least 1, got {n}")
    chosen = np.sort(np.random.default_rng(seed).choice(len(frame), size=n, replace=False))
    return frame.iloc[chosen].reset_index(drop=True)


def labelled_sets(
    datasets: Sequence[str], subsets: Sequence[str] | None, n: int | None, seed: int
) -> list[tuple[str, str, pd.DataFrame]]:
    """(dataset, subset, pairs) for every set asked for, each sampled with `n` and `seed`."""
    unknown = [d for d in datasets if d not in DATASETS]
    if unknown or not datasets:
        raise ConfigurationError(f"unknown dataset(s) {unknown or datasets}; use some of {', '.join(DATASETS)}")
    out = []
    if "llmbar" in datasets:
        names = [subset_name(s) for s in subsets] if subsets else list(LLMBAR_SUBSETS)
        every = llmbar(names)
        for name in names:
            out.append(("llmbar", name, sample(every[every["subset"] == name], n, seed)))
    if "pandalm" in datasets:
        out.append(("pandalm", "test", sample(pandalm(), n, seed)))
    return out


@dataclass
class MetaEvaluation(Keepable):
    """A judge measured on labelled sets: `table` (one row per set, beside the published judges),
    `verdicts` (one row per pair and presentation) and `chart()`."""

    judge: str
    measured: pd.DataFrame
    verdicts: pd.DataFrame
    published: pd.DataFrame = field(default_factory=published)

    def _dump(self) -> Dump:
        """The measured rows, the verdicts and the published rows as tables; the headline is each set's accuracy."""
        metrics = {f"accuracy/{row['set']}": float(row["accuracy"]) for row in self.summary().to_dict("records")}
        return Dump(
            kind="meta_evaluation",
            state={"judge": self.judge},
            tables={"measured": self.measured, "verdicts": self.verdicts, "published": self.published},
            metrics=metrics,
            judges=[self.judge],
        )

    @classmethod
    def _restore(cls, dump: Dump) -> MetaEvaluation:
        return cls(dump.state["judge"], dump.table("measured"), dump.table("verdicts"), dump.table("published"))

    @property
    def table(self) -> pd.DataFrame:
        """The measured rows first, then the published judges' rows for the same sets."""
        keys = set(zip(self.measured["dataset"], self.measured["subset"]))
        others = self.published[[k in keys for k in zip(self.published["dataset"], self.published["subset"])]]
        frame = pd.concat([self.measured, others], ignore_index=True)
        return frame.reindex(columns=TABLE_COLUMNS)

    def to_df(self) -> pd.DataFrame:
        return self.table

    def summary(self) -> pd.DataFrame:
        """One row per dataset for the measured judge: LLMBar's Natural, its Adversarial mean, PandaLM."""
        rows = []
        measured = self.measured
        for label, mask in (
            ("LLMBar Natural", measured["subset"] == "Natural"),
            ("LLMBar Adversarial (mean of subsets)", measured["subset"].str.startswith("Adversarial")),
            ("PandaLM", measured["dataset"] == "pandalm"),
        ):
            part = measured[mask]
            if len(part):
                rows.append(
                    {
                        "set": label,
                        "pairs": int(part["n"].sum()),
                        "accuracy": part["accuracy"].mean(),
                        "positional_agreement": part["positional_agreement"].mean(),
                        "s_per_pair": part["s_per_pair"].mean(),
                    }
                )
        return pd.DataFrame(rows)

    def chart(self) -> alt.FacetChart:
        """Accuracy per set, the measured judge beside the published ones."""
        from ._chart import meta_chart

        return meta_chart(self.table, self.judge)

    def _repr_html_(self) -> str:
        return self.table.round(3)._repr_html_()


def meta_evaluate(
    judge: Any,
    datasets: str | Sequence[str] = DATASETS,
    *,
    subsets: Sequence[str] | None = None,
    n: int | None = None,
    seed: int = 0,
    progress: bool | Progress = True,
) -> MetaEvaluation:
    """Measure `judge` on LLMBar's subsets and PandaLM's human majority; works inside Jupyter.

    `judge` is a pairwise judge or panel (anything with `acompare_items`), or a pointwise one (an `LLMJudge` or
    `LLMPanel`), which is compared by scoring each response alone. `subsets` picks LLMBar subsets ("Natural",
    "Adversarial-GPTInst" or short "gptinst", ...); `n` samples that many pairs per set with `seed`.
    """
    return run_sync(ameta_evaluate(judge, datasets, subsets=subsets, n=n, seed=seed, progress=progress))


async def ameta_evaluate(
    judge: Any,
    datasets: str | Sequence[str] = DATASETS,
    *,
    subsets: Sequence[str] | None = None,
    n: int | None = None,
    seed: int = 0,
    progress: bool | Progress = True,
) -> MetaEvaluation:
    """Async twin of `meta_evaluate`."""
    sets = labelled_sets([datasets] if isinstance(datasets, str) else list(datasets), subsets, n, seed)
    compare = _comparer(judge)
    judge.check()
    name = str(getattr(judge, "display_name", None) or getattr(judge, "name", None) or type(judge).__name__)
    frames = [frame.assign(dataset=dataset, subset=subset) for dataset, subset, frame in sets]
    pairs = pd.concat(frames, ignore_index=True)
    items = [PairItem(q, a, b) for q, a, b in zip(pairs["question"], pairs["response_a"], pairs["response_b"])]
    started = time.perf_counter()
    async with run_scope(progress, 2 * len(items), f"meta-evaluating ({name})") as run:
        first, second, seconds = await compare(judge, items, run.session, run.progress)
    wall = time.perf_counter() - started
    verdicts = _verdict_rows(pairs, first, second, seconds)
    measured = pd.DataFrame(
        [
            _metrics(name, dataset, subset, part)
            for (dataset, subset), part in verdicts.groupby(["dataset", "subset"], sort=False)
        ]
    )
    measured.attrs["wall_s"] = wall
    return MetaEvaluation(judge=name, measured=measured.reindex(columns=TABLE_COLUMNS), verdicts=verdicts)


# A presentation's outcome: (winner in the pair's own terms, P(a better), error, model seconds).
Outcome = tuple[str | None, float | None, str | None]


def _comparer(judge: Any) -> Any:
    if isinstance(judge, (LLMJudge, LLMPanel)):
        return _pointwise
    if isinstance(judge, PairwiseComparer):
        return _pairwise
    raise ConfigurationError(
        f"cannot meta-evaluate a {type(judge).__name__}: give a PairwiseJudge, PairwisePanel, LLMJudge or LLMPanel"
    )


async def _pairwise(
    judge: Any, items: list[PairItem], session: CallSession, bar: Progress
) -> tuple[list[Outcome], list[Outcome], list[float]]:
    mirrored = [PairItem(i.question, i.response_b, i.response_a, i.reference) for i in items]
    results = await judge.acompare_items([*items, *mirrored], session, bar)
    first = [_outcome(r, swapped=False) for r in results[: len(items)]]
    second = [_outcome(r, swapped=True) for r in results[len(items) :]]
    seconds = [_seconds(a) + _seconds(b) for a, b in zip(results[: len(items)], results[len(items) :])]
    return first, second, seconds


def _outcome(result: Any, swapped: bool) -> Outcome:
    winner = result.winner if not swapped or result.winner is None else swap_slot(result.winner)
    p = getattr(result, "p_a_better", None)
    if p is not None and swapped:
        p = 1 - p
    return winner, p, result.error


def _seconds(result: Any) -> float:
    return float(sum(v.latency_s for v in result.verdicts if not v.cached))


async def _pointwise(
    judge: Any, items: list[PairItem], session: CallSession, bar: Progress
) -> tuple[list[Outcome], list[Outcome], list[float]]:
    """Score every response alone; both presentations of a pair are the same two scores (no order exists)."""
    prompts = [i.question for i in items for _ in (0, 1)]
    responses = [r for i in items for r in (i.response_a, i.response_b)]
    result = await judge.ascore(prompts, responses, progress=bar)
    outcomes: list[Outcome] = []
    seconds = []
    for k in range(len(items)):
        a, b = _scored(judge, result, 2 * k), _scored(judge, result, 2 * k + 1)
        seconds.append(a[2] + b[2])
        if a[3] or b[3]:
            outcomes.append((None, None, a[3] or b[3]))
            continue
        values = judge.template.option_values() if isinstance(judge, LLMJudge) else {}
        winner, probabilities = pointwise_outcome(values, a[0], b[0], a[1], b[1])
        p_a = a_better(probabilities) if probabilities else {"A": 1.0, "B": 0.0, "tie": 0.5}[winner]
        outcomes.append((winner, p_a, None))
    return outcomes, list(outcomes), seconds


def _scored(judge: Any, result: Any, index: int) -> tuple[float, dict[str, float] | None, float, str | None]:
    """(score, probabilities, model seconds, error) of one response: a judge's vote, or a panel's average."""
    if isinstance(judge, LLMJudge):
        vote = result.vote_list[index]
        return vote.score, vote.probabilities, 0.0 if vote.cached else vote.latency_s, vote.error
    votes = [v for v in result.vote_list if v.item == index]
    scores = [v.score for v in votes if not math.isnan(v.score)]
    seconds = sum(v.latency_s for v in votes if not v.cached)
    if not scores:
        return math.nan, None, seconds, next((v.error for v in votes if v.error), "no judge answered")
    return float(np.mean(scores)), None, seconds, None


def _verdict_rows(
    pairs: pd.DataFrame, first: list[Outcome], second: list[Outcome], seconds: list[float]
) -> pd.DataFrame:
    """One row per pair and presentation: dataset, subset, pair_id, swapped, winner, p_a_better, label."""
    rows = []
    for k, row in enumerate(pairs.itertuples(index=False)):
        for swapped, (winner, p_a, error) in ((False, first[k]), (True, second[k])):
            rows.append(
                {
                    "dataset": row.dataset,
                    "subset": row.subset,
                    "pair_id": row.pair_id,
                    "swapped": swapped,
                    "winner": winner,
                    "p_a_better": p_a,
                    "label": row.label,
                    "error": error,
                    "seconds": seconds[k] / 2,
                }
            )
    return pd.DataFrame(rows)


def _metrics(judge: str, dataset: str, subset: str, part: pd.DataFrame) -> dict[str, Any]:
    """LLMBar's statistics (and, with a three-way label, κ and F1 against the label) for one set."""
    answered = part[part["winner"].notna() & part["label"].notna()]
    pivot = part.pivot(index="pair_id", columns="swapped", values="winner")
    both = pivot.dropna()
    correct = answered["winner"] == answered["label"]
    by_pair = answered.assign(correct=correct).groupby("pair_id")["correct"]
    decided = answered[answered["winner"] != "tie"]
    shown_first = np.where(decided["swapped"], "B", "A")
    row: dict[str, Any] = {
        "judge": judge,
        "dataset": dataset,
        "subset": subset,
        "n": int(part["pair_id"].nunique()),
        "accuracy": float(correct.sum() / max(len(part[part["label"].notna()]), 1)),
        "positional_agreement": float((both[False] == both[True]).mean()) if len(both) else math.nan,
        "first_slot_preference": float((decided["winner"] == shown_first).mean()) if len(decided) else math.nan,
        "accuracy_both": float((by_pair.sum() == 2).sum() / max(part["pair_id"].nunique(), 1)),
        "ties": float((answered["winner"] == "tie").mean()) if len(answered) else math.nan,
        "failed": int(part["winner"].isna().sum()),
        "s_per_pair": float(part.groupby("pair_id")["seconds"].sum().mean()),
        "source": "measured",
    }
    if dataset == "pandalm" and len(answered):
        labels = ["A", "B", "tie"]
        row["kappa"] = cohen_kappa(answered["winner"], answered["label"])
        row["macro_f1"] = f1(answered["winner"], answered["label"], labels=labels)
        for label in labels:
            row[f"f1_{label}"] = f1(answered["winner"], answered["label"], positive=label, labels=labels)
    return row
