"""Binning for the reliability diagram and the binned calibration errors (private to
:mod:`core.metrics`, which documents the conventions).

Bins are right-closed ``(lower, upper]`` with the first bin closed ``[0, upper]`` — exactly
scikit-learn's ``calibration_curve``. Every binned error is a formula of the per-bin sums
``(n_b, Σ c_i, Σ o_i)`` with the bins on the last axis (any leading axes: bootstrap
resamples), so the point estimate and every resample share one formula.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numpy.typing import ArrayLike

from core._scores import scores
from core._validation import check_choice, check_count

STRATEGIES = ("uniform", "quantile")
NORMS = ("l1", "l2")


def check_strategy(strategy: str) -> str:
    return check_choice(strategy, STRATEGIES, "binning strategy",
                        "choose 'uniform' (equal-width bins) or 'quantile' (equal-mass bins)")


def check_norm(norm: str) -> str:
    return check_choice(norm, NORMS, "norm", "choose 'l1' or 'l2'")


def percent_levels(n_bins: int) -> np.ndarray:
    """Percentile levels of the quantile edges, computed as ``calibration_curve`` does."""
    return np.linspace(0.0, 1.0, n_bins + 1) * 100


def raw_edges(conf: np.ndarray, n_bins: int, strategy: str) -> np.ndarray:
    """``n_bins + 1`` edges before empty quantile bins are merged (scikit-learn's edges)."""
    if strategy == "uniform":
        return np.linspace(0.0, 1.0, n_bins + 1)
    return np.percentile(conf, percent_levels(n_bins))


def bin_indices(conf: ArrayLike, edges: ArrayLike) -> np.ndarray:
    """Bin of each confidence: ``searchsorted(edges[1:-1], conf, side="left")``.

    Bin b is ``(edges[b], edges[b+1]]``, the first bin includes 0 and any value at or below its
    upper edge, the last bin includes 1 — scikit-learn's ``calibration_curve`` convention.
    """
    edges = np.asarray(edges, dtype=np.float64)
    return np.searchsorted(edges[1:-1], np.asarray(conf, dtype=np.float64), side="left")


def bin_edges(conf: ArrayLike, n_bins: int = 15, strategy: str = "uniform") -> np.ndarray:
    """Edges of the bins of a reliability table, ``0 = e_0 < … ≤ e_K = 1``.

    ``"uniform"``: ``linspace(0, 1, n_bins + 1)`` (bins may be empty). ``"quantile"``: the
    ``100·j/n_bins`` percentiles of ``conf`` (linear interpolation); of the inner edges only
    those that close a non-empty bin are kept, so every bin holds at least one confidence and
    the rows fall into exactly the non-empty bins of ``calibration_curve(strategy="quantile")``.
    """
    n_bins = check_count("n_bins", n_bins, 1)
    check_strategy(strategy)
    conf = np.asarray(conf, dtype=np.float64)
    if conf.ndim != 1 or conf.size == 0 or not np.isfinite(conf).all():
        raise ValueError("conf must be a non-empty 1-D array of finite confidences.")
    raw = raw_edges(conf, n_bins, strategy)
    if strategy == "uniform":
        return raw
    counts = np.bincount(bin_indices(conf, raw), minlength=n_bins)
    occupied = np.flatnonzero(counts)
    # The upper edge of every occupied bin but the last closes it; empty bins in between
    # merge into the next occupied bin without moving any row.
    inner = raw[1:-1][occupied[:-1]]
    return np.concatenate([[0.0], inner, [1.0]])


def bin_sums(
    conf: np.ndarray, outcome: np.ndarray, n_bins: int, strategy: str
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per-bin ``(n_b, Σ c_i, Σ o_i)`` on scikit-learn's edges (empty bins have n_b = 0)."""
    ids = bin_indices(conf, raw_edges(conf, n_bins, strategy))
    counts = np.bincount(ids, minlength=n_bins).astype(np.float64)
    return (counts, np.bincount(ids, weights=conf, minlength=n_bins),
            np.bincount(ids, weights=outcome, minlength=n_bins))


# --------------------------------------------------------------------------- binned formulas
# Each takes per-bin sums with bins on the last axis (any leading axes: resamples) and
# returns one value per leading index. Empty bins (n_b = 0) never contribute.


def ece_from_sums(counts: np.ndarray, s_conf: np.ndarray, s_out: np.ndarray,
                   norm: str) -> np.ndarray:
    n = counts.sum(axis=-1)
    diff = s_out - s_conf  # n_b (ȳ_b − p̄_b)
    if norm == "l1":
        return np.abs(diff).sum(axis=-1) / n
    sq = np.divide(diff * diff, counts, out=np.zeros_like(diff), where=counts > 0)
    return np.sqrt(sq.sum(axis=-1) / n)


def abs_gaps(counts: np.ndarray, s_conf: np.ndarray, s_out: np.ndarray) -> np.ndarray:
    return np.divide(np.abs(s_out - s_conf), counts, out=np.full_like(s_conf, np.nan),
                     where=counts > 0)


def mce_from_sums(counts: np.ndarray, s_conf: np.ndarray, s_out: np.ndarray) -> np.ndarray:
    return np.nanmax(abs_gaps(counts, s_conf, s_out), axis=-1)


def ace_from_sums(counts: np.ndarray, s_conf: np.ndarray, s_out: np.ndarray) -> np.ndarray:
    return np.nanmean(abs_gaps(counts, s_conf, s_out), axis=-1)


def debiased_from_sums(counts: np.ndarray, s_conf: np.ndarray,
                        s_out: np.ndarray) -> np.ndarray:
    n = counts.sum(axis=-1)
    usable = counts >= 2
    safe = np.where(usable, counts, 2.0)
    y_bar = s_out / safe
    plug_in = ((s_out - s_conf) / safe) ** 2
    term = np.where(usable, plug_in - y_bar * (1.0 - y_bar) / (safe - 1.0), 0.0)
    return (counts * term).sum(axis=-1) / n


def plugin_squared_from_sums(counts: np.ndarray, s_conf: np.ndarray,
                              s_out: np.ndarray) -> np.ndarray:
    """The plug-in counterpart of :func:`debiased_from_sums` (same bins, no correction)."""
    n = counts.sum(axis=-1)
    usable = counts >= 2
    safe = np.where(usable, counts, 2.0)
    return (np.where(usable, (s_out - s_conf) ** 2 / safe, 0.0)).sum(axis=-1) / n


def binned_metric(
    p: np.ndarray,
    y: np.ndarray,
    notion: str,
    n_bins: int,
    strategy: str,
    formula: Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray],
    combine: Callable[[np.ndarray], float],
) -> float:
    values = [formula(*bin_sums(conf, out, n_bins, strategy))
              for conf, out in scores(p, y, notion)]
    return float(combine(np.asarray(values, dtype=np.float64)))
