"""The random draws every generated demo shares (:mod:`core.data.demo`): outcomes drawn from
their probabilities and the calibration / test halves of the audited rows.
"""

from __future__ import annotations

import numpy as np

#: Values of the split column of the generated demos (training rows are never in a table).
SPLIT_VALUES = ("calibration", "test")


def half_split(n: int, rng: np.random.Generator) -> np.ndarray:
    """A random assignment of n rows to ``calibration`` / ``test``, sizes ⌈n/2⌉ and ⌊n/2⌋."""
    labels = np.where(np.arange(n) < (n + 1) // 2, SPLIT_VALUES[0], SPLIT_VALUES[1])
    return labels[rng.permutation(n)].astype(object)


def bernoulli_draws(p: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Draws y_i ~ Bernoulli(p_i) as int64 0/1."""
    return (rng.random(p.shape[0]) < p).astype(np.int64)
