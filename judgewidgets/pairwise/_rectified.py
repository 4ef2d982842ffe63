"""Prediction-powered Bradley–Terry and win rates: PPI++ M-estimation on a judge's verdicts and a few human ones.

Boyeau et al. (2024), "AutoEval done right", after Angelopoulos, Duchi & Zrnic (2023), "PPI++". With a person's
verdicts y on n labelled comparisons and the judge's verdicts f on those and on N unlabelled ones, an M-estimator
of loss ℓ is corrected by the judge's error on the labelled ones (rectified M-estimation):

    θ̂ = argmin_θ  λ · L_N(θ; f) + L_n(θ; y) − λ · L_n(θ; f),

L_N the mean loss over the unlabelled comparisons, L_n over the labelled. The judge's bias cancels in expectation
(the last two terms), so θ̂ estimates the θ the person's verdicts would give on every comparison, whatever the
judge's bias; its covariance is the sandwich H⁻¹ (n/N · Var(λ ∇ℓ_f) + Var(∇ℓ_y − λ ∇ℓ_f)) H⁻¹ / n. λ ∈ [0, 1] is
tuned to minimise the covariance's trace (λ = 0: the labels alone; λ = 1: plain PPI). Everything here follows
`ppi-python` (`ppi_logistic_ci`, `ppi_mean_ci`) formula for formula, so with `small_sample=False` the numbers are
theirs (the tests pin it).

Two losses:
- Bradley–Terry: the logistic loss of y on x = e_a − e_b (ties count ½, as in `jw.bradley_terry`), no intercept:
  the human verdicts carry no slot, and the judge's are the debiased outcome of both orders. Only differences of θ
  are identified; θ is centred to mean 0 and H's inverse is the pseudo-inverse on that subspace (equal to dropping
  a reference candidate and centring afterwards). λ minimises the summed variance of the centred θ (ppi-python,
  fed a design with a reference column dropped, minimises that of the differences from the reference: the same λ
  for two candidates, a slightly different one for more; at a given λ the numbers agree).
- A win rate (a mean): the squared loss, H = 1 — PPI++ for a mean, and with two candidates the Bradley–Terry
  win probability σ(θ_a − θ_b) equals the PPI++ mean of A's score: both solve the same estimating equation.
  `jw.estimate_quality` computes the same mean in `judgewidgets.estimates`, which imports this subpackage (for
  the pairwise result types), so this one cannot import it back (tests/test_layout.py: no cycles); the two agree
  exactly on the CLT interval (tested). Their small-sample intervals differ: estimate_quality counts two
  pseudo-disagreements in the variance of discrete labels; here a win rate whose labels all went one way gets no
  interval, and the others Student's t.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..sequential import t_quantile, z_quantile
from ._bradley_terry import fit

PRIOR = 0.1  # Gaussian prior precision on θ (on the scale of n labelled comparisons) when no optimum exists
MAX_SPREAD = 15.0  # fitted strengths spread wider than this: the objective had no finite optimum
GRADIENT_TOLERANCE = 1e-7


@dataclass(frozen=True)
class Rectified:
    """An M-estimate with its covariance: `theta` (d,), `cov` (d, d), PPI++'s `lam` (0: the labels alone; NaN: the
    judge alone), `df` the degrees of freedom of a t quantile (None: normal), `penalised` when the fit needed the
    prior because the objective had no finite optimum."""

    theta: np.ndarray
    cov: np.ndarray
    lam: float
    df: int | None
    penalised: bool = False

    @property
    def se(self) -> np.ndarray:
        return np.sqrt(np.clip(np.diag(self.cov), 0.0, None))

    def interval(self, confidence: float) -> tuple[np.ndarray, np.ndarray]:
        """(low, high) per coordinate: θ ∓ q · se, q the two-sided normal or t (df) quantile."""
        q = critical_value(confidence, self.df)
        return self.theta - q * self.se, self.theta + q * self.se


def critical_value(confidence: float, df: int | None) -> float:
    """The two-sided quantile at `confidence`: normal when `df` is None, else Student's t (df at least 1)."""
    alpha = 1.0 - confidence
    return z_quantile(alpha) if df is None else float(t_quantile(alpha, max(df, 1)))


def tuned_lambda(
    grads: np.ndarray, grads_hat: np.ndarray, grads_hat_unlabelled: np.ndarray, inv_hessian: np.ndarray
) -> float:
    """PPI++'s λ minimising the trace of the estimate's covariance, clipped to [0, 1] (ppi-python's
    `_calc_lam_glm`): tr(H⁻¹ Cov(∇ℓ_y, ∇ℓ_f) H⁻¹) / ((1 + n/N) tr(H⁻¹ Var(∇ℓ_f) H⁻¹)); 0 when the judge's
    gradients do not vary."""
    n, N = len(grads), len(grads_hat_unlabelled)
    centred, centred_hat = grads - grads.mean(0), grads_hat - grads_hat.mean(0)
    cross = (centred.T @ centred_hat + centred_hat.T @ centred) / n
    var_hat = np.atleast_2d(np.cov(np.concatenate([grads_hat, grads_hat_unlabelled]).T))
    denominator = 2.0 * (1.0 + n / N) * np.trace(inv_hessian @ var_hat @ inv_hessian)
    if not denominator > 0:
        return 0.0
    return float(np.clip(np.trace(inv_hessian @ cross @ inv_hessian) / denominator, 0.0, 1.0))


def rectified_covariance(
    grads: np.ndarray,
    grads_hat: np.ndarray,
    grads_hat_unlabelled: np.ndarray,
    inv_hessian: np.ndarray,
    lam: float,
    ddof: int = 1,
) -> np.ndarray:
    """Covariance of the rectified estimate: H⁻¹ (n/N · Var(λ ∇ℓ_f, unlabelled) + Var(∇ℓ_y − λ ∇ℓ_f)) H⁻¹ / n."""
    n, N = len(grads), len(grads_hat_unlabelled)
    rectifier = _cov(grads - lam * grads_hat, ddof)
    imputed = _cov(lam * grads_hat_unlabelled, ddof) * (n / N) if lam and N > 1 else 0.0
    return inv_hessian @ (imputed + rectifier) @ inv_hessian / n


def _cov(values: np.ndarray, ddof: int) -> np.ndarray:
    d = values.shape[1]
    if len(values) <= ddof:
        return np.zeros((d, d))
    return np.atleast_2d(np.cov(values.T, ddof=ddof)).reshape(d, d)


# --- Bradley–Terry ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Comparisons:
    """Comparisons as arrays over K candidates: `a`, `b` (indices), `score` (a's points: 1, ½ or 0)."""

    k: int
    a: np.ndarray
    b: np.ndarray
    score: np.ndarray

    def __len__(self) -> int:
        return len(self.score)

    def design(self) -> np.ndarray:
        """x = e_a − e_b, one row per comparison."""
        x = np.zeros((len(self), self.k))
        rows = np.arange(len(self))
        x[rows, self.a] = 1.0
        x[rows, self.b] = -1.0
        return x


def _cells(k: int, parts: list[tuple[Comparisons, float, np.ndarray]]) -> tuple[np.ndarray, np.ndarray]:
    """(N, W) game matrices (1, K, K) of a weighted objective: each part adds `weight` softplus per comparison and
    `points` to its linear term (`fit` maximises Σ W·d − N·softplus(d), d = θ_row − θ_column)."""
    n, w = np.zeros((1, k, k)), np.zeros((1, k, k))
    for games, weight, points in parts:
        np.add.at(n[0], (games.a, games.b), weight)
        np.add.at(w[0], (games.a, games.b), points)
    return n, w


def fit_rectified(labelled: Comparisons, judged: np.ndarray, unlabelled: Comparisons, lam: float) -> np.ndarray | None:
    """θ (K,) centred, minimising λ·L_N(f) + L_n(y) − λ·L_n(f) (scaled by n), or None when it has no finite optimum.

    `labelled.score` holds the person's verdicts y, `judged` the judge's f on the same comparisons, and
    `unlabelled.score` the judge's on the rest. Scaled by n the objective is a weighted Bradley–Terry fit: each
    unlabelled comparison weighs λ·n/N with points λ·n/N·f, each labelled one weighs 1 − λ with points y − λ·f.
    It is convex for λ ∈ [0, 1] but need not have a finite optimum: with λ = 0 when some candidate never lost a
    labelled comparison, with λ > 0 when the rectified points of a group of candidates exceed what they could win
    (a judge that sells a strong candidate short, corrected on a few labels). A Newton fit then runs off: its
    strengths spread past MAX_SPREAD (odds e¹⁵ ≈ 3·10⁶ : 1, far beyond any real pair) or its Hessian vanishes."""
    counts, points = _cells(labelled.k, _parts(labelled, judged, unlabelled, lam))
    try:
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            theta, _, _ = fit(counts, points, False, np.zeros(1))
    except np.linalg.LinAlgError:  # every win probability at 0 or 1: a singular Hessian
        return None
    if not np.isfinite(theta).all() or np.ptp(theta) > MAX_SPREAD or not _converged(counts, points, theta):
        return None
    return theta[0]


def fit_penalised(labelled: Comparisons) -> np.ndarray:
    """The labels alone (λ = 0), the mode under a N(0, 1/PRIOR) prior on θ: finite and moderate whatever the labels
    (as `jw.bradley_terry` does when the maximum-likelihood estimate does not exist). With λ > 0 a prior would not
    do: the rectified points may be negative, and the mode would sit wherever the prior stops a linear slope."""
    counts, points = _cells(labelled.k, _parts(labelled, labelled.score, labelled, 0.0))
    theta, _, _ = fit(counts, points, False, np.full(1, PRIOR))
    return theta[0]


def _parts(
    labelled: Comparisons, judged: np.ndarray, unlabelled: Comparisons, lam: float
) -> list[tuple[Comparisons, float, np.ndarray]]:
    n, N = len(labelled), len(unlabelled)
    parts = [(labelled, 1.0 - lam, labelled.score - lam * judged)]
    if lam and N:
        parts.append((unlabelled, lam * n / N, lam * n / N * unlabelled.score))
    return parts


def _converged(counts: np.ndarray, points: np.ndarray, theta: np.ndarray) -> bool:
    d = theta[0][:, None] - theta[0][None, :]
    residual = points[0] - counts[0] / (1.0 + np.exp(-d))
    gradient = residual.sum(1) - residual.sum(0)
    return bool(np.abs(gradient).max() <= GRADIENT_TOLERANCE * max(float(counts.sum()), 1.0))


def _gradients(theta: np.ndarray, games: Comparisons, target: np.ndarray) -> np.ndarray:
    """∇ℓ per comparison for the logistic loss: x · (σ(xᵀθ) − target)."""
    mu = 1.0 / (1.0 + np.exp(-(theta[games.a] - theta[games.b])))
    return games.design() * (mu - target)[:, None]


def _inverse_hessian(theta: np.ndarray, groups: list[Comparisons]) -> np.ndarray:
    """The pseudo-inverse of the mean Hessian over the comparisons of `groups`: θ's gauge leaves only differences
    identified, and on the centred subspace the pseudo-inverse is what dropping a reference candidate gives."""
    x = np.concatenate([g.design() for g in groups])
    a = np.concatenate([g.a for g in groups])
    b = np.concatenate([g.b for g in groups])
    mu = 1.0 / (1.0 + np.exp(-(theta[a] - theta[b])))
    hessian = (x * (mu * (1.0 - mu))[:, None]).T @ x / len(x)
    k = len(theta)
    gauge = np.full((k, k), 1.0 / k)  # H is singular along 1 only (the comparisons connect every candidate)
    try:
        return np.linalg.inv(hessian + gauge) - gauge
    except np.linalg.LinAlgError:  # every win probability at 0 or 1 (a fit that ran off): no information
        return np.linalg.pinv(hessian, hermitian=True)


def ppi_bradley_terry(
    labelled: Comparisons,
    judged: np.ndarray,
    unlabelled: Comparisons,
    lam: float | None = None,
    *,
    small_sample: bool = True,
) -> Rectified:
    """Prediction-powered Bradley–Terry strengths (centred) with their sandwich covariance.

    `lam=None` tunes λ as `ppi_logistic_ci` does: fit at λ = 1, tune at that fit, refit, tune again at the refit
    and fit the final θ there. Where the objective at the tuned λ has no finite optimum, λ is lowered (¾, ½, ¼ of
    it, then 0) to the first that has one: any fixed λ gives a valid estimate, a lower one leans less on the
    judge. Where none has (few labels, one candidate never beaten in them), θ is the labels' penalised mode
    (`penalised`: its interval is not to be trusted; label more comparisons).
    `small_sample` uses Student's t with n − (K − 1) − 1 degrees of freedom (one per free strength and one for
    a tuned λ) instead of the normal quantile."""
    k, n, N = labelled.k, len(labelled), len(unlabelled)
    tuned = lam is None and N > 0
    current = 1.0 if tuned else (float(lam) if N else 0.0)  # type: ignore[arg-type]
    theta = fit_rectified(labelled, judged, unlabelled, current)
    for _ in range(2 if tuned else 0):
        start = theta if theta is not None else fit_penalised(labelled)
        current = tuned_lambda(
            _gradients(start, labelled, labelled.score),
            _gradients(start, labelled, judged),
            _gradients(start, unlabelled, unlabelled.score),
            _inverse_hessian(start, [labelled, unlabelled]),
        )
        theta = fit_rectified(labelled, judged, unlabelled, current)
    penalised = False
    if theta is None:
        for share in (0.75, 0.5, 0.25, 0.0) if current else ():
            theta = fit_rectified(labelled, judged, unlabelled, share * current)
            if theta is not None:
                current = share * current
                break
    if theta is None:
        theta, current, penalised = fit_penalised(labelled), 0.0, True
    groups = [labelled, unlabelled] if current else [labelled]
    cov = rectified_covariance(
        _gradients(theta, labelled, labelled.score),
        _gradients(theta, labelled, judged),
        _gradients(theta, unlabelled, unlabelled.score) if current else np.zeros((0, k)),
        _inverse_hessian(theta, groups),
        current,
    )
    df = n - (k - 1) - int(tuned and current > 0) if small_sample else None
    return Rectified(theta, cov, current, df, penalised)


def classical_bradley_terry(games: Comparisons, *, small_sample: bool = True) -> Rectified:
    """Bradley–Terry on one set of verdicts (the labels alone, or the judge alone on every comparison) with the
    sandwich covariance H⁻¹ Var(∇ℓ) H⁻¹ / n (ppi-python's `classical_logistic_ci`)."""
    empty = Comparisons(games.k, games.a[:0], games.b[:0], games.score[:0])
    estimate = ppi_bradley_terry(games, games.score, empty, lam=0.0, small_sample=small_sample)
    return Rectified(estimate.theta, estimate.cov, 0.0, estimate.df, estimate.penalised)
