"""Tournament view and human-review queue: thin widgets over plain models."""

from __future__ import annotations

import html
import os
from collections.abc import Hashable
from typing import Any

import numpy as np
import pandas as pd

from .._errors import InputError
from .._review import ReviewPolicy
from ..labels import LabelStore, LabelsView, content_key
from ..labels._store import open_store
from ._chart_widget import chart_widget
from ._explorer import _score


class TournamentModel:
    """The tournament view's logic over a TournamentResult: one candidate's games, and the win-rate matrix with
    that candidate's row and column lit."""

    def __init__(self, result: Any) -> None:
        self.result = result
        self.order = list(result.ranking["candidate"])

    def games(self, candidate: str) -> pd.DataFrame:
        """Every judged comparison of `candidate` (both orders of each pair): question, opponent, shown_first
        (whether the candidate's answer came first), result for the candidate (won / lost / tie; blank where the
        call failed), whether the two orders agreed, and the error."""
        if candidate not in self.order:
            raise InputError(f"no candidate {candidate!r} in this tournament; there are {self.order}")
        matches = self.result.matches
        mine = matches[(matches["model_a"] == candidate) | (matches["model_b"] == candidate)]
        questions = list(getattr(self.result, "questions", None) or [])
        rows = []
        for m in mine.itertuples():
            is_a = m.model_a == candidate
            mine_slot, other_slot = ("A", "B") if is_a else ("B", "A")
            outcome = {mine_slot: "won", other_slot: "lost", "tie": "tie"}.get(m.outcome, "")
            question = questions[m.question_index] if m.question_index < len(questions) else m.question_index
            rows.append(
                {
                    "question": question,
                    "opponent": m.model_b if is_a else m.model_a,
                    "shown_first": is_a != bool(m.swapped),
                    "result": outcome,
                    "consistent": m.consistent,
                    "error": m.error,
                }
            )
        return pd.DataFrame(rows, columns=["question", "opponent", "shown_first", "result", "consistent", "error"])

    def matrix_chart(self, highlight: str | None = None) -> Any:
        """The win-rate matrix, `highlight`'s row and column lit."""
        from ..pairwise._charts import win_matrix_chart

        return win_matrix_chart(self.result.win_matrix(), self.order, highlight)


class TournamentView:
    """Ranking with intervals, the win-rate matrix and the ranking table of a TournamentResult. Clicking a
    candidate in the ratings chart lights its row and column in the matrix and lists its games.

    `corrected`: a CorrectedRanking (`result.corrected(labels)`), or the human labels themselves, adds the
    ratings corrected with them beside the judge's own — one chart of both intervals per candidate, with the
    corrected table and what it rests on below."""

    def __init__(self, result: Any, corrected: Any = None) -> None:
        import contextlib

        import ipywidgets as w

        from ..pairwise import CorrectedRanking
        from ..pairwise._charts import CANDIDATE

        self.result = result
        self.model = TournamentModel(result)
        self.ratings = chart_widget(result.ratings_chart())
        self.matrix = chart_widget(self.model.matrix_chart())
        self.games = w.HTML()
        with contextlib.suppress(Exception):  # older altair has no selection traits
            self.ratings.selections.observe(self._on_pick, names=[CANDIDATE])
        table = w.HTML(result.ranking.to_html(index=False, float_format=lambda v: f"{v:.2f}"))
        parts: list[Any] = [w.VBox([w.HBox([self.ratings, self.matrix]), self.games]), table]
        if corrected is not None and not isinstance(corrected, CorrectedRanking):
            corrected = result.corrected(corrected)
        self.corrected: CorrectedRanking | None = corrected
        self.corrected_chart: Any = None
        if corrected is not None:
            self.corrected_chart = chart_widget(corrected.chart())
            parts += [self.corrected_chart, w.HTML(corrected._repr_html_())]
        self.widget = w.VBox(parts)
        self.widget.add_class("judgewidgets-tournament")

    def _on_pick(self, change: Any) -> None:
        value = getattr(change["new"], "value", None) or []
        self.show(str(value[0]["candidate"]) if value and "candidate" in value[0] else None)

    def show(self, candidate: str | None) -> None:
        """Light `candidate`'s row and column in the matrix and list its games (None: back to the whole view)."""
        self.matrix.chart = self.model.matrix_chart(candidate)
        if candidate is None:
            self.games.value = ""
            return
        games = self.model.games(candidate)
        won = int((games["result"] == "won").sum())
        self.games.value = (
            f"<p><b>{html.escape(candidate)}</b>: {len(games)} judged comparisons, won {won}</p>"
            + games.assign(error=games["error"].fillna("")).to_html(index=False, na_rep="")
        )

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self.widget)


class ReviewQueueModel:
    """Flagged items one at a time; human labels; each judge's agreement with those labels.

    A judge "passes" an item when its score is at least `pass_threshold`; agreement is the share of labelled
    items where that matches the human's pass/fail label, with Cohen's κ. `result` is a panel, rubric or
    pairwise result (flagged by `policy`), or the DataFrame of an `EvaluationPipeline` run, which carries its
    own flags (`needs_human_review`, `review_reasons`) and whose stages are the judges.

    The labels are kept in a LabelStore: `store` is a path (every label written as it is given, so a rebuilt
    queue on the same file finds them; `jw.LabelQueue` pass/fail labels on the same items share it), a
    LabelStore, or None (in memory). Items are keyed by their texts. `labels` reads as a dict item → label.
    """

    def __init__(
        self,
        result: Any,
        policy: ReviewPolicy | None = None,
        pass_threshold: float = 0.5,
        store: str | os.PathLike[str] | LabelStore | None = None,
    ) -> None:
        self.result = result
        if _is_pipeline_frame(result):
            if policy is not None:
                raise InputError("a pipeline result is already flagged by its own rules: pass no ReviewPolicy")
            self.stages = [c[: -len("_error")] for c in result.columns if c.endswith("_error")]
            self.flags = result.assign(needs_review=result["needs_human_review"].astype(bool))
        else:
            self.stages = []
            self.flags = result.review(policy or ReviewPolicy())
        self.queue = self.flags.index[self.flags["needs_review"]].tolist()
        self.position = 0
        self.store = open_store(store, "pass_fail")
        self.keys = self._item_keys()
        self.labels = LabelsView(self.store, self.keys)
        self.pass_threshold = pass_threshold
        self.judge_scores = self._judge_scores()

    def _item_keys(self) -> dict[Hashable, str]:
        """A stable key per item, from its texts (as `jw.LabelQueue` keys the same items), else its position."""
        items = getattr(self.result, "items", None)
        if isinstance(items, list) and len(items) == len(self.flags) and all(hasattr(i, "prompt") for i in items):
            return {
                index: content_key(prompt=i.prompt, response=i.response, reference=i.reference)
                for index, i in zip(self.flags.index, items)
            }
        texts = [c for c in ("prompt", "submission", "response", "reference") if c in self.flags.columns]
        if not texts:
            return {index: str(index) for index in self.flags.index}
        rows = self.flags[texts].to_numpy(dtype=object)
        return {index: content_key(**dict(zip(texts, row))) for index, row in zip(self.flags.index, rows)}

    def _judge_scores(self) -> pd.DataFrame:
        if self.stages:
            return self.result[self.stages].astype(float)
        if hasattr(self.result, "scores"):
            return self.result.scores()
        return pd.DataFrame([r.judge_scores for r in self.result.reports]).astype(float)

    @property
    def current(self) -> int | None:
        return self.queue[self.position] if self.queue else None

    def move(self, step: int) -> None:
        if self.queue:
            self.position = (self.position + step) % len(self.queue)

    def label(self, item: int, value: str) -> None:
        """Label `item` pass or fail: written to the store at once (InputError, a ValueError, for other values)."""
        if value not in ("pass", "fail"):
            raise InputError(f"label must be 'pass' or 'fail', got {value!r}")
        self.store.add(self.keys[item], value, kind="pass_fail")

    def views(self, item: int) -> pd.DataFrame:
        """Each judge's score (and explanation where available) on one item."""
        if self.stages:
            row = self.result.loc[item]
            return pd.DataFrame(
                {
                    "judge": self.stages,
                    "score": [row[s] for s in self.stages],
                    "explanation": [_text(row[f"{s}_detail"]) for s in self.stages],
                    "error": [_text(row[f"{s}_error"]) or None for s in self.stages],
                }
            )
        if hasattr(self.result, "votes") and isinstance(self.result.votes, pd.DataFrame):
            votes = self.result.votes
            return votes[votes["item"] == item][["judge", "score", "explanation", "error"]].reset_index(drop=True)
        scores = self.judge_scores.loc[item]
        return pd.DataFrame({"judge": scores.index, "score": scores.to_numpy()})

    def agreement(self) -> pd.DataFrame:
        """Per judge: labelled items, agreement with the human labels and Cohen's κ."""
        from ..agreement import cohen_kappa

        labels = dict(self.labels)  # one read of the store
        items = list(labels)
        human = [labels[i] for i in items]
        rows = []
        for judge in self.judge_scores.columns:
            scores = self.judge_scores.loc[items, judge].to_numpy(dtype=float) if items else np.array([])
            verdicts = [None if np.isnan(s) else ("pass" if s >= self.pass_threshold else "fail") for s in scores]
            pairs = [(v, h) for v, h in zip(verdicts, human) if v is not None]
            agree = sum(v == h for v, h in pairs) / len(pairs) if pairs else float("nan")
            try:
                kappa = (
                    cohen_kappa([v for v, _ in pairs], [h for _, h in pairs], labels=["fail", "pass"])
                    if pairs
                    else float("nan")
                )
            except Exception:
                kappa = float("nan")
            rows.append({"judge": judge, "labelled": len(pairs), "agreement": agree, "kappa": kappa})
        return pd.DataFrame(rows)


def _is_pipeline_frame(result: Any) -> bool:
    return isinstance(result, pd.DataFrame) and {"needs_human_review", "review_reasons"} <= set(result.columns)


def _text(value: Any) -> str:
    return "" if value is None or (isinstance(value, float) and np.isnan(value)) else str(value)


class ReviewQueue:
    """Widget over ReviewQueueModel: read the flagged item and the judges' views, label it pass or fail.

    With `store="review.jsonl"` every label is written to that file as it is given (see ReviewQueueModel).
    """

    def __init__(
        self,
        result: Any,
        policy: ReviewPolicy | None = None,
        pass_threshold: float = 0.5,
        store: str | os.PathLike[str] | LabelStore | None = None,
    ) -> None:
        import ipywidgets as w

        self.model = ReviewQueueModel(result, policy, pass_threshold, store)
        self.card = w.HTML()
        self.choice = w.ToggleButtons(options=["pass", "fail"], value=None, description="your label")
        self.prev_button = w.Button(description="previous", icon="arrow-left")
        self.next_button = w.Button(description="next", icon="arrow-right")
        self.agreement = w.HTML()
        self.prev_button.on_click(lambda _: self._move(-1))
        self.next_button.on_click(lambda _: self._move(1))
        self.choice.observe(self._on_label, names="value")
        self.widget = w.VBox([self.card, self.choice, w.HBox([self.prev_button, self.next_button]), self.agreement])
        self.widget.add_class("judgewidgets-review-queue")
        self._render()

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self.widget)

    def _move(self, step: int) -> None:
        self.model.move(step)
        self._render()

    def _on_label(self, change: Any) -> None:
        item = self.model.current
        # Showing an item sets the buttons to its stored label: that is no new label to write.
        if item is not None and change["new"] is not None and change["new"] != self.model.labels.get(item):
            self.model.label(item, change["new"])
            self._render_agreement()

    def _render(self) -> None:
        item = self.model.current
        if item is None:
            self.card.value = "<p>No item needs review under this policy.</p>"
            return
        flags = self.model.flags.loc[item]
        prompt = html.escape(str(flags.get("prompt", flags.get("submission", ""))))
        response = html.escape(str(flags.get("response", "")))
        views = "".join(
            f"<tr><td><code>{html.escape(str(v.judge))}</code></td><td>{_score(v.score)}</td>"
            f"<td>{html.escape(str(getattr(v, 'explanation', '') or ''))}</td></tr>"
            for v in self.model.views(item).itertuples()
        )
        reasons = "; ".join(flags["review_reasons"])
        self.card.value = (
            f"<p><b>Item {item}</b> ({self.model.position + 1} of {len(self.model.queue)} flagged) — "
            f"{html.escape(reasons)}</p>"
            f"<p><b>Prompt:</b> {prompt}<br><b>Response:</b> {response}</p>"
            f"<table><tr><th>judge</th><th>score</th><th>explanation</th></tr>{views}</table>"
        )
        self.choice.value = self.model.labels.get(item)
        self._render_agreement()

    def _render_agreement(self) -> None:
        table = self.model.agreement()
        self.agreement.value = "<b>Agreement with your labels</b>" + table.to_html(
            index=False, float_format=lambda v: f"{v:.2f}", na_rep="—"
        )
