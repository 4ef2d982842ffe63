"""Measuring a judge against human labels on the shipped sets, the way the literature measures judges.

Every pair is presented to the judge in both orders (a then b, b then a), as LLMBar does: accuracy is averaged
over the two presentations, positional agreement is the share of pairs whose two presentations give the same
winner, and first-slot preference the share of decided presentations won by the response shown first. A
pairwise judge that itself judges both orders reuses its own cached calls for the second presentation.

Your own labelled pairs are measured the same way (dataset "labelled"): a DataFrame of question, response_a,
response_b, or of conversations as `compare_many` reads them (a history with two replies, or conversation_a and
conversation_b), with an A / B / tie label per row.
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from .._errors import ConfigurationError, InputError
from .._progress import Progress
from .._records import Item
from .._run import run_scope
from .._runner import run_sync
from .._saved import Dump, Keepable
from ..agreement import cohen_kappa, f1
from ..alignment._labels import PAIRWISE_CLASSES, infer_kind
from ..alignment._labels import _pairwise as pairwise_code
from ..datasets import HARM_KINDS, LLMBAR_SUBSETS, harm_pairs, llmbar, pandalm
from ..datasets._load import subset_name
from ..engine import CallSession
from ..pairwise._batch import pairs_from
from ..pairwise._judge import PairwiseComparer
from ..pairwise._records import PairItem, a_better, pointwise_outcome
from ..pairwise._scales import swap_slot
from ..scoring._judge import LLMJudge
from ..scoring._panel import LLMPanel
from ._published import published

if TYPE_CHECKING:
    import altair as alt

DATASETS = ("llmbar", "pandalm")  # measured when none are named
KNOWN_DATASETS = (*DATASETS, "harm")  # "harm": jw.datasets.harm_pairs(), its two kinds as subsets
LABELLED = "labelled"  # the dataset name of a user's own labelled pairs
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
    unknown = [d for d in datasets if d not in KNOWN_DATASETS]
    if unknown or not datasets:
        raise ConfigurationError(f"unknown dataset(s) {unknown or datasets}; use some of {', '.join(KNOWN_DATASETS)}")
    harm_subsets = [s for s in subsets or () if s in HARM_KINDS]
    llmbar_subsets = [s for s in subsets or () if s not in HARM_KINDS]
    out = []
    if "llmbar" in datasets:
        names = [subset_name(s) for s in llmbar_subsets] if llmbar_subsets else list(LLMBAR_SUBSETS)
        every = llmbar(names)
        for name in names:
            out.append(("llmbar", name, sample(every[every["subset"] == name], n, seed)))
    if "pandalm" in datasets:
        out.append(("pandalm", "test", sample(pandalm(), n, seed)))
    if "harm" in datasets:
        every = harm_pairs()
        for kind in harm_subsets or HARM_KINDS:
            out.append(("harm", kind, sample(every[every["kind"] == kind], n, seed)))
    return out


def user_sets(
    frame: pd.DataFrame, label: str, target: str | None, subsets: Sequence[str] | None, n: int | None, seed: int
) -> tuple[list[tuple[str, str, pd.DataFrame]], list[PairItem]]:
    """(dataset "labelled", subset, pairs) per subset of a user's labelled pairs (its `subset` column, else one
    "all"), each sampled with `n` and `seed`, and their comparisons (read as `compare_many` reads a DataFrame);
    every problem an InputError before any call."""
    if label not in frame.columns:
        raise InputError(f"the labelled pairs have no column {label!r}; found: {', '.join(map(str, frame.columns))}")
    values = frame[label].tolist()
    missing = [i for i, v in enumerate(values) if v is None or (isinstance(v, float) and math.isnan(v))]
    if missing:
        raise InputError(f"labels are missing at rows {', '.join(map(str, missing[:10]))}: drop unlabelled rows")
    if infer_kind(values, pairwise=False) != "pairwise":
        raise InputError(
            f"meta_evaluate measures comparisons: column {label!r} must say which response is better (A, B or tie), "
            "not pass/fail or scores; for labels of single responses or conversations measure the judge with "
            "judge.align(labelled).alignment_report (held-out agreement before and after) or jw.agreement"
        )
    ids = frame["pair_id"] if "pair_id" in frame.columns else pd.Series(range(len(frame)), index=frame.index)
    if ids.duplicated().any():
        repeated = ", ".join(map(str, ids[ids.duplicated()].unique()[:5]))
        raise InputError(f"pair_id repeats ({repeated}): each pair needs its own")
    table = frame.assign(
        pair_id=ids.to_numpy(), label=[PAIRWISE_CLASSES[pairwise_code(v)] for v in values]
    ).reset_index(drop=True)
    if "subset" not in table.columns:
        if subsets:
            raise ConfigurationError("subsets= picks among the labelled pairs' `subset` column, and there is none")
        table["subset"] = "all"
    names = list(dict.fromkeys(table["subset"].astype(str)))
    if subsets:
        unknown = [s for s in subsets if s not in names]
        if unknown:
            raise InputError(f"unknown subset(s) {', '.join(unknown)}; the labelled pairs have {', '.join(names)}")
        names = list(subsets)
    sets = [(LABELLED, name, sample(table[table["subset"].astype(str) == name], n, seed)) for name in names]
    pairs = pd.concat([part for _, _, part in sets], ignore_index=True)
    items, _ = pairs_from(pairs, None, None, None, target=target)
    return sets, items


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
            ("harm pairs (mean of kinds)", measured["dataset"] == "harm"),
            ("labelled pairs (mean of subsets)", measured["dataset"] == LABELLED),
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
    datasets: str | Sequence[str] | pd.DataFrame = DATASETS,
    *,
    subsets: Sequence[str] | None = None,
    n: int | None = None,
    seed: int = 0,
    label: str = "label",
    target: str | None = None,
    progress: bool | Progress = True,
    max_cost_usd: float | None = None,
) -> MetaEvaluation:
    """Measure `judge` on LLMBar's subsets and PandaLM's human majority (the default), the harm pairs ("harm":
    `jw.datasets.harm_pairs()`, a refusal right for a harmful request and help right for a harmless one), or on
    your own labelled pairs; works inside Jupyter.

    `judge` is a pairwise judge or panel (anything with `acompare_items`), or a pointwise one (an `LLMJudge` or
    `LLMPanel`), which is compared by scoring each response alone. `subsets` picks LLMBar subsets ("Natural",
    "Adversarial-GPTInst" or short "gptinst", ...) and harm kinds ("harmful_request", "harmless_request"); `n`
    samples that many pairs per set with `seed`.

    `datasets` may instead be a DataFrame of labelled pairs (dataset "labelled"; its `subset` column, if any,
    splits it, and `subsets` picks among them): question, response_a, response_b, or conversations as
    `PairwiseJudge.compare_many` reads them, two replies to a `history` or conversation_a and conversation_b
    (their last turns, or `target="whole"`); `label` names the column saying which is better ("A", "B" or
    "tie"); an optional `pair_id` names the pairs and `reference` gives reference answers. Labels that are not
    A / B / tie, a malformed conversation or a missing column are an InputError before any call.
    `max_cost_usd` is the run's budget: the pairs it leaves are counted as failed in the table (their verdicts'
    error says `budget: ...`), so compare judges on runs that finished.
    """
    return run_sync(
        ameta_evaluate(
            judge,
            datasets,
            subsets=subsets,
            n=n,
            seed=seed,
            label=label,
            target=target,
            progress=progress,
            max_cost_usd=max_cost_usd,
        )
    )


async def ameta_evaluate(
    judge: Any,
    datasets: str | Sequence[str] | pd.DataFrame = DATASETS,
    *,
    subsets: Sequence[str] | None = None,
    n: int | None = None,
    seed: int = 0,
    label: str = "label",
    target: str | None = None,
    progress: bool | Progress = True,
    max_cost_usd: float | None = None,
) -> MetaEvaluation:
    """Async twin of `meta_evaluate`."""
    items: list[PairItem] | None = None
    if isinstance(datasets, pd.DataFrame):
        sets, items = user_sets(datasets, label, target, subsets, n, seed)
    else:
        if target is not None:
            raise InputError("target= applies to your own labelled conversations (a DataFrame), not the shipped sets")
        sets = labelled_sets([datasets] if isinstance(datasets, str) else list(datasets), subsets, n, seed)
    compare = _comparer(judge)
    judge.check()
    name = str(getattr(judge, "display_name", None) or getattr(judge, "name", None) or type(judge).__name__)
    frames = [frame.assign(dataset=dataset, subset=subset) for dataset, subset, frame in sets]
    pairs = pd.concat(frames, ignore_index=True)
    if items is None:
        items = [PairItem(q, a, b) for q, a, b in zip(pairs["question"], pairs["response_a"], pairs["response_b"])]
    started = time.perf_counter()
    async with run_scope(
        progress, 2 * len(items), f"meta-evaluating ({name})", max_cost_usd=max_cost_usd, makers=[judge]
    ) as run:
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
    mirrored = [
        dataclasses.replace(
            i,
            response_a=i.response_b,
            response_b=i.response_a,
            conversation_a=i.conversation_b,
            conversation_b=i.conversation_a,
        )
        for i in items
    ]
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
    """Score every response (or conversation's judged turn) alone; both presentations of a pair are the same two
    scores (no order exists)."""
    alone = [
        Item(i.question, response, i.reference, conversation=view)
        for i in items
        for response, view in ((i.response_a, i.conversation_a), (i.response_b, i.conversation_b))
    ]
    if isinstance(judge, LLMJudge):
        votes = await judge.ajudge(alone, session, bar)
    else:
        votes = (await judge.ascore_items(alone, session, bar)).vote_list
    outcomes: list[Outcome] = []
    seconds = []
    for k in range(len(items)):
        a, b = _scored(judge, votes, 2 * k), _scored(judge, votes, 2 * k + 1)
        seconds.append(a[2] + b[2])
        if a[3] or b[3]:
            outcomes.append((None, None, a[3] or b[3]))
            continue
        values = judge.template.option_values() if isinstance(judge, LLMJudge) else {}
        winner, probabilities = pointwise_outcome(values, a[0], b[0], a[1], b[1])
        p_a = a_better(probabilities) if probabilities else {"A": 1.0, "B": 0.0, "tie": 0.5}[winner]
        outcomes.append((winner, p_a, None))
    return outcomes, list(outcomes), seconds


def _scored(judge: Any, every: Any, index: int) -> tuple[float, dict[str, float] | None, float, str | None]:
    """(score, probabilities, model seconds, error) of one response: a judge's vote, or a panel's average."""
    if isinstance(judge, LLMJudge):
        vote = every[index]
        return vote.score, vote.probabilities, 0.0 if vote.cached else vote.latency_s, vote.error
    votes = [v for v in every if v.item == index]
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
    if dataset in ("pandalm", LABELLED) and len(answered):
        # Your own pairs without a tie, labelled or judged, are scored on A and B only (F1 of ties left empty).
        ties = dataset == "pandalm" or bool(((answered["label"] == "tie") | (answered["winner"] == "tie")).any())
        labels = ["A", "B", "tie"] if ties else ["A", "B"]
        row["kappa"] = cohen_kappa(answered["winner"], answered["label"])
        row["macro_f1"] = f1(answered["winner"], answered["label"], labels=labels)
        for label in labels:
            row[f"f1_{label}"] = f1(answered["winner"], answered["label"], positive=label, labels=labels)
    return row
