"""Resampling schemes for kernel calibration tests, as columns of one residual matrix.

A kernel test statistic here is a quadratic form ``Σ_{i≠j} K_ij e_i e_j`` of a residual
vector e (``e = y − p`` for a binary or one-vs-rest problem). Each null scheme produces B
resampled residual vectors at once, as the columns of an ``(n, B)`` matrix, so that the tile
engine computes all null statistics in one pass (``diag(Eᵀ K E)``):

``consistency``  labels redrawn from the predictions, y*_i ~ Bernoulli(p_i), e*_i = y*_i − p_i
                 (consistency resampling, Bröcker & Smith 2007; the exact null "calibrated").
``permutation``  e*_i = e_{π(i)}: residuals shuffled over the rows (the I-trustworthy
                 authors' reference code).
``bootstrap``    e*_i = e_{J_i}, J_i uniform with replacement (I-trustworthy Algorithm 1).
``bootstrap-centred``  the same on e − ē, removing the (Σe)² shift that resampling with
                 replacement adds to the null.
``wild``         e*_i = ε_i e_i with Rademacher ε_i (wild bootstrap).

Multiclass consistency resampling (for the SKCE) draws whole label vectors from the rows of P.
"""

from __future__ import annotations

import numpy as np

from core.data.validation import check_choice

SCHEMES = ("consistency", "permutation", "bootstrap", "bootstrap-centred", "wild")


def bernoulli_residuals(p: np.ndarray, n_resamples: int, rng: np.random.Generator) -> np.ndarray:
    """``(n, B)`` residuals ``y* − p`` with ``y* ~ Bernoulli(p)`` drawn independently."""
    p = np.asarray(p, dtype=np.float64)
    draws = rng.random((p.shape[0], n_resamples)) < p[:, None]
    return draws - p[:, None]


def resample_residuals(
    scheme: str, e: np.ndarray, p: np.ndarray, n_resamples: int, rng: np.random.Generator
) -> np.ndarray:
    """``(n, B)`` resampled residual vectors under the named null scheme (see module doc)."""
    n = e.shape[0]
    if scheme == "consistency":
        return bernoulli_residuals(p, n_resamples, rng)
    if scheme == "permutation":
        order = np.argsort(rng.random((n, n_resamples)), axis=0)
        return e[order]
    if scheme == "bootstrap":
        return e[rng.integers(0, n, size=(n, n_resamples))]
    if scheme == "bootstrap-centred":
        return (e - e.mean())[rng.integers(0, n, size=(n, n_resamples))]
    if scheme == "wild":
        signs = rng.integers(0, 2, size=(n, n_resamples), dtype=np.int8) * 2 - 1
        return signs * e[:, None]
    check_choice(scheme, SCHEMES, "resampling scheme", f"use one of {SCHEMES}")
    raise AssertionError("unreachable")  # check_choice raised for anything else


#: Largest number of (draw, class) comparisons :func:`categorical_labels` holds at once.
_COMPARE_ELEMENTS = 4_000_000


def cumulative_probabilities(P: np.ndarray) -> np.ndarray:
    """Row-wise CDFs of ``(…, K)`` probabilities, the last column exactly 1."""
    cumulative = np.cumsum(P, axis=-1)
    cumulative[..., -1] = 1.0
    return cumulative


def inverse_cdf(cumulative: np.ndarray, u: np.ndarray) -> np.ndarray:
    """The category of each uniform ``u`` under the CDF ``cumulative[..., :]`` broadcast to
    it: ``#{k : F_k ≤ u}`` (``searchsorted(F, u, side="right")``), at most K − 1."""
    K = cumulative.shape[-1]
    return np.minimum((u[..., None] >= cumulative).sum(axis=-1), K - 1)


def categorical_labels(P: np.ndarray, n_resamples: int, rng: np.random.Generator) -> np.ndarray:
    """``(n, B)`` labels drawn from each row's categorical distribution (inverse CDF),
    vectorised over blocks of rows."""
    cumulative = cumulative_probabilities(P)
    u = rng.random((P.shape[0], n_resamples))
    labels = np.empty(u.shape, dtype=np.int64)
    block = max(1, _COMPARE_ELEMENTS // max(1, n_resamples * P.shape[1]))
    for start in range(0, P.shape[0], block):
        rows = slice(start, start + block)
        labels[rows] = inverse_cdf(cumulative[rows, None, :], u[rows])
    return labels


def row_sample(n: int, limit: int, seed: int) -> np.ndarray:
    """Sorted indices of at most ``limit`` of ``n`` rows: all of them when ``n ≤ limit``, else
    a uniform draw without replacement from ``numpy.random.default_rng(seed)``. A test or fit
    on a uniform random subset stays valid; the embeddings' fit rows, LCB's bandwidth
    cross-validation, the comparison's KLCE column and the Ensembles page use it."""
    if n <= limit:
        return np.arange(n)
    return np.sort(np.random.default_rng(seed).choice(n, size=limit, replace=False))
