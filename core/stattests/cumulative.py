"""Tests of calibration from the cumulative differences (Arrieta-Ibarra et al. 2022): the
Kolmogorov–Smirnov and Kuiper statistics of :mod:`core.metrics.cumulative` against the
tail probabilities of the supremum and the range of a standard Brownian motion on [0, 1]
(Feller 1951), asymptotic and conservative for finite n (Tygert 2022).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike
from scipy.special import ndtr

from core.data.validation import check_choice
from core.metrics.cumulative import STATISTICS, cumulative_differences
from core.stattests.result import TestResult


def ks_survival(x: float) -> float:
    """``P(sup_{0≤t≤1} |B(t)| ≥ x)`` for a standard Brownian motion B.

    For x < 1 from the theta series ``1 − (4/π) Σ_{k≥0} (−1)^k/(2k+1) exp(−(2k+1)²π²/(8x²))``,
    otherwise from the reflection series ``4 Σ_{k≥1} (−1)^{k+1} Φ̄((2k − 1)x)`` (no
    cancellation in the tail); both summed to double precision.
    """
    if x <= 0:
        return 1.0
    if x < 1.0:
        k = np.arange(0, 40)
        terms = (-1.0) ** k / (2 * k + 1) * np.exp(-((2 * k + 1) ** 2) * np.pi**2 / (8 * x * x))
        return float(min(1.0, max(0.0, 1.0 - 4.0 / np.pi * terms.sum())))
    k = np.arange(1, 40)
    return float(min(1.0, 4.0 * np.sum((-1.0) ** (k + 1) * ndtr(-(2 * k - 1) * x))))


def kuiper_survival(x: float) -> float:
    """``P(max B − min B ≥ x)`` on [0, 1] for a standard Brownian motion B (Feller 1951):

        1 − Σ_{k≥0} (8/x² + 2/((k+½)²π²)) exp(−2(k+½)²π²/x²)

    summed until the terms fall below double precision (at most a few dozen for x < 40; the
    p-value is below 1e-300 beyond).
    """
    if x <= 0:
        return 1.0
    if x > 40.0:
        return 0.0
    k = np.arange(0, int(np.ceil(0.5 + x * 1.5)) + 5) + 0.5
    terms = (8.0 / x**2 + 2.0 / (k**2 * np.pi**2)) * np.exp(-2.0 * k**2 * np.pi**2 / x**2)
    return float(min(1.0, max(0.0, 1.0 - terms.sum())))


def cumulative_test(probs: ArrayLike, y: ArrayLike, statistic: str = "ks",
                    notion: str | None = None, class_index: int | None = None) -> TestResult:
    """Test of calibration from the cumulative differences (Arrieta-Ibarra et al. 2022).

    The statistic is ``G/σ`` (``"ks"``) or ``H/σ`` (``"kuiper"``) and the p-value its
    Brownian-motion tail probability (:func:`ks_survival`, :func:`kuiper_survival`),
    asymptotic and conservative. ``parameters["metric"]`` is G or H itself and
    ``parameters["sigma"]`` is σ. When every prediction is 0 or 1, σ = 0 and the test is
    undefined (ValueError).

    Parameters
    ----------
    probs : array_like
        ``(n,)`` P(y = 1) of a binary model, or ``(n, m)`` class probabilities.
    y : array_like
        ``(n,)`` integer labels ``0..m-1``.
    statistic : {"ks", "kuiper"}
        Kolmogorov–Smirnov's G or Kuiper's H.
    notion : {"positive", "top-label", "classwise"}, optional
        The calibration notion tested; ``None``: the data's default.
    class_index : int, optional
        The class of a ``"classwise"`` test.

    Returns
    -------
    core.stattests.result.TestResult
        statistic G/σ or H/σ, p-value, no resamples.
    """

    check_choice(statistic, STATISTICS, "cumulative statistic",
                 "choose 'ks' (Kolmogorov–Smirnov) or 'kuiper'")
    path = cumulative_differences(probs, y, notion, class_index)
    if path.sigma <= 0.0:
        raise ValueError("The cumulative test needs predictions strictly between 0 and 1; "
                         "every prediction here is 0 or 1, so the differences have no spread.")
    metric = path.ks if statistic == "ks" else path.kuiper
    normalized = metric / path.sigma
    p_value = ks_survival(normalized) if statistic == "ks" else kuiper_survival(normalized)
    return TestResult(normalized, p_value, np.empty(0), f"cumulative-{statistic}", 0, {
        "metric": metric, "sigma": path.sigma, "statistic": statistic, "notion": path.notion,
    })

