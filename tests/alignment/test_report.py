"""The alignment report shown when an agreement is undefined: κ or accuracy missing (None or NaN) prints "n/a" and
why, in the summary, the HTML and the chart, instead of crashing or printing "nan"."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from judgewidgets.alignment._labels import read_labels
from judgewidgets.alignment._report import AlignmentReport, agreement_row, confusion
from judgewidgets.alignment._rules import MISSING

LABELS = read_labels(["pass"] * 6 + ["fail"] * 6, "pass_fail")
RIGHT = LABELS.codes.copy()
NONE_JUDGED = np.full(len(LABELS), MISSING)
ONE_CLASS = np.where(LABELS.codes == 1, 1, MISSING)  # only the passes judged, all right: κ undefined


def report(table: pd.DataFrame) -> AlignmentReport:
    return AlignmentReport(
        table=table,
        levers=table.rename(columns={"rule": "candidate"}),
        per_fold=pd.DataFrame({"fold": [0, 1], "before": [np.nan, 1.0], "after": [1.0, 1.0]}),
        confusion={"before": confusion(NONE_JUDGED, LABELS), "after": confusion(RIGHT, LABELS)},
        learning_curve=pd.DataFrame({"labels": [6, 12], "accuracy": [np.nan, 1.0], "draws": [3, 1]}),
        disagreements=pd.DataFrame(),
        chosen={"candidate": "as given; <calibrated>"},
        calls=24,
        seconds=1.0,
        kind="pass_fail",
        folds=2,
    )


def rows(before: np.ndarray, after: np.ndarray) -> pd.DataFrame:
    return pd.DataFrame([agreement_row("before", before, LABELS), agreement_row("after", after, LABELS)])


def kappa_none() -> pd.DataFrame:
    """A table whose κ is None while its accuracy is a number (the kind of table a κ that cannot be computed,
    or a table read back from elsewhere, gives)."""
    table = rows(RIGHT, RIGHT).astype({"kappa": object, "kappa_low": object, "kappa_high": object})
    table.loc[0, ["kappa", "kappa_low", "kappa_high"]] = None
    return table


CASES = {
    "kappa None": (kappa_none, "κ n/a"),
    "one class judged": (lambda: rows(ONE_CLASS, RIGHT), "κ n/a (undefined: the 6 judged items and their labels"),
    "nothing judged before": (lambda: rows(NONE_JUDGED, RIGHT), "n/a (no item judged: the judge failed on all 12)"),
    "nothing judged at all": (lambda: rows(NONE_JUDGED, NONE_JUDGED), "→ n/a (no item judged"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_an_undefined_agreement_reads_n_a_and_why(case: str) -> None:
    make, expected = CASES[case]
    r = report(make())
    summary = r.summary()
    assert expected in summary
    assert "nan" not in summary.lower() and "None" not in summary
    assert "12 pass_fail labels" in summary  # every held-out label, judged or not
    assert summary in repr(r)


@pytest.mark.parametrize("case", list(CASES))
def test_the_html_shows_n_a_for_an_undefined_agreement(case: str) -> None:
    html = report(CASES[case][0]())._repr_html_()
    assert "<td>n/a</td>" in html
    assert "None" not in html and "NaN" not in html and "nan%" not in html
    assert "&lt;calibrated&gt;" in html  # the summary is escaped in HTML


@pytest.mark.parametrize("case", list(CASES))
def test_the_chart_draws_with_an_undefined_agreement(case: str) -> None:
    chart = report(CASES[case][0]()).chart()

    def refuse(constant: str) -> None:
        raise ValueError(f"{constant} is not JSON")

    spec = json.loads(chart.to_json(), parse_constant=refuse)  # NaN would not be valid JSON for vega
    assert spec["hconcat"]


def test_a_defined_agreement_reads_as_before() -> None:
    summary = report(rows(np.where(LABELS.codes == 1, 1, 1), RIGHT)).summary()
    assert summary.startswith("held-out agreement with 12 pass_fail labels (2-fold cross-fitting): 50.0% [")
    assert "→ 100.0% [100.0%, 100.0%]; κ 0.00 → 1.00; kept: as given; <calibrated>" in summary
