"""The kinds of label: which values each takes, how they are typed, which get buttons."""

from __future__ import annotations

import numpy as np
import pytest

import judgewidgets as jw
from judgewidgets.labels import LabelKind


def test_pass_fail_and_pairwise_labels() -> None:
    pass_fail, pairwise = LabelKind.of("pass_fail"), LabelKind.of("pairwise")
    assert pass_fail.options == ["pass", "fail"] and pairwise.options == ["A", "B", "tie"]
    assert [pass_fail.parse(t) for t in ("p", "F", "pass", "x")] == ["pass", "fail", "pass", None]
    assert [pairwise.parse(t) for t in ("a", "B", "t", "tie", "c")] == ["A", "B", "tie", "tie", None]
    assert pass_fail.check(" PASS ") == "pass" and pairwise.check("a") == "A"
    with pytest.raises(jw.InputError, match=r"give pass \(p\) / fail \(f\)"):
        pass_fail.check("p")  # typing shortcuts are not labels
    with pytest.raises(jw.InputError, match="not a pairwise label"):
        pairwise.check("C")
    assert pass_fail.shortcut("fail") == "f" and pairwise.shortcut("tie") == "t"


def test_score_labels_on_a_scale() -> None:
    likert = LabelKind.of("score", (1, 5))
    assert likert.options == [1, 2, 3, 4, 5] and likert.whole
    assert likert.check(np.int64(4)) == 4 and likert.check(3.0) == 3 and likert.parse("5") == 5
    for bad in (0, 6, 2.5, "4", True, float("nan")):
        with pytest.raises(jw.InputError, match="whole number from 1 to 5"):
            likert.check(bad)
    assert likert.parse("9") is None and likert.parse("four") is None
    unit = LabelKind.of("score", (0.0, 1.0))  # float ends: any number between them, typed
    assert unit.check(0.25) == 0.25 and unit.parse("0.7") == 0.7 and unit.options == [] and not unit.whole
    assert "number from 0.0 to 1.0" in unit.describe()
    wide = LabelKind.of("score", (0, 100))
    assert wide.options == [] and wide.check(73) == 73  # too many for buttons: typed
    assert LabelKind.of("score").scale == (1, 5)


def test_bad_kinds_and_scales() -> None:
    with pytest.raises(jw.InputError, match="unknown label kind 'stars'"):
        LabelKind.of("stars")
    with pytest.raises(jw.InputError, match="low < high"):
        LabelKind.of("score", (5, 1))
