"""Summaries of LCE values (:mod:`core.local.lce_estimate`): per confidence bin (count,
mean and maximum LCE beside the bin's own calibration error) and the empirical CDF of the
LCE, overall and within one bin (Luo et al., Fig. 2).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from core.data.validation import check_count
from core.local.lce_inputs import check_vectors, uniform_bins
from core.metrics.binning import edges_of

# --------------------------------------------------------------------------- per-bin views


def _check_lce_values(lce_values: ArrayLike, n: int) -> np.ndarray:
    v = np.asarray(lce_values, dtype=np.float64)
    if v.ndim != 1 or v.shape[0] != n:
        raise ValueError(
            f"lce_values must be a 1-D array with one LCE per prediction ({n}); got shape "
            f"{v.shape}."
        )
    if not (np.isfinite(v) & (np.abs(v) <= 1.0)).all():
        raise ValueError("lce_values must be LCE values between −1 and 1 (as lce returns).")
    return v


def bin_summary(
    conf: ArrayLike, correct: ArrayLike, lce_values: ArrayLike, n_bins: int = 15
) -> pd.DataFrame:
    """Per confidence bin: the global calibration of the bin beside its local errors.

    One row per bin ``b`` (empty bins kept, with count 0 and NaN statistics): ``bin``,
    ``bin_lower``, ``bin_upper``, ``count`` ``n_b``, ``mean_confidence`` ``conf(B_b)``,
    ``accuracy`` ``acc(B_b)``, ``gap`` = ``conf(B_b) − acc(B_b)`` (positive = over-confident,
    the sign of the signed LCE), ``calibration_error`` = ``|conf(B_b) − acc(B_b)|`` (the
    bin's term of the MCE, paper eq. 3), ``mean_lce`` and ``max_lce`` of ``lce_values`` over
    the bin. Paper §3.3 / Fig. 2 compare ``mean_lce`` with ``calibration_error``: a mean LCE
    well above the bin's error means over- and under-confident regions cancel in the bin.

    Parameters
    ----------
    conf : array_like
        ``(n,)`` top-label confidences.
    correct : array_like
        ``(n,)`` 1 where the prediction was right, else 0.
    lce_values : array_like
        ``(n,)`` LCE of every row.
    n_bins : int, default 15
        Equal-width confidence bins.

    Returns
    -------
    pandas.DataFrame
    """
    c, o = check_vectors(conf, correct)
    v = _check_lce_values(lce_values, c.shape[0])
    n_bins = check_count("n_bins", n_bins, 1)
    bins = uniform_bins(c, n_bins)
    edges = edges_of(c, n_bins, "uniform")
    counts = np.bincount(bins, minlength=n_bins)
    filled = counts > 0

    def mean_of(values: np.ndarray) -> np.ndarray:
        total = np.bincount(bins, weights=values, minlength=n_bins)
        return np.divide(total, counts, out=np.full(n_bins, np.nan), where=filled)

    max_lce = np.full(n_bins, -np.inf)
    np.maximum.at(max_lce, bins, v)
    mean_conf, acc = mean_of(c), mean_of(o)
    return pd.DataFrame({
        "bin": np.arange(n_bins),
        "bin_lower": edges[:-1],
        "bin_upper": edges[1:],
        "count": counts.astype(np.int64),
        "mean_confidence": mean_conf,
        "accuracy": acc,
        "gap": mean_conf - acc,
        "calibration_error": np.abs(mean_conf - acc),
        "mean_lce": mean_of(v),
        "max_lce": np.where(filled, max_lce, np.nan),
    })


def lce_cdf(lce_values: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """Empirical CDF of LCE values: sorted values ``v_(k)`` and fractions ``k/m``.

    ``F(v_(k)) = k/m`` for the ``m`` values (Luo et al., Fig. 2 right panels). An empty
    input gives two empty arrays.
    """
    v = np.asarray(lce_values, dtype=np.float64)
    if v.ndim != 1 or not np.isfinite(v).all():
        raise ValueError("lce_values must be a 1-D array of finite LCE values.")
    return np.sort(v), np.arange(1, v.shape[0] + 1) / max(v.shape[0], 1)


@dataclass(frozen=True)
class BinCdf:
    """The LCE distribution of one confidence bin against that bin's calibration error."""

    bin: int
    values: np.ndarray  # sorted LCE values of the bin
    fraction: np.ndarray  # cumulative fraction, k/m
    calibration_error: float  # |conf(B) − acc(B)| (NaN for an empty bin)
    mean_lce: float
    share_above: float  # fraction of the bin's points with LCE above the bin's error


def bin_lce_cdf(
    conf: ArrayLike, correct: ArrayLike, lce_values: ArrayLike, bin_index: int,
    n_bins: int = 15,
) -> BinCdf:
    """CDF of the LCE inside one confidence bin with the bin's ``|conf(B) − acc(B)|``.

    The right panels of Luo et al. Fig. 2: a CDF lying right of the bin's calibration error
    (``share_above`` near 1) shows local miscalibration that the bin average hides.

    Parameters
    ----------
    conf : array_like
        Confidences.
    correct : array_like
        Whether each prediction was right.
    lce_values : array_like
        The LCE of every row (absolute).
    bin_index : int
        The confidence bin.
    n_bins : int, default 15
        Confidence bins.
    """
    c, o = check_vectors(conf, correct)
    v = _check_lce_values(lce_values, c.shape[0])
    n_bins = check_count("n_bins", n_bins, 1)
    if isinstance(bin_index, bool) or not isinstance(bin_index, int | np.integer) or not (
        0 <= bin_index < n_bins
    ):
        raise ValueError(f"bin_index must be a bin number from 0 to {n_bins - 1}, not "
                         f"{bin_index!r}.")
    inside = uniform_bins(c, n_bins) == bin_index
    values, fraction = lce_cdf(v[inside])
    if not inside.any():
        return BinCdf(int(bin_index), values, fraction, np.nan, np.nan, np.nan)
    error = float(abs(c[inside].mean() - o[inside].mean()))
    return BinCdf(int(bin_index), values, fraction, error, float(values.mean()),
                  float(np.mean(values > error)))

