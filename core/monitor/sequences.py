"""Confidence sequences over time: the running calibration gap of one forecaster and the
running Brier-score difference of two (champion and challenger), with an e-process for
"the challenger is better".

**Confidence sequence** (Howard et al. 2021, Thm 4; Choe & Ramdas 2023, Thm 2). For
increments ``x_t ∈ [a, b]`` with conditional means ``μ_t = E[x_t | F_{t−1}]`` that may
change over time, the running average of the conditional means
``μ̄_t = (1/t) Σ_{i≤t} μ_i`` lies in

    x̄_t ± S_{α/2}(V_t) / t   for every t at once, with probability ≥ 1 − α,

where ``x̄_t`` is the sample mean, ``V_t = Σ_{i≤t} (x_i − x̄_{i−1})²`` the empirical
variance process (``x̄_0 = 0``) and ``S`` the polynomial stitched boundary with scale
``c = b − a`` (:func:`core.monitor.betting.stitching_boundary`). It is an empirical-Bernstein
sequence: its width follows the observed variance, not the range.

* The **calibration gap**: ``x_t = y_t − p_t ∈ [−1, 1]``; ``μ̄_t`` is the average
  conditional gap ``(1/t) Σ (E[y_i | past] − p_i)`` — 0 when calibrated, positive when the
  model under-predicts.
* The **Brier difference** (Choe & Ramdas 2023): ``δ_t = (p^A_t − y_t)² − (p^B_t − y_t)²
  ∈ [−1, 1]``, champion A minus challenger B; ``μ̄_t > 0`` means the challenger's expected
  score has been better on average so far. Its e-process for
  ``H₀: E[δ_t | past] ≤ 0 for every t`` (the champion is at least as good, Henzi & Ziegel
  2022) is ``mean_j ∏_{s≤t} (1 + λ_j δ_s)`` over the positive bets ``λ_j``: a
  supermartingale under H₀, so ``P(∃t: e_t ≥ 1/α) ≤ α``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike

from core.data.validation import check_fraction
from core.monitor.betting import (
    anytime_p_values,
    bet_grid,
    e_values_of,
    first_crossing,
    log_mixture_wealth,
    stitching_boundary,
)
from core.monitor.eprocesses import binary_forecast


@dataclass(frozen=True)
class ConfidenceSequence:
    """Bounds, valid at every row at once, on the running average of conditional means.

    Attributes
    ----------
    estimate : numpy.ndarray
        The running sample mean after each row.
    lower, upper : numpy.ndarray
        The bounds after each row (clipped to the increments' range).
    alpha : float
        ``P(the average ever leaves the bounds) ≤ alpha``.
    quantity : str
        What is bounded, in words.
    """

    estimate: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    alpha: float
    quantity: str

    def excludes_zero(self) -> np.ndarray:
        """Per row: whether 0 is outside the bounds."""
        return (self.lower > 0) | (self.upper < 0)


class RunningMean:
    """The empirical-Bernstein confidence sequence of a running conditional mean (module
    docstring) read batch by batch: the running sum, the last mean and the variance process
    are carried, so batches give the bounds of one pass, bit for bit.

    Parameters
    ----------
    low, high : float
        The increments' range.
    alpha : float
        The chance that the running mean ever leaves the bounds.
    """

    def __init__(self, low: float, high: float, alpha: float) -> None:
        self.low, self.high, self.alpha = float(low), float(high), float(alpha)
        self.count, self.total, self.mean, self.variance = 0, 0.0, 0.0, 0.0

    def update(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(estimate, lower, upper)`` after each row of the batch ``x`` (unchecked)."""
        n = x.shape[0]
        if n == 0:
            return np.empty(0), np.empty(0), np.empty(0)
        t = np.arange(self.count + 1, self.count + n + 1)
        sums = np.array(x, dtype=np.float64)
        sums[0] += self.total
        np.cumsum(sums, out=sums)
        mean = sums / t
        previous = np.concatenate([[self.mean], mean[:-1]])
        variance = (x - previous) ** 2
        variance[0] += self.variance
        np.cumsum(variance, out=variance)
        radius = stitching_boundary(variance, self.alpha / 2.0, self.high - self.low) / t
        self.count += n
        self.total, self.mean, self.variance = float(sums[-1]), float(mean[-1]), \
            float(variance[-1])
        return mean, np.maximum(mean - radius, self.low), np.minimum(mean + radius, self.high)


def running_mean_sequence(x: np.ndarray, low: float, high: float, alpha: float,
                          quantity: str) -> ConfidenceSequence:
    """The empirical-Bernstein confidence sequence of the running conditional mean of ``x``
    (increments in ``[low, high]``, unchecked; module docstring for the formula)."""
    mean, lower, upper = RunningMean(low, high, alpha).update(x)
    return ConfidenceSequence(mean, lower, upper, alpha, quantity)


def gap_confidence_sequence(probs: ArrayLike, y: ArrayLike,
                            alpha: float = 0.05) -> ConfidenceSequence:
    """Confidence sequence of the running calibration gap ``(1/t) Σ (E[y_i | past] − p_i)``.

    Parameters
    ----------
    probs, y : array_like
        Forecasts ``P(y = 1)`` and outcomes 0/1, in the order the outcomes were observed.
    alpha : float
        The chance that the running gap ever leaves the bounds is at most ``alpha``.

    Returns
    -------
    ConfidenceSequence
        ``estimate`` = running mean of ``y − p``; ``lower``/``upper`` after every row.

    Raises
    ------
    ValueError
        Invalid forecasts or labels, or a level outside (0, 1).
    """
    p, labels = binary_forecast(probs, y)
    alpha = check_fraction("alpha", alpha)
    return running_mean_sequence(labels - p, -1.0, 1.0, alpha,
                                 "running calibration gap (outcome − forecast)")


@dataclass(frozen=True)
class BrierComparison:
    """Anytime-valid comparison of a champion's and a challenger's Brier scores.

    Attributes
    ----------
    sequence : ConfidenceSequence
        Of the running mean of ``δ_t`` = champion's Brier − challenger's Brier.
    e_values : numpy.ndarray
        E-process for "the challenger is better" after every row.
    alarm : int or None
        First row index where ``e_t ≥ 1/alpha`` (the challenger is shown better), or None.
    alpha : float
        The level.
    peaks : numpy.ndarray or None
        ``max_{s≤t} e_s`` at the rows of ``e_values`` when they are not every row (a
        streamed table, :class:`~core.monitor.monitoring.MonitorResult`); None: every row.
    """

    sequence: ConfidenceSequence
    e_values: np.ndarray
    alarm: int | None
    alpha: float
    peaks: np.ndarray | None = field(default=None, repr=False)

    @property
    def p_value(self) -> float:
        """Anytime-valid p-value of "the champion is at least as good" after the last row."""
        if self.peaks is not None:
            return float(min(1.0, np.exp(-np.log(self.peaks[-1]))))
        return float(anytime_p_values(np.log(self.e_values))[-1])


def brier_comparison(champion: ArrayLike, challenger: ArrayLike, y: ArrayLike,
                     alpha: float = 0.05) -> BrierComparison:
    """Compare two forecasters' Brier scores on the same rows, valid at every row.

    Parameters
    ----------
    champion, challenger : array_like
        ``(n,)`` forecasts ``P(y = 1)`` of the two models, in time order.
    y : array_like
        ``(n,)`` outcomes 0/1.
    alpha : float
        The level of the confidence sequence and of the e-process.

    Returns
    -------
    BrierComparison
        The confidence sequence of the running mean of
        ``δ_t = (p^A_t − y_t)² − (p^B_t − y_t)²`` and the e-process
        ``mean_j ∏ (1 + λ_j δ_s)`` (``λ_j > 0``) for "challenger better".

    Raises
    ------
    ValueError
        Invalid forecasts or labels, or forecasts of different lengths.
    """
    a, labels = binary_forecast(champion, y)
    b, _ = binary_forecast(challenger, y)
    alpha = check_fraction("alpha", alpha)
    delta = (a - labels) ** 2 - (b - labels) ** 2
    sequence = running_mean_sequence(delta, -1.0, 1.0, alpha,
                                     "running Brier score difference (champion − challenger)")
    log_e = log_mixture_wealth(delta, bet_grid(two_sided=False))
    return BrierComparison(sequence, e_values_of(log_e), first_crossing(log_e, 1.0 / alpha),
                           alpha)
