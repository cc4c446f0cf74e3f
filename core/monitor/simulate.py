"""Simulated monitoring streams: a calibrated forecaster whose world drifts at a known row.

Row ``t`` has a logit ``z_t ~ N(LOGIT_MEAN, LOGIT_SD²)`` and the model forecasts
``p_t = σ(z_t)``. Before ``onset`` the outcome is ``y_t ~ Bernoulli(σ(z_t))`` (calibrated);
from ``onset`` on it is ``Bernoulli(σ(scale · z_t + shift))``: a shift moves the true logit
(the model under-predicts when ``shift > 0``), a scale above 1 makes the truth more extreme
than the forecast (the model is underconfident). Groups, when asked, are drawn with the
given shares and only ``drift_group`` drifts. The studies in ``benchmarks/monitor_study.py``
and the tests use these streams.
"""

from __future__ import annotations

import numpy as np
from scipy.special import expit

#: The forecasts' logit distribution: mean prediction about 0.32, most in (0.05, 0.8).
LOGIT_MEAN = -0.9
LOGIT_SD = 1.2


def drifting_stream(n: int, seed: int, onset: int | None = None, shift: float = 0.0,
                    scale: float = 1.0, group_shares: tuple[float, ...] = (),
                    drift_group: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Forecasts, outcomes and groups of one simulated stream.

    Parameters
    ----------
    n : int
        Rows.
    seed : int
        Seed of the stream.
    onset : int or None
        First drifting row (0-based); None: calibrated throughout.
    shift, scale : float
        The drift of the true logit from ``onset``: ``scale · z + shift``.
    group_shares : tuple of float
        Shares of the groups (empty: one group, every row drifts).
    drift_group : int
        The group that drifts (when there are groups).

    Returns
    -------
    tuple of numpy.ndarray
        ``p`` (forecasts), ``y`` (0/1 outcomes), ``groups`` (int codes, zeros without groups).
    """
    rng = np.random.default_rng(seed)
    z = rng.normal(LOGIT_MEAN, LOGIT_SD, n)
    groups = (rng.choice(len(group_shares), size=n, p=np.asarray(group_shares))
              if group_shares else np.zeros(n, dtype=np.int64))
    truth = z.copy()
    if onset is not None:
        drifting = np.arange(n) >= onset
        if group_shares:
            drifting &= groups == drift_group
        truth[drifting] = scale * z[drifting] + shift
    y = (rng.random(n) < expit(truth)).astype(np.int64)
    return expit(z), y, groups
