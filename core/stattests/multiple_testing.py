"""Many hypotheses at once: max-|T| adjusted p-values, its critical value, and BH q-values.

A family of K tests with observed statistics ``|T_k|`` and B resampled statistic vectors
``|T̃_·b|`` drawn *jointly* under the complete null (the columns of one ``(K, B)`` matrix, so
the dependence between the tests is kept) gives:

* **Westfall–Young step-down max-|T| adjusted p-values** (Westfall & Young 1993, Algorithm
  2.8; Dudoit, Shaffer & Boldrick 2003, §2.5). Order the tests by ``|T_(1)| ≥ … ≥ |T_(K)|``,
  take the successive maxima ``M_jb = max_{l ≥ j} |T̃_(l)b|`` of the resamples over the tests
  not yet rejected, and

      p̃_(j) = (1 + #{b : M_jb ≥ |T_(j)|}) / (1 + B),   p_adj(j) = max_{i ≤ j} p̃_(i),

  with the ``(1 + #)/(1 + B)`` convention of :mod:`core.stattests.result`, never 0 and valid at
  any B. Rejecting ``p_adj ≤ α`` controls the family-wise error rate — the probability of at
  least one false rejection — at α *strongly* (whatever hypotheses are false) where *subset
  pivotality* holds: the joint distribution of the statistics of the true hypotheses does not
  depend on the false ones. It holds for slice sums under consistency resampling
  (:mod:`core.local.slice_discovery`): a slice's statistic is a function of its own rows only.
* **the single-step max-|T| critical value** ``c``: reject ``|T_k| > c`` exactly when
  ``(1 + #{b : max_l |T̃_lb| ≥ |T_k|}) / (1 + B) ≤ α``. Inverting ``|T_k(θ)| ≤ c`` gives
  simultaneous confidence intervals (coverage of all K parameters at once ≥ 1 − α); the
  step-down p-values reject at least what ``c`` rejects.
* **Benjamini–Hochberg q-values** (Benjamini & Hochberg 1995): ``q_(j) = min_{i ≥ j}
  p_(i)·K/i`` over the ordered marginal p-values; ``q ≤ α`` controls the false discovery
  rate — the expected share of false rejections among the rejections — at α for independent
  or positively dependent (PRDS) tests, and in practice for the two-sided slice tests
  (measured by ``benchmarks/slices_study.py``).

These functions know nothing of slices: any family of statistics with jointly resampled nulls
(model comparison's paired per-row differences, for one) plugs in.
"""

from __future__ import annotations

import math

import numpy as np

from core.data.validation import check_fraction


def _as_family(observed: np.ndarray, null: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    observed = np.abs(np.asarray(observed, dtype=np.float64)).ravel()
    null = np.abs(np.asarray(null, dtype=np.float64))
    if null.ndim != 2 or null.shape[0] != observed.size:
        raise ValueError(f"The null statistics must be a (tests, resamples) matrix with one row "
                         f"per observed statistic ({observed.size}); got shape {null.shape}.")
    if null.shape[1] == 0:
        raise ValueError("At least one resample is needed for max-|T| p-values.")
    return observed, null


def step_down_max_t(observed: np.ndarray, null: np.ndarray) -> np.ndarray:
    """Westfall–Young step-down max-``|T|`` adjusted p-values (module doc).

    Parameters
    ----------
    observed : array of shape (K,)
        The observed statistics (their absolute values are used).
    null : array of shape (K, B)
        The statistics of B joint resamples under the complete null.

    Returns
    -------
    ndarray of shape (K,)
        Adjusted p-values in ``[1/(1 + B), 1]``, in the order of ``observed``.
    """
    observed, null = _as_family(observed, null)
    if observed.size == 0:
        return np.zeros(0)
    order = np.argsort(-observed, kind="stable")
    successive = np.maximum.accumulate(null[order][::-1], axis=0)[::-1]
    exceed = np.count_nonzero(successive >= observed[order][:, None], axis=1)
    adjusted = np.maximum.accumulate((1.0 + exceed) / (1.0 + null.shape[1]))
    out = np.empty_like(adjusted)
    out[order] = adjusted
    return out


def single_step_p_values(observed: np.ndarray, null: np.ndarray) -> np.ndarray:
    """Single-step max-|T| p-values ``(1 + #{b : max_l |T̃_lb| ≥ |T_k|}) / (1 + B)``."""
    observed, null = _as_family(observed, null)
    maxima = np.sort(null.max(axis=0)) if null.size else np.zeros(null.shape[1])
    exceed = maxima.size - np.searchsorted(maxima, observed, side="left")
    return (1.0 + exceed) / (1.0 + maxima.size)


def max_t_critical(null: np.ndarray, alpha: float) -> float:
    """The single-step max-``|T|`` critical value ``c`` at level α: ``|T_k| > c`` rejects exactly
    when the single-step p-value is at most α (module doc); ``inf`` when B is too small for
    any p-value to reach α (``α(1 + B) < 1``).

    With ``M_b = max_l |T̃_lb|`` sorted in decreasing order and ``r = ⌊α(1 + B)⌋ − 1``
    exceedances allowed, ``c = M_(r+1)``.

    Parameters
    ----------
    null : array_like
        ``(K, B)`` resampled statistics ``T̃`` of the K hypotheses.
    alpha : float
        Family-wise level.

    Returns
    -------
    float
        The critical value ``c`` (``inf`` when no p-value can reach α).
    """
    return max_t_threshold(null, check_fraction("alpha", alpha))


def max_t_threshold(null: np.ndarray, alpha: float) -> float:
    """:func:`max_t_critical` for an ``alpha`` already checked at the caller's public entry
    (:func:`core.local.slice_discovery.discover_slices`, the audit settings, the model
    comparison): the same value, without a second check."""
    null = np.abs(np.asarray(null, dtype=np.float64))
    if null.ndim != 2 or null.shape[1] == 0:
        raise ValueError("The null statistics must be a (tests, resamples) matrix with at least "
                         "one resample.")
    maxima = np.sort(null.max(axis=0) if null.shape[0] else np.zeros(null.shape[1]))[::-1]
    allowed = math.floor(alpha * (1 + maxima.size) + 1e-9) - 1
    return float(maxima[allowed]) if allowed >= 0 else math.inf


def benjamini_hochberg(p_values: np.ndarray) -> np.ndarray:
    """Benjamini–Hochberg q-values ``q_(j) = min_{i ≥ j} min(1, p_(i)·K/i)`` (module doc);
    NaN p-values stay NaN and do not count in K.

    Parameters
    ----------
    p_values : array_like
        ``(K,)`` p-values, NaN for hypotheses not tested.

    Returns
    -------
    numpy.ndarray
        ``(K,)`` q-values in the same order.
    """
    p = np.asarray(p_values, dtype=np.float64).ravel()
    q = np.full(p.shape, np.nan)
    valid = np.flatnonzero(~np.isnan(p))
    if valid.size == 0:
        return q
    order = valid[np.argsort(p[valid], kind="stable")]
    ranked = p[order] * valid.size / np.arange(1, valid.size + 1)
    q[order] = np.minimum(1.0, np.minimum.accumulate(ranked[::-1])[::-1])
    return q
