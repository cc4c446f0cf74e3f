"""Level and power of the SKCE consistency test at the random-feature plans a large table gets.

    .venv/bin/python -m benchmarks.skce_plan [--rows 100000] [--reps 200] [--plans 64:500,32:250]

At 10⁶ rows the audit's SKCE consistency test runs on random Fourier features with the D and B
that :func:`core.kernels.computation.plan` chooses. This study runs the test with each plan
``D:B`` on the same simulated tables: calibrated ones (the level, which is exact by
construction for any D and B) and mildly over-confident ones (the power: true probability
``expit(s·logit(p))``, ``--slope``), and prints the rejection rates at α = 0.05 with their
binomial standard errors √(r(1 − r)/R) and the seconds per test.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from scipy.special import expit, logit

from core.stattests.skce import skce_test

ALPHA = 0.05


def table(rng: np.random.Generator, rows: int, slope: float) -> tuple[np.ndarray, np.ndarray]:
    """Predictions from Beta(2, 5) and labels drawn from ``expit(slope·logit(p))``."""
    p = np.clip(rng.beta(2.0, 5.0, rows), 1e-6, 1 - 1e-6)
    return p, (rng.random(rows) < expit(slope * logit(p))).astype(np.int64)


def rates(rows: int, reps: int, slope: float, plans: list[tuple[int, int]]
          ) -> list[tuple[float, float]]:
    """Rejection rate and mean seconds per test of each plan over ``reps`` tables."""
    rejected, seconds = np.zeros(len(plans)), np.zeros(len(plans))
    rng = np.random.default_rng(2026)
    for rep in range(reps):
        p, y = table(rng, rows, slope)
        for k, (features, resamples) in enumerate(plans):
            start = time.perf_counter()
            result = skce_test(p, y, n_resamples=resamples, seed=rep, computation="rff",
                               n_features=features)
            seconds[k] += time.perf_counter() - start
            rejected[k] += result.p_value <= ALPHA
    return [(r / reps, s / reps) for r, s in zip(rejected, seconds, strict=True)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--reps", type=int, default=200)
    parser.add_argument("--slope", type=float, default=0.97)
    parser.add_argument("--plans", default="64:500,32:250")
    args = parser.parse_args()
    plans = [tuple(int(v) for v in plan.split(":")) for plan in args.plans.split(",")]
    print(f"SKCE consistency test on random Fourier features, n = {args.rows:,}, "
          f"{args.reps} tables each, α = {ALPHA}")
    print("| plan | level (calibrated) | ± SE | power (slope "
          f"{args.slope:g}) | ± SE | s/test |")
    print("|---|---:|---:|---:|---:|---:|")
    level = rates(args.rows, args.reps, 1.0, plans)
    power = rates(args.rows, args.reps, args.slope, plans)
    for (features, resamples), (lr, _), (pr, sec) in zip(plans, level, power, strict=True):
        se = np.sqrt(lr * (1 - lr) / args.reps), np.sqrt(pr * (1 - pr) / args.reps)
        print(f"| D = {features}, B = {resamples} | {lr:.3f} | {se[0]:.3f} | {pr:.3f} | "
              f"{se[1]:.3f} | {sec:.2f} |")


if __name__ == "__main__":
    main()
