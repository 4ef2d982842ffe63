"""One run seen item by item, the way `compare` pairs two runs: texts, a key per item, scores per judge.

Every score is on [0, 1]: a judge's or panel's normalised score, a rubric's score, a leveled grade's percentage
/ 100, a pipeline's final score, a sequential rating rescaled from its scale, a pairwise comparison's points for
response a (win 1, tie ½, loss 0: its mean is a's win rate); a cascade's verdict the same way (a's points for a
pairwise cascade, pass 1 and fail 0 for a pass/fail one), NaN where it abstained.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .._errors import InputError
from ..aspects import AspectResult
from ..cascade import CascadeResult
from ..labels import content_key
from ..pairwise import PairwiseTable
from ..pairwise._records import WIN_POINTS
from ..pipeline import PipelineTable
from ..rubrics import GradingResult, LeveledResult
from ..scoring import JudgeResult, PanelResult
from ..sequential import SequentialFrame

OVERALL = "overall"
_SUPPORTED = (
    "a JudgeResult, PanelResult, AspectResult, GradingResult, LeveledResult, CascadeResult, a pipeline's or "
    "compare_many's table, a rate_many frame, a DataFrame with a `score` column, or the path of a saved run of one "
    "of them"
)
# Results that are not a score per item, and what to compare instead.
_INSTEAD = {
    "TournamentResult": "a tournament rates candidates, not items: compare the rankings (before.ranking and "
    "after.ranking: rating and interval per candidate), or run both versions in one tournament",
    "CorrectedRanking": "a corrected ranking rates candidates, not items: compare before.ranking and after.ranking",
    "AlignmentReport": "an alignment report already compares its judge before and after alignment (report.table, "
    "report.per_fold); to compare two aligned judges, compare their results on the same items",
    "QualityEstimate": "an estimate is one number with its interval: compare before.estimate, before.low, "
    "before.high with the after run's, or compare the judge results it was made from",
    "MetaEvaluation": "a meta-evaluation scores judges against labels: compare their .table rows, or the judges' "
    "results on the same items",
}


@dataclass
class ItemScores:
    """One run item by item. `frame` has the texts (and any other column the result keeps per item); `inputs`
    names the columns that say what was asked (they key items across runs by default), `response` the column of
    the answer judged; `scores` maps each judge (and `overall`, the run's aggregate, when it has several) to a
    score per item; `explanations` the judges' words, where there are any. `metric` names what the mean of the
    scores is: "mean_score", or "win_rate" for pairwise comparisons."""

    frame: pd.DataFrame
    inputs: list[str]
    response: str | None
    scores: dict[str, pd.Series]
    explanations: dict[str, pd.Series] = field(default_factory=dict)
    metric: str = "mean_score"
    name: str | None = None

    def keys(self, on: str | Sequence[Any]) -> list[str]:
        """One key per item: a hash of the input texts ("input"), of every text ("item"), the position
        ("position"), a column's values, or the ids given; a repeated key is numbered ("#2", "#3", ...)."""
        if isinstance(on, str):
            if on == "position":
                raw = [str(i) for i in range(len(self.frame))]
            elif on in ("input", "item"):
                columns = self.inputs if on == "input" else self.texts
                raw = [content_key(**{c: row[c] for c in columns}) for row in self.frame[columns].to_dict("records")]
            elif on in self.frame.columns:
                raw = [str(v) for v in self.frame[on]]
            else:
                raise InputError(
                    f"cannot match items on {on!r}: use 'input', 'item', 'position', a column of both runs "
                    f"({', '.join(map(str, self.frame.columns))}), or ids=(before_ids, after_ids)"
                )
        else:
            raw = [str(v) for v in on]
            if len(raw) != len(self.frame):
                raise InputError(f"{len(raw)} ids for a run of {len(self.frame)} items")
        seen: dict[str, int] = {}
        keys = []
        for key in raw:
            seen[key] = seen.get(key, 0) + 1
            keys.append(key if seen[key] == 1 else f"{key}#{seen[key]}")
        return keys

    @property
    def texts(self) -> list[str]:
        """Every text column: the inputs, then the response(s)."""
        extra = [c for c in ("response", "response_a", "response_b", "submission", "baseline") if c in self.frame]
        return list(dict.fromkeys([*self.inputs, *extra]))

    @property
    def judges(self) -> list[str]:
        return [name for name in self.scores if name != OVERALL]


def item_scores(result: Any) -> ItemScores:
    """The per-item view of a result (see the module docstring for what each kind's scores are)."""
    if isinstance(result, (str, os.PathLike)):
        from ._load import load

        view = item_scores(load(result))
        view.name = Path(result).name
        return view
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN rows: the items no judge scored
        return _view(result)


def _view(result: Any) -> ItemScores:
    if isinstance(result, JudgeResult):
        frame = result.to_df()
        return ItemScores(
            frame,
            _present(frame, "prompt", "reference"),
            "response",
            {result.judge: frame["score"].astype(float)},
            {result.judge: frame["explanation"]},
        )
    if isinstance(result, AspectResult):
        frame = result.to_df()
        scores = {OVERALL: frame["average_score"].astype(float)} | {n: frame[n].astype(float) for n in result.names}
        explained = {n: frame[f"{n}_explanation"] for n in result.names}
        return ItemScores(frame, _present(frame, "prompt", "reference"), "response", scores, explained)
    if isinstance(result, PanelResult):
        frame = result.to_df()
        overall = frame["weighted_avg"] if "weighted_avg" in frame else frame["avg"]
        scores = {OVERALL: overall.astype(float)} | {j: frame[j].astype(float) for j in result.judges}
        return ItemScores(frame, _present(frame, "prompt", "reference"), "response", scores, _explanations(result))
    if isinstance(result, GradingResult):
        frame = result.to_df()
        scores = {OVERALL: frame["score"].astype(float)}
        if len(result.judge_ids) > 1:
            scores |= {j: frame[f"score_{j}"].astype(float) for j in result.judge_ids}
        return ItemScores(frame, _present(frame, "query"), "submission", scores)
    if isinstance(result, LeveledResult):
        frame = result.to_df()
        scores = {OVERALL: frame["weighted_percent"].astype(float) / 100.0}
        for name in dict.fromkeys(d.name for r in result.reports for d in r.dimensions):
            scores[name] = pd.Series([_dimension(r, name) for r in result.reports], dtype=float)
        explained = {n: frame[f"{n}_feedback"] for n in scores if f"{n}_feedback" in frame}
        return ItemScores(frame, _present(frame, "query"), "submission", scores, explained)
    if isinstance(result, SequentialFrame):
        frame = pd.DataFrame(result).reset_index(drop=True)
        results = getattr(result, "results", None) or []
        scale = results[0].scale if results else (0.0, 1.0)
        rescaled = (frame["mean"].astype(float) - scale[0]) / (scale[1] - scale[0])
        return ItemScores(frame, _present(frame, "prompt"), "response", {OVERALL: rescaled})
    if isinstance(result, PipelineTable) or (isinstance(result, pd.DataFrame) and "final_score" in result):
        frame = pd.DataFrame(result).reset_index(drop=True)
        stages = [str(c)[: -len("_error")] for c in frame.columns if str(c).endswith("_error")]
        scores = {OVERALL: frame["final_score"].astype(float)} | {s: frame[s].astype(float) for s in stages}
        explained = {s: frame[f"{s}_detail"] for s in stages if f"{s}_detail" in frame}
        return ItemScores(frame, _present(frame, "prompt", "reference"), "response", scores, explained)
    if isinstance(result, PairwiseTable) or (isinstance(result, pd.DataFrame) and "winner" in result):
        return _pairwise(pd.DataFrame(result).reset_index(drop=True))
    if isinstance(result, CascadeResult):
        return _cascade(result)
    if isinstance(result, pd.DataFrame) and "score" in result:
        frame = result.reset_index(drop=True)
        inputs = _present(frame, "prompt", "question", "query", "reference")
        response = next((c for c in ("response", "submission", "response_a") if c in frame), None)
        explained = {"score": frame["explanation"]} if "explanation" in frame else {}
        return ItemScores(frame, inputs, response, {"score": frame["score"].astype(float)}, explained)
    kind = type(result).__name__
    if kind in _INSTEAD:
        raise InputError(f"cannot compare {kind} runs item by item: {_INSTEAD[kind]}")
    raise InputError(f"cannot compare a {kind} item by item: give {_SUPPORTED}")


def _present(frame: pd.DataFrame, *columns: str) -> list[str]:
    found = [c for c in columns if c in frame.columns]
    if not found:
        raise InputError(f"the result has none of the columns {', '.join(columns)} to tell its items apart")
    return found


def _explanations(result: PanelResult) -> dict[str, pd.Series]:
    """Each judge's explanation per item (None where it gave none)."""
    texts: dict[str, list[str | None]] = {j: [None] * len(result.items) for j in result.judges}
    for vote in result.vote_list:
        if vote.judge in texts:
            texts[vote.judge][vote.item] = vote.explanation or vote.error
    return {j: pd.Series(t, dtype=object) for j, t in texts.items()}


def _dimension(report: Any, name: str) -> float:
    score = next((d.score for d in report.dimensions if d.name == name), None)
    return np.nan if score is None else float(score)


def _points(winners: pd.Series) -> pd.Series:
    return pd.Series([WIN_POINTS.get(w, np.nan) if isinstance(w, str) else np.nan for w in winners], dtype=float)


def _pairwise(frame: pd.DataFrame) -> ItemScores:
    """A compare_many table: a's points per comparison (win 1, tie ½, loss 0), overall and per panel judge."""
    suffix = "_consistent"
    judges = [
        str(c)[: -len(suffix)] for c in frame.columns if str(c).endswith(suffix) and str(c)[: -len(suffix)] in frame
    ]
    if judges:  # a panel's table: the panel's vote, and each judge's winner
        scores = {OVERALL: _points(frame["winner"])} | {j: _points(frame[j]) for j in judges}
        explained: dict[str, pd.Series] = {}
    else:
        named = frame["judge"].dropna() if "judge" in frame else pd.Series(dtype=object)
        judge = str(named.iloc[0]) if len(named) else "winner"
        scores = {judge: _points(frame["winner"])}
        explained = {judge: frame["explanation_ab"]} if "explanation_ab" in frame else {}
    inputs = _present(frame, "question", "reference")
    return ItemScores(frame, inputs, "response_a", scores, explained, metric="win_rate")


def _cascade(result: CascadeResult) -> ItemScores:
    """A cascade's verdict per item (NaN where it abstained): a's points for a pairwise cascade (its mean is a's
    win rate), 1 for pass and 0 for fail for a pass/fail one."""
    frame = pd.DataFrame(result.table).reset_index(drop=True)
    verdicts = frame["verdict"]
    if "response_a" in frame:
        return ItemScores(
            frame,
            _present(frame, "question", "reference"),
            "response_a",
            {"cascade": _points(verdicts)},
            metric="win_rate",
        )
    given = sorted({v for v in verdicts if isinstance(v, str)} - {"pass", "fail"})
    if given:
        raise InputError(
            f"this cascade's verdicts are answer labels ({', '.join(given)}), which have no score to compare: run "
            "the cascade with pass_threshold= so that its verdicts are pass / fail"
        )
    passed = [1.0 if v == "pass" else 0.0 if v == "fail" else np.nan for v in verdicts]
    return ItemScores(
        frame, _present(frame, "prompt", "reference"), "response", {"cascade": pd.Series(passed, dtype=float)}
    )
