"""Paired tests of per-row scores: the Diebold–Mariano test of two models on the same rows.

Diebold & Mariano (1995, "Comparing Predictive Accuracy", J. Business & Economic Statistics
13(3), eq. 3). For per-row losses ``s_A,i`` and ``s_B,i`` of two models on the same n rows
(a proper score: the Brier term or the log loss of row i), the differences

    d_i = s_B,i − s_A,i,     d̄ = (1/n) Σ_i d_i,     s² = (1/(n − 1)) Σ_i (d_i − d̄)²

give ``z = d̄ / √(s²/n)``, asymptotically N(0, 1) under H0 ``E[d] = 0`` (equal expected
score), a two-sided p-value ``2Φ(−|z|)`` and the interval ``d̄ ± Φ⁻¹(1 − α/2)·√(s²/n)``.
Diebold and Mariano estimate the long-run variance of a time series of forecast errors with a
HAC (Newey–West) kernel over lags; the rows of an audit table are independent draws, so every
autocovariance beyond lag 0 is zero in expectation and the variance of d̄ is exactly
``Var(d)/n`` — no lag window is needed or used. Pairing is what makes the test sharp: the two
models' scores on a row are strongly correlated, so ``Var(d)`` is far smaller than the sum of
the two scores' variances that two separate audits would imply.

The log loss is clipped at ``LOG_LOSS_EPS`` (as :func:`core.metrics.nll`): a row whose true
class got probability 0 scores ``−log(1e−15) ≈ 34.5`` instead of infinity.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core.data.distributions import norm_ppf, norm_sf
from core.metrics.scores import brier_rows, nll_rows

#: Probability floor of the per-row log loss (as ``core.metrics.nll``).
LOG_LOSS_EPS = 1e-15


def score_rows(criterion: str, p: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Per-row loss of a proper score: ``"brier"`` (binary form for binary problems, Brier's
    multi-category form otherwise, :func:`core.metrics.brier`) or ``"log_loss"``
    (``−log max(p_{i,y_i}, LOG_LOSS_EPS)``)."""
    if criterion == "brier":
        return brier_rows(p, y)
    if criterion == "log_loss":
        return nll_rows(p, y, LOG_LOSS_EPS)
    raise ValueError(f"No per-row score for criterion '{criterion}'.")


@dataclass(frozen=True)
class PairedDifference:
    """A difference B − A with its standard error, interval and two-sided p-value.

    ``variance`` is the variance the standard error comes from: for the Diebold–Mariano test
    the sample variance ``s²`` of the per-row differences (so ``std_error = √(s²/n)``); for a
    resampled criterion the variance of the resampled differences (``std_error = √variance``).

    Attributes
    ----------
    value_a, value_b : float
        The criterion of each model.
    difference : float
        B − A.
    variance, std_error : float
        As above.
    ci_low, ci_high : float
        The 1 − α interval of the difference.
    p_value : float
        Two-sided, of "no difference".
    method : str
        The test that ran.
    """

    value_a: float
    value_b: float
    difference: float
    variance: float
    std_error: float
    ci_low: float
    ci_high: float
    p_value: float
    method: str


def normal_inference(value_a: float, value_b: float, difference: float, variance: float,
                     std_error: float, alpha: float, method: str) -> PairedDifference:
    """Wald interval ``difference ± z_{1−α/2}·se`` and p-value ``2Φ(−|difference|/se)``; a zero
    standard error (identical models) gives p = 1 for a zero difference, 0 otherwise."""
    z = norm_ppf(1.0 - alpha / 2.0)
    if std_error > 0:
        p_value = float(2.0 * norm_sf(abs(difference) / std_error))
    else:
        p_value = 1.0 if difference == 0 else 0.0
    return PairedDifference(
        value_a=float(value_a), value_b=float(value_b), difference=float(difference),
        variance=float(variance), std_error=float(std_error),
        ci_low=float(difference - z * std_error), ci_high=float(difference + z * std_error),
        p_value=p_value, method=method,
    )


def diebold_mariano(scores_a: np.ndarray, scores_b: np.ndarray, alpha: float = 0.05
                    ) -> PairedDifference:
    """The Diebold–Mariano test of equal mean score (module docstring) on per-row losses.

    Parameters
    ----------
    scores_a, scores_b : array_like
        ``(n,)`` per-row losses of the champion and the challenger on the same rows.
    alpha : float, default 0.05
        Level of the interval.

    Returns
    -------
    PairedDifference
    """
    d = scores_b - scores_a
    n = d.shape[0]
    variance = float(np.var(d, ddof=1)) if n > 1 else 0.0
    return normal_inference(
        float(np.mean(scores_a)), float(np.mean(scores_b)), float(np.mean(d)), variance,
        float(np.sqrt(variance / n)), alpha, "Diebold–Mariano (paired z, Var(d)/n)",
    )
