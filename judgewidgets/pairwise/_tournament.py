"""Tournament: candidates' answers to the same questions ranked by a pairwise judge, with rating intervals."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from .._batching import Batching, BatchRetry, batchable
from .._errors import ConfigurationError, InputError
from .._progress import Progress
from .._records import _as_text_list
from .._run import run_scope
from .._runner import run_sync
from .._saved import Dump, Keepable, column_errors, provenance, reported, usage_of_table
from ..conversations import Conversation, check_target, judged_views, parse_conversations
from ..conversations._render import JudgedConversation
from ..conversations._targets import last_user_text
from ..engine import Usage
from ..engine._usage import rows_cost_summary
from ._bradley_terry import fit, game_matrices, mle_exists
from ._corrected import CorrectedRanking, corrected_ranking
from ._formats import PairingFormat, get_format
from ._games import Games, kendall_tau
from ._judge import PairwiseComparer, PairwiseJudge
from ._ratings import DEFAULT_PRIOR, RANKING_COLUMNS, RatingMethod, get_rating
from ._records import PairItem, PairwiseResult, continued, shown
from ._state import TournamentState, pool_size

if TYPE_CHECKING:
    import altair as alt

_SCORE = {"A": 1.0, "B": 0.0, "tie": 0.5}
STABILITY_CHECKPOINTS = 30


@dataclass
class TournamentResult(Keepable):
    """What a tournament produced.

    `ranking`: candidate, rating, ci_low, ci_high, wins, losses, ties, rank (1 best), games — wins, losses and
    ties count debiased comparisons (orders that disagree are a tie). `matches`: every verdict, one row per
    comparison, order (and judge, for panels): pair_id, batch, question_index, model_a, model_b, judge, swapped,
    winner (this order's, in the pair's own A/B terms), verdict, confidence, outcome (the comparison's debiased
    winner), consistent, error, and what the order's calls cost (latency_s, prompt_tokens, completion_tokens,
    cost_usd, cached, attempts; `usage` adds them up). `jw.bradley_terry(matches)` and `jw.position_bias(matches)`
    read it directly.
    `questions`: the questions asked, question_index their position. `corrected(human_labels)` corrects the
    ratings with a person's verdicts on some of the comparisons.
    """

    ranking: pd.DataFrame
    matches: pd.DataFrame
    candidates: list[str]
    format: str
    rating: str
    budget: int
    stability: pd.DataFrame = field(default_factory=pd.DataFrame)
    questions: list[str] = field(default_factory=list)
    provenance: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    def _dump(self) -> Dump:
        """Ranking, matches and stability as tables; the headline is each candidate's rating and win share."""
        metrics: dict[str, float] = {}
        for row in self.ranking.to_dict("records"):
            metrics[f"rating/{row['candidate']}"] = float(row["rating"])
        judges = [str(j) for j in dict.fromkeys(self.matches["judge"].dropna())] if "judge" in self.matches else []
        return Dump(
            kind="tournament",
            state={
                "candidates": list(self.candidates),
                "format": self.format,
                "rating": self.rating,
                "budget": int(self.budget),
                "questions": list(self.questions),
            },
            tables={"ranking": self.ranking, "matches": self.matches, "stability": self.stability},
            metrics=metrics,
            usage=self.usage.model_dump(),
            judges=judges,
            inputs=[{"question": q} for q in self.questions],
            provenance=self.provenance,
        )

    @classmethod
    def _restore(cls, dump: Dump) -> TournamentResult:
        state = dump.state
        return cls(
            ranking=dump.table("ranking"),
            matches=dump.table("matches"),
            candidates=list(state["candidates"]),
            format=state["format"],
            rating=state["rating"],
            budget=int(state["budget"]),
            stability=dump.table("stability"),
            questions=list(state.get("questions") or []),
            provenance=dump.provenance,
        )

    def _call_errors(self) -> list[str | None]:
        return column_errors(self.matches, "error")

    def __repr__(self) -> str:
        head = f"TournamentResult: {self.format} tournament of {len(self.candidates)} candidates"
        return self._noted_text(f"{head}\n{self.ranking!r}")

    def _repr_html_(self) -> str:
        shown = self.ranking[[c for c in RANKING_COLUMNS if c in self.ranking.columns]]
        head = (
            f"<p><b>{self.format}</b> tournament of {len(self.candidates)} candidates, "
            f"{self.comparisons} comparisons, rated by {self.rating}</p>"
        )
        return self._noted_html(head + shown.to_html(index=False, float_format=lambda v: f"{v:.3f}"))

    @property
    def usage(self) -> Usage:
        """What every order's calls cost together (`matches`' latency_s, tokens, cost_usd, cached, attempts)."""
        return Usage(**usage_of_table(self.matches, calls="attempts"))

    def summary(self) -> pd.DataFrame:
        """Per judge: calls, failed orders, tokens of each kind, cost as billed and at list price (`cost_summary`,
        from `matches`)."""
        return rows_cost_summary(self.matches.to_dict("records"))

    @property
    def comparisons(self) -> int:
        return int(self.matches["pair_id"].nunique()) if len(self.matches) else 0

    def to_df(self) -> pd.DataFrame:
        return self.ranking.copy()

    def win_matrix(self) -> pd.DataFrame:
        """Row candidate's share of points against the column candidate over debiased comparisons (ties half)."""
        per = self.matches.drop_duplicates("pair_id")
        per = per[per["outcome"].notna()]
        names = self.candidates
        points = pd.DataFrame(0.0, index=names, columns=names)
        games = pd.DataFrame(0.0, index=names, columns=names)
        for a, b, outcome in zip(per["model_a"], per["model_b"], per["outcome"]):
            score = _SCORE[outcome]
            points.loc[a, b] += score
            points.loc[b, a] += 1.0 - score
            games.loc[a, b] += 1
            games.loc[b, a] += 1
        return points / games.where(games > 0)

    def corrected(self, human_labels: Any, confidence: float = 0.95, *, small_sample: bool = True) -> CorrectedRanking:
        """Ratings and win rates corrected with a person's verdicts on a random subset of the comparisons
        (prediction-powered Bradley–Terry, Boyeau et al. 2024), beside the judge's own and the labels' alone.

        `human_labels`: "A" / "B" / "tie" per labelled comparison, as a Series on `matches`' pair_id (in the
        comparison's own model_a / model_b terms, as its `outcome`), or a table of model_a, model_b, question
        (its text) or question_index, and winner, matched to that pair's comparison on that question in either
        order. See `jw.corrected_ranking` for what it guarantees and the errors. The judge-only rating here is
        Bradley–Terry on the debiased outcomes, so it can differ slightly from `ranking`, whose fit also models
        the first slot."""
        return corrected_ranking(
            self.matches,
            human_labels,
            confidence,
            small_sample=small_sample,
            candidates=self.candidates,
            questions=self.questions,
        )

    def ratings_chart(self) -> alt.LayerChart:
        from ._charts import ratings_chart

        return ratings_chart(self.ranking, self.rating)

    def win_matrix_chart(self) -> alt.LayerChart:
        from ._charts import win_matrix_chart

        return win_matrix_chart(self.win_matrix(), list(self.ranking["candidate"]))

    def stability_chart(self) -> alt.Chart:
        from ._charts import stability_chart

        return stability_chart(self.stability)

    def chart(self) -> alt.VConcatChart:
        """Ratings with interval bars and the win-rate matrix, above the ranking's stability over the budget."""
        import altair as alt

        from .._charts import offline

        top = alt.hconcat(self.ratings_chart(), self.win_matrix_chart())
        return offline(alt.vconcat(top, self.stability_chart()) if len(self.stability) else alt.vconcat(top))


def _texts(name: str, values: Any, length: int | None, optional: bool = False) -> list[Any]:
    if values is None:
        return [None] * (length or 0)
    if isinstance(values, str):
        raise InputError(f"{name} must be a list of strings, one per question, not a single string")
    checked = _as_text_list(name, values, optional=optional) or []
    if length is not None and len(checked) != length:
        raise InputError(f"{name} has {len(checked)} entries for {length} questions")
    return checked


def candidate_views(
    candidates: Mapping[str, Any], histories: Any, target: str | None
) -> dict[str, list[JudgedConversation]] | None:
    """What is judged of each candidate's conversations, one per question; None when the candidates give plain
    responses (no histories, no target, every entry text). One InputError before any call otherwise."""
    entries = {str(n): (list(r) if not isinstance(r, str) else r) for n, r in candidates.items()}
    nested = (list, tuple, Mapping, np.ndarray, Conversation)
    messages = any(isinstance(e, nested) for r in entries.values() if not isinstance(r, str) for e in r)
    if histories is None and target is None and not messages:
        return None
    for name, replies in entries.items():
        if isinstance(replies, str):
            raise InputError(f"candidate {name!r} must be a list, one entry per question, not a single string")
    if histories is not None:
        if target not in (None, "last_turn"):
            raise InputError("replies to shared histories are compared as the last turn: leave target unset")
        shared = parse_conversations(histories, "histories")
        for name, replies in entries.items():
            if len(replies) != len(shared):
                raise InputError(f"candidate {name!r} has {len(replies)} replies for {len(shared)} histories")
        return {
            n: [continued(h, t, r, f"candidate {n!r}") for t, (h, r) in enumerate(zip(shared, replies))]
            for n, replies in entries.items()
        }
    if target not in (None, "last_turn", "whole"):
        raise InputError(f"target {target!r}: conversations are compared on their last turns or whole")
    chosen = check_target(target)
    views = {
        n: judged_views(parse_conversations(c, f"candidate {n!r}"), chosen, f"candidate {n!r}")
        for n, c in entries.items()
    }
    counts = {len(v) for v in views.values()}
    if len(counts) > 1:
        raise InputError("every candidate needs one conversation per question; the counts differ")
    return views


class Tournament:
    """Rank candidates by judged pairwise comparisons of their answers to the same questions.

    `format`: "round_robin" (every pair on every question), "swiss", "adaptive" (least certain pairs first),
    or a PairingFormat. `rating`: "bradley_terry" (ML with bootstrap intervals and a first-slot term), "elo",
    "wins", or a RatingMethod. `budget` caps the comparisons (each is judged in both orders when the judge
    swaps; no (pair, question) is judged twice). `seed` fixes every random choice and the bootstrap.
    """

    def __init__(
        self,
        judge: PairwiseComparer | str,
        format: str | PairingFormat = "round_robin",
        rating: str | RatingMethod = "bradley_terry",
        budget: int | None = None,
        seed: int = 0,
        *,
        bootstrap: int = 1000,
    ) -> None:
        if isinstance(judge, str):
            judge = PairwiseJudge(judge)
        if not isinstance(judge, PairwiseComparer):
            raise ConfigurationError(
                f"judge must be a PairwiseJudge, a PairwisePanel or a model string, got {type(judge).__name__}"
            )
        if budget is not None and not (isinstance(budget, (int, np.integer)) and budget >= 1):
            raise ConfigurationError(f"budget must be a whole number of comparisons >= 1, got {budget!r}")
        self.judge = judge
        self.format = get_format(format)
        self.rating = get_rating(rating, bootstrap)
        self.budget = None if budget is None else int(budget)
        self.seed = int(seed)

    def __repr__(self) -> str:
        return (
            f"Tournament(judge={self.judge!r}, format={self.format.name!r}, rating={self.rating.name!r}, "
            f"budget={self.budget}, seed={self.seed})"
        )

    def run(
        self,
        questions: Sequence[str] | None = None,
        candidates: Mapping[str, Sequence[Any]] | None = None,
        references: Sequence[str | None] | None = None,
        *,
        histories: Any = None,
        target: str | None = None,
        progress: bool | Progress = True,
        max_cost_usd: float | None = None,
        batch: bool | Batching = False,
        batch_retry: BatchRetry | None = None,
    ) -> TournamentResult:
        """Play the tournament; `candidates` maps each name to its responses, one per question.

        Conversations: with `histories` (one per question, the messages every candidate's reply answers), each
        candidate's entries are its replies (text, or the assistant's messages with its tools' results); without,
        entries that are conversations (message lists, or their JSON with `target` set) are compared on their
        last turns, or whole with `target="whole"`. `questions` may then be left out.
        `max_cost_usd` is a budget in dollars (the tournament's own `budget` counts comparisons): no call starts
        that could take the spend past it; the matches left are recorded with the error `budget: ...`."""
        return run_sync(
            self.arun(
                questions,
                candidates,
                references,
                histories=histories,
                target=target,
                progress=progress,
                max_cost_usd=max_cost_usd,
                batch=batch,
                batch_retry=batch_retry,
            )
        )

    @batchable
    async def arun(
        self,
        questions: Sequence[str] | None = None,
        candidates: Mapping[str, Sequence[Any]] | None = None,
        references: Sequence[str | None] | None = None,
        *,
        histories: Any = None,
        target: str | None = None,
        progress: bool | Progress = True,
        max_cost_usd: float | None = None,
        batch: bool | Batching = False,
        batch_retry: BatchRetry | None = None,
    ) -> TournamentResult:
        """Async twin of `run`."""
        if not isinstance(candidates, Mapping):
            raise InputError("candidates must map each candidate's name to its list of responses")
        if len(candidates) < 2:
            raise InputError(f"a tournament needs at least 2 candidates, got {len(candidates)}")
        names = [str(name) for name in candidates]
        if len(set(names)) != len(names):
            raise InputError("candidate names must be unique")
        views = candidate_views(candidates, histories, target)
        if views is not None:
            count = len(next(iter(views.values())))
            if questions is None:
                questions = [last_user_text(v) for v in next(iter(views.values()))]
            answers = {n: [shown(v) for v in views[n]] for n in names}
        asked = _texts("questions", [questions] if isinstance(questions, str) else questions, None)
        if not asked:
            raise InputError("a tournament needs at least one question")
        if views is None:
            answers = {str(n): _texts(f"candidate {n!r}", r, len(asked)) for n, r in candidates.items()}
        elif len(asked) != count:
            raise InputError(f"questions has {len(asked)} entries for {count} conversations per candidate")
        refs = _texts("references", references, len(asked), optional=True)
        self.judge.check()
        check_items = getattr(self.judge, "check_items", None)
        if callable(check_items):  # a judge that commits first: every question must be one it can answer
            first, second = names[0], names[1]
            check_items(
                [
                    PairItem(q, answers[first][t], answers[second][t], refs[t], *_views(views, first, second, t))
                    for t, q in enumerate(asked)
                ]
            )
        rng = np.random.default_rng(self.seed)
        k, q = len(names), len(asked)
        budget = min(self.budget or self.format.default_budget(k, q), pool_size(k, q))
        state = TournamentState(names, q, rng)
        rows: list[dict[str, Any]] = []
        async with run_scope(
            progress,
            budget,
            f"{self.format.name} tournament",
            max_cost_usd=max_cost_usd,
            batch=batch,
            batch_retry=batch_retry,
            makers=[self.judge],
        ) as run:
            while state.comparisons < budget:
                proposal = self.format.propose(state, budget - state.comparisons)[: budget - state.comparisons]
                if not proposal:
                    break
                await self._play(proposal, asked, answers, refs, names, state, run.session, run.progress, rows, views)
        committing = any("reference_source" in row for row in rows)
        matches = pd.DataFrame(rows, columns=MATCH_COLUMNS + (COMMIT_COLUMNS if committing else []))
        ranking = self._rank(matches, names)
        return reported(
            TournamentResult(
                ranking=ranking,
                matches=matches,
                candidates=names,
                format=self.format.name,
                rating=self.rating.name,
                budget=budget,
                stability=stability(matches, names),
                questions=list(asked),
                provenance=provenance(self),
            )
        )

    async def _play(self, proposal, asked, answers, refs, names, state, session, bar, rows, views=None) -> None:
        flips = state.rng.random(len(proposal)) < 0.5  # which of the two is the pair's own "a"
        a = np.array([j if f else i for (i, j, _), f in zip(proposal, flips)], dtype=np.intp)
        b = np.array([i if f else j for (i, j, _), f in zip(proposal, flips)], dtype=np.intp)
        qs = [question for _, _, question in proposal]
        items = [
            PairItem(
                asked[t],
                answers[names[x]][t],
                answers[names[y]][t],
                refs[t],
                None if views is None else views[names[x]][t],
                None if views is None else views[names[y]][t],
            )
            for x, y, t in zip(a, b, qs)
        ]
        results = await self.judge.acompare_items(items, session, bar)
        width = max(len(r.verdicts) for r in results)
        scores = np.full((len(items), width), np.nan)
        swapped = np.zeros(width, dtype=bool)
        outcome = np.full(len(items), np.nan)
        for index, result in enumerate(results):
            pair_id = state.comparisons + index
            if result.winner is not None:
                outcome[index] = _SCORE[result.winner]
            for column, verdict in enumerate(result.verdicts):
                swapped[column] = verdict.swapped
                if verdict.winner is not None:
                    scores[index, column] = _SCORE[verdict.winner]
                rows.append(
                    {
                        "pair_id": pair_id,
                        "batch": state.batches,
                        "question_index": qs[index],
                        "model_a": names[a[index]],
                        "model_b": names[b[index]],
                        "judge": verdict.judge,
                        "swapped": verdict.swapped,
                        "winner": verdict.winner,
                        "verdict": verdict.verdict,
                        "confidence": verdict.confidence,
                        "outcome": result.winner,
                        "consistent": result.consistent,
                        "error": verdict.error or result.error,
                        **verdict.usage_fields(),
                        **_committed(result),
                    }
                )
        state.record(a, b, scores, swapped, outcome)

    def _rank(self, matches: pd.DataFrame, names: list[str]) -> pd.DataFrame:
        decided = matches[matches["winner"].notna()]
        if decided.empty:
            ranking = pd.DataFrame({"candidate": names})
            for column in RANKING_COLUMNS[1:]:
                ranking[column] = np.nan
        else:
            ranking = self.rating.rate(matches, self.seed).set_index("candidate").reindex(names).reset_index()
        record = _record(matches, names)
        for column in ("wins", "losses", "ties", "games"):
            ranking[column] = record[column].to_numpy()
        ranking["rank"] = ranking["rating"].rank(ascending=False, method="min").astype("Int64")
        columns = RANKING_COLUMNS + [c for c in ranking.columns if c not in RANKING_COLUMNS]
        ranking = ranking[columns].sort_values(["rank", "candidate"], na_position="last", kind="stable")
        return ranking.reset_index(drop=True)


def _views(
    views: dict[str, list[JudgedConversation]] | None, first: str, second: str, question: int
) -> tuple[JudgedConversation | None, JudgedConversation | None]:
    """The two candidates' judged conversations on one question (None, None for plain responses)."""
    return (None, None) if views is None else (views[first][question], views[second][question])


def _committed(result: Any) -> dict[str, Any]:
    """The reference a committing judge compared a pair against (nothing for a judge that does not commit first;
    a panel's: its judges' sources, joined)."""
    results = [result] if isinstance(result, PairwiseResult) else list(getattr(result, "vote_list", []))
    sources = [r.reference_source for r in results if r.reference_source is not None]
    if not sources:
        return {}
    made = [r.made_reference for r in results if r.made_reference is not None]
    return {
        "reference_source": ", ".join(dict.fromkeys(sources)),
        "made_reference": " | ".join(dict.fromkeys(made)) or None,
    }


COMMIT_COLUMNS = ["reference_source", "made_reference"]
MATCH_COLUMNS = [
    "pair_id",
    "batch",
    "question_index",
    "model_a",
    "model_b",
    "judge",
    "swapped",
    "winner",
    "verdict",
    "confidence",
    "outcome",
    "consistent",
    "error",
    *Usage.model_fields,
]


def _record(matches: pd.DataFrame, names: list[str]) -> pd.DataFrame:
    """Debiased wins, losses, ties and comparisons per candidate."""
    per = matches.drop_duplicates("pair_id")
    per = per[per["outcome"].notna()]
    out = pd.DataFrame(0, index=names, columns=["wins", "losses", "ties", "games"])
    for a, b, outcome in zip(per["model_a"], per["model_b"], per["outcome"]):
        out.loc[[a, b], "games"] += 1
        if outcome == "tie":
            out.loc[[a, b], "ties"] += 1
        else:
            winner, loser = (a, b) if outcome == "A" else (b, a)
            out.loc[winner, "wins"] += 1
            out.loc[loser, "losses"] += 1
    return out


def stability(matches: pd.DataFrame, names: list[str]) -> pd.DataFrame:
    """Kendall τ between the Bradley–Terry ranking after each share of the comparisons and the final one.

    All checkpoints are fitted at once (one batched fit); columns comparisons, kendall_tau, leader.
    """
    decided = matches[matches["winner"].notna()]
    if decided.empty:
        return pd.DataFrame(columns=["comparisons", "kendall_tau", "leader"])
    index = {name: i for i, name in enumerate(names)}
    a = decided["model_a"].map(index).to_numpy(dtype=np.intp)
    b = decided["model_b"].map(index).to_numpy(dtype=np.intp)
    flipped = decided["swapped"].astype(bool).to_numpy()
    score_a = decided["winner"].map(_SCORE).to_numpy(dtype=float)
    games = Games(
        names,
        np.where(flipped, b, a),
        np.where(flipped, a, b),
        np.where(flipped, 1.0 - score_a, score_a),
        np.ones(len(decided)),
        True,
    )
    pair = decided["pair_id"].to_numpy()
    total = int(matches["pair_id"].max()) + 1
    marks = np.unique(np.linspace(1, total, min(STABILITY_CHECKPOINTS, total)).round().astype(int))
    counts = (pair[None, :] < marks[:, None]).astype(float)
    n, w = game_matrices(games, counts)
    lam = np.where(mle_exists(n, w, True), 0.0, DEFAULT_PRIOR)
    theta, _, _ = fit(n, w, True, lam)
    final = theta[-1]
    return pd.DataFrame(
        {
            "comparisons": marks,
            "kendall_tau": [kendall_tau(t, final) for t in theta],
            "leader": [names[int(np.argmax(t))] for t in theta],
        }
    )
