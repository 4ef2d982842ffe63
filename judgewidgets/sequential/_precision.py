"""The precision target of a sequential rating (scale, K, α → half-width d) and the quantiles it needs.

The seed's target: a rating on a scale of range R = high − low is precise enough when its confidence interval's
half-width is at most d = R / (3K), at confidence 1 − α. Quantiles are computed here (normal from the standard
library, Student's t by Hill's algorithm 396) so the package needs no scipy.
"""

from __future__ import annotations

import math
from functools import lru_cache
from statistics import NormalDist

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from .._errors import ConfigurationError

_NORMAL = NormalDist()


class Precision(BaseModel):
    """What "precise enough" means: ratings on `scale`, half-width d = R/(3K) at confidence 1 − `alpha`."""

    model_config = ConfigDict(frozen=True)

    scale: tuple[float, float] = Field((1.0, 10.0), description="lowest and highest rating (inclusive)")
    K: float = Field(10.0, description="precision parameter: the target half-width is R/(3K)")
    alpha: float = Field(0.05, description="significance level: the interval has confidence 1 − alpha")

    def __init__(self, **data: object) -> None:
        try:
            super().__init__(**data)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first.get("loc", ()))
            raise ConfigurationError(f"invalid precision target: {where}: {first.get('msg')}") from None

    @model_validator(mode="after")
    def _check(self) -> Precision:
        low, high = self.scale
        if not (math.isfinite(low) and math.isfinite(high) and low < high):
            raise ConfigurationError(f"scale must be (low, high) with low < high, got {self.scale}")
        if not (math.isfinite(self.K) and self.K > 0):
            raise ConfigurationError(f"K must be a positive number, got {self.K}")
        if not (0.0 < self.alpha < 1.0):
            raise ConfigurationError(f"alpha must lie strictly between 0 and 1, got {self.alpha}")
        return self

    @property
    def low(self) -> float:
        return float(self.scale[0])

    @property
    def high(self) -> float:
        return float(self.scale[1])

    @property
    def R(self) -> float:
        """The scale's range, high − low."""
        return self.high - self.low

    @property
    def d(self) -> float:
        """The target half-width R / (3K)."""
        return self.R / (3.0 * self.K)

    @property
    def z(self) -> float:
        """The two-sided normal quantile Φ⁻¹(1 − α/2)."""
        return z_quantile(self.alpha)

    @property
    def confidence(self) -> float:
        return 1.0 - self.alpha

    def t(self, df: np.ndarray | int) -> np.ndarray:
        """Two-sided Student-t quantiles t_{df, 1−α/2}, elementwise."""
        return t_quantile(self.alpha, df)


def z_quantile(alpha: float) -> float:
    """Φ⁻¹(1 − α/2)."""
    return _NORMAL.inv_cdf(1.0 - alpha / 2.0)


def t_quantile(alpha: float, df: np.ndarray | int) -> np.ndarray:
    """Two-sided Student-t quantiles t_{df, 1−α/2} (df ≥ 1), elementwise over `df`."""
    df_arr = np.asarray(df)
    unique, inverse = np.unique(df_arr, return_inverse=True)
    values = np.array([_t_two_sided(alpha, int(v)) for v in unique.ravel()], dtype=float)
    return values[inverse].reshape(df_arr.shape)


@lru_cache(maxsize=4096)
def _t_two_sided(alpha: float, df: int) -> float:
    """Hill (1970), CACM algorithm 396: the t quantile whose two tails hold probability `alpha`."""
    if df < 1:
        raise ConfigurationError(f"degrees of freedom must be >= 1, got {df}")
    p = alpha
    n = float(df)
    if df == 1:
        half = p * math.pi / 2.0
        return math.cos(half) / math.sin(half)
    if df == 2:
        return math.sqrt(2.0 / (p * (2.0 - p)) - 2.0)
    a = 1.0 / (n - 0.5)
    b = 48.0 / (a * a)
    c = ((20700.0 * a / b - 98.0) * a - 16.0) * a + 96.36
    d = ((94.5 / (b + c) - 3.0) / b + 1.0) * math.sqrt(a * math.pi / 2.0) * n
    x = d * p
    y = x ** (2.0 / n)
    if y > 0.05 + a:
        x = _NORMAL.inv_cdf(p * 0.5)
        y = x * x
        if df < 5:
            c += 0.3 * (n - 4.5) * (x + 0.6)
        c = (((0.05 * d * x - 5.0) * x - 7.0) * x - 2.0) * x + b + c
        y = (((((0.4 * y + 6.3) * y + 36.0) * y + 94.5) / c - y - 3.0) / b + 1.0) * x
        y = math.expm1(a * y * y)
    else:
        y = ((1.0 / (((n + 6.0) / (n * y) - 0.089 * d - 0.822) * (n + 2.0) * 3.0) + 0.5 / (n + 4.0)) * y - 1.0) * (
            n + 1.0
        ) / (n + 2.0) + 1.0 / y
    return math.sqrt(n * y)


def expected_samples(sigma: float, scale: tuple[float, float] = (1, 10), K: float = 10, alpha: float = 0.05) -> int:
    """The seed's theory: judgments needed for half-width d when the ratings' sd is σ, ceil((z·σ/d)²)."""
    if not (isinstance(sigma, (int, float)) and math.isfinite(sigma) and sigma >= 0):
        raise ConfigurationError(f"sigma must be a finite number >= 0, got {sigma!r}")
    target = Precision(scale=scale, K=K, alpha=alpha)
    return math.ceil(round((target.z * sigma / target.d) ** 2, 9))
