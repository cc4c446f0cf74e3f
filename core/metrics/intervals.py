"""Confidence intervals: binomial proportions (the bins of a reliability diagram) and
bootstrap intervals (the scalar metrics).

Binomial intervals are vectorised over many proportions at once. Both intervals are the
ones Brown, Cai & DasGupta (2001, "Interval Estimation for a Binomial Proportion",
Statistical Science 16(2), §4.1) recommend over the Wald interval, which collapses to a point
at k = 0 or k = n and undercovers badly for small counts.

Every function takes the success counts ``k`` and trial counts ``n`` as arrays of one shape
(or broadcastable shapes) and returns ``(low, high)`` arrays of that shape. Where ``n = 0``
there is no proportion to estimate and both ends are NaN.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike
from scipy import stats

from core.data.validation import check_choice

INTERVALS = ("wilson", "jeffreys")


def check_level(level: float) -> float:
    """Return ``level`` as a float, or raise ValueError unless 0 < level < 1."""
    level = float(level)
    if not 0.0 < level < 1.0:
        raise ValueError(
            f"The confidence level must be strictly between 0 and 1 (e.g. 0.95), not {level}."
        )
    return level


def _counts(successes: ArrayLike, trials: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    k = np.asarray(successes, dtype=np.float64)
    n = np.asarray(trials, dtype=np.float64)
    k, n = np.broadcast_arrays(k, n)
    if np.any(n < 0) or np.any(k < 0) or np.any(k > n):
        raise ValueError("Each success count must lie between 0 and its number of trials.")
    return k, n


def wilson_interval(
    successes: ArrayLike, trials: ArrayLike, level: float = 0.95
) -> tuple[np.ndarray, np.ndarray]:
    """Wilson score interval (Wilson 1927; Brown, Cai & DasGupta 2001, eq. 4).

    With ``p̂ = k/n`` and ``z = Φ⁻¹(1 − α/2)``, ``α = 1 − level``::

        centre = (k + z²/2) / (n + z²)
        half   = z √n / (n + z²) · √( p̂(1 − p̂) + z²/(4n) )
        [low, high] = [centre − half, centre + half]

    It is the set of p for which the score test of ``H₀: π = p`` does not reject. The ends are
    clipped to [0, 1] against rounding (at k = 0 the lower end is exactly 0 in exact
    arithmetic, at k = n the upper end is exactly 1).
    """
    level = check_level(level)
    k, n = _counts(successes, trials)
    z = stats.norm.ppf(0.5 + level / 2.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        p_hat = k / n
        denom = n + z * z
        centre = (k + z * z / 2.0) / denom
        half = z * np.sqrt(n) / denom * np.sqrt(p_hat * (1.0 - p_hat) + z * z / (4.0 * n))
    empty = n == 0
    low = np.where(empty, np.nan, np.clip(centre - half, 0.0, 1.0))
    high = np.where(empty, np.nan, np.clip(centre + half, 0.0, 1.0))
    return low, high


def jeffreys_interval(
    successes: ArrayLike, trials: ArrayLike, level: float = 0.95
) -> tuple[np.ndarray, np.ndarray]:
    """Jeffreys interval (Brown, Cai & DasGupta 2001, §4.1.2).

    The equal-tailed credible interval of the posterior under the Jeffreys prior Beta(½, ½)::

        [low, high] = [ B(α/2; k + ½, n − k + ½),  B(1 − α/2; k + ½, n − k + ½) ]

    where ``B(q; a, b)`` is the q-quantile of Beta(a, b) and ``α = 1 − level``. With the usual
    endpoint convention of that paper: ``low = 0`` when ``k = 0`` and ``high = 1`` when
    ``k = n`` (otherwise the interval would exclude the very boundary the data sit on).
    """
    level = check_level(level)
    k, n = _counts(successes, trials)
    alpha = 1.0 - level
    empty = n == 0
    a = k + 0.5
    b = np.where(empty, 0.5, n - k + 0.5)
    low = stats.beta.ppf(alpha / 2.0, a, b)
    high = stats.beta.ppf(1.0 - alpha / 2.0, a, b)
    low = np.where(k == 0, 0.0, low)
    high = np.where(k == n, 1.0, high)
    low = np.where(empty, np.nan, low)
    high = np.where(empty, np.nan, high)
    return np.asarray(low, dtype=np.float64), np.asarray(high, dtype=np.float64)


def binomial_interval(
    successes: ArrayLike, trials: ArrayLike, method: str = "wilson", level: float = 0.95
) -> tuple[np.ndarray, np.ndarray]:
    """Dispatch to :func:`wilson_interval` or :func:`jeffreys_interval` by name.

    Parameters
    ----------
    successes, trials : array_like
        Counts.
    method : {"wilson", "jeffreys"}
        The interval.
    level : float, default 0.95
        Coverage.

    Returns
    -------
    low, high : numpy.ndarray
    """
    if method == "wilson":
        return wilson_interval(successes, trials, level)
    if method == "jeffreys":
        return jeffreys_interval(successes, trials, level)
    check_choice(method, INTERVALS, "interval", "choose 'wilson' or 'jeffreys'")
    raise AssertionError("unreachable")  # check_choice raised for anything else


BOOTSTRAP_METHODS = ("basic", "percentile")


def bootstrap_interval(
    draws: ArrayLike,
    estimate: float,
    level: float = 0.95,
    method: str = "basic",
    bounds: tuple[float, float] = (-np.inf, np.inf),
    plugin: float | None = None,
) -> tuple[float, float]:
    """Bootstrap confidence interval from the resampled values T*_r of an estimate T.

    ``basic`` (reverse percentile, Davison & Hinkley 1997, §5.2): the law of ``T − θ`` is
    approximated by that of ``T* − θ(F̂)``, where ``θ(F̂)`` is the quantity's value on the
    empirical distribution — the truth of the bootstrap world, i.e. the plug-in estimate
    (``plugin``; by default T itself, right when T is the plug-in). Hence
    ``[T + θ(F̂) − q_{1−α/2}, T + θ(F̂) − q_{α/2}]``. For a binned ECE (biased upward, its
    resamples more so) the interval moves down by the resampling bias and can lie below the
    point estimate, which is correct for the population value; for a debiased estimator,
    ``plugin`` is its plug-in counterpart (as in Kumar et al.'s reference code).
    ``percentile``: ``[q_{α/2}, q_{1−α/2}]``. The interval is clipped to ``bounds``.

    Parameters
    ----------
    draws : array_like
        The resampled values ``T*_r``.
    estimate : float
        T.
    level : float, default 0.95
        Coverage.
    method : {"basic", "percentile"}
        The interval.
    bounds : tuple of float
        The interval is clipped to these.
    plugin : float, optional
        ``θ(F̂)``; default T.

    Returns
    -------
    tuple of float
        ``(low, high)``.
    """
    level = check_level(level)
    check_choice(method, BOOTSTRAP_METHODS, "bootstrap interval", "use 'basic' or 'percentile'")
    alpha = 1.0 - level
    q_low, q_high = np.quantile(np.asarray(draws, dtype=np.float64), [alpha / 2, 1 - alpha / 2])
    centre = estimate + (estimate if plugin is None else plugin)
    low, high = (q_low, q_high) if method == "percentile" else (centre - q_high,
                                                                centre - q_low)
    return float(np.clip(low, *bounds)), float(np.clip(high, *bounds))


def cornish_fisher_band(count: np.ndarray, mean: np.ndarray, variance: np.ndarray,
                        third: np.ndarray, level: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """The central ``level`` range of ``S/count`` for a sum S of independent Bernoulli(c_i) —
    a bin's calibrated frequency — from its cumulants ``mean = Σ c``, ``variance =
    Σ c(1 − c)`` and ``third = Σ c(1 − c)(1 − 2c)``: the Cornish–Fisher quantiles
    ``mean + σ(z + γ(z² − 1)/6)`` with skewness ``γ = third/σ³`` (Cornish & Fisher 1938),
    clipped to [0, 1]; NaN for an empty bin."""
    z = stats.norm.ppf([(1 - level) / 2, (1 + level) / 2])
    count = np.asarray(count, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        sd = np.sqrt(np.asarray(variance, dtype=np.float64))
        skew = np.where(sd > 0, np.asarray(third) / sd**3, 0.0)
        low, high = (np.clip((mean + sd * (q + skew * (q * q - 1) / 6)) / count, 0.0, 1.0)
                     for q in z)
    filled = count > 0
    return np.where(filled, low, np.nan), np.where(filled, high, np.nan)
