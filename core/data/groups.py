"""Levels of a group attribute (sex, race, site, …), largest first, and the one per-group loop
that the group-wise diagnostics (:mod:`core.local.groups`) and the group-wise recalibrators
share.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pandas as pd

#: Groups with fewer rows are listed but not measured.
MIN_GROUP_ROWS = 30


def level_codes(labels: np.ndarray) -> tuple[list[str], np.ndarray]:
    """The group levels, largest first (ties by name), and each row's index into them.

    A level is a label as text (``np.asarray(labels, dtype=str)``: ``1`` and ``"1"`` are one
    level). The distinct labels are found by hashing (:func:`pandas.factorize`) and only they
    are turned into text, so a million rows of a few levels cost a hash pass rather than a
    text conversion and a sort of every row."""
    values = np.asarray(labels).ravel()
    codes, distinct = pd.factorize(values)
    # pandas takes equal values as one (1, 1.0 and True; 0.0 and −0.0; None and NaN), their
    # texts differ: only labels that are all text, integers or booleans are hashed
    if values.dtype.kind not in "iubU" and not all(isinstance(v, str) for v in distinct) \
            or (codes < 0).any():
        names, codes = np.unique(np.asarray(values, dtype=str), return_inverse=True)
    else:
        texts = np.asarray(distinct, dtype=str) if len(distinct) else np.empty(0, dtype=str)
        names, merged = np.unique(texts, return_inverse=True)  # labels of one text: one level
        codes = merged.reshape(-1)[codes]
    counts = np.bincount(codes, minlength=names.size)
    order = sorted(range(names.size), key=lambda i: (-counts[i], names[i]))
    rank = np.empty(names.size, dtype=np.int64)
    rank[order] = np.arange(names.size)
    return [str(names[i]) for i in order], rank[codes]


def group_levels(labels: np.ndarray) -> list[str]:
    """Group levels, largest first (ties by name)."""
    return level_codes(labels)[0]


def iter_groups(labels: np.ndarray, min_rows: int = 0) -> Iterator[tuple[str, np.ndarray]]:
    """``(level, mask)`` for every group level with at least ``min_rows`` rows, largest first
    (:func:`group_levels` order); ``mask`` is a boolean row mask. The one per-group loop of the
    diagnostics here and of the group-wise recalibrators."""
    levels, codes = level_codes(labels)
    for k, level in enumerate(levels):
        mask = codes == k
        if mask.sum() >= min_rows:
            yield level, mask
