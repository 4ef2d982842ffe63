"""Tournament ratings corrected with a few human comparisons (prediction-powered Bradley–Terry, Boyeau et al. 2024).

```python
tr = jw.Tournament(judge).run(questions, candidates)
fixed = tr.corrected(human_labels)        # a person's "A" / "B" / "tie" on some of tr.matches' pair_ids
fixed.ranking, fixed.chart(), fixed.difference("v2", "v1")
```
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from .._errors import ConfigurationError, InputError
from .._ppi import judge_mean, ppi_mean
from .._saved import Dump, Keepable
from ._bradley_terry import mle_exists
from ._human_labels import candidate_names, check_connected, comparisons_table, human_verdicts
from ._ratings import ELO_BASE, ELO_PER_LOG_STRENGTH
from ._rectified import (
    Comparisons,
    classical_bradley_terry,
    critical_value,
    ppi_bradley_terry,
)

if TYPE_CHECKING:
    import altair as alt

_SCORE = {"A": 1.0, "B": 0.0, "tie": 0.5}
METHODS: tuple[str, ...] = ("corrected", "judge only", "labels only")
CORRECTED_COLUMNS = [
    "candidate",
    "rating",
    "ci_low",
    "ci_high",
    "judge_only_rating",
    "labels_only_rating",
    "rank",
    "judge_only_ci_low",
    "judge_only_ci_high",
    "labels_only_ci_low",
    "labels_only_ci_high",
    "judge_only_rank",
    "win_rate",
    "win_rate_low",
    "win_rate_high",
    "judge_win_rate",
    "labels_win_rate",
    "labelled",
    "games",
    "strength",
    "strength_se",
]


@dataclass(frozen=True)
class CorrectedRanking(Keepable):
    """A tournament's ranking corrected with a person's verdicts on some of its comparisons.

    `ranking` (best first): candidate, rating, ci_low, ci_high (the corrected Bradley–Terry rating on the Elo
    scale, 1000 + 400·θ/ln 10 with mean strength 0, and its interval), judge_only_rating and labels_only_rating
    (the same model fitted to the judge's verdicts on every comparison, and to the labels alone; NaN where the
    labels cannot fit it: a candidate they never saw, or one they never saw lose), rank, each one's interval,
    judge_only_rank, win_rate with win_rate_low / win_rate_high (the candidate's corrected share of points over its
    comparisons, ties half), judge_win_rate, labels_win_rate, labelled (its comparisons a person labelled),
    games (its comparisons the judge decided), strength and strength_se (θ and its standard error).

    `covariance` is the corrected strengths' covariance (candidates × candidates), `lam` PPI++'s weight of the
    judge in the rating (0: the labels alone), `df` the degrees of freedom of the ratings' t quantile (None: the
    normal one), `agreement` the judge's share of labelled comparisons decided
    as the person did, `notes` what the numbers rest on when it is not the usual.
    """

    ranking: pd.DataFrame
    comparisons: pd.DataFrame
    covariance: pd.DataFrame
    confidence: float
    lam: float
    n_comparisons: int
    n_labelled: int
    agreement: float
    small_sample: bool
    df: int | None = None
    notes: tuple[str, ...] = field(default=())

    def _dump(self) -> Dump:
        """Ranking, comparisons and covariance as tables; the headline is each candidate's corrected rating."""
        return Dump(
            kind="corrected_ranking",
            state={
                "confidence": self.confidence,
                "lam": self.lam,
                "n_comparisons": self.n_comparisons,
                "n_labelled": self.n_labelled,
                "agreement": self.agreement,
                "small_sample": self.small_sample,
                "df": self.df,
                "notes": list(self.notes),
            },
            tables={"ranking": self.ranking, "comparisons": self.comparisons, "covariance": self.covariance},
            metrics={f"rating/{c}": float(r) for c, r in zip(self.ranking["candidate"], self.ranking["rating"])},
        )

    @classmethod
    def _restore(cls, dump: Dump) -> CorrectedRanking:
        state = dump.state
        return cls(
            ranking=dump.table("ranking"),
            comparisons=dump.table("comparisons"),
            covariance=dump.table("covariance"),
            confidence=float(state["confidence"]),
            lam=float(state["lam"]),
            n_comparisons=int(state["n_comparisons"]),
            n_labelled=int(state["n_labelled"]),
            agreement=float(state["agreement"]),
            small_sample=bool(state["small_sample"]),
            df=state.get("df"),
            notes=tuple(state.get("notes") or ()),
        )

    def to_df(self) -> pd.DataFrame:
        return self.ranking.copy()

    def long(self) -> pd.DataFrame:
        """One row per candidate and method (corrected, judge only, labels only): rating, ci_low, ci_high,
        win_rate, win_rate_low, win_rate_high — what the chart draws."""
        rows = []
        for row in self.ranking.itertuples(index=False):
            r = row._asdict()
            for method, prefix in zip(METHODS, ("", "judge_only_", "labels_only_")):
                wins = {"corrected": "win_rate", "judge only": "judge_win_rate", "labels only": "labels_win_rate"}
                rows.append(
                    {
                        "candidate": r["candidate"],
                        "method": method,
                        "rating": r[f"{prefix}rating"],
                        "ci_low": r[f"{prefix}ci_low"],
                        "ci_high": r[f"{prefix}ci_high"],
                        "win_rate": r[wins[method]],
                        "labelled": r["labelled"],
                    }
                )
        return pd.DataFrame(rows)

    def difference(self, first: str, second: str) -> tuple[float, float, float]:
        """(estimate, low, high) of `first`'s corrected rating minus `second`'s, on the Elo scale: the interval
        that says whether one is better (two candidates' own intervals overlapping does not say they are not)."""
        names = list(self.covariance.index)
        for name in (first, second):
            if name not in names:
                raise InputError(f"{name!r} is not among the candidates: {names}")
        rating = self.ranking.set_index("candidate")["rating"]
        gap = float(rating[first] - rating[second])
        if self.ranking["ci_low"].isna().all():  # the labels cannot bound the ratings (see notes)
            return gap, np.nan, np.nan
        cov = self.covariance
        var = cov.loc[first, first] + cov.loc[second, second] - 2 * cov.loc[first, second]
        half = critical_value(self.confidence, self.df) * ELO_PER_LOG_STRENGTH * float(np.sqrt(max(var, 0.0)))
        return gap, gap - half, gap + half

    def chart(self) -> alt.HConcatChart:
        """Per candidate, the corrected interval beside the judge's own (and the labels' alone): ratings, then
        win rates."""
        from ._charts import corrected_chart

        return corrected_chart(self.long(), self.ranking, self.confidence)

    def summary(self) -> str:
        """One sentence: what was corrected with what, and whether the ranking changed."""
        order = list(self.ranking["candidate"])
        judge_order = list(self.ranking.sort_values("judge_only_rank", kind="stable")["candidate"])
        changed = "the same order as the judge's" if order == judge_order else "a different order from the judge's"
        return (
            f"Bradley–Terry corrected with {self.n_labelled} human verdicts on {self.n_comparisons} judged "
            f"comparisons (PPI++, λ = {self.lam:.2f}; the judge agreed on {self.agreement:.0%} of them): "
            f"{' > '.join(order)}, {changed}; {self.confidence:.0%} intervals per candidate"
        )

    def __repr__(self) -> str:
        return f"CorrectedRanking({self.summary()})"

    def _repr_html_(self) -> str:
        notes = "".join(f"<li>{html.escape(note)}</li>" for note in self.notes)
        shown = self.ranking[[*CORRECTED_COLUMNS[:17], "labelled", "games"]]
        table = shown.to_html(index=False, float_format=lambda v: f"{v:.3f}", na_rep="–")
        return f"<p>{html.escape(self.summary())}</p>{table}" + (f"<ul>{notes}</ul>" if notes else "")


def corrected_ranking(
    matches: pd.DataFrame,
    human_labels: Any,
    confidence: float = 0.95,
    *,
    small_sample: bool = True,
    candidates: Sequence[str] | None = None,
    questions: Sequence[str] | None = None,
) -> CorrectedRanking:
    """Bradley–Terry ratings and win rates from a judge's verdicts on every comparison, corrected with a person's
    verdicts on a random subset of them, by prediction-powered inference (PPI++; Boyeau et al. 2024, "AutoEval
    done right"). `TournamentResult.corrected` calls it; any table of comparisons works too.

    What it estimates: the ratings (and win rates) the person's verdicts would give over all the comparisons
    played, whatever the judge's bias — a judge that favours one candidate moves the judge-only rating, not the
    corrected one — with intervals that cover them at `confidence` (each candidate's own; use `difference` for
    a gap). The intervals are narrower than the labels' alone when the judge mostly agrees with the person, and
    about as wide when it does not (λ → 0). It needs the labelled comparisons to be a random sample of those
    played (not the ones the judge got wrong, not one candidate's).

    - `matches`: a tournament's matches (one comparison per pair_id, its debiased `outcome`) or any table of
      model_a, model_b, winner (one comparison per row, its id the pair_id column or the row index).
    - `human_labels`: "A" / "B" / "tie" in each comparison's own model_a / model_b terms (model_a / model_b,
      the winner's name, or A's score 1 / 0 / 0.5 also read), as a Series on comparison ids; or a table with
      pair_id and winner; or a table of model_a, model_b, question (or question_index) and winner, matched to
      the comparison of that pair on that question in either order. None / NaN count as unlabelled.
    - `small_sample`: Student-t quantiles (n − K degrees of freedom for the ratings, n − 2 for a win rate) and
      unbiased variances; False gives `ppi-python`'s CLT intervals exactly (`ppi_logistic_ci`, `ppi_mean_ci`).

    When the labels never saw some candidate lose (or win), no Bradley–Terry fit of them exists and no normal
    interval is valid (in simulation such intervals covered about 60 %): the ratings come without intervals and a
    note says to label more; likewise a win rate whose labels all went one way. A candidate no labelled comparison
    involves is fine: its corrected rating moves only through the strengths of those it met, so the labels cannot
    see a bias of the judge for or against it, its interval is too narrow, and a note says so.

    Errors (InputError, before any fitting): labels on comparisons not in the matches or that the judge failed to
    decide, verdicts that are not A / B / tie, a comparison labelled twice, fewer than 2K − 1 labels for K
    candidates (two per free strength and one more), comparisons that leave the candidates in groups that never
    meet.
    """
    if isinstance(confidence, bool) or not isinstance(confidence, (int, float)) or not 0.0 < confidence < 1.0:
        raise ConfigurationError(f"confidence must lie strictly between 0 and 1 (e.g. 0.95), got {confidence!r}")
    table = comparisons_table(matches)
    human = human_verdicts(human_labels, table, questions)
    names = candidate_names(table, candidates)
    k = len(names)
    failed = human.index[table.loc[human.index, "judge"].isna().to_numpy()]
    if len(failed):
        raise InputError(
            f"the judge decided no verdict on {len(failed)} labelled comparison(s) "
            f"({', '.join(map(repr, failed[:5]))}); rerun the judge on them or leave their labels out"
        )
    if len(human) < 2 * k - 1:
        raise InputError(
            f"{len(human)} labelled comparison(s) are too few for {k} candidates: label at least {2 * k - 1} "
            "(two per free strength and one more), chosen at random among the comparisons"
        )
    notes: list[str] = []
    undecided = int(table["judge"].isna().sum())
    if undecided:
        notes.append(
            f"the judge decided no verdict on {undecided} unlabelled comparison(s); they are left out, so the "
            "estimates cover the comparisons it decided"
        )
    judged = table[table["judge"].notna()]
    check_connected(judged, names)
    return _correct(judged, human, names, float(confidence), small_sample, notes)


def _games(table: pd.DataFrame, verdicts: pd.Series, index: dict[str, int], k: int) -> Comparisons:
    a = table["model_a"].map(index).to_numpy(dtype=np.intp)
    b = table["model_b"].map(index).to_numpy(dtype=np.intp)
    return Comparisons(k, a, b, verdicts.map(_SCORE).to_numpy(dtype=float))


def _correct(
    table: pd.DataFrame, human: pd.Series, names: list[str], confidence: float, small: bool, notes: list[str]
) -> CorrectedRanking:
    k = len(names)
    index = {name: i for i, name in enumerate(names)}
    is_labelled = table.index.isin(human.index)
    lab_table, unl_table = table[is_labelled], table[~is_labelled]
    y = human.loc[lab_table.index]
    labelled = _games(lab_table, y, index, k)
    judged_on_labelled = lab_table["judge"].map(_SCORE).to_numpy(dtype=float)
    unlabelled = _games(unl_table, unl_table["judge"], index, k)
    everything = _games(table, table["judge"], index, k)

    ppi = ppi_bradley_terry(labelled, judged_on_labelled, unlabelled, small_sample=small)
    judge = classical_bradley_terry(everything, small_sample=small)
    labels = classical_bradley_terry(labelled, small_sample=small)
    per_candidate = np.bincount(labelled.a, minlength=k) + np.bincount(labelled.b, minlength=k)
    unseen = [names[i] for i in np.flatnonzero(per_candidate == 0)]
    if unseen:
        notes.append(
            f"no labelled comparison involves {', '.join(unseen)}: their corrected ratings move only through the "
            "strengths of those they met, the labels cannot see a bias of the judge for or against them, and "
            "their intervals are too narrow; label some of their comparisons"
        )
    separated = _separated(labelled, per_candidate > 0)
    if separated:
        notes.append(
            f"the labels never saw {_unbeaten(labelled, names)}: no Bradley–Terry fit of the labels exists, so no "
            "interval from them is valid (in simulation such intervals covered about 60 %); the corrected ratings "
            "are shown without intervals — label more comparisons"
            + (" (no finite corrected fit either: the ratings are the labels' penalised fit)" if ppi.penalised else "")
        )
    labels_defined = not labels.penalised and not unseen
    if judge.penalised:
        notes.append("the judge's own verdicts have no finite Bradley–Terry fit: judge_only_rating is penalised")
    columns: dict[str, Any] = {"candidate": names}
    for prefix, estimate, defined, bounded in (
        ("", ppi, True, not separated),
        ("judge_only_", judge, True, True),
        ("labels_only_", labels, labels_defined, True),
    ):
        low, high = estimate.interval(confidence)
        for column, values in (("rating", estimate.theta), ("ci_low", low), ("ci_high", high)):
            shown = defined and (bounded or column == "rating")
            columns[f"{prefix}{column}"] = ELO_BASE + ELO_PER_LOG_STRENGTH * values if shown else np.nan
    columns.update(_win_rates(table, y, names, confidence, small, notes))
    columns["labelled"] = per_candidate
    columns["games"] = np.bincount(everything.a, minlength=k) + np.bincount(everything.b, minlength=k)
    columns["strength"], columns["strength_se"] = ppi.theta, ppi.se if not separated else np.nan
    ranking = pd.DataFrame(columns)
    ranking["rank"] = ranking["rating"].rank(ascending=False, method="min").astype(int)
    ranking["judge_only_rank"] = ranking["judge_only_rating"].rank(ascending=False, method="min").astype(int)
    ranking = ranking[CORRECTED_COLUMNS].sort_values(["rank", "candidate"], kind="stable").reset_index(drop=True)
    verdicts = table.assign(human=human.reindex(table.index))
    agreement = float((lab_table["judge"] == y).mean())
    return CorrectedRanking(
        ranking=ranking,
        comparisons=verdicts,
        covariance=pd.DataFrame(ppi.cov, index=names, columns=names),
        confidence=confidence,
        lam=ppi.lam,
        n_comparisons=len(table),
        n_labelled=len(human),
        agreement=agreement,
        small_sample=small,
        df=ppi.df,
        notes=tuple(notes),
    )


def _separated(labelled: Comparisons, seen: np.ndarray) -> bool:
    """Do the labels leave some group of the candidates they saw unbeaten (or never winning) against the rest, so
    that no Bradley–Terry fit of them exists (`mle_exists`)?"""
    k = labelled.k
    counts, points = np.zeros((1, k, k)), np.zeros((1, k, k))
    np.add.at(counts[0], (labelled.a, labelled.b), 1.0)
    np.add.at(points[0], (labelled.a, labelled.b), labelled.score)
    keep = np.flatnonzero(seen)
    return not bool(mle_exists(counts[:, keep][:, :, keep], points[:, keep][:, :, keep], False)[0])


def _unbeaten(labelled: Comparisons, names: list[str]) -> str:
    """The candidates whose labelled comparisons they all won, or all lost, in words ("a group of candidates lose
    to the rest" when no single one is)."""
    k = labelled.k
    points = np.bincount(labelled.a, labelled.score, k) + np.bincount(labelled.b, 1.0 - labelled.score, k)
    played = np.bincount(labelled.a, minlength=k) + np.bincount(labelled.b, minlength=k)
    won = [names[i] for i in range(k) if played[i] and points[i] == played[i]]
    lost = [names[i] for i in range(k) if played[i] and points[i] == 0]
    parts = [f"{', '.join(won)} lose"] if won else []
    parts += [f"{', '.join(lost)} win"] if lost else []
    return " or ".join(parts) or "a group of the candidates lose to the rest"


def _win_rates(
    table: pd.DataFrame, human: pd.Series, names: list[str], confidence: float, small: bool, notes: list[str]
) -> dict[str, np.ndarray]:
    """Each candidate's share of points over its comparisons (ties half), by PPI++ for a mean on them (the one in
    `judgewidgets._ppi`, as `estimate_quality` computes it): the judge's share corrected by its error on the
    labelled ones, clipped to [0, 1]. With `small`, the small-sample interval of `estimate_quality` (t quantiles
    and two pseudo-disagreements), which stays valid when every label went the same way."""
    out = {c: np.full(len(names), np.nan) for c in ("win_rate", "win_rate_low", "win_rate_high")}
    out["judge_win_rate"] = np.full(len(names), np.nan)
    out["labels_win_rate"] = np.full(len(names), np.nan)
    judge = table["judge"].map(_SCORE).to_numpy(dtype=float)
    person = human.reindex(table.index).map(_SCORE).to_numpy(dtype=float)
    few: list[str] = []
    unanimous: list[str] = []
    for i, name in enumerate(names):
        as_a, as_b = (table["model_a"] == name).to_numpy(), (table["model_b"] == name).to_numpy()
        mine = as_a | as_b
        f = np.where(as_a, judge, 1.0 - judge)[mine]
        y = np.where(as_a, person, 1.0 - person)[mine]
        seen = ~np.isnan(y)
        out["judge_win_rate"][i] = float(judge_mean(f, small_sample=small).estimate)
        if seen.sum() < 2:
            few.append(name)
            continue
        out["labels_win_rate"][i] = y[seen].mean()
        lam = 0.0 if small and seen.sum() < 3 else None  # a tuned λ would leave the t interval no degree of freedom
        estimate = ppi_mean(y[seen], f[seen], f[~seen], lam, small_sample=small, corners=small)
        low, high = estimate.interval(confidence)
        out["win_rate"][i] = np.clip(float(estimate.estimate), 0.0, 1.0)
        if not small and np.ptp(y[seen]) == 0:  # a CLT interval cannot see a rate the labels never showed
            unanimous.append(name)
            continue
        out["win_rate_low"][i], out["win_rate_high"][i] = max(float(low), 0.0), min(float(high), 1.0)
    if few:
        notes.append(f"fewer than 2 labelled comparisons involve {', '.join(few)}: no corrected win rate for them")
    if unanimous:
        notes.append(
            f"every labelled comparison of {', '.join(unanimous)} went the same way: their win rates are shown "
            "without an interval (a CLT interval cannot see a rate the labels never showed); label more, or keep "
            "small_sample=True"
        )
    return out
