"""The calibration-estimation risk of Gruber & Bach (eq. 20), as a tiled U-statistic.

A squared calibration error is the mean of ``h*(p, p) = ‖p − P(Y | f(X) = p)‖²``; every
estimator of it is the mean of some *calibration estimation function* ``h(p, p')`` on the
diagonal (eq. 22). Gruber & Bach score such an ``h`` by how well it predicts the pair targets

    T_ij = ⟨p_i − e_{y_i}, p_j − e_{y_j}⟩                            (eq. 17, one pair)

    R̂(h) = 1/(n(n−1)) Σ_{i≠j} (T_ij − h(p_i, p_j))²                  (eq. 20)

an unbiased U-statistic of the risk whose unique minimiser is ``h*`` (Theorem 1). The sum
runs over square tiles of at most ``tile_size`` rows, so nothing larger than one tile of
pairs is ever held: memory O(tile² + n·k) for n rows and k-dimensional residuals.

Notions (``notion``):

* ``"canonical"``: ``p`` is the whole probability vector, ``T_ij`` as above; ``h`` receives
  ``(rows, m)`` probability matrices (a binary ``(n,)`` input becomes rows ``(1 − p, p)``).
* ``"top-label"``: ``p`` is the confidence ``c = max_k p_k`` and the target is correctness
  ``o = 1[argmax_k p_k = y]`` (argmax ties to the lowest index, as ``core.metrics``), so
  ``T_ij = (c_i − o_i)(c_j − o_j)``; ``h`` receives ``(rows,)`` confidence vectors.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from core.data.validation import (
    check_choice,
    check_count,
    check_probs_labels,
    one_hot,
    probability_matrix,
)

NOTIONS = ("top-label", "canonical")
#: Rows per side of one tile of pairs (a tile holds at most DEFAULT_TILE² floats, 8 MiB).
DEFAULT_TILE = 1024

#: A calibration estimation function: ``h(P, Q)`` → ``(len(P), len(Q))`` array.
EstimationFunction = Callable[[np.ndarray, np.ndarray], np.ndarray]


def check_notion(notion: object) -> str:
    """``notion`` if it is ``"top-label"`` or ``"canonical"``, else a ValueError."""
    return str(check_choice(
        notion, NOTIONS, "calibration notion",
        hint="choose 'top-label' (confidence against correctness) or 'canonical' (the whole "
             "probability vector against the one-hot label)",
    ))


def notion_inputs(p: np.ndarray, labels: np.ndarray, notion: str
                  ) -> tuple[np.ndarray, np.ndarray]:
    """The points ``h`` sees and the residual vectors ``d_i`` with ``T_ij = ⟨d_i, d_j⟩``.

    Unchecked (inputs validated by the caller). Top-label: ``(c,)`` and ``(n, 1)`` residuals
    ``c − o``; canonical: the ``(n, m)`` probability matrix and ``P − onehot(y)``.

    Parameters
    ----------
    p : numpy.ndarray
        ``(n, m)`` probabilities.
    labels : numpy.ndarray
        ``(n,)`` labels.
    notion : {"top-label", "canonical"}
        Calibration notion.

    Returns
    -------
    points, residuals : numpy.ndarray
    """
    P = probability_matrix(p)
    if notion == "canonical":
        return P, P - one_hot(labels, P.shape[1])
    pred = np.argmax(P, axis=1)
    conf = P[np.arange(P.shape[0]), pred]
    correct = (pred == labels).astype(np.float64)
    return conf, (conf - correct)[:, None]


@dataclass(frozen=True, eq=False)
class Bilinear:
    """A calibration estimation function of the form ``h(p, p') = φ(p)ᵀ W φ(p')``.

    Every estimator of this package has that form: binning, the kernel density ratio and
    two-step kernel ridge regression with ``W = I`` and ``φ(p) = p − ĝ(p)`` an estimate of the
    residual ``p − P(Y | p)``; Kronecker kernel ridge regression with ``φ`` the kernel's
    eigen-features and ``W`` a dense matrix (eq. 29). Knowing the form lets :func:`risk`
    compute the features of each row once and the pair sum from r × r Gram matrices
    (:func:`feature_risk`, O(n·r²) time, O(n·r) memory) instead of calling ``h`` per tile.

    Attributes
    ----------
    feature_map : callable
        ``points → (rows, r)`` features ``φ``.
    weight : ndarray or None
        ``(r, r)`` matrix W; ``None`` means the identity.
    """

    feature_map: Callable[[np.ndarray], np.ndarray]
    weight: np.ndarray | None = None

    def features(self, points: np.ndarray) -> np.ndarray:
        """``φ(points)`` as a float64 ``(rows, r)`` array."""
        F = np.asarray(self.feature_map(points), dtype=np.float64)
        return F[:, None] if F.ndim == 1 else F

    def weighted(self, F: np.ndarray) -> np.ndarray:
        """``φ W`` for features ``F`` (``F`` itself when W is the identity)."""
        return F if self.weight is None else F @ self.weight

    def __call__(self, P: np.ndarray, Q: np.ndarray) -> np.ndarray:
        """The ``(len(P), len(Q))`` block ``φ(P) W φ(Q)ᵀ``."""
        return self.weighted(self.features(P)) @ self.features(Q).T

    def diagonal(self, points: np.ndarray) -> np.ndarray:
        """``h(p_i, p_i)`` for every row: the terms the calibration estimate averages (eq. 22)."""
        F = self.features(points)
        return np.einsum("ir,ir->i", self.weighted(F), F)


def _tiles(n: int, tile: int) -> list[tuple[int, int]]:
    return [(start, min(start + tile, n)) for start in range(0, n, tile)]


def _squared_errors(T: np.ndarray, H: np.ndarray, diagonal: bool) -> float:
    """``Σ (T − H)²`` over one tile, without its diagonal when the tile straddles it."""
    np.subtract(T, H, out=T)
    if diagonal:
        np.fill_diagonal(T, 0.0)
    return float(np.einsum("ij,ij->", T, T))


def _check_block(H: object, rows: int, cols: int) -> np.ndarray:
    block = np.asarray(H, dtype=np.float64)
    if block.shape != (rows, cols):
        raise ValueError(
            f"h must return an array of shape (len(P), len(Q)) = ({rows}, {cols}) for inputs "
            f"of {rows} and {cols} rows; it returned shape {block.shape}."
        )
    if not np.isfinite(block).all():
        raise ValueError("h returned missing or infinite values; a calibration estimation "
                         "function must be finite on every pair of predictions.")
    return block


def pair_risk(h: EstimationFunction, points: np.ndarray, D: np.ndarray,
              tile_size: int = DEFAULT_TILE) -> float:
    """Eq. 20 on validated inputs: ``1/(n(n−1)) Σ_{i≠j} (⟨d_i, d_j⟩ − h(p_i, p_j))²``.

    Walks the n × n pairs in tiles of ``tile_size`` rows per side, calling ``h`` once per
    tile: memory O(tile_size² + n·k). A :class:`Bilinear` ``h`` needs no pairs at all: its
    risk is the same sum from r × r Gram matrices (:func:`feature_risk`), O(n·r) memory.

    Parameters
    ----------
    h : callable
        The calibration estimation function.
    points : ndarray
        ``(n,)`` confidences or ``(n, m)`` probability rows, as ``h`` expects them.
    D : ndarray
        ``(n, k)`` residual vectors ``d_i``.
    tile_size : int
        Rows per side of one tile.

    Returns
    -------
    float
        The empirical risk R̂(h).
    """
    if isinstance(h, Bilinear):
        return feature_risk(h.features(points), h.weight, D)
    n = D.shape[0]
    spans = _tiles(n, tile_size)
    total = 0.0
    for lo, hi in spans:
        for clo, chi in spans:
            T = D[lo:hi] @ D[clo:chi].T
            H = _check_block(h(points[lo:hi], points[clo:chi]), hi - lo, chi - clo)
            total += _squared_errors(T, H, lo == clo)
    return total / (n * (n - 1))


def feature_risk(F: np.ndarray, W: np.ndarray | None, D: np.ndarray) -> float:
    """Eq. 20 for ``h(p_i, p_j) = F_i W F_jᵀ`` from precomputed features, without pairs.

    Expanding the square over all pairs and removing the diagonal::

        Σ_{i≠j} (T_ij − H_ij)² = ‖DᵀD‖²_F − 2 Σ_ab W_ab (ZZᵀ)_ab + tr(W S Wᵀ S)
                                 − Σ_i (‖d_i‖² − H_ii)²,     Z = FᵀD,  S = FᵀF

    with ``T = DDᵀ`` and ``H = F W Fᵀ``: O(n·(k + r)² + r³) time and O(n·(k + r)) memory,
    exactly the U-statistic that :func:`pair_risk` sums tile by tile (tests check both
    against a literal double loop).

    Parameters
    ----------
    F : ndarray
        ``(n, r)`` features ``φ(p_i)``.
    W : ndarray or None
        ``(r, r)`` weight (``None``: the identity).
    D : ndarray
        ``(n, k)`` residual vectors.

    Returns
    -------
    float
        R̂(h) (rounding can make an exact zero come out a hair negative; it is clipped at 0).
    """
    n = D.shape[0]
    DtD = D.T @ D
    S = F.T @ F
    Z = F.T @ D
    ZZ = Z @ Z.T
    if W is None:
        FW, cross, h_squares = F, float(np.trace(ZZ)), float(np.einsum("ab,ab->", S, S))
    else:
        FW = F @ W
        cross = float(np.einsum("ab,ab->", W, ZZ))
        h_squares = float(np.einsum("ab,ba->", W @ S, W.T @ S))
    diagonal = np.einsum("ik,ik->i", D, D) - np.einsum("ir,ir->i", FW, F)
    total = float(np.einsum("ab,ab->", DtD, DtD)) - 2.0 * cross + h_squares
    total -= float(diagonal @ diagonal)
    return max(total, 0.0) / (n * (n - 1))


def risk(h: EstimationFunction, probs: ArrayLike, y: ArrayLike, notion: str = "top-label",
         tile_size: int = DEFAULT_TILE) -> float:
    """Empirical calibration-estimation risk of ``h`` (Gruber & Bach, eq. 20).

    ::

        R̂(h) = 1/(n(n−1)) Σ_{i≠j} (T_ij − h(p_i, p_j))²,
        T_ij = ⟨p_i − e_{y_i}, p_j − e_{y_j}⟩

    (top-label: ``T_ij = (c_i − o_i)(c_j − o_j)`` on confidences and correctness). Unbiased
    for the risk of eq. 17; lower is better, and the true ``h*`` of eq. 12 minimises it. It
    includes the irreducible label noise, so only differences between estimators on the
    *same* rows mean anything. Never compare risks on the test part used for the final
    estimate (§3.2.2, Remark).

    The pairs are summed tile by tile (``tile_size`` rows per side): no n × n array is held.
    For a :class:`Bilinear` ``h`` the same sum comes from Gram matrices of its features.

    Parameters
    ----------
    h : callable
        ``h(P, Q) → (len(P), len(Q))`` array. For ``notion="top-label"`` P and Q are 1-D
        arrays of confidences; for ``"canonical"`` they are ``(rows, m)`` probability
        matrices. A :class:`Bilinear` ``h`` is evaluated through its features.
    probs : array_like
        ``(n,)`` P(y = 1) or ``(n, m)`` rows on the simplex.
    y : array_like
        ``(n,)`` integer labels ``0..m-1``.
    notion : {"top-label", "canonical"}
        Which calibration error ``h`` estimates.
    tile_size : int
        Rows per side of one tile of pairs (memory ``tile_size² × 8`` bytes per tile).

    Returns
    -------
    float
        R̂(h) ≥ 0.
    """
    p, labels = check_probs_labels(probs, y)
    notion = check_notion(notion)
    tile_size = check_count("tile_size", tile_size, 1)
    if labels.shape[0] < 2:
        raise ValueError("The risk averages over pairs of rows; probs needs at least 2 rows.")
    if not callable(h):
        raise ValueError(f"h must be a function h(P, Q) returning a (len(P), len(Q)) array, "
                         f"not {type(h).__name__}.")
    points, D = notion_inputs(p, labels, notion)
    return pair_risk(h, points, D, tile_size)
