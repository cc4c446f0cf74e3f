"""The few distribution functions the audit reads — normal, Student t, chi-squared and beta
tails and quantiles — and average ranks, from :mod:`scipy.special`.

Each is the special function that :mod:`scipy.stats` itself evaluates for that distribution
(``scipy.stats.norm.ppf`` is ``ndtri``, ``chi2.sf`` is ``chdtrc``, …), with the same values at
the ends of the support, so the numbers are those of ``scipy.stats`` to the bit (tested); what
is left out is ``scipy.stats`` itself, whose import takes a quarter of a second of every
command's start.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike
from scipy.special import betaincinv, chdtrc, ndtr, ndtri, stdtr, stdtrit


def norm_ppf(q: ArrayLike) -> np.ndarray:
    """Standard normal quantile ``Φ⁻¹(q)`` (``scipy.stats.norm.ppf``)."""
    return ndtri(q)


def norm_sf(x: ArrayLike) -> np.ndarray:
    """Standard normal upper tail ``1 − Φ(x) = Φ(−x)`` (``scipy.stats.norm.sf``)."""
    return ndtr(-np.asarray(x, dtype=np.float64))


def norm_isf(q: ArrayLike) -> np.ndarray:
    """The x with upper tail ``q``: ``−Φ⁻¹(q)`` (``scipy.stats.norm.isf``)."""
    return -ndtri(q)


def chi2_sf(x: ArrayLike, df: ArrayLike) -> np.ndarray:
    """Chi-squared upper tail ``P(χ²_df > x)`` (``scipy.stats.chi2.sf``; 1 for x ≤ 0, below
    the support)."""
    return chdtrc(df, np.maximum(x, 0.0))


def t_sf(x: ArrayLike, df: ArrayLike) -> np.ndarray:
    """Student t upper tail ``P(T_df > x)`` (``scipy.stats.t.sf``)."""
    return stdtr(df, -np.asarray(x, dtype=np.float64))


def t_isf(q: ArrayLike, df: ArrayLike) -> np.ndarray:
    """The x with Student t upper tail ``q`` (``scipy.stats.t.isf``; +∞ at q = 0)."""
    q = np.asarray(q, dtype=np.float64)
    return np.where(q == 0.0, np.inf, -stdtrit(df, q))


def beta_ppf(q: ArrayLike, a: ArrayLike, b: ArrayLike) -> np.ndarray:
    """Beta(a, b) quantile, the inverse of the regularised incomplete beta function
    (``scipy.stats.beta.ppf``)."""
    return betaincinv(a, b, q)


def average_ranks(values: ArrayLike) -> np.ndarray:
    """Ranks 1 … n of ``values``, tied values sharing the mean of their ranks
    (``scipy.stats.rankdata``, method "average"; all NaN when a value is NaN)."""
    values = np.asarray(values).ravel()
    if values.dtype.kind in "fc" and np.isnan(values).any():
        return np.full(values.size, np.nan)
    order = np.argsort(values, kind="mergesort")
    ordered = values[order]
    first = np.concatenate([[True], ordered[1:] != ordered[:-1]])
    starts = np.flatnonzero(first)
    ends = np.append(starts[1:], values.size)  # each tied run is ranks starts+1 … ends
    ranks = np.empty(values.size)
    ranks[order] = np.repeat((starts + 1 + ends) / 2.0, ends - starts)
    return ranks
