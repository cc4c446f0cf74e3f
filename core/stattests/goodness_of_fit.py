"""The Hosmer–Lemeshow goodness-of-fit test over groups of equal size sorted by confidence.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core.data.distributions import chi2_sf
from core.data.validation import check_count, check_probs
from core.metrics.orders import sort_order
from core.stattests.result import TestResult

# --------------------------------------------------------------------------- binned test


def hosmer_lemeshow(
    confidence: np.ndarray, outcome: np.ndarray, n_groups: int = 10,
    fitted_on_this_data: bool = False,
) -> TestResult:
    """Hosmer–Lemeshow goodness-of-fit test over groups of equal size sorted by confidence.

    ``HL = Σ_g (O_g − E_g)² / (E_g (1 − E_g / n_g))`` with O_g, E_g the observed and expected
    number of events in group g. Under H0, HL ~ χ² with G − 2 degrees of freedom when the model
    was fitted on these rows (Hosmer & Lemeshow 1980) and G when it is evaluated on new data,
    as in an audit on a held-out split (the default). Groups with zero variance are skipped.

    Parameters
    ----------
    confidence : array_like
        ``(n,)`` predicted probabilities of the event.
    outcome : array_like
        ``(n,)`` 1 where the event happened, else 0.
    n_groups : int, default 10
        Groups G of equal size.
    fitted_on_this_data : bool, default False
        True when the model was fitted on these rows (G − 2 degrees of freedom).

    Returns
    -------
    TestResult
        HL, its χ² p-value, no resamples.
    """
    confidence = check_probs(confidence)
    if confidence.ndim != 1:
        raise ValueError("confidence must be a 1-D array: one probability per row.")
    outcome = np.asarray(outcome, dtype=np.float64)
    if outcome.shape != confidence.shape or not np.isin(outcome, (0.0, 1.0)).all():
        raise ValueError("outcome must hold one 0 or 1 per row of confidence.")
    n_groups = check_count("n_groups", n_groups, 1)
    order = sort_order(confidence, "stable")
    groups = np.array_split(order, min(n_groups, confidence.size))
    observed = np.array([outcome[g].sum() for g in groups])
    expected = np.array([confidence[g].sum() for g in groups])
    sizes = np.array([g.size for g in groups], dtype=np.float64)
    return hosmer_lemeshow_from_sums(observed, expected, sizes, fitted_on_this_data)


def group_boundaries(n: int, n_groups: int = 10) -> np.ndarray:
    """Sorted positions where the equal-size groups of :func:`hosmer_lemeshow` start (after
    the first): ``numpy.array_split``'s, the first ``n mod G`` groups one row larger."""
    groups = min(n_groups, n)
    sizes = np.full(groups, n // groups)
    sizes[: n % groups] += 1
    return np.cumsum(sizes)[:-1]


def hosmer_lemeshow_from_sums(observed: np.ndarray, expected: np.ndarray, sizes: np.ndarray,
                              fitted_on_this_data: bool = False) -> TestResult:
    """:func:`hosmer_lemeshow` from each group's observed events, expected events and size
    (the streamed audit sums them partition by partition)."""
    observed, expected = np.asarray(observed, float), np.asarray(expected, float)
    sizes = np.asarray(sizes, dtype=np.float64)
    variance = expected * (1.0 - expected / sizes)
    used = variance > 0
    statistic = float(np.sum((observed[used] - expected[used]) ** 2 / variance[used]))
    df = int(used.sum()) - (2 if fitted_on_this_data else 0)
    p = float(chi2_sf(statistic, df)) if df > 0 else float("nan")
    return TestResult(statistic, p, np.empty(0), "hosmer-lemeshow", 0,
                      {"groups": int(used.sum()), "degrees_of_freedom": df})



# --------------------------------------------------------------------------- streamed


@dataclass(frozen=True)
class StreamedGroups:
    """The equal-size groups of :func:`hosmer_lemeshow` over ``n`` confidences streamed
    partition by partition, from the exact order statistics at the group boundaries
    (:mod:`core.metrics.order_statistics`).

    A row whose confidence no boundary splits goes to group ``#{b : v_b ≤ c}`` (``v_b`` the
    value at boundary position b). The rows of a confidence ``v`` that a boundary splits —
    ties, which the in-memory test orders by row (a stable sort) — are kept in row order
    (:meth:`part` returns their outcomes per partition, in order), and the k-th of them goes
    to the group of sorted position ``below(v) + k``. So the groups are exactly the
    in-memory ones.
    """

    boundaries: np.ndarray  # sorted positions where groups 2 … G start
    values: np.ndarray  # the confidence at each boundary
    ties: dict  # split value → (values below it, rows equal to it)

    @classmethod
    def of(cls, n: int, resolved: dict, n_groups: int = 10) -> StreamedGroups:
        """From ``resolved[position] = (value, below, equal)`` at :func:`group_boundaries`."""
        boundaries = group_boundaries(n, n_groups)
        values = np.array([resolved[int(b)][0] for b in boundaries])
        ties = {}
        for b in boundaries:
            value, below, equal = resolved[int(b)]
            if below < b < below + equal:
                ties[float(value)] = (int(below), int(equal))
        return cls(boundaries, values, ties)

    @property
    def n_groups(self) -> int:
        return int(self.boundaries.shape[0]) + 1

    def part(self, conf: np.ndarray, outcome: np.ndarray) -> tuple[np.ndarray, dict]:
        """``(sums, tied)``: ``(3, G)`` observed events, expected events and rows of the rows
        no boundary splits, and each split value's outcomes in row order."""
        tied_mask = np.isin(conf, np.array(list(self.ties))) if self.ties else \
            np.zeros(conf.shape[0], dtype=bool)
        free = ~tied_mask
        groups = np.searchsorted(self.values, conf[free], side="right")
        G = self.n_groups
        sums = np.stack([np.bincount(groups, weights=outcome[free], minlength=G),
                         np.bincount(groups, weights=conf[free], minlength=G),
                         np.bincount(groups, minlength=G).astype(np.float64)])
        tied = {value: outcome[conf == value].astype(np.int8) for value in self.ties}
        return sums, tied

    @staticmethod
    def merge(first: tuple[np.ndarray, dict], then: tuple[np.ndarray, dict]
              ) -> tuple[np.ndarray, dict]:
        """Two :meth:`part` results of consecutive rows as one (tied outcomes in order)."""
        return (first[0] + then[0],
                {value: np.concatenate([first[1][value], then[1][value]])
                 for value in first[1]})

    def finish(self, merged: tuple[np.ndarray, dict],
               fitted_on_this_data: bool = False) -> TestResult:
        """The test from the rows' :meth:`part` results, merged in row order
        (:meth:`merge`)."""
        sums = merged[0].copy()
        for value, (below, _) in self.ties.items():
            outcomes = merged[1][value]
            groups = np.searchsorted(self.boundaries, below + np.arange(outcomes.size),
                                     side="right")
            G = self.n_groups
            sums[0] += np.bincount(groups, weights=outcomes, minlength=G)
            sums[1] += np.bincount(groups, minlength=G) * value
            sums[2] += np.bincount(groups, minlength=G)
        return hosmer_lemeshow_from_sums(sums[0], sums[1], sums[2], fitted_on_this_data)
