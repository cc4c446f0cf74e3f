"""The size-and-power study of the KLCE nulls: rejection rates at α = 0.05 of every null
scheme on data drawn by one of the simulations of :mod:`core.data.simulations` (I-trustworthy
§4, Figs. 3 and 5). Used by the tests (bounded repetitions) and by
``benchmarks/klce_null_study.py``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from core.data.simulations import Draw
from core.kernels.spec import kernel_inputs
from core.stattests.klce import STUDIED_NULLS, p_values_of_nulls

ALPHA = 0.05


def rejection_rates(draw: Draw, reps: int, resamples: int, bandwidths: tuple,
                    standardize: bool, seed: int,
                    nulls: Sequence[str] = STUDIED_NULLS) -> dict[str, float]:
    """Share of ``reps`` simulated datasets on which each KLCE null rejects at ``ALPHA``.

    ``draw(rng) -> (p, y, X)``; ``bandwidths = (σ_p, σ_x)`` (``None``: median heuristic).
    Every repetition computes all nulls from one residual matrix in one tile-engine pass
    (:func:`core.stattests.klce.p_values_of_nulls`). The binomial standard error of a rate r over R
    repetitions is √(r(1 − r)/R).
    """
    rng = np.random.default_rng(seed)
    rejected = dict.fromkeys(nulls, 0)
    for _ in range(reps):
        p, y, X = draw(rng)
        inputs = kernel_inputs(p, y, X, *bandwidths, standardize=standardize)
        for null, p_value in p_values_of_nulls(inputs, nulls, resamples, rng).items():
            rejected[null] += p_value <= ALPHA
    return {null: count / reps for null, count in rejected.items()}

