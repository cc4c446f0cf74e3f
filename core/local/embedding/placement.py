"""Placing rows with a fitted map, batch by batch (``PLACE_BATCH`` rows a call), with progress
after each batch. A placed point only feels the fitted map, so batches give the same
coordinates as one call.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from core.local.embedding.inputs import Progress

#: Rows placed per call of the fitted map (progress is reported after each batch).
PLACE_BATCH = 10_000


def complement(n: int, rows: np.ndarray) -> np.ndarray:
    """Sorted indices in ``0..n-1`` that are not in ``rows``."""
    mask = np.ones(n, dtype=bool)
    mask[rows] = False
    return np.flatnonzero(mask)


def batches(rows: np.ndarray, size: int) -> list[np.ndarray]:
    """``rows`` cut into consecutive pieces of at most ``size``."""
    return [rows[start:start + size] for start in range(0, rows.size, size)]


# --------------------------------------------------------------------------- progress


def report_progress(progress: Progress | None, fraction: float, message: str) -> None:
    """Call ``progress(fraction, message)`` if a callback was given."""
    if progress is not None:
        progress(float(min(max(fraction, 0.0), 1.0)), message)


def place_in_batches(
    place: Callable[[np.ndarray], np.ndarray], X: np.ndarray, rows: np.ndarray,
    coords: np.ndarray, progress: Progress | None, span: tuple[float, float], title: str,
) -> None:
    """Fill ``coords[rows]`` with ``place(X[rows])`` batch by batch, reporting progress."""
    start, end = span
    done = 0
    for batch in batches(rows, PLACE_BATCH):
        coords[batch] = place(X[batch])
        done += batch.size
        report_progress(
            progress, start + (end - start) * done / rows.size,
            f"{title}: placed {done:,} of {rows.size:,} further rows into the map",
        )

