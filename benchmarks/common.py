"""Timing and peak-memory helpers shared by the benchmark scripts."""

from __future__ import annotations

import os
import time
import tracemalloc
from collections.abc import Callable

import numpy as np


def measure(function: Callable[[], object], repeats: int = 1) -> tuple[float, float, object]:
    """Best wall time over ``repeats`` runs (s), peak traced memory (MiB), last result.

    numpy reports its buffers to ``tracemalloc``, so the peak covers every array the call
    allocates.
    """
    best = float("inf")
    result = None
    peak = 0
    for _ in range(repeats):
        tracemalloc.start()
        start = time.perf_counter()
        result = function()
        best = min(best, time.perf_counter() - start)
        peak = max(peak, tracemalloc.get_traced_memory()[1])
        tracemalloc.stop()
    return best, peak / 2**20, result


def row(*cells: object, widths: tuple[int, ...] = (10, 8, 14, 14, 12, 12, 10)) -> str:
    return " ".join(str(c).rjust(w) for c, w in zip(cells, widths, strict=False))


def load() -> str:
    """The machine's load averages, as the benchmarks print them beside their timings."""
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.1f} / {five:.1f} / {fifteen:.1f}"


def print_level_table(flagged: dict[str, int], tables: int, alpha: float) -> None:
    """The level table of a slice-findings study: for each error rate the share of
    ``tables`` calibrated tables with any slice flagged, its binomial standard error at
    ``alpha`` and whether the share is at most ``alpha + 2 SE``."""
    se = np.sqrt(alpha * (1 - alpha) / tables)
    print(f"| error rate | tables | any slice flagged at α = {alpha:g} | SE | "
          f"at most {alpha:g} + 2 SE |")
    print("|---|---:|---:|---:|---|")
    for rate, count in flagged.items():
        share = count / tables
        print(f"| {rate.upper()} | {tables} | {share:.3f} | {se:.4f} | "
              f"{'yes' if share <= alpha + 2 * se else 'NO'} |")
