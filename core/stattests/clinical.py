"""The tests of clinical-prediction software (Harrell's ``rms::val.prob``): Cox's joint test of
calibration intercept 0 and slope 1, and Spiegelhalter's z test. Their logistic
recalibration model and the clipping of logits are in :mod:`core.metrics.clinical`.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from core.data.distributions import chi2_sf, norm_sf
from core.metrics.clinical import confidence_logit, log_likelihood, logistic_fit, pair
from core.stattests.result import TestResult

# --------------------------------------------------------------------------- tests


def cox_test(probs: ArrayLike, y: ArrayLike, notion: str | None = None,
             class_index: int | None = None) -> TestResult:
    """Cox's (1958) test of ``intercept = 0`` and ``slope = 1`` jointly, as a likelihood
    ratio.

    ``χ² = 2[ℓ(â, b̂) − ℓ(0, 1)]`` with ℓ the log-likelihood of ``logit P(y=1) = a + b·logit(p)``;
    under calibration χ² ~ χ²₂. ``parameters["unreliability"]`` is Harrell's
    ``U = (χ² − 2)/n`` (``rms::val.prob``, whose "U" test this is).

    Parameters
    ----------
    probs : array_like
        ``(n,)`` P(y = 1) of a binary model, or ``(n, m)`` class probabilities.
    y : array_like
        ``(n,)`` integer labels ``0..m-1``.
    notion : {"positive", "top-label", "classwise"}, optional
        The calibration notion tested; ``None``: the data's default.
    class_index : int, optional
        The class of a ``"classwise"`` test.

    Returns
    -------
    core.stattests.result.TestResult
        statistic χ², asymptotic p-value, no resamples.
    """

    conf, outcome, notion = pair(probs, y, notion, class_index)
    z = confidence_logit(conf)
    fit = logistic_fit(z, outcome, fit_slope=True)
    statistic = max(0.0, 2.0 * (fit.log_likelihood - log_likelihood(z, outcome)))
    n = conf.shape[0]
    return TestResult(statistic, float(chi2_sf(statistic, 2)), np.empty(0), "cox", 0, {
        "intercept": fit.intercept, "slope": fit.slope, "degrees_of_freedom": 2,
        "unreliability": (statistic - 2.0) / n, "notion": notion,
    })


def spiegelhalter_test(probs: ArrayLike, y: ArrayLike, notion: str | None = None,
                       class_index: int | None = None) -> TestResult:
    """Spiegelhalter's (1986) z test of calibration, two-sided ("Probabilistic prediction in
    patient management and clinical trials", Statistics in Medicine 5:421–433).

    ``Z = Σ (y_i − p_i)(1 − 2p_i) / √(Σ (1 − 2p_i)² p_i (1 − p_i))`` — the standardised
    difference between the Brier score and its expectation under calibration; ``Z ~ N(0, 1)``
    under calibration, ``p = 2Φ(−|Z|)``. As ``rms::val.prob``'s "S:z" and "S:p". When every
    prediction is 0, ½ or 1 the variance is 0 and the test is undefined (ValueError).

    Parameters
    ----------
    probs : array_like
        ``(n,)`` P(y = 1) of a binary model, or ``(n, m)`` class probabilities.
    y : array_like
        ``(n,)`` integer labels ``0..m-1``.
    notion : {"positive", "top-label", "classwise"}, optional
        The calibration notion tested; ``None``: the data's default.
    class_index : int, optional
        The class of a ``"classwise"`` test.

    Returns
    -------
    core.stattests.result.TestResult
        statistic Z, p-value, no resamples.
    """

    conf, outcome, notion = pair(probs, y, notion, class_index)
    return spiegelhalter_from_sums(*spiegelhalter_sums(conf, outcome), notion)


def spiegelhalter_sums(conf: np.ndarray, outcome: np.ndarray) -> tuple[float, float]:
    """``(Σ (y − p)(1 − 2p), Σ (1 − 2p)² p(1 − p))``, the sums of :func:`spiegelhalter_test`
    (a streamed audit adds them partition by partition)."""
    weight = 1.0 - 2.0 * conf
    return (float(np.sum((outcome - conf) * weight)),
            float(np.sum(weight**2 * conf * (1.0 - conf))))


def spiegelhalter_from_sums(numerator: float, variance: float, notion: str) -> TestResult:
    """:func:`spiegelhalter_test` from its two sums."""
    if variance <= 0.0:
        raise ValueError(
            "The Spiegelhalter test needs some predictions strictly between 0 and 1 other "
            "than 0.5; here every prediction is 0, 0.5 or 1, so its variance is 0."
        )
    z = float(numerator / np.sqrt(variance))
    return TestResult(z, float(2.0 * norm_sf(abs(z))), np.empty(0), "spiegelhalter", 0,
                      {"alternative": "two-sided", "notion": notion})

