"""How many comparisons each tournament format needs, and whether Bradley–Terry intervals cover the truth.

    python benchmarks/tournament_efficiency.py [--runs 200] [--spread 2.5] [--horizon 480] [--bootstrap 500]
                                               [--strengths even|normal] [--no-oracle]

Simulation: 16 candidates with known Bradley–Terry log-strengths evenly spaced on [−spread, spread] (2.5 gives
a 5-logit range, about Arena-Hard-Auto's spread between strong and weak models; neighbours are 1/3 logit
apart, a 58:42 match). The judge is simulated, vectorised: in each order it prefers the response shown first
with probability σ(θ_first − θ_second + 0.5) (a position bias of 0.5 logits), and says "tie" with probability
4·0.3·p(1−p) — close pairs tie more — taken evenly from win and loss so a tie counts half without biasing the
expected score. Every comparison is judged in both orders, as `PairwiseJudge(swap=True)` does, and rated by
`Tournament`'s own code path: the library's pairing formats choose the pairs (`Adaptive` with its defaults
except `settled=0`, so it never stops before the horizon), `TournamentState` records them, and Bradley–Terry
with a first-slot term rates them.

Every format is measured the same way. Each run plays one schedule to `--horizon` comparisons and takes
Kendall τ between the fitted strengths (`TournamentState.estimate`) and the true ones after every 8
comparisons. Round robin plays each round's pairs in a random order, so any prefix of its schedule is a
random, balanced set of distinct pairs — the fair non-adaptive baseline, not cut to whole rounds. Per format:
- median-curve (the headline): the fewest comparisons at which the median τ over runs is ≥ 0.9, i.e. the
  budget at which a typical run is there; it does not depend on the horizon;
- stays: the median over runs of the comparisons after which τ stays ≥ 0.9 up to the horizon;
- first-hit: the median over runs of the first checkpoint with τ ≥ 0.9 (rewards lucky early crossings);
- coverage: the share of true (centred) strengths inside the 95 % bootstrap intervals at the horizon, from
  `BradleyTerry.estimate` — the intervals a `Tournament` reports (basic bootstrap, comparisons resampled with
  both their orders; nominal 0.95).
Ratios divide each format's comparisons by round robin's on the same measure.

Reference rows (even strengths only), which no real format can play because they know the truth:
- oracle-sequential: the adaptive format's own pair choice, one comparison at a time, with the posterior
  replaced by the truth (mean = true strengths, covariance = inverse Fisher information at the truth);
- oracle-fixed: for each budget b, the allocation of b comparisons over pairs that minimises the expected
  number of misordered pairs when the true strengths are known (normal approximation of the fit,
  exponentiated-gradient search), played as one fixed schedule.
Together they show how much choosing pairs well can save at all in this simulation, and so what to expect of
any adaptive format.

`--strengths normal` draws each run's strengths from a normal distribution instead (uneven gaps and near-ties,
as on real leaderboards), with the same expected range.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from judgewidgets.pairwise import Adaptive, BradleyTerry, RoundRobin, Swiss, TournamentState, kendall_tau
from judgewidgets.pairwise._adaptive import _most_valuable as most_valuable
from judgewidgets.pairwise._adaptive import order_information, warm_start

K = 16
POSITION_BIAS = 0.5
TIE_PROPENSITY = 0.3
STEP = 8
TARGET = 0.9
ORACLE_UP_TO = 200  # budgets the oracle-fixed design is computed for


def judge(rng: np.random.Generator, strengths: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a's points in the original and the swapped order, (n, 2): the simulated, position-biased judge."""
    out = np.empty((len(a), 2))
    for column, (first, second) in enumerate(((a, b), (b, a))):
        p = 1.0 / (1.0 + np.exp(-(strengths[first] - strengths[second] + POSITION_BIAS)))
        tie = 4.0 * TIE_PROPENSITY * p * (1.0 - p)
        draw = rng.random(len(a))
        first_points = np.where(draw < p - tie / 2, 1.0, np.where(draw < p + tie / 2, 0.5, 0.0))
        out[:, column] = first_points if column == 0 else 1.0 - first_points
    return out


def pair_design() -> np.ndarray:
    """(pairs, K): row p is +1 at pair p's first candidate and −1 at its second (pairs in np.triu_indices order)."""
    first, second = np.triu_indices(K, 1)
    design = np.zeros((len(first), K))
    design[np.arange(len(first)), first] = 1.0
    design[np.arange(len(first)), second] = -1.0
    return design


class TruthInformed(Adaptive):
    """The adaptive format's pair choice, one comparison at a time, told the TRUE strengths: its mean is the
    truth and its covariance the inverse Fisher information of the comparisons played so far, at the truth."""

    def __init__(self, strengths: np.ndarray) -> None:
        super().__init__(settled=0.0, explore=0.0)
        self.strengths = strengths

    def propose(self, state: TournamentState, remaining: int) -> list[tuple[int, int, int]]:
        if state.comparisons == 0:
            return warm_start(state)[:remaining]
        first, second = np.triu_indices(K, 1)
        diff = self.strengths[first] - self.strengths[second]
        info = order_information(diff, POSITION_BIAS)
        design = pair_design()
        played = state.used[first, second] * info
        cov = np.linalg.inv(design.T @ (played[:, None] * design) + self.prior * np.eye(K))
        best = most_valuable(cov, first, second, np.abs(diff), info, np.arange(len(first)), K)
        i, j = int(first[best]), int(second[best])
        return [(i, j, state.next_question(i, j))]


def new_format(name: str, strengths: np.ndarray):  # type: ignore[no-untyped-def]
    if name == "oracle-sequential":
        return TruthInformed(strengths)
    return {"round_robin": RoundRobin(), "swiss": Swiss(), "adaptive": Adaptive(settled=0.0)}[name]


def play(
    format_name: str, seed: int, strengths: np.ndarray, horizon: int, bootstrap: int
) -> tuple[np.ndarray, np.ndarray]:
    """τ every STEP comparisons up to the horizon, and which true strengths the final intervals cover."""
    rng = np.random.default_rng(seed)
    pairing = new_format(format_name, strengths)
    state = TournamentState([f"c{i}" for i in range(K)], n_questions=100_000, rng=rng)
    taus = np.full(horizon // STEP, np.nan)
    while state.comparisons < horizon:
        proposal = pairing.propose(state, horizon - state.comparisons)
        if not proposal:
            break
        for start in range(0, len(proposal), STEP):
            chunk = np.array(proposal[start : start + STEP])
            a, b = chunk[:, 0], chunk[:, 1]
            state.record(a, b, judge(rng, strengths, a, b))
            if state.comparisons % STEP == 0:
                theta, _ = state.estimate()
                taus[state.comparisons // STEP - 1] = kendall_tau(theta, strengths)
    fitted = BradleyTerry(bootstrap=bootstrap).estimate(state.games(), seed + 10**6)
    truth = strengths - strengths.mean()
    return taus, (truth >= fitted.low) & (truth <= fitted.high)


def oracle_allocation(strengths: np.ndarray, budget: int, iterations: int = 400) -> np.ndarray:
    """Comparisons per pair (real-valued, summing to `budget`) minimising Σ P(misordered) for known strengths."""
    first, second = np.triu_indices(K, 1)
    gap = np.abs(strengths[first] - strengths[second])
    info = order_information(strengths[first] - strengths[second], POSITION_BIAS)
    design = pair_design()
    weights = np.full(len(first), budget / len(first))
    for step in range(iterations):
        laplacian = design.T @ ((weights * info)[:, None] * design)
        kernel = design @ np.linalg.pinv(laplacian) @ design.T  # cov(θi − θj, θk − θl) for all pairs
        var = np.maximum(np.diag(kernel), 1e-12)
        z = gap / np.sqrt(var)
        slope = np.exp(-0.5 * z**2) / np.sqrt(2 * np.pi) * gap / (2.0 * var**1.5)  # d P(misordered) / d var
        gradient = -info * (slope[:, None] * kernel**2).sum(axis=0)
        weights = weights * np.exp(-0.5 * gradient / np.abs(gradient).max() * (1.0 - step / iterations))
        weights *= budget / weights.sum()
    return weights


def play_oracle(seed: int, strengths: np.ndarray, weights: dict[int, np.ndarray]) -> np.ndarray:
    """τ of the oracle-fixed schedule at each budget (a fresh systematic sample of its allocation per budget)."""
    rng = np.random.default_rng(seed)
    first, second = np.triu_indices(K, 1)
    taus = np.full(max(weights) // STEP, np.nan)
    for budget, w in weights.items():
        picks = np.searchsorted(np.cumsum(w), rng.random() + np.arange(budget))
        picks = np.minimum(picks, len(w) - 1)
        state = TournamentState([f"c{i}" for i in range(K)], n_questions=100_000, rng=rng)
        a, b = first[picks], second[picks]
        state.record(a, b, judge(rng, strengths, a, b))
        taus[budget // STEP - 1] = kendall_tau(state.estimate()[0], strengths)
    return taus


def truth(seed: int, spread: float) -> np.ndarray:
    """A run's true strengths for --strengths normal: K draws from N(0, (spread / 1.77)²), so their expected
    range matches the even design's 2·spread, with the uneven gaps of a real leaderboard."""
    return np.random.default_rng([seed, 7]).normal(0.0, spread / 1.77, K)


def summarise(taus: np.ndarray, grid: np.ndarray) -> tuple[float, float, float]:
    """(median-curve, stays, first-hit) comparisons to τ ≥ TARGET; inf when not reached within the horizon."""
    median = np.nanmedian(taus, axis=0)
    curve = float(grid[np.argmax(median >= TARGET)]) if (median >= TARGET).any() else np.inf
    firsts, stays = [], []
    for run in taus:
        hit = run >= TARGET
        firsts.append(grid[np.argmax(hit)] if hit.any() else np.inf)
        miss = np.flatnonzero(~hit)
        stays.append(grid[0] if not len(miss) else grid[miss[-1] + 1] if miss[-1] + 1 < len(grid) else np.inf)
    return curve, float(np.median(stays)), float(np.median(firsts))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--spread", type=float, default=2.5)
    parser.add_argument("--horizon", type=int, default=480)
    parser.add_argument("--bootstrap", type=int, default=500)
    parser.add_argument("--no-oracle", action="store_true", help="skip the two reference rows that know the truth")
    parser.add_argument("--strengths", choices=("even", "normal"), default="even", help="see the description above")
    args = parser.parse_args()
    strengths = np.linspace(-args.spread, args.spread, K)
    draw = args.strengths == "normal"
    grid = STEP * np.arange(1, args.horizon // STEP + 1)
    print(
        f"{K} candidates, strengths "
        + (f"drawn per run from N(0, {args.spread / 1.77:.2f}²)" if draw else f"evenly spaced on ±{args.spread}")
        + f", position bias "
        f"{POSITION_BIAS} logits, tie propensity {TIE_PROPENSITY}, {args.runs} runs, horizon {args.horizon}, "
        f"{args.bootstrap} bootstrap resamples; comparisons to Kendall τ ≥ {TARGET}\n"
    )
    print(
        f"{'format':<18}{'median-curve':>13}{'stays':>7}{'first-hit':>10}{'tau@horizon':>12}{'coverage':>9}{'time':>7}"
    )
    needed: dict[str, tuple[float, float, float]] = {}
    oracles = not args.no_oracle and not draw
    for format_name in ("round_robin", "swiss", "adaptive") + (("oracle-sequential",) if oracles else ()):
        started = time.perf_counter()
        outcomes = [
            play(format_name, seed, truth(seed, args.spread) if draw else strengths, args.horizon, args.bootstrap)
            for seed in range(args.runs)
        ]
        taus = np.array([t for t, _ in outcomes])
        covered = np.array([c for _, c in outcomes])
        needed[format_name] = summarise(taus, grid)
        curve, stays, first = needed[format_name]
        print(
            f"{format_name:<18}{curve:>13.0f}{stays:>7.0f}{first:>10.0f}{np.nanmedian(taus[:, -1]):>12.3f}"
            f"{covered.mean():>9.3f}{time.perf_counter() - started:>6.0f}s"
        )
    if oracles:
        started = time.perf_counter()
        budgets = range(STEP, min(ORACLE_UP_TO, args.horizon) + 1, STEP)
        weights = {b: oracle_allocation(strengths, b) for b in budgets}
        taus = np.array([play_oracle(seed, strengths, weights) for seed in range(args.runs)])
        median = np.nanmedian(taus, axis=0)
        curve = grid[: len(median)][np.argmax(median >= TARGET)] if (median >= TARGET).any() else np.inf
        needed["oracle-fixed"] = (float(curve), np.nan, np.nan)
        elapsed = time.perf_counter() - started
        print(f"{'oracle-fixed':<18}{curve:>13.0f}{'-':>7}{'-':>10}{'-':>12}{'-':>9}{elapsed:>6.0f}s")
    print("\nratio to round robin   median-curve   stays   first-hit")
    base = needed["round_robin"]
    for name in [n for n in needed if n != "round_robin"]:
        cells = [f"{mine / theirs:>{width}.2f}" for mine, theirs, width in zip(needed[name], base, (15, 8, 12))]
        print(f"{name:<22}" + "".join(cell if "nan" not in cell else f"{'-':>{len(cell)}}" for cell in cells))
    print("\ntargets: adaptive / round robin <= 0.50 (median-curve); coverage within 0.03 of 0.95")


if __name__ == "__main__":
    main()
