"""Group methods: one calibrator per group level, and multicalibration.

* :class:`GroupWise` wraps any method (``GroupWise(TemperatureScaling())``): a copy is fitted
  on the rows of every group level with at least ``min_rows`` calibration rows, and a copy
  fitted on all rows serves the other levels (too small, or unseen at fit time). Several
  group attributes are crossed into their intersections (``"Female | Black"``). Luo et al.
  (2022, Table 1) compare group temperature scaling and group histogram binning with LoRe.
* :class:`Multicalibration` — Hébert-Johnson, Kim, Reingold & Rothblum (2018): patches the
  (group × prediction bin) cell with the largest mean residual until every cell with enough
  rows is within α. The I-trustworthy paper's Table 1 audits this method.
"""

from __future__ import annotations

import numpy as np

from core.data.groups import iter_groups
from core.metrics.binning import bin_indices
from core.recalibration.base import BinaryRecalibrator, RecalibratorBase, join_groups
from core.recalibration.binning import HistogramBinning
from core.recalibration.scaling import TemperatureScaling

#: Default fewest calibration rows a group level needs for a calibrator of its own.
MIN_GROUP_ROWS = 50


class GroupWise(RecalibratorBase):
    """One copy of ``base`` per group level with at least ``min_rows`` calibration rows;
    the copy fitted on all rows predicts for the other levels (the global fallback).

    ``q(p, g) = f_g(p)`` with ``f_g`` fitted on the rows of level ``g`` (Luo et al. 2022,
    §5.3, "group-wise" baselines). Group attributes are crossed into one level per row.
    """

    needs = ("groups",)

    def __init__(self, base: RecalibratorBase, min_rows: int = MIN_GROUP_ROWS) -> None:
        self.base = base
        self.min_rows = min_rows

    @property
    def title(self) -> str:  # type: ignore[override]
        return f"Group-wise {self.base.title.lower()}"

    @property
    def multiclass_only(self) -> bool:  # type: ignore[override]
        return self.base.multiclass_only

    def _fit(self, P, y, X, g) -> None:
        labels = join_groups(g)
        self.fallback_ = self.base.clone().fit(P, y)
        self.models_ = {level: self.base.clone().fit(P[mask], y[mask])
                        for level, mask in iter_groups(labels, self.min_rows)}

    def _predict(self, P, X, g) -> np.ndarray:
        labels = join_groups(g)
        out = self.fallback_.predict(P)
        for level, model in self.models_.items():
            mask = labels == level
            if mask.any():
                out[mask] = model.predict(P[mask])
        return out


def group_temperature(min_rows: int = MIN_GROUP_ROWS) -> GroupWise:
    """Temperature scaling per group level (``GroupWise(TemperatureScaling())``)."""
    return GroupWise(TemperatureScaling(), min_rows)


def group_histogram(min_rows: int = MIN_GROUP_ROWS, n_bins: int = 15,
                    strategy: str = "uniform") -> GroupWise:
    """Histogram binning per group level (``GroupWise(HistogramBinning(...))``)."""
    return GroupWise(HistogramBinning(n_bins, strategy), min_rows)


class Multicalibration(BinaryRecalibrator):
    """Multicalibration by iterative patching (Hébert-Johnson et al. 2018, Algorithm 1 with
    the empirical cells of the calibration split).

    The collection of sets ``C`` is all rows, every level of every group attribute and, with
    several attributes, every intersection of levels. A *cell* is a set ``S ∈ C`` crossed
    with one of ``n_bins`` equal-width bins of the *current* prediction ``q``. Repeat: among
    cells with at least ``min_count`` rows take the one with the largest
    ``|r̄| = |mean_{i∈cell}(t_i − q_i)|``; stop if ``|r̄| ≤ alpha``, else set
    ``q_i ← clip(q_i + r̄, 0, 1)`` on that cell and record the patch ``(S, bin, r̄)``. Each
    patch lowers ``Σ(t − q)²`` by at least ``min_count·alpha²`` (the clip only helps), so the
    loop ends; ``max_iter`` caps it and ``converged_`` says whether it ended by the rule.
    New rows replay the recorded patches in order, each on the rows of its set whose current
    prediction is in its bin. Binary; multiclass one-vs-rest with renormalisation.
    """

    title = "Multicalibration"
    needs = ("groups",)

    def __init__(self, alpha: float = 0.05, n_bins: int = 10, min_count: int = 50,
                 max_iter: int = 2000) -> None:
        self.alpha = alpha
        self.n_bins = n_bins
        self.min_count = min_count
        self.max_iter = max_iter

    def _sets(self, g: np.ndarray) -> list[np.ndarray]:
        """Membership of every set of the collection, in the order of ``sets_``."""
        if g.shape[1] != self.n_attributes_:
            raise ValueError(f"Multicalibration was fitted on {self.n_attributes_} group "
                             f"attributes; these rows have {g.shape[1]}.")
        joined = join_groups(g)
        return [np.ones(g.shape[0], dtype=bool) if column is None else
                (joined if column == "all" else g[:, column]) == level
                for column, level in self.sets_]

    def _fit_binary(self, p, t, X, g) -> None:
        self.edges_ = np.linspace(0.0, 1.0, self.n_bins + 1)
        sets: list[tuple[object, object]] = [(None, None)]
        for column in range(g.shape[1]):
            sets += [(column, level) for level in np.unique(g[:, column])]
        if g.shape[1] > 1:
            sets += [("all", level) for level in np.unique(join_groups(g))]
        self.sets_ = sets
        self.n_attributes_ = g.shape[1]
        members = self._sets(g)
        pair_rows = np.concatenate([np.flatnonzero(m) for m in members])
        pair_set = np.concatenate([np.full(int(m.sum()), s) for s, m in enumerate(members)])
        k = self.n_bins
        q = p.copy()
        patches = []
        converged = False
        for _ in range(int(self.max_iter)):
            bins = bin_indices(q, self.edges_)
            cell = pair_set * k + bins[pair_rows]
            counts = np.bincount(cell, minlength=len(sets) * k)
            sums = np.bincount(cell, weights=(t - q)[pair_rows], minlength=len(sets) * k)
            means = np.divide(sums, counts, out=np.zeros_like(sums),
                              where=counts >= self.min_count)
            best = int(np.argmax(np.abs(means)))
            if abs(means[best]) <= self.alpha:
                converged = True
                break
            rows = members[best // k] & (bins == best % k)
            q[rows] = np.clip(q[rows] + means[best], 0.0, 1.0)
            patches.append((best // k, best % k, float(means[best])))
        self.patches_ = patches
        self.converged_ = converged

    def _predict_binary(self, p, X, g) -> np.ndarray:
        members = self._sets(g)
        q = p.copy()
        for s, b, delta in self.patches_:
            rows = members[s] & (bin_indices(q, self.edges_) == b)
            q[rows] = np.clip(q[rows] + delta, 0.0, 1.0)
        return q
