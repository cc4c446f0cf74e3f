"""Binned and global calibration metrics, reliability tables and their uncertainty.

Conventions (DESIGN.md): ``probs`` is ``(n,)`` = P(y = 1) for a binary problem or ``(n, m)``
rows on the probability simplex; ``y`` holds integer labels ``0..m-1``. An ``(n, 2)`` matrix
is a binary problem too.

Calibration notions
-------------------
A binned metric compares a scalar *confidence* ``c_i`` with a binary *outcome* ``o_i``; the
notion says which pair is meant (``notion`` argument everywhere):

* ``"positive"`` (binary only): ``c_i = P(y_i = 1)``, ``o_i = 1[y_i = 1]``.
* ``"top-label"``: ``c_i = max_k p_ik``, ``o_i = 1[argmax_k p_ik = y_i]`` (Guo et al. 2017);
  ties in the argmax go to the lowest class index, as ``numpy.argmax`` does.
* ``"classwise"``: one-vs-rest per class, ``c_i = p_ik``, ``o_i = 1[y_i = k]`` (Kull et al.
  2019; "marginal" calibration in Kumar et al. 2019); a metric is computed per class and
  then averaged over the classes without weights (MCE: the maximum over classes).
* ``"canonical"`` (the whole probability vector) has no binned estimator; it is measured by
  the kernel SKCE (``core.metrics.skce_estimate``), and every binned function here rejects it.

The default is ``"positive"`` for binary problems and ``"top-label"`` otherwise
(:func:`default_notion`).

Binning
-------
Bins are right-closed ``(lower, upper]`` with the first bin closed ``[0, upper]`` — exactly
scikit-learn's ``calibration_curve`` (a ``searchsorted`` of the confidences on the inner
edges): a confidence of exactly 1.0 lies in the last bin and 0.0 in the first.
``strategy="uniform"`` uses the edges ``linspace(0, 1, n_bins + 1)``; ``"quantile"`` makes
equal-mass bins on the sorted order of the confidences with the tie rule below, sets the outer
edges to 0 and 1 and never leaves a bin empty (the table may have fewer rows). With ``b`` a
bin holding ``n_b`` of the ``n`` rows, ``p̄_b`` its mean confidence and ``ȳ_b`` its mean
outcome, the gap is ``ȳ_b − p̄_b``.

Ties in equal-mass bins (the rule; ``core.metrics.binning.run_sides``). A tied run of confidences is
never split. Sort the rows; a run occupying sorted positions ``a … a + s − 1`` has mid-rank
``m = a + (s − 1)/2``, and cut ``j = 1 … K−1`` sits at numpy's virtual index
``v_j = (n − 1)·j/K``. The run lies **below** cut j when ``m < v_j``, **above** when
``m > v_j``; when ``m = v_j`` exactly (a row, or a run centred, on the cut) it goes towards
the median (above for ``j < K/2``, below for ``j > K/2``) and a run centred on the median cut
``j = K/2`` removes that cut (the two middle bins merge). Cuts that coincide leave empty bins,
which merge. Reflecting the confidences (``c → 1 − c``, i.e. calling the other class positive)
maps position i to ``n − 1 − i``, ``m`` to ``n − 1 − m`` and cut j to cut ``K − j``, so every
run changes side with its cut: the bins are mirrored and every quantile-binned number (ECE,
MCE, ACE, debiased ECE, the table's counts and |gaps|) is the same for either orientation.
The reported edge between two bins is numpy's percentile of the first cut there
(``numpy.percentile``, linear interpolation, as scikit-learn uses) when it lies between the
last confidence below and the first above the cut, else their midpoint. Without ties the
bins and edges are exactly scikit-learn's ``calibration_curve(strategy="quantile")`` unless a
row sits exactly on a percentile edge at or below the median ((n − 1)·j/K a whole number,
j ≤ K/2), where scikit-learn's right-closed bins break the symmetry; with ties scikit-learn
keeps a run in the bin its value closes, whatever its mass above the edge, so its numbers
can change with the orientation and ours do not. Equal-width bins are fixed by their edges:
there a confidence lying exactly on an edge (e.g. 0.5) is in the bin below it, and its mirror
in the bin above. The smooth ECE and the cumulative Kuiper metric do not depend on which class
is positive either (tested).

Uncertainty
-----------
The reliability table (:mod:`core.metrics.reliability`) gives each bin's frequency a Wilson or
Jeffreys interval and a consistency band; the table of global metrics
(:mod:`core.metrics.global_metrics`) gives the scalar metrics bootstrap intervals over rows.

Inputs are checked once at every public function's entry (:mod:`core.data.validation`) as well as
at the ``AuditData`` boundary: probabilities finite and in [0, 1], matrix rows summing to 1
within 1e-5, labels whole numbers in ``0..m-1``. The implementation is split privately by
family — notions and per-row scores (``core.metrics.scores``), binning and the binned formulas
(``core.metrics.binning``), the vectorised bootstrap (``core.metrics.bootstrap``) and the table of
metric descriptions (``core.metrics.descriptions``); the public scalar metrics are here.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from core.data.validation import check_count, check_probs_labels
from core.metrics.binning import (
    ace_from_sums,
    binned_inputs,
    binned_metric,
    check_norm,
    debiased_from_sums,
    ece_from_sums,
    mce_from_sums,
)
from core.metrics.scores import (
    brier_rows,
    confidence_outcome_of,
    correct,
    nll_rows,
    resolve_notion,
)

# --------------------------------------------------------------------------- notions


def confidence_outcome(
    probs: ArrayLike, y: ArrayLike, notion: str | None = None, class_index: int | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """The confidence and binary outcome a calibration notion compares, row by row.

    * ``"positive"``: ``(P(y=1), 1[y=1])``, binary problems only.
    * ``"top-label"``: ``(max_k p_k, 1[argmax_k p_k = y])``, argmax ties to the lowest index.
    * ``"classwise"``: with ``class_index=k``, ``(p_k, 1[y=k])`` for that class; without it,
      the ``(n, m)`` matrices of all classes (column k is class k).

    ``notion=None`` means :func:`default_notion`. Outcomes are float arrays of 0.0 and 1.0.

    Parameters
    ----------
    probs : array_like
        ``(n,)`` P(y = 1) of a binary model, or ``(n, m)`` class probabilities.
    y : array_like
        ``(n,)`` integer labels ``0..m-1``.
    notion : {"positive", "top-label", "classwise"}, optional
        The calibration notion compared (:func:`confidence_outcome`); ``None``: binary
        problems ``"positive"``, multiclass ``"top-label"`` (:func:`default_notion`).
    class_index : int, optional
        For ``"classwise"``: the one class whose columns to return.

    Returns
    -------
    confidence, outcome : numpy.ndarray
        ``(n,)`` each, or ``(n, m)`` each for ``"classwise"`` without ``class_index``.
    """
    p, labels = check_probs_labels(probs, y)
    return confidence_outcome_of(p, labels, resolve_notion(notion, p), class_index)


# --------------------------------------------------------------------------- scalar metrics


def accuracy(probs: ArrayLike, y: ArrayLike) -> float:
    """Fraction of rows whose most probable class is the label: ``(1/n) Σ_i 1[argmax p_i = y_i]``.

    Binary ``(n,)`` input is read as the rows ``(1 − p, p)``, so ``p = 0.5`` predicts class 0
    (argmax ties go to the lowest index, as for the top-label notion).

    Parameters
    ----------
    probs : array_like
        ``(n,)`` P(y = 1) of a binary model, or ``(n, m)`` class probabilities.
    y : array_like
        ``(n,)`` integer labels ``0..m-1``.

    Returns
    -------
    float
        The share of rows predicted right, in [0, 1].
    """
    p, labels = check_probs_labels(probs, y)
    return float(np.mean(correct(p, labels)))


def brier(probs: ArrayLike, y: ArrayLike) -> float:
    """Brier score (Brier 1950), the mean squared distance of the prediction from the outcome.

    * binary, ``(n,)`` P(y=1) or ``(n, 2)``: ``(1/n) Σ_i (p_i − y_i)²``, the usual binary
      form, in [0, 1];
    * ``(n, m)`` with m ≥ 3: ``(1/n) Σ_i Σ_k (p_ik − 1[y_i = k])²``, Brier's original
      multi-category form, in [0, 2].

    Brier's multi-category form of a binary problem would be exactly twice the binary form
    (both classes contribute ``(p_i − y_i)²``); a binary problem gets the binary form whatever
    the shape of its input, so the number does not depend on how the data were stored.

    Parameters
    ----------
    probs : array_like
        ``(n,)`` P(y = 1) of a binary model, or ``(n, m)`` class probabilities.
    y : array_like
        ``(n,)`` integer labels ``0..m-1``.

    Returns
    -------
    float
        The Brier score: in [0, 1] for a binary problem, [0, 2] otherwise.
    """
    p, labels = check_probs_labels(probs, y)
    return float(np.mean(brier_rows(p, labels)))


def nll(probs: ArrayLike, y: ArrayLike, eps: float = 1e-15) -> float:
    """Negative log-likelihood (log loss): ``−(1/n) Σ_i log max(p_{i, y_i}, eps)``.

    ``p_{i, y_i}`` is the probability given to the true class (``p`` or ``1 − p`` for binary
    ``(n,)`` input). Clipping at ``eps`` keeps a confident mistake finite (``−log eps`` ≈ 34.5
    for the default) instead of infinite.

    Parameters
    ----------
    probs : array_like
        ``(n,)`` P(y = 1) of a binary model, or ``(n, m)`` class probabilities.
    y : array_like
        ``(n,)`` integer labels ``0..m-1``.
    eps : float, default 1e-15
        Smallest probability of the true class taken into the logarithm.

    Returns
    -------
    float
        The mean negative log-likelihood, ≥ 0.
    """
    eps = float(eps)
    if not 0.0 < eps < 1.0:
        raise ValueError(f"eps must be a small positive number below 1, not {eps}.")
    p, labels = check_probs_labels(probs, y)
    return float(np.mean(nll_rows(p, labels, eps)))


def ece(
    probs: ArrayLike,
    y: ArrayLike,
    n_bins: int = 15,
    strategy: str = "uniform",
    norm: str = "l1",
    notion: str | None = None,
) -> float:
    """Expected calibration error of the binned reliability diagram.

    Naeini, Cooper & Hauskrecht (2015); Guo et al. (2017), eq. 3 for ``norm="l1"``::

        ECE₁ = Σ_b (n_b/n) |ȳ_b − p̄_b|
        ECE₂ = √( Σ_b (n_b/n) (ȳ_b − p̄_b)² )      (the plug-in ℓ2 error of Kumar et al. 2019)

    over the non-empty bins. For ``notion="classwise"`` the per-class values are aggregated
    over the m classes without weights: ``ECE₁ = (1/m) Σ_k ECE₁,k`` and
    ``ECE₂ = √((1/m) Σ_k ECE₂,k²)`` — the root of the mean square, as Kumar et al. (2019)
    define the marginal ℓ2 error, so that ``ECE₂²`` is on the scale of the debiased classwise
    estimate (:func:`ece_debiased`, the mean of the per-class squared errors).
    ECE₂² is biased upwards by about ``Σ_b ȳ_b(1 − ȳ_b)/n`` — see :func:`ece_debiased`.

    Parameters
    ----------
    probs : array_like
        ``(n,)`` P(y = 1) of a binary model, or ``(n, m)`` class probabilities.
    y : array_like
        ``(n,)`` integer labels ``0..m-1``.
    n_bins : int, default 15
        Number of bins.
    strategy : {"uniform", "quantile"}
        Equal-width or equal-mass (quantile) bins.
    norm : {"l1", "l2"}
        ECE₁ or ECE₂.
    notion : {"positive", "top-label", "classwise"}, optional
        The calibration notion compared (:func:`confidence_outcome`); ``None``: binary
        problems ``"positive"``, multiclass ``"top-label"`` (:func:`default_notion`).

    Returns
    -------
    float
        The binned expected calibration error, in [0, 1].
    """
    p, labels, n_bins, notion = binned_inputs(probs, y, n_bins, strategy, notion)
    return validated_ece(p, labels, n_bins, strategy, check_norm(norm), notion)


def validated_ece(p: np.ndarray, labels: np.ndarray, n_bins: int, strategy: str, norm: str,
         notion: str) -> float:
    """:func:`ece` on validated inputs."""

    def formula(c: np.ndarray, s: np.ndarray, o: np.ndarray) -> np.ndarray:
        return ece_from_sums(c, s, o, norm)

    return binned_metric(p, labels, notion, n_bins, strategy, formula,
                         np.mean if norm == "l1" else root_mean_square)


def mce(
    probs: ArrayLike,
    y: ArrayLike,
    n_bins: int = 15,
    strategy: str = "uniform",
    notion: str | None = None,
) -> float:
    """Maximum calibration error (Naeini et al. 2015; Guo et al. 2017, eq. 5).

    ``MCE = max_b |ȳ_b − p̄_b|`` over the non-empty bins; for ``notion="classwise"`` the
    maximum over classes as well.

    Parameters
    ----------
    probs : array_like
        ``(n,)`` P(y = 1) of a binary model, or ``(n, m)`` class probabilities.
    y : array_like
        ``(n,)`` integer labels ``0..m-1``.
    n_bins : int, default 15
        Number of bins.
    strategy : {"uniform", "quantile"}
        Equal-width or equal-mass (quantile) bins.
    notion : {"positive", "top-label", "classwise"}, optional
        The calibration notion compared (:func:`confidence_outcome`); ``None``: binary
        problems ``"positive"``, multiclass ``"top-label"`` (:func:`default_notion`).

    Returns
    -------
    float
        The largest bin gap, in [0, 1].
    """
    p, labels, n_bins, notion = binned_inputs(probs, y, n_bins, strategy, notion)
    return binned_metric(p, labels, notion, n_bins, strategy, mce_from_sums, np.max)


def ace(probs: ArrayLike, y: ArrayLike, n_bins: int = 15) -> float:
    """Adaptive calibration error (Nixon et al. 2019, "Measuring Calibration in Deep Learning"),
    the *classwise* ACE (also :func:`ace_classwise`; the top-label variant that other libraries
    report under the same name is :func:`ace_top_label`).

    Classwise with equal-mass bins::

        ACE = (1/m) Σ_k (1/R_k) Σ_r |ȳ_{r,k} − p̄_{r,k}|

    where the ranges r of class k are the ``n_bins`` quantile bins of ``p_ik`` (``R_k`` of
    them are non-empty: fewer than ``n_bins`` only when the tie rule merges bins). Every bin counts
    equally, whatever its size. Binary ``(n,)`` input is read as the two classes ``(1 − p, p)``.

    Parameters
    ----------
    probs : array_like
        ``(n,)`` P(y = 1) of a binary model, or ``(n, m)`` class probabilities.
    y : array_like
        ``(n,)`` integer labels ``0..m-1``.
    n_bins : int, default 15
        Number of bins.
        Equal-mass bins per class.

    Returns
    -------
    float
        The classwise adaptive calibration error, in [0, 1].
    """
    p, labels = check_probs_labels(probs, y)
    n_bins = check_count("n_bins", n_bins, 1)
    return binned_metric(p, labels, "classwise", n_bins, "quantile", ace_from_sums, np.mean)


#: Nixon et al.'s classwise ACE under an unambiguous name (the same function as :func:`ace`).
ace_classwise = ace


def ace_top_label(probs: ArrayLike, y: ArrayLike, n_bins: int = 15) -> float:
    """Top-label adaptive calibration error: Nixon et al.'s (2019) ACE formula applied to the
    top-label confidence ``max_k p_ik`` and correctness ``1[argmax_k p_ik = y_i]``::

        ACE_top = (1/R) Σ_r |ȳ_r − p̄_r|

    over the ``R ≤ n_bins`` non-empty equal-mass (quantile) bins, every bin weighted equally.
    This is the number several libraries report as "ACE" (an adaptive-binning top-label ECE);
    :func:`ace` is Nixon et al.'s classwise version. For binary ``(n,)`` input the confidence
    is ``max(p, 1 − p)``.

    Parameters
    ----------
    probs : array_like
        ``(n,)`` P(y = 1) of a binary model, or ``(n, m)`` class probabilities.
    y : array_like
        ``(n,)`` integer labels ``0..m-1``.
    n_bins : int, default 15
        Number of bins.
        Equal-mass bins of the top-label confidence.

    Returns
    -------
    float
        The top-label adaptive calibration error, in [0, 1].
    """
    p, labels = check_probs_labels(probs, y)
    n_bins = check_count("n_bins", n_bins, 1)
    return binned_metric(p, labels, "top-label", n_bins, "quantile", ace_from_sums, np.mean)


def root_mean_square(values: np.ndarray, axis: int | None = None) -> np.ndarray:
    """``√(mean(v²))``: how the classwise ℓ2 errors of the classes are combined."""
    return np.sqrt(np.mean(np.square(values), axis=axis))


def ece_debiased(
    probs: ArrayLike,
    y: ArrayLike,
    n_bins: int = 15,
    strategy: str = "quantile",
    notion: str | None = None,
) -> float:
    """Debiased estimator of the *squared* ℓ2 calibration error (Kumar, Liang & Ma 2019, §5).

    "Verified Uncertainty Calibration" (NeurIPS 2019) takes this estimator from the
    meteorological literature (Bröcker 2012; Ferro & Fricker 2012)::

        Ê²_DB = Σ_b (n_b/n) [ (ȳ_b − p̄_b)² − ȳ_b (1 − ȳ_b) / (n_b − 1) ]

    The plug-in term ``(ȳ_b − p̄_b)²`` overestimates the squared gap by the variance of
    ``ȳ_b``, ``π_b(1 − π_b)/n_b``; ``ȳ_b(1 − ȳ_b)/(n_b − 1)`` is its unbiased estimate, so for
    a model whose outputs are constant within bins the estimator is unbiased for
    ``Σ_b P(b) (E[y|b] − p_b)²`` given the bin counts. With confidences that vary inside a bin
    it is biased by ``−Σ_b (n_b/n) v_b/(n_b − 1)`` where ``v_b`` is the within-bin variance of
    the confidences — negligible for narrow bins. The value can be negative (that is the price
    of unbiasedness); :func:`ece_debiased_l2` gives a non-negative ℓ2 value for display.

    Implementation choices, compared with the authors' reference code
    (github.com/p-lambda/verified_calibration, ``calibration/utils.py``,
    ``unbiased_square_ce``), whose per-bin term and weights ``n_b/n`` are the same as above:

    * a bin with ``n_b = 1`` has no variance estimate; like the reference code it contributes
      0 (its weight stays in ``n``);
    * ``notion="classwise"`` averages the per-class estimates as they are; the reference
      code's "marginal" mode clips each class at 0 before averaging (via ``max(·, 0)`` in
      ``unbiased_l2_ce``), which re-introduces an upward bias — this function follows the
      paper's unbiased estimator instead;
    * equal-mass bins use this module's equal-mass bins (percentile cuts with the tie rule of
      the module docstring) rather than the reference code's mid-points between order
      statistics.

    Parameters
    ----------
    probs : array_like
        ``(n,)`` P(y = 1) of a binary model, or ``(n, m)`` class probabilities.
    y : array_like
        ``(n,)`` integer labels ``0..m-1``.
    n_bins : int, default 15
        Number of bins.
    strategy : {"uniform", "quantile"}
        Equal-width or equal-mass (quantile) bins.
    notion : {"positive", "top-label", "classwise"}, optional
        The calibration notion compared (:func:`confidence_outcome`); ``None``: binary
        problems ``"positive"``, multiclass ``"top-label"`` (:func:`default_notion`).

    Returns
    -------
    float
        The debiased estimate of the squared ℓ2 calibration error; may be negative.
    """
    p, labels, n_bins, notion = binned_inputs(probs, y, n_bins, strategy, notion)
    return binned_metric(p, labels, notion, n_bins, strategy, debiased_from_sums, np.mean)


def ece_debiased_l2(
    probs: ArrayLike,
    y: ArrayLike,
    n_bins: int = 15,
    strategy: str = "quantile",
    notion: str | None = None,
) -> float:
    """``√max(0, Ê²_DB)`` from :func:`ece_debiased`, on the scale of ECE₂, for display.

    Taking the positive part and the square root makes it biased again (upwards, by Jensen's
    inequality and the clipping): it is a readable summary, no longer an unbiased estimate.

    Parameters
    ----------
    probs : array_like
        ``(n,)`` P(y = 1) of a binary model, or ``(n, m)`` class probabilities.
    y : array_like
        ``(n,)`` integer labels ``0..m-1``.
    n_bins : int, default 15
        Number of bins.
    strategy : {"uniform", "quantile"}
        Equal-width or equal-mass (quantile) bins.
    notion : {"positive", "top-label", "classwise"}, optional
        The calibration notion compared (:func:`confidence_outcome`); ``None``: binary
        problems ``"positive"``, multiclass ``"top-label"`` (:func:`default_notion`).

    Returns
    -------
    float
        ``√max(0, Ê²_DB)``, ≥ 0.
    """
    return float(np.sqrt(max(0.0, ece_debiased(probs, y, n_bins, strategy, notion))))
