"""Batches of comparisons: reading them from a DataFrame or lists, and laying results beside the input."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd

from .._errors import InputError
from .._saved import Dump, KeptFrame, column_errors
from ..engine import Usage
from ..engine._usage import rows_cost_summary
from ._records import (
    PairItem,
    PairwiseResult,
    build_conversation_pairs,
    build_pairs,
    pair_metrics,
    verdict_rows,
)

TEXT_COLUMNS = ("question", "response_a", "response_b", "reference")


class PairwiseTable(KeptFrame):
    """What `compare_many` returns: a DataFrame, one row per comparison (see `PairwiseJudge.compare_many`), whose
    `attrs["verdicts"]` holds every order's verdict; it can be saved (`save`) and logged (`log_to_mlflow`)."""

    def _call_errors(self) -> list[str | None]:
        return column_errors(self, "error")

    def _dump(self) -> Dump:
        """The table and its verdicts; the headline is a's win rate (win 1, tie ½), ties and consistency."""
        verdicts = [dict(v) for v in self.attrs.get("verdicts") or []]
        texts = [c for c in TEXT_COLUMNS if c in self.columns]
        judges = list(dict.fromkeys(str(v["judge"]) for v in verdicts if v.get("judge") is not None))
        return Dump(
            kind="pairwise_table",
            tables={"table": self.plain_frame("verdicts")},
            records={"verdicts": verdicts},
            metrics=pair_metrics(
                [w if isinstance(w, str) else None for w in self.get("winner", pd.Series(dtype=object))],
                [c if isinstance(c, bool) else None for c in self.get("consistent", pd.Series(dtype=object))],
                [e if isinstance(e, str) else None for e in self.get("error", pd.Series(dtype=object))],
            ),
            usage=self.usage.model_dump(),
            judges=judges,
            inputs=[{c: row[c] for c in texts} for row in self[texts].to_dict("records")] if texts else None,
            provenance=self.provenance,
        )

    @property
    def usage(self) -> Usage:
        """What every order's calls cost together (from `attrs["verdicts"]`: two calls per pair when swapped)."""
        return Usage.total(Usage.of_row(v) for v in self.attrs.get("verdicts") or [])

    def summary(self) -> pd.DataFrame:
        """Per judge: calls, failed orders, tokens of each kind, cost as billed and at list price (`cost_summary`,
        from `attrs["verdicts"]`)."""
        return rows_cost_summary(self.attrs.get("verdicts") or [])

    @classmethod
    def _restore(cls, dump: Dump) -> PairwiseTable:
        table = cls(dump.table("table"))
        table.attrs["verdicts"] = dump.rows("verdicts")
        table.attrs["provenance"] = dump.provenance
        return table


def stamped(table: pd.DataFrame, made_by: dict[str, Any]) -> PairwiseTable:
    """`table` as a PairwiseTable that remembers what made it."""
    out = PairwiseTable(table)
    out.attrs = dict(table.attrs)
    out.attrs["provenance"] = made_by
    return out


CONVERSATION_COLUMNS = ("history", "conversation_a", "conversation_b")


def one_pair(
    question: str | None,
    response_a: Any,
    response_b: Any,
    reference: str | None,
    *,
    history: Any = None,
    conversation_a: Any = None,
    conversation_b: Any = None,
    target: str | None = None,
) -> list[PairItem]:
    """The one comparison `compare` makes: of two responses to a question, two replies to a shared `history`, or
    two conversations (their last turns, or `target="whole"`); checked before any call."""
    references = None if reference is None else [reference]
    if history is None and conversation_a is None and conversation_b is None:
        if target is not None:
            raise InputError("target= applies to conversations; give history= or conversation_a= and conversation_b=")
        if question is None and response_a is None and response_b is None:
            raise InputError("compare needs a question and two responses (or history=, or two conversations)")
        return build_pairs([question], [response_a], [response_b], references)  # type: ignore[list-item]  # checked there

    def one(value: Any) -> list[Any] | None:
        return None if value is None else [value]

    if history is not None:
        return build_conversation_pairs(
            histories=[history], responses_a=one(response_a), responses_b=one(response_b), references=references
        )
    return build_conversation_pairs(
        conversations_a=one(conversation_a), conversations_b=one(conversation_b), references=references, target=target
    )


def pairs_from(
    data: pd.DataFrame | Sequence[str] | None,
    responses_a: Sequence[Any] | None,
    responses_b: Sequence[Any] | None,
    references: Sequence[str | None] | None,
    *,
    histories: Any = None,
    conversations_a: Any = None,
    conversations_b: Any = None,
    target: str | None = None,
) -> tuple[list[PairItem], pd.DataFrame]:
    """The comparisons of a batch and the input table they came from (kept as the output's first columns).

    Conversations come as `histories` (with two replies each) or `conversations_a` / `conversations_b`, or as a
    DataFrame's columns of the same singular names (history, conversation_a, conversation_b)."""
    given = histories is not None or conversations_a is not None or conversations_b is not None
    if isinstance(data, pd.DataFrame) and (given or any(c in data.columns for c in CONVERSATION_COLUMNS)):
        if given or responses_a is not None or responses_b is not None:
            raise InputError("give either a DataFrame or lists of conversations and responses, not both")
        column = data.get
        refs = data["reference"].tolist() if "reference" in data.columns else references
        items = build_conversation_pairs(
            histories=_listed(column("history")),
            responses_a=_listed(column("response_a")),
            responses_b=_listed(column("response_b")),
            conversations_a=_listed(column("conversation_a")),
            conversations_b=_listed(column("conversation_b")),
            references=refs,
            target=target,
        )
        return items, data.reset_index(drop=True)
    if given:
        if data is not None:
            raise InputError("give questions, or conversations (histories= or conversations_a= / _b=), not both")
        items = build_conversation_pairs(
            histories=histories,
            responses_a=responses_a,
            responses_b=responses_b,
            conversations_a=conversations_a,
            conversations_b=conversations_b,
            references=references,
            target=target,
        )
        return items, _texts_frame(items, references is not None)
    if target is not None:
        raise InputError("target= applies to conversations (histories=, or conversations_a= and _b=)")
    if data is None:
        raise InputError("nothing to compare: give a DataFrame, questions and responses, or conversations")
    if isinstance(data, pd.DataFrame):
        if responses_a is not None or responses_b is not None:
            raise InputError("give either a DataFrame or lists of questions and responses, not both")
        missing = [c for c in ("question", "response_a", "response_b") if c not in data.columns]
        if missing:
            raise InputError(
                f"the DataFrame lacks column(s) {', '.join(missing)}; expected question, response_a, response_b "
                f"(optional reference); found: {', '.join(map(str, data.columns))}"
            )
        refs = data["reference"].tolist() if "reference" in data.columns else references
        items = build_pairs(data["question"].tolist(), data["response_a"].tolist(), data["response_b"].tolist(), refs)
        return items, data.reset_index(drop=True)
    if responses_a is None or responses_b is None:
        raise InputError("compare_many needs responses_a and responses_b alongside the questions")
    items = build_pairs(data, responses_a, responses_b, references)
    return items, _texts_frame(items, references is not None)


def _texts_frame(items: Sequence[PairItem], references: bool) -> pd.DataFrame:
    """The table of what was compared: question, response_a, response_b (and reference)."""
    frame = pd.DataFrame(
        {"question": [i.question for i in items], "response_a": [i.response_a for i in items]}
        | {"response_b": [i.response_b for i in items]}
    )
    if references:
        frame["reference"] = [i.reference for i in items]
    return frame


def _listed(column: pd.Series | None) -> list[Any] | None:
    return None if column is None else column.tolist()


def results_table(frame: pd.DataFrame, results: Sequence[PairwiseResult]) -> pd.DataFrame:
    """The input table with one judge's results beside it (columns of the same name are replaced)."""
    rows = pd.DataFrame([r.row() for r in results])
    kept = frame.drop(columns=[c for c in rows.columns if c in frame.columns])
    out = pd.concat([kept.reset_index(drop=True), rows], axis=1)
    out.attrs["verdicts"] = verdict_rows(frame, results).to_dict("records")  # plain records: concat-safe
    return out
