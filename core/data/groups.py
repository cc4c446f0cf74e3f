"""Levels of a group attribute (sex, race, site, …), largest first, and the one per-group loop
that the group-wise diagnostics (:mod:`core.local.groups`) and the group-wise recalibrators
share.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

#: Groups with fewer rows are listed but not measured.
MIN_GROUP_ROWS = 30


def group_levels(labels: np.ndarray) -> list[str]:
    """Group levels, largest first (ties by name)."""
    values, counts = np.unique(np.asarray(labels, dtype=str), return_counts=True)
    order = sorted(range(values.size), key=lambda i: (-counts[i], values[i]))
    return [str(values[i]) for i in order]


def iter_groups(labels: np.ndarray, min_rows: int = 0) -> Iterator[tuple[str, np.ndarray]]:
    """``(level, mask)`` for every group level with at least ``min_rows`` rows, largest first
    (:func:`group_levels` order); ``mask`` is a boolean row mask. The one per-group loop of the
    diagnostics here and of the group-wise recalibrators."""
    labels = np.asarray(labels, dtype=str)
    for level in group_levels(labels):
        mask = labels == level
        if mask.sum() >= min_rows:
            yield level, mask

