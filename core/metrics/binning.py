"""Binning for the reliability diagram and the binned calibration errors (private to
:mod:`core.metrics`, which documents the conventions).

Bins are right-closed ``(lower, upper]`` with the first bin closed ``[0, upper]`` — exactly
scikit-learn's ``calibration_curve``. Every binned error is a formula of the per-bin sums
``(n_b, Σ c_i, Σ o_i)`` with the bins on the last axis (any leading axes: bootstrap
resamples), so the point estimate and every resample share one formula.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from numpy.typing import ArrayLike

from core.data.validation import check_choice, check_count, check_probs_labels
from core.metrics.orders import sort_order
from core.metrics.scores import resolve_notion, scores

STRATEGIES = ("uniform", "quantile")
NORMS = ("l1", "l2")


def check_strategy(strategy: str) -> str:
    return check_choice(strategy, STRATEGIES, "binning strategy",
                        "choose 'uniform' (equal-width bins) or 'quantile' (equal-mass bins)")


def check_norm(norm: str) -> str:
    return check_choice(norm, NORMS, "norm", "choose 'l1' or 'l2'")


def binned_inputs(probs: ArrayLike, y: ArrayLike, n_bins: int, strategy: str,
                  notion: str | None) -> tuple[np.ndarray, np.ndarray, int, str]:
    """The entry checks every binned metric shares: validated probabilities and labels, the
    bin count, the strategy and the resolved notion."""
    p, labels = check_probs_labels(probs, y)
    check_strategy(strategy)
    return p, labels, check_count("n_bins", n_bins, 1), resolve_notion(notion, p)


def percent_levels(n_bins: int) -> np.ndarray:
    """Percentile levels of the quantile edges, computed as ``calibration_curve`` does."""
    return np.linspace(0.0, 1.0, n_bins + 1) * 100


def raw_edges(conf: np.ndarray, n_bins: int, strategy: str) -> np.ndarray:
    """``n_bins + 1`` edges before the tie rule: scikit-learn's edges (``calibration_curve``)."""
    if strategy == "uniform":
        return np.linspace(0.0, 1.0, n_bins + 1)
    return np.percentile(conf, percent_levels(n_bins))


def bin_indices(conf: ArrayLike, edges: ArrayLike) -> np.ndarray:
    """Bin of each confidence: ``searchsorted(edges[1:-1], conf, side="left")``.

    Bin b is ``(edges[b], edges[b+1]]``, the first bin includes 0 and any value at or below its
    upper edge, the last bin includes 1 — scikit-learn's ``calibration_curve`` convention.

    Parameters
    ----------
    conf : array_like
        ``(n,)`` confidences.
    edges : array_like
        :func:`bin_edges`.

    Returns
    -------
    numpy.ndarray
        ``(n,)`` bin numbers.
    """
    edges = np.asarray(edges, dtype=np.float64)
    return np.searchsorted(edges[1:-1], np.asarray(conf, dtype=np.float64), side="left")


def run_sides(first: np.ndarray, size: np.ndarray, n: int, n_bins: int) -> np.ndarray:
    """Side of the equal-mass cut ``j`` (axis −1, ``j = 1 … K−1``) on which a tied run falls.

    A run of ``size`` equal confidences starting at sorted position ``first`` (0-based, rows
    counted with their multiplicity) has mid-rank ``m = first + (size − 1)/2``; cut j sits at
    numpy's virtual index ``v_j = (n − 1)·j/K``. The run is **below** the cut when ``m < v_j``
    and **above** when ``m > v_j``; when ``m = v_j`` exactly it goes to the side of the median
    (above for ``2j < K``, below for ``2j > K``) and for the middle cut ``2j = K`` the cut is
    dropped (the two middle bins merge). Returns −1 (below), +1 (above) or 0 (dropped). Compared in
    integers, ``(2·first + size − 1)·K`` against ``2(n − 1)·j``, so the rule is exact and
    mirror-symmetric: under ``c → 1 − c`` positions map to ``n − 1 − position``, ``m`` to
    ``n − 1 − m`` and cut j to cut ``K − j``, so every run changes side with its cut.
    """
    j = np.arange(1, n_bins)
    key = (2.0 * first + size - 1.0) * n_bins - 2.0 * (n - 1) * j
    return np.where(key != 0, np.sign(key), np.sign(n_bins - 2 * j)).astype(np.int64)


def cut_positions(sides: np.ndarray, run_first: np.ndarray, run_end: np.ndarray) -> np.ndarray:
    """Rows below each cut (sorted positions; axis −1 the K − 1 cuts) from :func:`run_sides`:
    a run below its cut puts the cut at its end, above at its start; a dropped (middle) cut
    takes the position of the cut before it, leaving an empty bin that merges."""
    cuts = np.where(sides < 0, run_end, run_first)
    n_bins = sides.shape[-1] + 1
    if n_bins % 2 == 0:  # only the middle cut (index K/2 − 1) can be dropped
        mid = n_bins // 2 - 1
        before = cuts[..., mid - 1] if mid > 0 else 0
        cuts[..., mid] = np.where(sides[..., mid] == 0, before, cuts[..., mid])
    # The cuts are non-decreasing for n ≥ 2 (v_j increases with j); one row (all v_j = 0)
    # would put the run below the low cuts and above the high ones: one bin.
    return np.maximum.accumulate(cuts, axis=-1)


def quantile_cuts(sorted_conf: np.ndarray, n_bins: int) -> np.ndarray:
    """Rows below each of the ``n_bins − 1`` inner equal-mass cuts of sorted confidences
    (non-decreasing; equal neighbours leave empty bins, which merge): the tie rule of
    :func:`run_sides` on the run holding sorted position ``⌊(n − 1)j/K⌋``."""
    n = sorted_conf.shape[0]
    starts = np.flatnonzero(np.concatenate([[True], sorted_conf[1:] != sorted_conf[:-1]]))
    ends = np.append(starts[1:], n)
    target = (n - 1) * np.arange(1, n_bins) // n_bins
    run = np.searchsorted(starts, target, side="right") - 1
    first, end = starts[run], ends[run]
    return cut_positions(run_sides(first, end - first, n, n_bins), first, end)


def quantile_ids(conf: np.ndarray, n_bins: int) -> np.ndarray:
    """Equal-mass bin (0 … K−1, some possibly empty) of every row by :func:`quantile_cuts`."""
    order = sort_order(conf)  # any order within ties: cuts fall between runs only
    cuts = quantile_cuts(conf[order], n_bins)
    ids = np.empty(conf.shape[0], dtype=np.int64)
    ids[order] = np.searchsorted(cuts, np.arange(conf.shape[0]), side="right")
    return ids


def bin_edges(conf: ArrayLike, n_bins: int = 15, strategy: str = "uniform") -> np.ndarray:
    """Edges of the bins of a reliability table, ``0 = e_0 < … ≤ e_K = 1``.

    ``"uniform"``: ``linspace(0, 1, n_bins + 1)`` (bins may be empty). ``"quantile"``: the
    rows are cut on their sorted order by the tie rule of :func:`run_sides` (a tied run is
    never split; it goes to the side of the cut that holds its mid-rank), empty bins merge,
    so every bin holds at least one confidence. Between the largest confidence ``u`` below a
    cut and the smallest ``w`` above it the edge is numpy's ``100·j/K`` percentile (linear
    interpolation, the first j that cuts there) when ``u ≤ e_j < w`` — always without ties,
    unless a row sits exactly on an edge below the median — else the midpoint ``(u + w)/2``
    (``u`` if that rounds to ``w``). With these edges :func:`bin_indices` puts every row in
    its bin, and without ties the bins are those of ``calibration_curve(strategy="quantile")``
    unless a row sits exactly on a percentile edge at or below the median.

    Parameters
    ----------
    conf : array_like
        ``(n,)`` confidences.
    n_bins : int, default 15
        Bins asked for.
    strategy : {"uniform", "quantile"}
        Equal-width or equal-mass.

    Returns
    -------
    numpy.ndarray
    """
    n_bins = check_count("n_bins", n_bins, 1)
    check_strategy(strategy)
    conf = np.asarray(conf, dtype=np.float64)
    if conf.ndim != 1 or conf.size == 0 or not np.isfinite(conf).all():
        raise ValueError("conf must be a non-empty 1-D array of finite confidences.")
    return edges_of(conf, n_bins, strategy)


def edges_of(conf: np.ndarray, n_bins: int, strategy: str) -> np.ndarray:
    """:func:`bin_edges` of confidences, a bin count and a strategy already checked at the
    caller's public entry (a non-empty 1-D float array of finite values)."""
    raw = raw_edges(conf, n_bins, strategy)
    if strategy == "uniform":
        return raw
    ordered = np.sort(conf)
    cuts = quantile_cuts(ordered, n_bins)
    inner = []
    for position in np.unique(cuts[(cuts > 0) & (cuts < conf.size)]):
        u, w = ordered[position - 1], ordered[position]
        edge = raw[1 + np.argmax(cuts == position)]  # the first cut j at this position
        if not u <= edge < w:
            edge = u + (w - u) / 2
            edge = edge if edge < w else u
        inner.append(edge)
    return np.concatenate([[0.0], inner, [1.0]])


class SortedGroups:
    """Rows sorted by their group (``ids`` non-decreasing, in ``0 … size − 1``), with the runs
    of each group found once: :meth:`sums` then adds any weights group by group with one
    segmented reduction (``np.add.reduceat``, pairwise within a group). A bootstrap that
    re-weights the same sorted rows many times finds the runs once."""

    def __init__(self, ids: np.ndarray, size: int) -> None:
        self.starts = np.flatnonzero(np.concatenate([[True], ids[1:] != ids[:-1]]))
        self.groups = ids[self.starts]
        self.size = size

    def sums(self, weights: np.ndarray) -> np.ndarray:
        """Per-group sums of ``weights`` (``(..., n)``, rows on the last axis) as
        ``(..., size)``; groups without rows sum to 0."""
        if self.starts.shape[0] == self.size == weights.shape[-1]:  # row k is group k alone
            return weights.astype(np.float64)
        out = np.zeros(weights.shape[:-1] + (self.size,))
        out[..., self.groups] = np.add.reduceat(weights, self.starts, axis=-1)
        return out


def grouped_sums(ids: np.ndarray, weights: Sequence[np.ndarray], size: int
                 ) -> list[np.ndarray]:
    """``np.bincount(ids, w, minlength=size)`` for every ``w`` of ``weights`` (``ids`` in
    ``0 … size − 1``). Rows sorted by their group (``ids`` non-decreasing: rows sorted by
    confidence, gridded or cut into cells) are summed group by group with one segmented reduction
    (:class:`SortedGroups`, pairwise within a group instead of row by row: the same sums to
    rounding, 2–3× faster at 10⁶ rows); other rows by ``np.bincount``."""
    if ids.shape[0] < 2 or not (ids[1:] >= ids[:-1]).all():
        return [np.bincount(ids, w, minlength=size) for w in weights]
    groups = SortedGroups(ids, size)
    return [groups.sums(w) for w in weights]


def bin_sums(
    conf: np.ndarray, outcome: np.ndarray, n_bins: int, strategy: str
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per-bin ``(n_b, Σ c_i, Σ o_i)`` over ``n_bins`` bins (empty bins have n_b = 0):
    uniform edges, or the equal-mass cuts of :func:`quantile_cuts`."""
    ids = (quantile_ids(conf, n_bins) if strategy == "quantile"
           else bin_indices(conf, raw_edges(conf, n_bins, strategy)))
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
