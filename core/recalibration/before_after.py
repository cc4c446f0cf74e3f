"""What a comparison shows per method: the reliability tables, the MLCE curves and the local
bias before and after a method, all on the comparison's test rows
(:func:`core.recalibration.ranking.compare`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from core import metrics
from core.data.validation import check_choice
from core.kernels.spec import KernelSpec
from core.local.lcb_estimate import lcb_estimate, select_bandwidths
from core.local.lcb_trends import lcb_trends
from core.local.lce_estimate import mlce_curve
from core.recalibration.ranking import (
    N_BINS,
    UNCALIBRATED,
    Comparison,
    Progress,
    top_label_pair,
)


def reliability_tables(comparison: Comparison, n_bins: int = N_BINS
                       ) -> dict[str, pd.DataFrame]:
    """Reliability table (default notion, equal-width bins) of every method's test rows.

    Parameters
    ----------
    comparison : Comparison
        The recalibration comparison.
    n_bins : int
        Bins of each table.
    """
    y = comparison.test.y
    return {name: metrics.reliability_table(probs, y, n_bins=n_bins, n_resamples=0)
            for name, probs in comparison.probs.items()}


def mlce_curves(comparison: Comparison, gammas: Sequence[float],
                progress: Progress | None = None) -> dict[str, pd.DataFrame]:
    """MLCE and mean LCE over ``gammas`` for every method (Luo et al., Fig. 3); empty without
    features. ``progress(fraction, message)`` after each method.

    Parameters
    ----------
    comparison : Comparison
        The recalibration comparison.
    gammas : sequence of float
        The bandwidths γ.
    progress : callable, optional
        ``progress(fraction, message)``.
    """
    if comparison.coords is None:
        return {}
    curves = {}
    for k, (name, probs) in enumerate(comparison.probs.items()):
        curves[name] = mlce_curve(*top_label_pair(probs, comparison.test.y), comparison.coords,
                                  list(gammas), N_BINS)
        if progress is not None:
            progress((k + 1) / len(comparison.probs), f"MLCE curve of {name}")
    return curves


def lcb_before_after(comparison: Comparison, method: str, feature: str, degree: int = 3,
                     n_resamples: int = 200, progress: Progress | None = None
                     ) -> pd.DataFrame:
    """Trend of the local bias LCB (eq. 7) against one numeric feature, before and after
    ``method``, on the test rows (each row left out of its own estimate; bandwidths
    cross-validated once on the uncalibrated rows and used for both; above about 10 s of
    exact work, from the seeded row samples of :func:`core.local.lcb_estimate.lcb_estimate`).

    Columns of :func:`core.local.lcb_trends.lcb_trends`; ``group`` is ``"before"`` or ``"after:
    method"``. For multiclass data the top-label pair is used.

    Parameters
    ----------
    comparison : Comparison
        The recalibration comparison.
    method : str
        The recalibrator.
    feature : str
        The numeric audit feature LCB is drawn against.
    degree : int, default 3
        Degree of the trends.
    n_resamples : int, default 200
        Bootstrap resamples of their bands.
    progress : callable, optional
        ``progress(fraction, message)``.
    """
    check_choice(method, tuple(comparison.probs), "method of this comparison")
    test = comparison.test
    check_choice(feature, tuple(test.feature_frame.columns), "feature")
    x = pd.to_numeric(test.feature_frame[feature], errors="coerce").to_numpy(dtype=float)
    if np.isnan(x).any():
        raise ValueError(f"The feature {feature!r} is not numeric; choose a numeric feature.")
    X = test.feature_matrix(comparison.features) if comparison.features else None

    def pair(probs):
        if test.is_binary:
            return probs[:, 1], test.y
        conf, correct = top_label_pair(probs, test.y)
        return conf, correct.astype(np.int64)

    p0, y0 = pair(comparison.probs[UNCALIBRATED])
    sigma_p, sigma_x, _ = select_bandwidths(p0, y0, X)
    if progress is not None:
        progress(1 / 3, "bandwidths cross-validated")
    frames = []
    for k, (label, name) in enumerate((("before", UNCALIBRATED),
                                       (f"after: {method}", method))):
        p, t = pair(comparison.probs[name])
        estimate = lcb_estimate(p, t, X, spec=KernelSpec(sigma_p, sigma_x))
        rows = np.arange(test.n) if estimate.rows is None else estimate.rows
        values, at = estimate.values, x[rows]
        ok = ~np.isnan(values)
        trend = lcb_trends(at[ok], values[ok], degree=degree, n_resamples=n_resamples)
        frames.append(trend.assign(group=label))
        if progress is not None:
            progress((k + 2) / 3, f"local bias {label}")
    return pd.concat(frames, ignore_index=True)
