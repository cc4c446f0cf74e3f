"""Score decompositions: the Murphy decomposition of the Brier score and the split of the log
loss into calibration and refinement, both against the optimal (isotonic) recalibration.

For a proper score S (Brier: ``(p − y)²``; log loss: ``−y log p − (1 − y) log(1 − p)``) and
the mean score ``S̄(x) = (1/n) Σ S(x_i, y_i)`` of forecasts x, Murphy (1973, "A new vector
partition of the probability score", J. Appl. Meteor. 12:595–600) writes

    S̄(p) = REL − RES + UNC
    REL = S̄(p) − S̄(p̂)     reliability, the miscalibration (≥ 0)
    RES = S̄(ȳ) − S̄(p̂)     resolution, the discrimination (≥ 0)
    UNC = S̄(ȳ)             uncertainty of the outcomes (ȳ: their mean)

where p̂ is the recalibrated forecast. Murphy's p̂ is the observed frequency among rows with the
same forecast value; for forecasts that take many values this follows Dimitriadis, Gneiting &
Jordan (2021, "Stable reliability diagrams for probabilistic classifiers", PNAS 118(8), the
CORP decomposition): p̂ is the isotonic regression of y on p (pool-adjacent-violators, ties in p
pooled first), which is Murphy's frequency wherever the frequencies increase with p and makes
REL ≥ 0 and RES ≥ 0 hold exactly, with no bins to choose. The same p̂ minimises every proper
score among non-decreasing recalibrations, so for the log loss ``S̄(p̂)`` is the *refinement*
(the loss left after the best monotone recalibration) and ``S̄(p) − S̄(p̂)`` the *calibration*
loss (DeGroot & Fienberg 1983; Bröcker 2009).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike
from scipy.optimize import isotonic_regression
from scipy.special import xlog1py, xlogy

from core.metrics.binning import SortedGroups
from core.metrics.scores import nll_rows, one_confidence_per_row

#: Forecasts are clipped to [EPS, 1 − EPS] in the log loss, as in :func:`core.metrics.binned.nll`.
EPS = 1e-15


@dataclass(frozen=True)
class Decomposition:
    """``score = reliability − resolution + uncertainty``; ``refinement = score − reliability``
    is the score after the optimal (isotonic) recalibration."""

    score: float
    reliability: float
    resolution: float
    uncertainty: float
    refinement: float
    rule: str
    notion: str


def distinct_values(conf: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``numpy.unique(conf, return_inverse=True, return_counts=True)``: in one pass without
    a sort when ``conf`` is already sorted (:class:`ResampledDecompositions`' rows), else by
    ``numpy.unique``."""
    n = conf.shape[0]
    if n > 1 and not np.all(conf[:-1] <= conf[1:]):
        return np.unique(conf, return_inverse=True, return_counts=True)
    first = np.empty(n, dtype=bool)  # the first row of each run of equal values
    first[:1] = True
    np.not_equal(conf[1:], conf[:-1], out=first[1:])
    starts = np.flatnonzero(first)
    return conf[starts], np.cumsum(first) - 1, np.diff(np.append(starts, n))


def isotonic_recalibration(conf: np.ndarray, outcome: np.ndarray) -> np.ndarray:
    """Each row's PAV-recalibrated probability ``p̂_i``: the non-decreasing function of the
    confidence closest to the outcomes in squared error, with tied confidences sharing one
    value (their outcomes are pooled before the pool-adjacent-violators pass)."""
    values, inverse, counts = distinct_values(conf)
    means = np.bincount(inverse, outcome, values.shape[0]) / counts
    # scipy's PAV (scikit-learn's isotonic_regression calls it), clipped to [0, 1] as that does
    fitted = isotonic_regression(means, weights=counts.astype(np.float64), increasing=True).x
    return np.clip(fitted, 0.0, 1.0)[inverse]


def _brier(x: np.ndarray, outcome: np.ndarray) -> float:
    return float(np.mean((x - outcome) ** 2))


def _log_loss(x: np.ndarray, outcome: np.ndarray, clip: bool) -> float:
    """Mean ``−log`` of the probability given to what happened (:func:`nll_rows`, the NLL
    metric's rows): forecasts clipped to ``[EPS, 1 − EPS]``, or not at all (a recalibrated 0
    or 1 costs nothing where every outcome agrees with it, and PAV never gives 0 to a block
    holding a 1)."""
    return float(nll_rows(x, outcome, EPS if clip else 0.0).mean())


def _climate(base: float, rule: str) -> float:
    """The score of the constant forecast ȳ on outcomes whose mean is ȳ: ``ȳ(1 − ȳ)`` (Brier)
    or ``−[ȳ log ȳ + (1 − ȳ) log(1 − ȳ)]`` (log loss, 0·log 0 = 0)."""
    if rule == "brier":
        return base * (1.0 - base)
    return float(-(xlogy(base, base) + xlog1py(1.0 - base, -base)))


def _decompose(probs: ArrayLike, y: ArrayLike, notion: str | None, class_index: int | None,
               rule: str) -> Decomposition:
    conf, outcome, notion = one_confidence_per_row(probs, y, notion, class_index,
                                                   "A decomposition")
    return decompose_of(conf, outcome, rule, notion)


def decompose_of(conf: np.ndarray, outcome: np.ndarray, rule: str, notion: str,
                 recalibrated: np.ndarray | None = None) -> Decomposition:
    """The ``rule`` ("brier" or "log") decomposition of one validated (confidence, outcome)
    pair (no input checks); ``recalibrated`` may pass :func:`isotonic_recalibration`'s result
    when it is already known (it is the same for every proper score)."""
    if recalibrated is None:
        recalibrated = isotonic_recalibration(conf, outcome)
    if rule == "brier":
        score, refined = _brier(conf, outcome), _brier(recalibrated, outcome)
    else:
        score = _log_loss(conf, outcome, clip=True)
        refined = _log_loss(recalibrated, outcome, clip=False)
    return _decomposition(score, refined, float(outcome.mean()), rule, notion)


def _decomposition(score: float, refined: float, base: float, rule: str,
                   notion: str) -> Decomposition:
    """The decomposition of mean score ``score``, ``refined`` after the recalibration, on
    outcomes with mean ``base``."""
    climate = _climate(base, rule)
    # PAV can only improve on the forecast and on the constant ȳ (a non-decreasing function);
    # clipping at 0 removes rounding of order 1e-17.
    return Decomposition(score=score, reliability=max(score - refined, 0.0),
                         resolution=max(climate - refined, 0.0), uncertainty=climate,
                         refinement=refined, rule=rule, notion=notion)


class ResampledDecompositions:
    """The Brier and log-loss decompositions (:func:`decompose_of`) of bootstrap resamples of
    one (confidence, outcome) pair whose rows are sorted by confidence, each resample given
    by its rows' counts (summing to the rows).

    The runs of tied confidences and every row's two scores are found once. A resample pools
    its rows by distinct confidence with one weighted segmented sum
    (:class:`~core.metrics.binning.SortedGroups`), fits PAV to the values it holds, and scores
    the recalibration block by block: a PAV block of ``N_b`` rows, ``S_b`` of them positive
    (outcomes are 0 or 1), recalibrated to ``p̂_b``, adds ``S_b(1 − p̂_b)² + (N_b − S_b)p̂_b²``
    to the Brier sum and ``−S_b log p̂_b − (N_b − S_b) log(1 − p̂_b)`` to the log loss's. The
    values are :func:`decompose_of`'s on the rows repeated by their counts, to rounding.
    """

    def __init__(self, conf: np.ndarray, outcome: np.ndarray, notion: str) -> None:
        _, ids, _ = distinct_values(conf)
        self._groups = SortedGroups(ids, int(ids[-1]) + 1)
        self._outcome, self._notion = outcome, notion
        self._scores = np.stack([(conf - outcome) ** 2, nll_rows(conf, outcome, EPS)])

    def __call__(self, counts: np.ndarray) -> tuple[Decomposition, Decomposition]:
        """The Brier and the log-loss decompositions of one resample."""
        held, positive = self._groups.sums(np.stack([counts, counts * self._outcome]))
        used = np.flatnonzero(held > 0)
        held, positive = held.take(used), positive.take(used)
        pav = isotonic_regression(positive / held, weights=held, increasing=True)
        # p̂ is constant on PAV's blocks: score each block once
        starts = pav.blocks[:-1]
        fitted = np.clip(pav.x.take(starts), 0.0, 1.0)
        block_held, block_positive = pav.weights, np.add.reduceat(positive, starts)
        block_negative = block_held - block_positive
        n = block_held.sum()
        brier_refined = float(np.sum(block_positive * (1.0 - fitted) ** 2
                                     + block_negative * fitted ** 2) / n)
        log_refined = float(-np.sum(xlogy(block_positive, fitted)
                                    + xlogy(block_negative, 1.0 - fitted)) / n)
        brier_score, log_score = self._scores @ counts / n
        base = float(block_positive.sum() / n)
        return (_decomposition(float(brier_score), brier_refined, base, "brier", self._notion),
                _decomposition(float(log_score), log_refined, base, "log", self._notion))


def brier_decomposition(probs: ArrayLike, y: ArrayLike, notion: str | None = None,
                        class_index: int | None = None) -> Decomposition:
    """Murphy decomposition of the Brier score with the CORP recalibration (module docstring).

    ``BS = REL − RES + UNC`` with ``REL = BS(p) − BS(p̂)``, ``RES = ȳ(1 − ȳ) − BS(p̂)`` and
    ``UNC = ȳ(1 − ȳ)``; p̂ is the isotonic (PAV) recalibration. For forecasts with few distinct
    values whose observed frequencies increase with the forecast, REL and RES are exactly
    Murphy's ``Σ_v (n_v/n)(v − ȳ_v)²`` and ``Σ_v (n_v/n)(ȳ_v − ȳ)²``.

    Parameters
    ----------
    probs, y
        Predictions and labels (DESIGN.md conventions).
    notion, class_index
        The (confidence, outcome) pair; classwise needs ``class_index``. With the positive
        notion ``score`` is :func:`core.metrics.binned.brier`.

    Returns
    -------
    Decomposition
    """
    return _decompose(probs, y, notion, class_index, "brier")


def log_loss_decomposition(probs: ArrayLike, y: ArrayLike, notion: str | None = None,
                           class_index: int | None = None) -> Decomposition:
    """The log loss split into calibration and refinement (module docstring).

    ``LL(p) = [LL(p) − LL(p̂)] + LL(p̂)``: ``reliability`` is the calibration loss removed by
    the optimal monotone recalibration p̂ (PAV), ``refinement = LL(p̂)`` the loss that remains;
    ``refinement = UNC − RES`` with ``UNC = −ȳ log ȳ − (1 − ȳ) log(1 − ȳ)`` (the entropy of the
    outcomes, nats). Forecasts are clipped to ``[1e-15, 1 − 1e-15]`` as in
    :func:`core.metrics.binned.nll`, so ``score`` is ``nll`` for the positive notion.

    Parameters
    ----------
    probs, y
        Predictions and labels (DESIGN.md conventions).
    notion, class_index
        The (confidence, outcome) pair; classwise needs ``class_index``.

    Returns
    -------
    Decomposition
    """
    return _decompose(probs, y, notion, class_index, "log")
