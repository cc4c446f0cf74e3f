"""Calibration without bins: cumulative differences between outcomes and predictions.

Arrieta-Ibarra, Gujral, Tannen, Tygert & Xu (2022), "Metrics of calibration for probabilistic
predictions", JMLR 23(351):1–54. Sort the rows by their confidence ``S_1 ≤ … ≤ S_n`` (with
outcomes ``R_j``) and accumulate

    C_k = (1/n) Σ_{j ≤ k} (R_j − S_j),   k = 0, …, n   (C_0 = 0).

The slope of C over a range of k is the average miscalibration of those rows (observed minus
predicted), so the plot of C against ``k/n`` is a reliability diagram without bins. Two
scalar metrics summarise it:

    G = max_k |C_k|                     (Kolmogorov–Smirnov)
    H = max_k C_k − min_k C_k           (Kuiper; includes C_0 = 0)

Under calibration ``C_n`` has standard deviation ``σ = √(Σ_j S_j(1 − S_j)) / n`` and, as n
grows, ``C`` run against its cumulative variance is a standard Brownian motion, so ``G/σ`` tends
to the supremum of |B| on [0, 1] and ``H/σ`` to the range of B (Feller 1951); the p-values are
their tail probabilities (:mod:`core.stattests.cumulative`). Tygert's analysis
("Calibration of P-values for calibration and for deviation of a subpopulation from the full
population", 2022) shows these p-values are conservative for finite n.

Ties: rows with equal confidences are one step of C (their order is arbitrary, so C is read
only at the ends of tied runs); the paper breaks ties at random instead. The result therefore
does not depend on the order of the rows.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike

from core.data.validation import check_choice
from core.metrics.orders import sort_order
from core.metrics.scores import one_confidence_per_row

STATISTICS = ("ks", "kuiper")


@dataclass(frozen=True)
class CumulativeDifferences:
    """The path of cumulative differences and its summaries.

    Attributes
    ----------
    fraction : ndarray
        ``k/n`` at the ends of the runs of tied confidences, starting with 0.
    cumulative : ndarray
        ``C_k`` at those k (``C_0 = 0``).
    scores : ndarray
        The confidence of each run (NaN for the leading 0).
    sigma_path : ndarray
        ``√(Σ_{j≤k} S_j(1 − S_j)) / n``, the standard deviation of ``C_k`` under calibration.
    ks, kuiper : float
        G and H (module docstring).
    sigma : float
        ``σ = sigma_path[-1]``.
    """

    fraction: np.ndarray = field(repr=False)
    cumulative: np.ndarray = field(repr=False)
    scores: np.ndarray = field(repr=False)
    sigma_path: np.ndarray = field(repr=False)
    ks: float
    kuiper: float
    sigma: float
    n: int
    notion: str

    def thinned(self, max_points: int = 5_000) -> CumulativeDifferences:
        """At most about ``max_points`` points for drawing; the extremes of C in every stretch
        are kept, so the drawn path reaches the same maximum and minimum."""
        size = self.fraction.shape[0]
        if size <= max_points:
            return self
        step = int(np.ceil(2 * size / max_points))
        keep = {0, size - 1}
        for start in range(0, size, step):
            part = self.cumulative[start:start + step]
            keep.update((start + int(np.argmin(part)), start + int(np.argmax(part))))
        rows = np.array(sorted(keep))
        return CumulativeDifferences(
            self.fraction[rows], self.cumulative[rows], self.scores[rows],
            self.sigma_path[rows], self.ks, self.kuiper, self.sigma, self.n, self.notion)


def _pair(probs: ArrayLike, y: ArrayLike, notion: str | None,
          class_index: int | None) -> tuple[np.ndarray, np.ndarray, str]:
    return one_confidence_per_row(probs, y, notion, class_index, "The cumulative differences")


def _sorted_path(conf: np.ndarray, outcome: np.ndarray
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(s, ends, C)``: the confidences sorted, the last row of each run of tied ones, and
    the cumulative differences ``C_k`` at those rows (without the leading 0)."""
    if np.all(conf[:-1] <= conf[1:]):  # already sorted
        s, o = conf, outcome
    else:  # any order within ties: C is read only at the ends of runs
        order = sort_order(conf)
        s, o = conf[order], outcome[order]
    ends = _run_ends(s)
    return s, ends, np.cumsum(o - s)[ends] / conf.shape[0]


def _run_ends(s: np.ndarray) -> np.ndarray:
    """The last row of each run of tied values of the sorted ``s``."""
    return np.flatnonzero(np.append(s[1:] != s[:-1], True))


def cumulative_extremes(conf: np.ndarray, outcome: np.ndarray) -> tuple[float, float]:
    """``(G, H)`` of one validated (confidence, outcome) pair: the KS and Kuiper statistics
    of :func:`cumulative_differences` without the path."""
    return _extremes(_sorted_path(conf, outcome)[2])


def _extremes(path: np.ndarray) -> tuple[float, float]:
    """``(G, H)`` of a path without its leading 0."""
    return (float(max(np.abs(path).max(), 0.0)),
            float(max(path.max(), 0.0) - min(path.min(), 0.0)))


class ResampledExtremes:
    """:func:`cumulative_extremes` of bootstrap resamples of one (confidence, outcome) pair
    whose rows are sorted by confidence, each resample given by its rows' counts.

    The path of a resample is ``C = (1/n) cumsum(w_i (y_i − p_i))`` read at the ends of the
    tied runs; a run the resample leaves out repeats the value before it (or the leading 0),
    which changes neither extreme, so every resample is read at the same ends, found once.
    """

    def __init__(self, conf: np.ndarray, outcome: np.ndarray) -> None:
        self._residuals = outcome - conf
        self._ends = _run_ends(conf)

    def __call__(self, counts: np.ndarray) -> tuple[float, float]:
        path = np.cumsum(self._residuals * counts)[self._ends] / self._residuals.shape[0]
        return _extremes(path)


def _differences(conf: np.ndarray, outcome: np.ndarray, notion: str) -> CumulativeDifferences:
    n = conf.shape[0]
    s, ends, path = _sorted_path(conf, outcome)
    cumulative = np.concatenate([[0.0], path])
    variance = np.concatenate([[0.0], np.cumsum(s * (1.0 - s))[ends]])
    sigma_path = np.sqrt(variance) / n
    return CumulativeDifferences(
        fraction=np.concatenate([[0.0], (ends + 1) / n]), cumulative=cumulative,
        scores=np.concatenate([[np.nan], s[ends]]), sigma_path=sigma_path,
        ks=float(np.abs(cumulative).max()),
        kuiper=float(cumulative.max() - cumulative.min()),
        sigma=float(sigma_path[-1]), n=n, notion=notion)


def cumulative_differences(probs: ArrayLike, y: ArrayLike, notion: str | None = None,
                           class_index: int | None = None) -> CumulativeDifferences:
    """The cumulative-differences path of Arrieta-Ibarra et al. (2022) (module docstring).

    Parameters
    ----------
    probs, y
        Predictions and labels (DESIGN.md conventions).
    notion, class_index
        The (confidence, outcome) pair; classwise needs ``class_index``.

    Returns
    -------
    CumulativeDifferences
    """
    return _differences(*_pair(probs, y, notion, class_index))


def cumulative_metric(probs: ArrayLike, y: ArrayLike, statistic: str = "kuiper",
                      notion: str | None = None, class_index: int | None = None) -> float:
    """Kuiper's H (default) or the Kolmogorov–Smirnov G of the cumulative differences, on the
    scale of probabilities: H is the largest miscalibration accumulated over any range of
    confidences, as a share of all rows. 0 when every prefix is calibrated.

    Parameters
    ----------
    probs : array_like
        ``(n,)`` P(y = 1) of a binary model, or ``(n, m)`` class probabilities.
    y : array_like
        ``(n,)`` integer labels ``0..m-1``.
    statistic : {"kuiper", "ks"}
        H or G.
    notion : str, optional
        The calibration notion.
    class_index : int, optional
        The class of the classwise notion.

    Returns
    -------
    float
    """
    check_choice(statistic, STATISTICS, "cumulative statistic",
                 "choose 'ks' (Kolmogorov–Smirnov) or 'kuiper'")
    path = cumulative_differences(probs, y, notion, class_index)
    return path.ks if statistic == "ks" else path.kuiper

