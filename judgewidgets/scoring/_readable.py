"""Tables a person reads: whole prompts and responses (wrapped, never cut), each judge's score beside the answer it
wrote when the score is probability-weighted, the aggregates and the disagreement, and notes that say how to read
them. `to_df()` stays the table to compute with; this one is for looking at."""

from __future__ import annotations

import html
import math
import textwrap
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from .._records import Vote
from ..templates._parse import find_json_object

__all__ = ["ReadableTable", "readable_table"]

_TEXTS = ("prompt", "response", "reference")
_AGGREGATES = ("avg", "weighted_avg", "disagreement")
_WROTE = " wrote"
_EXPECTED = " expected score"


@dataclass(frozen=True)
class ReadableTable:
    """One row per item: `extra` columns, the texts, per judge its score (and what it wrote, for a
    probability-weighted judge), the aggregates. Shows as an HTML table with its notes in a notebook and as one
    block per item in a terminal (`str()`); `frame` is the table itself."""

    frame: pd.DataFrame
    judges: tuple[str, ...]
    extra: tuple[str, ...]
    notes: tuple[str, ...]

    def _repr_html_(self) -> str:
        text_columns = {c for c in self.frame.columns if c in _TEXTS}
        head = "".join(f"<th style='text-align: left'>{html.escape(str(c))}</th>" for c in self.frame.columns)
        rows = []
        for index, row in self.frame.iterrows():
            cells = [f"<th>{html.escape(str(index))}</th>"]
            for column, value in row.items():
                style = "text-align: left; vertical-align: top"
                if column in text_columns:
                    style += "; white-space: pre-wrap; overflow-wrap: anywhere; min-width: 12em; max-width: 28em"
                cells.append(f"<td style='{style}'>{html.escape(_cell(value))}</td>")
            rows.append("<tr>" + "".join(cells) + "</tr>")
        notes = "".join(f"<li>{html.escape(note)}</li>" for note in self.notes)
        # Wider than the output area (long texts, many judges), the table scrolls sideways inside its own box
        # rather than being cut at the notebook's right edge; the notes stay in view under it.
        return (
            "<div class='judgewidgets-readable'>"
            "<div class='judgewidgets-readable-scroll' style='overflow-x: auto; max-width: 100%'>"
            f"<table class='dataframe'><thead><tr><th></th>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"
            "</div>" + (f"<ul style='font-size: smaller'>{notes}</ul>" if notes else "") + "</div>"
        )

    def to_text(self, width: int = 100) -> str:
        """One block per item: its extra columns, each text wrapped to `width`, the judges' scores, the
        aggregates; the notes last."""
        blocks = []
        for index, row in self.frame.iterrows():
            head = f"[{index}]" + "".join(f" {c}: {_cell(row[c])}" for c in self.extra)
            lines = [head]
            for column in (c for c in _TEXTS if c in self.frame.columns):
                lines += _wrapped(f"{column}:", _cell(row[column]), width)
            scores = [_judge_text(judge, row) for judge in self.judges]
            lines += _wrapped("judges:", " · ".join(scores), width)
            aggregates = [f"{c} {_cell(row[c])}" for c in _AGGREGATES if c in self.frame.columns]
            if aggregates:
                lines += _wrapped("panel:", " · ".join(aggregates), width)
            blocks.append("\n".join(lines))
        notes = [
            line
            for note in self.notes
            for line in textwrap.wrap(note, width, initial_indent="* ", subsequent_indent="  ")
        ]
        return "\n\n".join(blocks) + ("\n\n" + "\n".join(notes) if notes else "")

    def __str__(self) -> str:
        return self.to_text()

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(self.to_text())


def readable_table(result: Any, **extra: Sequence[Any]) -> ReadableTable:
    """The table of a judge's or panel's result (`JudgeResult`, `PanelResult`) to read: `extra` columns first
    (e.g. `label=examples["label"]`), then the whole prompt, response and reference, each judge's score (with the
    answer it wrote and that answer's probability, for a probability-weighted judge), avg (and weighted_avg) and
    disagreement, with notes on how to read them."""
    judges = tuple(getattr(result, "judges", None) or [result.judge])
    votes: dict[tuple[str, int], Vote] = {(v.judge, v.item): v for v in result.vote_list}
    n = len(result.items)
    columns: dict[str, Any] = {}
    for name, values in extra.items():
        values = list(values)
        if len(values) != n:
            raise ValueError(f"column {name!r} has {len(values)} values for {n} items")
        columns[name] = values
    columns["prompt"] = [item.prompt for item in result.items]
    columns["response"] = [item.response for item in result.items]
    if any(item.reference is not None for item in result.items):
        columns["reference"] = [item.reference for item in result.items]
    weighted = [j for j in judges if any(v.score_source == "probabilities" for v in result.vote_list if v.judge == j)]
    for judge in judges:
        mine = [votes.get((judge, i)) for i in range(n)]
        scores = [v.score if v is not None else math.nan for v in mine]
        if judge in weighted:
            columns[judge + _WROTE] = [_wrote(v) for v in mine]
            columns[judge + _EXPECTED] = scores
        else:
            columns[judge] = scores
    frame = pd.DataFrame(columns)
    if len(judges) > 1:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # items some judge failed on: the notes say so
            aggregates = result.to_df()
        for column in _AGGREGATES:
            if column in aggregates:
                frame[column] = aggregates[column].to_numpy()
    return ReadableTable(frame, judges, tuple(extra), _notes(judges, weighted, votes, len(judges) > 1))


def _wrote(vote: Vote | None) -> str:
    """What the judge wrote, e.g. "5, p=0.62": its answer and the probability it gave that answer (the answer
    alone where the probabilities did not come back)."""
    if vote is None or vote.error:
        return ""
    probabilities = vote.probabilities or {}
    data = find_json_object(vote.raw or "") or {}
    values = [str(v) for k, v in data.items() if k != "explanation" and isinstance(v, (str, int, float))]
    answer = next((v for v in values if v in probabilities), None)
    if answer is not None:
        return f"{answer}, p={probabilities[answer]:.2f}"
    return values[-1] if values else " ".join((vote.raw or "").split())[:40]


def _notes(
    judges: Sequence[str], weighted: Sequence[str], votes: dict[tuple[str, int], Vote], panel: bool
) -> tuple[str, ...]:
    notes = ["Scores are normalised to [0, 1], 1 the best."]
    if weighted:
        notes.append(
            f"{', '.join(weighted)}: probability-weighted. The expected score is the mean of the judge's possible "
            "answers' scores, weighted by the probability it gave each (as in G-Eval); 'wrote' is the answer it "
            "wrote and p the probability it gave that answer. So a written 5 of 5, 1.0 by itself, can score 0.80 "
            "when the judge gave 4 or less part of its probability."
        )
    if panel:
        notes.append("avg is the mean of the judges' scores; disagreement their standard deviation (0: they agree).")
    failed = sorted({judge for (judge, _), v in votes.items() if v.error})
    if failed:
        notes.append(f"NaN: the judge's call failed ({', '.join(failed)}); result.errors says why.")
    return tuple(notes)


def _judge_text(judge: str, row: pd.Series) -> str:
    if judge + _EXPECTED not in row:
        return f"{judge} {_cell(row[judge])}"
    wrote = row[judge + _WROTE]
    return f"{judge} {_cell(row[judge + _EXPECTED])} expected" + (f" (wrote {wrote})" if wrote else "")


def _cell(value: Any) -> str:
    if isinstance(value, float):
        return "NaN" if math.isnan(value) else f"{value:.2f}"
    return "" if value is None else str(value)


def _wrapped(label: str, text: str, width: int) -> list[str]:
    indent = " " * 4
    label = f"{indent}{label:<11}"
    return textwrap.wrap(text, width, initial_indent=label, subsequent_indent=" " * len(label)) or [label.rstrip()]
