"""Squared kernel calibration error (SKCE) estimators: unbiased, biased and block.

Widmann, Lindsten & Zachariah (NeurIPS 2019; 2021), as in CalibrationErrors.jl
(``papers/kernel-calibration-error-skce.txt``). With a kernel ``k((p, y), (p', y')) =
k_P(p, p') δ(y, y')`` — a Gaussian on the prediction vectors times the white kernel on labels —
the summand ``h_k`` of the SKCE reduces to

    h_ij = k_P(p_i, p_j) ⟨r_i, r_j⟩,        r_i = e_{y_i} − p_i   (R = onehot(y) − P),

and the estimators over a block of samples are

    unbiased  |B|⁻¹ Σ_{i<j} h_ij  = Σ_{i≠j} h_ij / (n(n − 1)),
    biased    n⁻² Σ_{i,j} h_ij   (diagonal included: h_ii = ‖r_i‖²),
    block     the mean of the (un)biased estimates over ⌊n/b⌋ consecutive blocks of size b
              (the last incomplete block is dropped).

All double sums run through the tile engine (:mod:`core.kernels`): ``Σ_c r_cᵀ K r_c`` over
the m residual columns, never the n×n matrix.

Binary problems use the equivalent one-dimensional form: with p = P(y = 1), the vectors give
``‖p_i − p_j‖² = 2(p_i − p_j)²`` and ``⟨r_i, r_j⟩ = 2(y_i − p_i)(y_j − p_j)``, so the points
``√2·p`` and residuals ``√2·(y − p)`` reproduce the vector form exactly at half the cost.
"""

from __future__ import annotations

import numpy as np

from core._validation import (
    check_choice,
    check_positive,
    check_probs_labels,
    probability_matrix,
)
from core.intervals import bootstrap_interval
from core.kernels import median_heuristic, quadratic_forms

ESTIMATORS = ("unbiased", "biased", "block")
#: Blocks at most this large are evaluated densely and vectorised over blocks.
DENSE_BLOCK = 64


def prediction_residuals(probs: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Kernel points and residuals ``(Z, R)`` with ``⟨r_i, r_j⟩`` and ``‖z_i − z_j‖`` as in
    the canonical (full-vector) SKCE; binary problems in the exact one-dimensional form.
    ``probs`` and ``y`` are validated (:func:`core._validation.check_probs_labels`)."""
    P = probability_matrix(probs)
    n, m = P.shape
    if m == 2:
        root2 = np.sqrt(2.0)
        return root2 * P[:, 1:2], root2 * ((y == 1) - P[:, 1:2].ravel())[:, None]
    R = -P.copy()
    R[np.arange(n), y] += 1.0
    return P, R


def skce_inputs(
    probs: np.ndarray, y: np.ndarray, bandwidth: float | None
) -> tuple[np.ndarray, np.ndarray, float]:
    """``(Z, R, σ)``: kernel points, residuals (:func:`prediction_residuals`) and the bandwidth
    (the median heuristic on the prediction vectors when ``bandwidth`` is None); the one
    entry check of every SKCE function."""
    Z, R = prediction_residuals(*check_probs_labels(probs, y))
    sigma = median_heuristic(Z) if bandwidth is None else check_positive("bandwidth", bandwidth)
    return Z, R, sigma


def skce(
    probs: np.ndarray,
    y: np.ndarray,
    bandwidth: float | None = None,
    estimator: str = "unbiased",
    block_size: int | None = None,
) -> float:
    """SKCE with a Gaussian kernel ``exp(-‖p − p'‖² / (2σ²))`` on prediction vectors.

    Parameters
    ----------
    probs
        ``(n,)`` P(y=1) or ``(n, m)`` class probabilities.
    y
        integer labels 0..m−1.
    bandwidth
        σ; ``None`` = median heuristic on the prediction vectors.
    estimator
        ``"unbiased"`` (quadratic U-statistic), ``"biased"`` (V-statistic, ≥ 0) or
        ``"block"`` (mean of unbiased estimates over blocks of ``block_size``, default 2:
        the linear-time estimator).
    block_size
        block size b for ``"block"``; b = n equals the unbiased estimator.
    """
    check_choice(estimator, ESTIMATORS, "SKCE estimator", f"use one of {ESTIMATORS}")
    Z, R, sigma = skce_inputs(probs, y, bandwidth)
    n = Z.shape[0]
    if estimator == "block":
        return float(block_estimates(Z, R, sigma, block_size or 2).mean())
    if n < 2:
        raise ValueError("The SKCE needs at least two samples.")
    total = quadratic_forms(Z, R, sigma, exclude_diagonal=estimator == "unbiased").sum()
    return float(total / (n * (n - 1)) if estimator == "unbiased" else total / n**2)


def block_estimates(
    Z: np.ndarray, R: np.ndarray, bandwidth: float, block_size: int, unbiased: bool = True
) -> np.ndarray:
    """SKCE estimate of each complete block of ``block_size`` consecutive samples.

    The block estimator is their mean; the asymptotic block test (Widmann et al. 2019) uses
    their spread. Small blocks are evaluated densely for all blocks at once.
    """
    n = Z.shape[0]
    b = int(block_size)
    if b < 2 or b > n:
        raise ValueError(f"block_size must be between 2 and n = {n}, not {block_size}.")
    n_blocks = n // b
    Zb = (Z[: n_blocks * b] / bandwidth).reshape(n_blocks, b, -1)
    Rb = R[: n_blocks * b].reshape(n_blocks, b, -1)
    if b <= DENSE_BLOCK:
        sq = np.sum((Zb[:, :, None, :] - Zb[:, None, :, :]) ** 2, axis=-1)
        H = np.exp(-0.5 * sq) * np.einsum("kic,kjc->kij", Rb, Rb)
        totals = H.sum(axis=(1, 2))
        if unbiased:
            totals -= np.einsum("kii->k", H)
    else:
        totals = np.array([
            quadratic_forms(Zb[k], Rb[k], 1.0, exclude_diagonal=unbiased).sum()
            for k in range(n_blocks)
        ])
    return totals / (b * (b - 1)) if unbiased else totals / b**2


def skce_bootstrap(
    probs: np.ndarray,
    y: np.ndarray,
    bandwidth: float | None = None,
    n_resamples: int = 200,
    level: float = 0.95,
    seed: int = 0,
    max_columns: int = 4096,
    method: str = "basic",
) -> tuple[float, float]:
    """Bootstrap interval of the unbiased SKCE, all resamples in one kernel pass.

    A bootstrap resample is described by multinomial counts w (Σ w_i = n). The unbiased
    estimate on the resampled rows is

        Σ_{a≠b} h(s_a, s_b) / (n(n − 1)) = (Σ_ij w_i w_j h_ij − Σ_i w_i h_ii) / (n(n − 1)),

    with h_ii = ‖r_i‖², so every resample is one column ``w ∘ r_c`` of the tile engine's
    quadratic forms (per class column c of R) — no per-resample kernel pass. The basic
    interval is centred with the biased (plug-in) SKCE as the bootstrap world's true value
    (:func:`core.intervals.bootstrap_interval`).
    """
    Z, R, sigma = skce_inputs(probs, y, bandwidth)
    n, m = R.shape
    rng = np.random.default_rng(seed)
    squared_norms = (R * R).sum(axis=1)
    estimates = []
    full = None  # Σ_ij h_ij of the observed rows: weights w = 1, first column of the pass
    per_chunk = max(1, max_columns // m)
    for start in range(0, n_resamples, per_chunk):
        size = min(per_chunk, n_resamples - start)
        W = rng.multinomial(n, np.full(n, 1.0 / n), size=size).T.astype(np.float64)  # (n, B)
        if full is None:
            W = np.column_stack([np.ones(n), W])
        E = (W[:, :, None] * R[:, None, :]).reshape(n, W.shape[1] * m)
        forms = quadratic_forms(Z, E, sigma, exclude_diagonal=False).reshape(-1, m).sum(1)
        if full is None:
            full = forms[0]
        forms -= W.T @ squared_norms
        estimates.append(forms / (n * (n - 1)))
    draws = np.concatenate(estimates)
    unbiased = draws[0]
    biased = full / n**2  # the SKCE of the empirical distribution: the bootstrap world's truth
    return bootstrap_interval(draws[1:], unbiased, level, method, plugin=biased)
