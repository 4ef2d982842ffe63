"""The seed's parameter-effects study: how σ, the confidence level and K drive cost and coverage."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from .._errors import ConfigurationError
from ._distribution import likert_distribution
from ._methods import DEFAULT_METHOD
from ._precision import expected_samples
from ._rules import StoppingRule
from ._simulate import simulate, summarise

EFFECT_COLUMNS = [
    "parameter",
    "value",
    "method",
    "mean_n",
    "p95_n",
    "coverage",
    "nominal",
    "theory_n",
    "delta",
    "confidence",
    "K",
    "trials",
]


def parameter_effects(
    methods: Sequence[str | StoppingRule] = ("seed", DEFAULT_METHOD),
    *,
    true_mean: float = 8.3,
    true_std: float = 1.0,
    scale: tuple[float, float] = (1, 10),
    K: float = 9,
    confidence: float = 0.95,
    stds: Sequence[float] | None = None,
    confidences: Sequence[float] | None = None,
    Ks: Sequence[float] | None = None,
    trials: int = 500,
    max_samples: int = 400,
    seed: int | None = 0,
) -> pd.DataFrame:
    """Simulated mean n, p95 n and coverage against theory, varying one parameter at a time around (σ, 1 − α, K).

    As in the seed's three plots: the ratings' sd (reported as δ = σ/R; the ratings follow the maximum-entropy
    distribution with mean `true_mean`), the confidence level, and K. Rows: parameter ("delta", "confidence",
    "K"), its value, method, and the results; draw it with `parameter_effects_chart`.
    """
    if not 0 < confidence < 1:
        raise ConfigurationError(f"confidence must lie strictly between 0 and 1, got {confidence}")
    low, high = scale
    R = float(high) - float(low)
    stds = list(stds) if stds is not None else list(np.linspace(0.5, 2.0, 16))
    confidences = list(confidences) if confidences is not None else list(np.linspace(0.75, 0.99, 13))
    Ks = list(Ks) if Ks is not None else list(range(2, 16, 2))
    base = likert_distribution(true_mean, true_std, scale)
    settings: list[tuple[str, float, np.ndarray, float, float, float]] = []
    for sd in stds:
        settings.append(("delta", sd / R, likert_distribution(true_mean, sd, scale), sd, confidence, K))
    for level in confidences:
        settings.append(("confidence", level, base, true_std, level, K))
    for k in Ks:
        settings.append(("K", k, base, true_std, confidence, k))
    rows = []
    for parameter, value, probs, sd, level, k in settings:
        theory = expected_samples(sd, scale, k, 1 - level)
        for method in methods:
            frame = simulate(
                probs, None, trials, scale, k, 1 - level, method, seed, max_samples=max(max_samples, 2 * theory)
            )
            stats = summarise(frame)
            rows.append(
                {
                    "parameter": parameter,
                    "value": float(value),
                    "method": frame.attrs["method"],
                    "mean_n": stats["mean_n"],
                    "p95_n": stats["p95_n"],
                    "coverage": stats["coverage"],
                    "nominal": level,
                    "theory_n": theory,
                    "delta": sd / R,
                    "confidence": level,
                    "K": k,
                    "trials": trials,
                }
            )
    return pd.DataFrame(rows, columns=EFFECT_COLUMNS)
