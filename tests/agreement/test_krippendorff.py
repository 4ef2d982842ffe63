"""Krippendorff's α against the `krippendorff` package (which takes raters × items) to 1e-9."""

from __future__ import annotations

import krippendorff
import numpy as np
import pandas as pd
import pytest

from judgewidgets import ConfigurationError, InputError
from judgewidgets.agreement import krippendorff_alpha

TOL = 1e-9
LEVELS = ["nominal", "ordinal", "interval", "ratio"]


def noisy_ratings(seed: int, n_items: int, n_raters: int, k: int, missing: float) -> np.ndarray:
    """Items × raters values 1..k near a hidden value, with a share of cells missing."""
    rng = np.random.default_rng(seed)
    hidden = rng.integers(1, k + 1, n_items)
    noise = rng.integers(-1, 2, (n_items, n_raters)) * (rng.random((n_items, n_raters)) < 0.4)
    data = np.clip(hidden[:, None] + noise, 1, k).astype(float)
    data[rng.random(data.shape) < missing] = np.nan
    return data


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize(
    ("seed", "n_items", "n_raters", "k", "missing"),
    [(0, 12, 2, 3, 0.0), (1, 60, 3, 5, 0.2), (2, 300, 4, 7, 0.35), (3, 999, 3, 3, 0.1), (4, 25, 9, 4, 0.5)],
)
def test_alpha_matches_krippendorff(level: str, seed: int, n_items: int, n_raters: int, k: int, missing: float) -> None:
    data = noisy_ratings(seed, n_items, n_raters, k, missing)
    expected = krippendorff.alpha(reliability_data=data.T, level_of_measurement=level)
    assert krippendorff_alpha(data, level=level) == pytest.approx(expected, abs=TOL)  # type: ignore[arg-type]
    frame = pd.DataFrame(data, columns=[f"r{i}" for i in range(n_raters)])
    assert krippendorff_alpha(frame, level=level) == pytest.approx(expected, abs=TOL)  # type: ignore[arg-type]


@pytest.mark.parametrize("level", ["interval", "ratio"])
def test_alpha_on_continuous_values(level: str) -> None:
    rng = np.random.default_rng(11)
    truth = rng.uniform(1, 10, 80)
    data = truth[:, None] + rng.normal(0, 1.5, (80, 3))
    data[rng.random(data.shape) < 0.25] = np.nan
    expected = krippendorff.alpha(reliability_data=data.T, level_of_measurement=level)
    assert krippendorff_alpha(data, level=level) == pytest.approx(expected, abs=TOL)  # type: ignore[arg-type]


def test_alpha_textbook_example() -> None:
    """Krippendorff (2011), as in the package docstring: nominal 0.691358, interval 0.810845."""
    raters_by_items = [
        [np.nan, np.nan, np.nan, np.nan, np.nan, 3, 4, 1, 2, 1, 1, 3, 3, np.nan, 3],
        [1, np.nan, 2, 1, 3, 3, 4, 3, np.nan, np.nan, np.nan, np.nan, np.nan, np.nan, np.nan],
        [np.nan, np.nan, 2, 1, 3, 4, 4, np.nan, 2, 1, 1, 3, 3, np.nan, 4],
    ]
    items = np.array(raters_by_items).T
    assert round(krippendorff_alpha(items, level="nominal"), 6) == 0.691358
    assert round(krippendorff_alpha(items, level="interval"), 6) == 0.810845


def test_alpha_string_labels() -> None:
    order = ["very low", "low", "mid", "high", "very high"]
    codes = noisy_ratings(5, 40, 4, 5, 0.2)
    strings = np.array([[order[int(v) - 1] if v == v else None for v in row] for row in codes], dtype=object)
    nominal = krippendorff.alpha(reliability_data=codes.T, level_of_measurement="nominal")
    ordinal = krippendorff.alpha(reliability_data=codes.T, level_of_measurement="ordinal")
    assert krippendorff_alpha(strings) == pytest.approx(nominal, abs=TOL)
    assert krippendorff_alpha(strings, level="ordinal", labels=order) == pytest.approx(ordinal, abs=TOL)
    # the package's own string path (with "nan" strings for missing) agrees
    as_text = np.where(pd.isna(strings), "nan", strings).astype(str)
    expected = krippendorff.alpha(as_text.T, level_of_measurement="ordinal", value_domain=order)
    assert krippendorff_alpha(strings, level="ordinal", labels=order) == pytest.approx(expected, abs=TOL)


def test_alpha_ordinal_with_unused_labels_matches_value_domain() -> None:
    data = noisy_ratings(6, 50, 3, 4, 0.1)
    domain = [0, 1, 2, 3, 4, 5]
    expected = krippendorff.alpha(data.T, level_of_measurement="ordinal", value_domain=domain)
    assert krippendorff_alpha(data, level="ordinal", labels=domain) == pytest.approx(expected, abs=TOL)


def test_alpha_edge_cases_and_errors() -> None:
    assert np.isnan(krippendorff_alpha([[1, 1], [1, 1], [1, np.nan]]))
    assert krippendorff_alpha([[1, 1], [2, 2]]) == pytest.approx(1.0)
    with pytest.raises(ConfigurationError, match="unknown level"):
        krippendorff_alpha([[1, 2], [2, 2]], level="ratio_scale")  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match="pass labels"):
        krippendorff_alpha([["a", "b"], ["b", "b"]], level="ordinal")
    with pytest.raises(InputError, match="numeric"):
        krippendorff_alpha([["a", "b"], ["b", "b"]], level="interval")
    with pytest.raises(InputError, match="at least 2 raters"):
        krippendorff_alpha([[1], [2]])
    with pytest.raises(InputError, match="no item has ratings from at least 2"):
        krippendorff_alpha([[1, np.nan], [np.nan, 2]])
