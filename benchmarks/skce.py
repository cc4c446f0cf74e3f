"""SKCE through the tile engine against straightforward baselines, in one process.

    .venv/bin/python -m benchmarks.skce [--n 10000]

For n = 10,000 and m ∈ {2, 10, 100} classes it prints the tile engine's time and peak
memory, a per-pair Python implementation timed on a subsample and extrapolated to all
n(n−1)/2 pairs, and a dense numpy implementation that builds the n×n matrices; ratios are
baseline / tile engine. Target (DESIGN.md): m = 10 under 1 s, memory O(n·m).
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np

from benchmarks.common import measure, row
from core.kernels.tiles import median_heuristic
from core.metrics.skce_estimate import skce

SUBSAMPLE = 400


def per_pair_skce(probs: np.ndarray, y: np.ndarray, sigma: float) -> float:
    """The textbook double loop: mean over i < j of k(p_i, p_j)⟨e_yi − p_i, e_yj − p_j⟩."""
    n, m = probs.shape
    total = 0.0
    for i in range(n):
        ri = -probs[i].copy()
        ri[y[i]] += 1.0
        for j in range(i + 1, n):
            rj = -probs[j].copy()
            rj[y[j]] += 1.0
            d2 = float(np.sum((probs[i] - probs[j]) ** 2))
            total += math.exp(-d2 / (2 * sigma**2)) * float(ri @ rj)
    return total / (n * (n - 1) / 2)


def dense_skce(probs: np.ndarray, y: np.ndarray, sigma: float) -> float:
    """All pairs at once with n×n matrices (memory O(n²))."""
    n = probs.shape[0]
    R = -probs.copy()
    R[np.arange(n), y] += 1.0
    sq = (probs**2).sum(1)[:, None] + (probs**2).sum(1)[None, :] - 2 * probs @ probs.T
    H = np.exp(-np.maximum(sq, 0) / (2 * sigma**2)) * (R @ R.T)
    return float((H.sum() - np.trace(H)) / (n * (n - 1)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=10_000)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    print(f"SKCE benchmark, n = {args.n:,}; per-pair baseline on {SUBSAMPLE} rows, extrapolated")
    print(row("classes", "", "tile s", "tile MiB", "per-pair s", "dense s", "dense MiB"))
    for m in (2, 10, 100):
        logits = rng.normal(size=(args.n, m)) * 2
        probs = np.exp(logits) / np.exp(logits).sum(1, keepdims=True)
        y = (rng.random((args.n, 1)) > np.cumsum(probs, 1)).sum(1).clip(max=m - 1)
        sigma = median_heuristic(probs)
        skce(probs[:50], y[:50], sigma)  # warm-up (BLAS threads, imports)
        tile_s, tile_mib, tile_value = measure(lambda: skce(probs, y, sigma), repeats=3)  # noqa: B023

        sub = slice(0, SUBSAMPLE)
        start = time.perf_counter()
        pair_value = per_pair_skce(probs[sub], y[sub], sigma)
        pair_s = (time.perf_counter() - start) * (args.n * (args.n - 1)) / (
            SUBSAMPLE * (SUBSAMPLE - 1))
        assert math.isclose(pair_value, skce(probs[sub], y[sub], sigma), rel_tol=1e-9,
                            abs_tol=1e-12)

        dense_s, dense_mib, dense_value = measure(lambda: dense_skce(probs, y, sigma))  # noqa: B023
        assert math.isclose(dense_value, tile_value, rel_tol=1e-8, abs_tol=1e-12)
        print(row(m, "", f"{tile_s:.3f}", f"{tile_mib:.1f}", f"{pair_s:.0f}",
                  f"{dense_s:.2f}", f"{dense_mib:.0f}"))
        print(row("", "ratio", "1", "1", f"{pair_s / tile_s:.0f}x", f"{dense_s / tile_s:.1f}x",
                  f"{dense_mib / tile_mib:.0f}x"))
        print(row("", "n·m·8B", "", f"{args.n * m * 8 / 2**20:.1f}", "", "", ""))

    print("\nPeak memory against n (m = 10): constant tiles (workers × tile² × 8 B) plus O(n·m)")
    for n in (5_000, 10_000, 20_000, 40_000):
        logits = rng.normal(size=(n, 10)) * 2
        probs = np.exp(logits) / np.exp(logits).sum(1, keepdims=True)
        y = rng.integers(0, 10, n)
        seconds, mib, _ = measure(lambda: skce(probs, y, 0.3))  # noqa: B023
        print(f"  n = {n:>6,}: {seconds:6.2f} s, peak {mib:6.1f} MiB "
              f"(an n×n float64 matrix would be {n * n * 8 / 2**20:,.0f} MiB)")


if __name__ == "__main__":
    main()
