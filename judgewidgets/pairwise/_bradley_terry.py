"""Bradley–Terry strengths by maximum likelihood, many fits at once (the point fit and every bootstrap resample).

The model: the candidate shown first beats the one shown second with probability σ(θ_first − θ_second + γ),
where θ are log-strengths and γ is a first-slot advantage (0 unless position is modelled). A tie counts half a
win each way, i.e. the likelihood is Σ s·log p + (1 − s)·log(1 − p) over games with first-slot score s — exactly
a logistic regression on the design x = e_first − e_second (plus an intercept γ) with each tie entered as half
a win and half a loss. Only differences of θ are identified; fits are centred to mean 0 and then shifted so an
`anchor` candidate sits at 0 when one is named.

The maximum-likelihood estimate exists only when the win graph is strongly connected (Zermelo, Ford): every
group of candidates scored at least once against the rest — and, with a first slot, when no direction that
moves γ too separates the verdicts (`mle_exists`). Where it does not (a candidate that never lost, a judge that
always sided with the first slot between close candidates; common in small tables and in their bootstrap
resamples), a fit is the mode under a Gaussian prior of precision `prior` on θ and γ instead of diverging.
"""

from __future__ import annotations

import math

import numpy as np

from ._games import Games

MAX_ITERATIONS = 100
MAX_HALVINGS = 30


def game_matrices(games: Games, counts: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(N, W), each (B, K, K): games with row first and column second, and the first's points in them.

    `counts` (B, n_rows) reweights the rows per resample; None is the data as given (B = 1).
    """
    k = games.n_candidates
    cell = games.first * k + games.second
    if counts is None:
        counts = np.ones((1, len(games)))
    b = counts.shape[0]
    flat = (np.arange(b)[:, None] * (k * k) + cell[None, :]).ravel()
    weighted = (counts * games.weight[None, :]).ravel()
    n = np.bincount(flat, weights=weighted, minlength=b * k * k).reshape(b, k, k)
    w = np.bincount(flat, weights=weighted * np.tile(games.score, b), minlength=b * k * k).reshape(b, k, k)
    return n, w


def mle_exists(n: np.ndarray, w: np.ndarray, positional: bool) -> np.ndarray:
    """Per fit: does the maximum-likelihood estimate exist, i.e. is there no separating direction?

    Without a first slot: the win graph is strongly connected. With one, also no direction (θ, γ) with γ ≠ 0
    can fit every game at least as well as a tie: for γ = ±1 the constraints "first won ⇒ θ_second − θ_first
    ≤ γ" and "first lost ⇒ θ_first − θ_second ≤ −γ" are difference constraints, feasible exactly when their
    constraint graph has no negative cycle (Bellman–Ford). Data such as "the first slot always won except
    where a stronger candidate sat second" separate that way, and the unpenalised fit would diverge.
    """
    k = n.shape[1]
    scored = w + np.transpose(n - w, (0, 2, 1))  # points of row against column, in either slot
    reach = ((scored > 0) | np.eye(k, dtype=bool)[None]).astype(np.float32)
    for _ in range(max(1, math.ceil(math.log2(k)))):
        reach = (reach @ reach > 0).astype(np.float32)
    ok = reach.all(axis=(1, 2))
    if positional:
        won_first = w > 0  # [u, v]: u shown first scored against v
        lost_second = np.transpose(n - w > 0, (0, 2, 1))  # [u, v]: v shown first conceded points to u
        for gamma in (1.0, -1.0):
            # An edge u → v of weight c is the constraint θ_v − θ_u ≤ c; the cheapest edge per cell counts.
            left = np.flatnonzero(ok)
            cost = np.where(lost_second[left], -gamma, np.inf)
            cost = np.minimum(cost, np.where(won_first[left], gamma, np.inf))
            ok[left] = _negative_cycle(cost)
    return ok


def _negative_cycle(cost: np.ndarray) -> np.ndarray:
    """Per (K, K) edge-cost matrix in the batch: does the graph hold a negative cycle? (Bellman–Ford.)"""
    b, k, _ = cost.shape
    distance = np.zeros((b, k))  # from a virtual source joined to every node at cost 0
    for _ in range(k):
        relaxed = np.minimum(distance, (distance[:, :, None] + cost).min(axis=1))
        if np.array_equal(relaxed, distance):  # settled everywhere: no negative cycle anywhere
            return np.zeros(b, dtype=bool)
        distance = relaxed
    return ((distance[:, :, None] + cost).min(axis=1) < distance - 1e-9).any(axis=1)


def _evaluate(n, w, theta, gamma, lam):
    """(penalised log-likelihood (B,), win probabilities (B, K, K)) from one pass of exp/log1p."""
    d = theta[:, :, None] - theta[:, None, :] + gamma[:, None, None]
    e = np.exp(-np.abs(d))
    p = np.where(d >= 0, 1.0 / (1.0 + e), e / (1.0 + e))
    softplus = np.maximum(d, 0.0) + np.log1p(e)  # log(1 + e^d)
    ll = (w * d - n * softplus).sum(axis=(1, 2))
    return ll - 0.5 * lam * ((theta**2).sum(axis=1) + gamma**2), p


def fit(
    n: np.ndarray,
    w: np.ndarray,
    positional: bool,
    lam: np.ndarray,
    tol: float = 1e-10,
    start: tuple[np.ndarray, np.ndarray] | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Damped Newton ascent of the (penalised) log-likelihood, all B fits at once.

    Returns θ (B, K) centred to mean 0, γ (B,) and the gauge-fixed negative Hessian (B, P, P) at the optimum
    (see `covariance`). `lam` (B,) is the prior precision of each fit; `start` an optional (θ, γ) to start from.
    The log-likelihood is concave, so Newton steps halved until the objective does not fall converge,
    quadratically near the optimum.
    """
    b, k, _ = n.shape
    p_dim = k + int(positional)
    theta = np.zeros((b, k)) if start is None else np.array(start[0], dtype=float).reshape(b, k)
    gamma = np.zeros(b) if start is None else np.array(start[1], dtype=float).reshape(b)
    diag = np.arange(k)
    total = np.maximum(n.sum(axis=(1, 2)), 1.0)
    objective, p = _evaluate(n, w, theta, gamma, lam)
    for _ in range(MAX_ITERATIONS):
        r = w - n * p
        info = n * p * (1.0 - p)
        sym = info + np.transpose(info, (0, 2, 1))
        grad = np.empty((b, p_dim))
        grad[:, :k] = r.sum(axis=2) - r.sum(axis=1) - lam[:, None] * theta
        hessian = np.empty((b, p_dim, p_dim))
        hessian[:, :k, :k] = 1.0 - sym  # + 11ᵀ fixes the gauge: the step then sums to 0
        hessian[:, diag, diag] += sym.sum(axis=2) + lam[:, None]
        if positional:
            grad[:, k] = r.sum(axis=(1, 2)) - lam * gamma
            cross = info.sum(axis=2) - info.sum(axis=1)
            hessian[:, :k, k] = cross
            hessian[:, k, :k] = cross
            hessian[:, k, k] = info.sum(axis=(1, 2)) + lam
        if np.abs(grad).max(initial=0.0) <= tol * total.max():
            break
        step = np.linalg.solve(hessian, grad[:, :, None])[:, :, 0]
        size = np.ones(b)
        for _ in range(MAX_HALVINGS):
            new_theta = theta + size[:, None] * step[:, :k]
            new_gamma = gamma + size * step[:, k] if positional else gamma
            new_objective, new_p = _evaluate(n, w, new_theta, new_gamma, lam)
            worse = new_objective < objective - 1e-12 * np.abs(objective)
            if not worse.any():
                break
            size = np.where(worse, size / 2, size)
        theta, gamma, objective, p = new_theta, new_gamma, new_objective, new_p
    theta = theta - theta.mean(axis=1, keepdims=True)
    return theta, gamma, hessian


def covariance(hessian: np.ndarray, k: int) -> np.ndarray:
    """Asymptotic covariance (B, K, K) of centred θ from the gauge-fixed negative Hessian of `fit`."""
    inverse = np.linalg.inv(hessian)[:, :k, :k]
    centring = np.eye(k) - 1.0 / k
    return centring @ inverse @ centring


def pool(games: Games) -> tuple[Games, np.ndarray, np.ndarray]:
    """Identical rows pooled into cells: (the distinct rows as Games, how many rows each stands for, and each
    row's cell)."""
    keys = np.stack([games.first, games.second, games.score, games.weight], axis=1)
    cells, inverse, sizes = np.unique(keys, axis=0, return_inverse=True, return_counts=True)
    pooled = Games(
        games.names,
        cells[:, 0].astype(np.intp),
        cells[:, 1].astype(np.intp),
        cells[:, 2],
        cells[:, 3],
        games.positional,
    )
    return pooled, sizes.astype(float), inverse.reshape(-1)


def bootstrap_counts(sizes: np.ndarray, resamples: int, rng: np.random.Generator) -> np.ndarray:
    """Cell counts (B, cells) of `resamples` bootstrap resamples of the rows, drawn with replacement.

    Resampling rows i.i.d. is a multinomial draw over the pooled cells, so the cost is B × cells, not B × rows.
    """
    total = int(sizes.sum())
    return rng.multinomial(total, sizes / total, size=resamples).astype(float)


def resample(games: Games, resamples: int, rng: np.random.Generator) -> tuple[Games, np.ndarray, np.ndarray]:
    """The pooled cells, their sizes and the cell counts (B, cells) of `resamples` bootstrap resamples.

    Without clusters the rows are resampled (`bootstrap_counts`). With `games.cluster` whole clusters are: the
    clusters are pooled by their content (which cells, how often), and a multinomial draw over those cluster
    types is turned into cell counts, so the cost stays B × types.
    """
    cells, sizes, inverse = pool(games)
    if games.cluster is None:
        return cells, sizes, bootstrap_counts(sizes, resamples, rng)
    cluster = np.unique(np.asarray(games.cluster), return_inverse=True)[1].reshape(-1)
    order = np.lexsort((inverse, cluster))
    cluster, members = cluster[order], inverse[order]
    n_clusters = int(cluster.max()) + 1
    start = np.searchsorted(cluster, np.arange(n_clusters))
    slot = np.arange(len(cluster)) - start[cluster]
    signature = np.full((n_clusters, int(slot.max()) + 1), -1, dtype=np.intp)
    signature[cluster, slot] = members  # each cluster's cells, sorted, padded with -1
    types, type_counts = np.unique(signature, axis=0, return_counts=True)
    content = np.zeros((len(types), len(sizes)))
    rows, columns = np.nonzero(types >= 0)
    np.add.at(content, (rows, types[rows, columns]), 1.0)
    draws = rng.multinomial(n_clusters, type_counts / n_clusters, size=resamples).astype(float)
    return cells, sizes, draws @ content
