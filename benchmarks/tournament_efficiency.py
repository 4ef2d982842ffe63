"""How many comparisons each tournament format needs, and whether Bradley–Terry intervals cover the truth.

    python benchmarks/tournament_efficiency.py [--runs 200] [--spread 2.5] [--horizon 480] [--bootstrap 500]

Simulation: 16 candidates with known Bradley–Terry log-strengths evenly spaced on [−spread, spread] (2.5 gives
a 5-logit range, about Arena-Hard-Auto's spread between strong and weak models). The judge is simulated,
vectorised: in each order it prefers the response shown first with probability σ(θ_first − θ_second + 0.5)
(a position bias of 0.5 logits), and says "tie" with probability 4·0.3·p(1−p) — close pairs tie more — taken
evenly from win and loss so a tie counts half without biasing the expected score. Every comparison is judged in
both orders, as `PairwiseJudge(swap=True)` does, and rated by `Tournament`'s own code path: the library's
pairing formats choose the pairs, `TournamentState` records them, and Bradley–Terry with a first-slot term
rates them.

Reported per format, over `--runs` seeded runs, with Kendall τ against the true order measured every 8
comparisons up to `--horizon`:
- median-curve: the fewest comparisons at which the median τ over runs reaches 0.9;
- first-hit: the median over runs of the first checkpoint with τ ≥ 0.9;
- round robin also as whole rounds (120 comparisons each), the unit a round robin is played in;
- coverage: the share of true strengths inside the 95 % bootstrap intervals at the horizon (nominal 0.95).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from judgewidgets.pairwise import Adaptive, BradleyTerry, RoundRobin, Swiss, TournamentState, kendall_tau
from judgewidgets.pairwise._bradley_terry import bootstrap_counts, pool

K = 16
POSITION_BIAS = 0.5
TIE_PROPENSITY = 0.3
STEP = 8
TARGET = 0.9


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


def play(
    format_name: str, seed: int, strengths: np.ndarray, horizon: int, bootstrap: int
) -> tuple[np.ndarray, np.ndarray]:
    """τ every STEP comparisons up to the horizon, and which true strengths the final intervals cover."""
    rng = np.random.default_rng(seed)
    pairing = {"round_robin": RoundRobin(), "swiss": Swiss(), "adaptive": Adaptive(settled=0.0)}[format_name]
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
    rater = BradleyTerry(bootstrap=bootstrap)
    cells, sizes = pool(state.games())
    theta, _ = rater.strengths(cells, sizes[None, :])
    samples, _ = rater.strengths(cells, bootstrap_counts(sizes, bootstrap, np.random.default_rng(seed + 10**6)))
    low_q, high_q = np.quantile(samples, [0.025, 0.975], axis=0)
    low, high = 2 * theta[0] - high_q, 2 * theta[0] - low_q  # basic intervals, as BradleyTerry reports
    truth = strengths - strengths.mean()
    return taus, (truth >= low) & (truth <= high)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--spread", type=float, default=2.5)
    parser.add_argument("--horizon", type=int, default=480)
    parser.add_argument("--bootstrap", type=int, default=500)
    args = parser.parse_args()
    strengths = np.linspace(-args.spread, args.spread, K)
    grid = STEP * np.arange(1, args.horizon // STEP + 1)
    print(
        f"{K} candidates, strengths evenly spaced on [-{args.spread}, {args.spread}], position bias "
        f"{POSITION_BIAS} logits, tie propensity {TIE_PROPENSITY}, {args.runs} runs, horizon {args.horizon}, "
        f"{args.bootstrap} bootstrap resamples\n"
    )
    needed: dict[str, float] = {}
    header = f"{'format':<12}{'median-curve':>14}{'first-hit':>11}{'tau@horizon':>13}{'coverage':>10}{'time':>8}"
    print(header)
    rounds = np.inf
    for format_name in ("round_robin", "swiss", "adaptive"):
        started = time.perf_counter()
        outcomes = [play(format_name, seed, strengths, args.horizon, args.bootstrap) for seed in range(args.runs)]
        taus = np.array([t for t, _ in outcomes])
        covered = np.array([c for _, c in outcomes])
        median = np.nanmedian(taus, axis=0)
        reached = grid[np.argmax(median >= TARGET)] if (median >= TARGET).any() else np.inf
        firsts = [grid[np.argmax(t >= TARGET)] if (t >= TARGET).any() else np.inf for t in taus]
        needed[format_name] = float(reached)
        if format_name == "round_robin":
            whole = grid % (K * (K - 1) // 2) == 0
            rounds = grid[whole][np.argmax(median[whole] >= TARGET)] if (median[whole] >= TARGET).any() else np.inf
        print(
            f"{format_name:<12}{reached:>14}{np.median(firsts):>11.0f}{median[-1]:>13.3f}"
            f"{covered.mean():>10.3f}{time.perf_counter() - started:>7.0f}s"
        )
    print(f"\nround robin in whole rounds: {rounds} comparisons to reach median τ ≥ {TARGET}")
    for name in ("swiss", "adaptive"):
        print(f"{name} / round robin comparisons: {needed[name] / needed['round_robin']:.2f}", end="")
        print(f"  (vs whole rounds: {needed[name] / rounds:.2f})")
    print("targets: adaptive / round robin <= 0.50; coverage within 0.03 of 0.95")


if __name__ == "__main__":
    main()
