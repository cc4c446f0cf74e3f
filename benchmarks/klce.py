"""The batched KLCE test against a per-resample recomputation, in one process.

    .venv/bin/python -m benchmarks.klce [--resamples 1000]

For n ∈ {1,000, 10,000} and B resamples, the batched test (all B + 1 residual vectors as
columns of one matrix, ``diag(Eᵀ K E)`` tile by tile) is timed against the approach of the
paper's reference code: for every resample, build the n×n kernel matrix and evaluate the
statistic again. The per-resample baseline runs in full at n = 1,000; at n = 10,000 a few
resamples are timed and the rest extrapolated (stated in the output). Peak memory is traced
with tracemalloc. Target (DESIGN.md): n = 10,000, B = 1,000 in under 5 s, memory O(n·B).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from benchmarks.common import measure, row
from core.data.simulations import type_two_paper
from core.kernels.resampling import bernoulli_residuals
from core.kernels.spec import kernel_inputs
from core.kernels.tiles import gaussian_block
from core.stattests.klce import klce_test

FULL_BASELINE_UP_TO = 2_000
TIMED_RESAMPLES = 3


def per_resample_test(points: np.ndarray, e: np.ndarray, p: np.ndarray, n_resamples: int,
                      seed: int = 0) -> float:
    """Reference-code style: a fresh n×n kernel and statistic for every resample."""
    n = e.size
    rng = np.random.default_rng(seed)

    def statistic(residuals: np.ndarray) -> float:
        K = gaussian_block(points, points, 1.0)
        np.fill_diagonal(K, 0.0)
        return float(residuals @ K @ residuals) / (n * (n - 1))

    observed = statistic(e)
    null = [statistic(bernoulli_residuals(p, 1, rng)[:, 0]) for _ in range(n_resamples)]
    return (1 + sum(v >= observed for v in null)) / (1 + n_resamples)


def simulated(n: int, seed: int = 0):
    """The I-trustworthy Type-II setting with d = 5: the model is blind to x_5."""
    return type_two_paper(np.random.default_rng(seed), n, 5)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--resamples", type=int, default=1000)
    args = parser.parse_args()
    B = args.resamples
    print(f"KLCE test, B = {B:,} resamples (consistency null; the default combined null "
          "tests two statistics on the same draws)")
    print(row("n", "null", "batched s", "batched MiB", "per-resample s", "ratio", "n·B·8 MiB",
              widths=(8, 22, 11, 12, 16, 9, 11)))
    for n in (1_000, 10_000):
        p, y, X = simulated(n)
        klce_test(p[:200], y[:200], X[:200], n_resamples=10)  # warm-up
        inputs = kernel_inputs(p, y, X)
        if n <= FULL_BASELINE_UP_TO:
            start = time.perf_counter()
            per_resample_test(inputs.points, inputs.residuals, inputs.p, B)
            baseline = time.perf_counter() - start
            note = ""
        else:
            start = time.perf_counter()
            per_resample_test(inputs.points, inputs.residuals, inputs.p, TIMED_RESAMPLES)
            baseline = (time.perf_counter() - start) * (B + 1) / (TIMED_RESAMPLES + 1)
            note = f"  (baseline: {TIMED_RESAMPLES} resamples timed, extrapolated)"
        for null in ("consistency", "consistency-combined"):
            seconds, mib, result = measure(
                lambda null=null, p=p, y=y, X=X: klce_test(p, y, X, null=null, n_resamples=B))
            print(row(f"{n:,}", null, f"{seconds:.2f}", f"{mib:.0f}", f"{baseline:.1f}",
                      f"{baseline / seconds:.0f}x", f"{n * B * 8 / 2**20:.0f}",
                      widths=(8, 22, 11, 12, 16, 9, 11)) + note)
        print(f"{'':>8} p-value {result.p_value:.4f} (model blind to x_5)")


if __name__ == "__main__":
    main()
