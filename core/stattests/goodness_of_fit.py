"""The Hosmer–Lemeshow goodness-of-fit test over groups of equal size sorted by confidence.
"""

from __future__ import annotations

import numpy as np
from scipy import stats

from core.data.validation import check_count, check_probs
from core.stattests.result import TestResult

# --------------------------------------------------------------------------- binned test


def hosmer_lemeshow(
    confidence: np.ndarray, outcome: np.ndarray, n_groups: int = 10,
    fitted_on_this_data: bool = False,
) -> TestResult:
    """Hosmer–Lemeshow goodness-of-fit test over groups of equal size sorted by confidence.

    ``HL = Σ_g (O_g − E_g)² / (E_g (1 − E_g / n_g))`` with O_g, E_g the observed and expected
    number of events in group g. Under H0, HL ~ χ² with G − 2 degrees of freedom when the model
    was fitted on these rows (Hosmer & Lemeshow 1980) and G when it is evaluated on new data,
    as in an audit on a held-out split (the default). Groups with zero variance are skipped.
    """
    confidence = check_probs(confidence)
    if confidence.ndim != 1:
        raise ValueError("confidence must be a 1-D array: one probability per row.")
    outcome = np.asarray(outcome, dtype=np.float64)
    if outcome.shape != confidence.shape or not np.isin(outcome, (0.0, 1.0)).all():
        raise ValueError("outcome must hold one 0 or 1 per row of confidence.")
    n_groups = check_count("n_groups", n_groups, 1)
    order = np.argsort(confidence, kind="stable")
    groups = np.array_split(order, min(n_groups, confidence.size))
    observed = np.array([outcome[g].sum() for g in groups])
    expected = np.array([confidence[g].sum() for g in groups])
    sizes = np.array([g.size for g in groups], dtype=np.float64)
    variance = expected * (1.0 - expected / sizes)
    used = variance > 0
    statistic = float(np.sum((observed[used] - expected[used]) ** 2 / variance[used]))
    df = int(used.sum()) - (2 if fitted_on_this_data else 0)
    p = float(stats.chi2.sf(statistic, df)) if df > 0 else float("nan")
    return TestResult(statistic, p, np.empty(0), "hosmer-lemeshow", 0,
                      {"groups": int(used.sum()), "degrees_of_freedom": df})

