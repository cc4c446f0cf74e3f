"""Timing and peak-memory helpers shared by the benchmark scripts."""

from __future__ import annotations

import time
import tracemalloc
from collections.abc import Callable


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
