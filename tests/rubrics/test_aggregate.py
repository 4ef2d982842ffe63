"""AutoRubric's ensemble rules, including the issue's worked examples."""

import pytest

import judgewidgets as jw
from judgewidgets.rubrics import CriterionVerdict as V
from judgewidgets.rubrics import CriterionVote
from judgewidgets.rubrics._aggregate import aggregate_binary, aggregate_choice

MET, UNMET, CA = V.MET, V.UNMET, V.CANNOT_ASSESS
VALUES = [0.0, 0.33, 0.67, 1.0]


def bvotes(*verdicts: V, weights: list[float] | None = None) -> list[CriterionVote]:
    weights = weights or [1.0] * len(verdicts)
    return [CriterionVote(judge_id=f"j{i}", verdict=v, weight=w) for i, (v, w) in enumerate(zip(verdicts, weights))]


def criterion(weight: float = 10, scale_type: str = "ordinal", na: bool = False) -> jw.Criterion:
    options = [jw.CriterionOption(str(i + 1), v) for i, v in enumerate(VALUES)]
    if na:
        options.append(jw.CriterionOption("NA", 0.0, na=True))
    return jw.Criterion("q", weight=weight, scale_type=scale_type, options=options)


def cvotes(c: jw.Criterion, *indices: int, weights: list[float] | None = None) -> list[CriterionVote]:
    weights = weights or [1.0] * len(indices)
    return [
        CriterionVote(judge_id=f"j{k}", selected_index=i, value=c.options[i].value, na=c.options[i].na, weight=w)
        for k, (i, w) in enumerate(zip(indices, weights))
    ]


@pytest.mark.parametrize(
    ("strategy", "votes", "weight", "expected"),
    [
        ("majority", bvotes(MET, MET, UNMET), 1, MET),
        ("majority", bvotes(MET, UNMET), 1, UNMET),  # tie → worst for positive weight
        ("majority", bvotes(MET, UNMET), -1, MET),  # tie → worst for negative weight
        ("majority", bvotes(MET, UNMET, CA, CA), 1, UNMET),  # CANNOT_ASSESS dropped before counting
        ("majority", bvotes(CA, CA), 1, CA),
        ("majority", bvotes(MET, UNMET, UNMET, weights=[5, 1, 1]), 1, UNMET),  # head count ignores weights
        ("weighted", bvotes(MET, UNMET, UNMET, weights=[5, 1, 1]), 1, MET),
        ("weighted", bvotes(MET, UNMET, weights=[2, 2]), 1, UNMET),
        ("weighted", bvotes(MET, UNMET, weights=[2, 2]), -3, MET),
        ("unanimous", bvotes(MET, MET, CA), 1, MET),
        ("unanimous", bvotes(MET, MET, UNMET), 1, UNMET),
        ("any", bvotes(UNMET, UNMET, MET), 1, MET),
        ("any", bvotes(UNMET, CA), 1, UNMET),
    ],
)
def test_binary(strategy: str, votes: list, weight: float, expected: V) -> None:
    assert aggregate_binary(votes, strategy, weight) == expected


def test_issue_examples_ordinal() -> None:
    c = criterion(weight=10)
    assert aggregate_choice(cvotes(c, 2, 2, 3), c, "min")[0] == 2
    assert aggregate_choice(cvotes(c, 2, 2, 3), c, "max")[0] == 3
    index, value = aggregate_choice(cvotes(c, 2, 2, 3), c, "mean")
    assert index == 2 and value == pytest.approx(0.78, abs=0.005)
    assert aggregate_choice(cvotes(c, 0, 1, 2), c, "mean")[0] == 1
    index, value = aggregate_choice(cvotes(c, 0, 1, 2, 3), c, "median")
    assert value == pytest.approx(0.5) and index == 1  # snap tie → lowest value at weight +10
    negative = criterion(weight=-10)
    assert aggregate_choice(cvotes(negative, 0, 1, 2, 3), negative, "median")[0] == 2  # → highest at −10
    index, value = aggregate_choice(cvotes(c, 0, 3, weights=[3, 1]), c, "weighted_mean")
    assert value == pytest.approx(0.25) and index == 1


def test_ordinal_mode_and_ties() -> None:
    c = criterion(weight=1)
    assert aggregate_choice(cvotes(c, 1, 1, 3), c, "mode")[0] == 1
    assert aggregate_choice(cvotes(c, 1, 3), c, "mode")[0] == 1  # tie → lowest value
    negative = criterion(weight=-1)
    assert aggregate_choice(cvotes(negative, 1, 3), negative, "mode")[0] == 3  # tie → highest value
    assert aggregate_choice(cvotes(c, 3, 1, 1), c, "min")[0] == 1


def test_value_tie_goes_to_lowest_index() -> None:
    c = jw.Criterion(
        "q",
        weight=1,
        scale_type="nominal",
        options=[
            jw.CriterionOption("too few", 0.0),
            jw.CriterionOption("too many", 0.0),
            jw.CriterionOption("right", 1.0),
        ],
    )
    assert aggregate_choice(cvotes(c, 1, 0), c, "mode")[0] == 0
    negative = c.model_copy(update={"weight": -1.0})
    assert aggregate_choice(cvotes(negative, 1, 0), negative, "mode")[0] == 0  # equal values → lowest index


def test_nominal() -> None:
    c = criterion(weight=1, scale_type="nominal", na=True)
    assert aggregate_choice(cvotes(c, 2, 2, 1), c, "mode")[0] == 2
    assert aggregate_choice(cvotes(c, 2, 1, 1, weights=[5, 1, 1]), c, "weighted_mode")[0] == 2
    assert aggregate_choice(cvotes(c, 2, 1, weights=[1, 1]), c, "weighted_mode")[0] == 1  # tie → lower value
    assert aggregate_choice(cvotes(c, 2, 2), c, "unanimous")[0] == 2
    assert aggregate_choice(cvotes(c, 2, 1), c, "unanimous")[0] == 4  # disagreement → NA option


def test_nominal_unanimous_without_na_falls_back_to_mode_and_warns() -> None:
    c = criterion(weight=1, scale_type="nominal")
    with pytest.warns(RuntimeWarning, match="falling back to mode"):
        assert aggregate_choice(cvotes(c, 2, 2, 1), c, "unanimous")[0] == 2


def test_na_votes_are_dropped_all_na_is_na_and_no_votes() -> None:
    c = criterion(weight=1, na=True)
    assert aggregate_choice(cvotes(c, 4, 3), c, "mean")[0] == 3
    assert aggregate_choice(cvotes(c, 4, 4), c, "mean")[0] == 4
    assert aggregate_choice([], c, "mean")[0] == 4
    no_na = criterion(weight=1)
    assert aggregate_choice([], no_na, "mean")[0] == 0  # worst option
    negative = criterion(weight=-1)
    assert aggregate_choice([], negative, "mean")[0] == 3
