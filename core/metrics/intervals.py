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
import pandas as pd
from numpy.typing import ArrayLike

from core.data.distributions import beta_ppf, norm_ppf
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
    z = norm_ppf(0.5 + level / 2.0)
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
    low = beta_ppf(alpha / 2.0, a, b)
    high = beta_ppf(1.0 - alpha / 2.0, a, b)
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
    plug-in estimate, which is correct for the population value; for a debiased estimator,
    ``plugin`` is its plug-in counterpart (as in Kumar et al.'s reference code).
    ``percentile``: ``[q_{α/2}, q_{1−α/2}]``. The interval is clipped to ``bounds``.
    The point estimate that belongs to this interval is :func:`bootstrap_estimate`.

    Parameters
    ----------
    draws : array_like
        The resampled values ``T*_r``.
    estimate : float
        The estimate ``T`` on the data.
    level : float
        Confidence level, strictly between 0 and 1.
    method : {"basic", "percentile"}
        The construction.
    bounds : tuple of float
        The quantity's natural range; both ends are clipped to it.
    plugin : float, optional
        ``θ(F̂)`` when ``T`` is not the plug-in estimate.

    Returns
    -------
    tuple of float
        ``(low, high)``.

    Raises
    ------
    ValueError
        When ``level`` is not in (0, 1) or ``method`` is unknown.
    """
    low, _, high = bootstrap_estimate(draws, estimate, level, method, bounds, plugin)
    return low, high


def bootstrap_estimate(
    draws: ArrayLike,
    estimate: float,
    level: float = 0.95,
    method: str = "basic",
    bounds: tuple[float, float] = (-np.inf, np.inf),
    plugin: float | None = None,
) -> tuple[float, float, float]:
    """The bootstrap interval and the point estimate at its centre, which it always contains.

    One rule maps the resampled values' quantiles ``q_{α/2} ≤ q_{1/2} ≤ q_{1−α/2}`` to the
    interval's ends and to its point, so the point lies inside by construction:

    * ``basic``: ``x ↦ T + θ(F̂) − x`` (:func:`bootstrap_interval`), so the point is the
      median-bias-corrected estimate ``T̃ = T + θ(F̂) − q_{1/2}`` (the bootstrap bias
      correction of Efron & Tibshirani 1993, §10.6, with the median of the resamples in
      place of their mean);
    * ``percentile``: ``x ↦ x``, so the point is ``q_{1/2}``.

    The three numbers are clipped to ``bounds`` (a monotone map, so containment survives).
    A biased plug-in estimator (a binned or smooth ECE, Brier REL, KS/Kuiper) is reported
    as ``T̃`` with this interval; ``T̃`` below the quantity's natural lower bound (a negative
    error: the miscalibration is below the noise) comes back clipped, and the unclipped
    value is :func:`core.metrics.intervals.raw_bootstrap_estimate`.

    Parameters
    ----------
    draws : array_like
        The resampled values ``T*_r``.
    estimate : float
        The estimate ``T`` on the data.
    level : float
        Confidence level, strictly between 0 and 1.
    method : {"basic", "percentile"}
        The construction.
    bounds : tuple of float
        The quantity's natural range.
    plugin : float, optional
        ``θ(F̂)`` when ``T`` is not the plug-in estimate.

    Returns
    -------
    tuple of float
        ``(low, point, high)`` with ``low ≤ point ≤ high``.

    Raises
    ------
    ValueError
        When ``level`` is not in (0, 1) or ``method`` is unknown.
    """
    level = check_level(level)
    check_choice(method, BOOTSTRAP_METHODS, "bootstrap interval", "use 'basic' or 'percentile'")
    low, point, high = _mapped_quantiles(draws, estimate, level, method, plugin)
    return (float(np.clip(low, *bounds)), float(np.clip(point, *bounds)),
            float(np.clip(high, *bounds)))


def raw_bootstrap_estimate(draws: ArrayLike, estimate: float, method: str = "basic",
                           plugin: float | None = None) -> float:
    """The point of :func:`bootstrap_estimate` before clipping to the natural range.

    Parameters
    ----------
    draws : array_like
        The resampled values ``T*_r``.
    estimate : float
        The estimate ``T`` on the data.
    method : {"basic", "percentile"}
        The construction.
    plugin : float, optional
        ``θ(F̂)`` when ``T`` is not the plug-in estimate.

    Returns
    -------
    float
        ``T + θ(F̂) − q_{1/2}`` (basic) or ``q_{1/2}`` (percentile); it may be negative for a
        non-negative quantity.
    """
    return float(_mapped_quantiles(draws, estimate, 0.5, method, plugin)[1])


def _mapped_quantiles(draws: ArrayLike, estimate: float, level: float, method: str,
                      plugin: float | None) -> np.ndarray:
    """``(low, point, high)`` before clipping: the quantiles α/2, ½, 1 − α/2 of the draws,
    mapped by the method's rule (reversed about ``T + θ(F̂)`` for basic)."""
    alpha = 1.0 - level
    q = np.quantile(np.asarray(draws, dtype=np.float64), [alpha / 2, 0.5, 1 - alpha / 2])
    if method == "percentile":
        return q
    return (estimate + (estimate if plugin is None else plugin)) - q[::-1]


def reported_estimate(draws: ArrayLike, value: float, level: float, method: str,
                      bounds: tuple[float, float], plugin: float | None = None,
                      biased: bool = True) -> tuple[float, float, float]:
    """``(estimate, low, high)`` of one row of a metrics table: the rule every table applies.

    A biased row (``biased``: a plug-in calibration error, whose basic interval is centred on
    ``T + θ(F̂)`` rather than on ``T``) reports the point of :func:`bootstrap_estimate`,
    ``T̃ = T + θ(F̂) − q_{1/2}(T*)`` (unclipped: it is negative when the error is below the
    noise) with its interval, so ``low ≤ max(T̃, bounds[0]) ≤ high``. A mean (accuracy, Brier
    score, NLL) reports itself, ``T``, with its basic interval. Without draws the estimate is
    ``T`` and the interval NaN.

    Parameters
    ----------
    draws : array_like
        The resampled values (empty: no bootstrap).
    value : float
        The estimate ``T`` on the data.
    level : float
        Confidence level.
    method : {"basic", "percentile"}
        The interval's construction.
    bounds : tuple of float
        The natural range the interval is clipped to.
    plugin : float, optional
        ``θ(F̂)`` when ``T`` is not the plug-in estimate.
    biased : bool
        Whether the row reports the bias-corrected point.

    Returns
    -------
    tuple of float
        ``(estimate, low, high)``.
    """
    draws = np.asarray(draws, dtype=np.float64)
    if draws.size == 0:
        return float(value), np.nan, np.nan
    low, _, high = bootstrap_estimate(draws, value, level, method, bounds, plugin)
    estimate = raw_bootstrap_estimate(draws, value, method, plugin) if biased else value
    return float(estimate), low, high


def cornish_fisher_band(count: np.ndarray, mean: np.ndarray, variance: np.ndarray,
                        third: np.ndarray, level: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """The central ``level`` range of ``S/count`` for a sum S of independent Bernoulli(c_i) —
    a bin's calibrated frequency — from its cumulants ``mean = Σ c``, ``variance =
    Σ c(1 − c)`` and ``third = Σ c(1 − c)(1 − 2c)``: the Cornish–Fisher quantiles
    ``mean + σ(z + γ(z² − 1)/6)`` with skewness ``γ = third/σ³`` (Cornish & Fisher 1938),
    clipped to [0, 1]; NaN for an empty bin."""
    z = norm_ppf([(1 - level) / 2, (1 + level) / 2])
    count = np.asarray(count, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        sd = np.sqrt(np.asarray(variance, dtype=np.float64))
        skew = np.where(sd > 0, np.asarray(third) / sd**3, 0.0)
        low, high = (np.clip((mean + sd * (q + skew * (q * q - 1) / 6)) / count, 0.0, 1.0)
                     for q in z)
    filled = count > 0
    return np.where(filled, low, np.nan), np.where(filled, high, np.nan)


#: What a negative estimate of a non-negative error reads as.
BELOW_NOISE = "≈ 0 (below the noise)"
#: Metrics-table rows whose quantity has a sign (every other row is a non-negative error).
SIGNED_METRICS = ("Calibration slope", "Calibration intercept")


def format_estimate(estimate: float, signed: bool = False, digits: int = 4) -> str:
    """The text of a reported estimate: ``"≈ 0 (below the noise)"`` for a negative estimate of
    a non-negative quantity (a bias-corrected or debiased error below its sampling noise),
    else the number with ``digits`` decimals.

    Parameters
    ----------
    estimate : float
        The reported point (``estimate`` column of a metrics table).
    signed : bool
        Whether the quantity may be negative (a calibration slope or intercept).
    digits : int
        Decimals shown.

    Returns
    -------
    str
        The text; ``"—"`` for NaN.
    """
    if not np.isfinite(estimate):
        return "—"
    if estimate < 0 and not signed:
        return BELOW_NOISE
    return f"{estimate:.{digits}f}"


def format_interval(low: float, high: float, digits: int = 4) -> str:
    """``"[low, high]"`` with ``digits`` decimals, or ``"—"`` without an interval.

    Parameters
    ----------
    low, high : float
        The interval's ends.
    digits : int
        Decimals shown.

    Returns
    -------
    str
        The text.
    """
    if not (np.isfinite(low) and np.isfinite(high)):
        return "—"
    return f"[{low:.{digits}f}, {high:.{digits}f}]"


def shown_metrics(table: pd.DataFrame, digits: int = 4) -> pd.DataFrame:
    """A metrics table as it is displayed (pages, report, CLI): ``metric``, ``estimate``
    (:func:`format_estimate`), ``interval`` (:func:`format_interval`), ``value`` (the
    estimator on the data, the raw number) and ``notion``.

    Parameters
    ----------
    table : pandas.DataFrame
        A table of :func:`core.metrics.global_metrics.metrics_table` or
        :func:`core.metrics.extended.extended_metrics_table` (or both concatenated).
    digits : int
        Decimals shown.

    Returns
    -------
    pandas.DataFrame
        One row per metric, every column text but ``value``.
    """
    estimate = table["estimate"] if "estimate" in table else table["value"]
    return pd.DataFrame({
        "metric": table["metric"],
        "estimate": [format_estimate(e, m in SIGNED_METRICS, digits)
                     for e, m in zip(estimate, table["metric"], strict=True)],
        "interval": [format_interval(lo, hi, digits)
                     for lo, hi in zip(table["ci_low"], table["ci_high"], strict=True)],
        "value": table["value"],
        "notion": table["notion"],
    })


#: The caption under every displayed metrics table: how to read ``estimate`` and ``value``.
ESTIMATE_CAPTION = (
    "Estimate: for a calibration error, the bootstrap's bias-corrected value (the plug-in "
    "value, corrected by the median of the resampled values: T + T − median T*), the point its "
    "interval is built around, so the interval always contains it; "
    f"'{BELOW_NOISE}' when that correction is negative (the raw numbers are the plug-in "
    "value column and the results' estimate column). Accuracy, Brier score, NLL, slope and "
    "intercept report their own value.")
