"""Batches of comparisons: reading them from a DataFrame or lists, and laying results beside the input."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from .._errors import InputError
from ._records import PairItem, PairwiseResult, build_pairs, verdict_rows


def pairs_from(
    data: pd.DataFrame | Sequence[str],
    responses_a: Sequence[str] | None,
    responses_b: Sequence[str] | None,
    references: Sequence[str | None] | None,
) -> tuple[list[PairItem], pd.DataFrame]:
    """The comparisons of a batch and the input table they came from (kept as the output's first columns)."""
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
    frame = pd.DataFrame(
        {"question": [i.question for i in items], "response_a": [i.response_a for i in items]}
        | {"response_b": [i.response_b for i in items]}
    )
    if references is not None:
        frame["reference"] = [i.reference for i in items]
    return items, frame


def results_table(frame: pd.DataFrame, results: Sequence[PairwiseResult]) -> pd.DataFrame:
    """The input table with one judge's results beside it (columns of the same name are replaced)."""
    rows = pd.DataFrame([r.row() for r in results])
    kept = frame.drop(columns=[c for c in rows.columns if c in frame.columns])
    out = pd.concat([kept.reset_index(drop=True), rows], axis=1)
    out.attrs["verdicts"] = verdict_rows(frame, results).to_dict("records")  # plain records: concat-safe
    return out
