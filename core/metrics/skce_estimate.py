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

from dataclasses import dataclass

import numpy as np

from core.data.distributions import norm_ppf
from core.data.validation import (
    check_choice,
    check_positive,
    check_probs_labels,
    probability_matrix,
)
from core.kernels.computation import plan
from core.kernels.engine import in_threads, machine_workers
from core.kernels.resampling import row_poisson_weights
from core.kernels.rff import CHUNK_ROWS, DEFAULT_FEATURES, FourierMap
from core.kernels.tiles import median_heuristic, quadratic_forms
from core.metrics.intervals import bootstrap_interval

ESTIMATORS = ("unbiased", "biased", "block")
#: The fewest random features of a value with an interval (the plan lowers D no further):
#: its approximation error, O(1/√D) per kernel entry, is part of the number shown.
VALUE_FEATURES = 256
#: Blocks at most this large are evaluated densely and vectorised over blocks.
DENSE_BLOCK = 64


def prediction_residuals(probs: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Kernel points and residuals ``(Z, R)`` with ``⟨r_i, r_j⟩`` and ``‖z_i − z_j‖`` as in
    the canonical (full-vector) SKCE; binary problems in the exact one-dimensional form.
    ``probs`` and ``y`` are validated (:func:`core.data.validation.check_probs_labels`)."""
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
    (:func:`core.metrics.intervals.bootstrap_interval`).
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


# --------------------------------------------------------------------------- at scale


@dataclass(frozen=True)
class SkceSummary:
    """The unbiased SKCE with its bootstrap interval and the computation that produced them.

    ``computation`` is ``"exact"``, ``"rff(D)"`` or ``"block(b)"``
    (:mod:`core.kernels.computation`);
    ``reason`` says why it was chosen; ``exact_seconds`` is the estimated time of the exact
    value and interval on this machine (what a "run exact" button would cost).
    """

    value: float
    ci_low: float
    ci_high: float
    bandwidth: float
    computation: str
    reason: str
    exact_seconds: float


def skce_summary(
    probs: np.ndarray,
    y: np.ndarray,
    bandwidth: float | None = None,
    n_resamples: int = 200,
    level: float = 0.95,
    seed: int = 0,
    method: str = "basic",
    computation: str = "auto",
    n_features: int = DEFAULT_FEATURES,
) -> SkceSummary:
    """The unbiased SKCE and its bootstrap interval under the ``computation`` rule of
    :func:`core.stattests.skce.skce_test` (:func:`core.kernels.computation.plan`, one decision
    for value and interval, sized by the ``(B + 1)·m`` residual columns of the exact bootstrap).

    * ``"exact"``: :func:`skce` and :func:`skce_bootstrap` (O(n²·B) tiles);
    * ``"rff(D)"``: :func:`skce_fourier` — the same estimators with the kernel
      ``k̃(z, z') = φ(z)ᵀφ(z')`` of D random Fourier features, O(n·D·B), no n×B array, the
      interval a Poisson bootstrap (D and B sized to the data by
      :func:`core.kernels.computation.plan`, D at least :data:`VALUE_FEATURES`);
    * ``"block(2)"``: the linear-time block estimator (:func:`block_estimates`) with its normal
      interval ``mean ± z·sd/√(#blocks)`` (no bootstrap).

    ``n_resamples = 0`` leaves the interval NaN.
    """
    Z, R, sigma = skce_inputs(probs, y, bandwidth)
    n, m = R.shape
    if n < 2:
        raise ValueError("The SKCE needs at least two samples.")
    chosen = plan(computation, n, n_resamples, n_features, per_resample=m,
                  min_features=VALUE_FEATURES)
    label, reason = chosen.label, chosen.reason
    n_resamples, n_features = chosen.n_resamples, chosen.n_features
    estimate = chosen.exact_seconds
    if label == "exact":
        value = skce(probs, y, sigma)
        low, high = (skce_bootstrap(probs, y, sigma, n_resamples, level, seed, method=method)
                     if n_resamples else (np.nan, np.nan))
    elif label == "block":
        block_size = 2
        label = f"block({block_size})"
        estimates = block_estimates(Z, R, sigma, block_size)
        value = float(estimates.mean())
        half = (norm_ppf(0.5 + level / 2) * estimates.std(ddof=1)
                / np.sqrt(estimates.size)) if estimates.size > 1 else np.inf
        low, high = (value - half, value + half) if n_resamples else (np.nan, np.nan)
    else:
        value, low, high = skce_fourier(Z, R, sigma, n_resamples, level, seed, method,
                                        n_features)
    return SkceSummary(float(value), float(low), float(high), float(sigma), label, reason,
                       estimate)


def skce_fourier(Z: np.ndarray, R: np.ndarray, sigma: float, n_resamples: int, level: float,
                 seed: int, method: str, n_features: int = DEFAULT_FEATURES,
                 chunk_rows: int = CHUNK_ROWS) -> tuple[float, float, float]:
    """``(value, ci_low, ci_high)``: the unbiased SKCE and its bootstrap interval (basic or
    percentile) with the random-Fourier-feature kernel (:func:`skce_fourier_draws`)."""
    draws, plugin = skce_fourier_draws(Z, R, sigma, n_resamples, seed, n_features, chunk_rows)
    if not n_resamples:
        return float(draws[0]), np.nan, np.nan
    low, high = bootstrap_interval(draws[1:], draws[0], level, method, plugin=plugin)
    return float(draws[0]), low, high


def skce_fourier_draws(Z: np.ndarray, R: np.ndarray, sigma: float, n_resamples: int,
                       seed: int, n_features: int = DEFAULT_FEATURES,
                       chunk_rows: int = CHUNK_ROWS) -> tuple[np.ndarray, float]:
    """``(draws, plug-in)``: the unbiased SKCE (``draws[0]``) and its B Poisson-bootstrap
    resamples with the random-Fourier-feature kernel ``k̃_ij = φ_iᵀφ_j`` (:mod:`core.kernels.rff`,
    φ of ``Z/σ``), and the plug-in (V-statistic) value for the basic interval, from one pass of
    :class:`SkceFourierSums` over chunks of ``chunk_rows`` rows (shared out among this
    machine's threads by a fixed stride into one group per core, the groups added in order:
    the same sums however many threads run them)."""
    fourier = FourierMap.draw(Z.shape[1], n_features, seed)
    starts = list(range(0, Z.shape[0], chunk_rows))
    groups = max(1, min(machine_workers(), len(starts)))

    def work(group: int) -> SkceFourierSums:
        sums = SkceFourierSums(fourier, R.shape[1], n_resamples, seed)
        for start in starts[group::groups]:
            rows = slice(start, min(start + chunk_rows, Z.shape[0]))
            sums.add(Z[rows] / sigma, R[rows], start)
        return sums

    parts = in_threads(work, list(range(groups)))
    total = parts[0]
    for part in parts[1:]:
        total = total + part
    return total.draws()


class SkceFourierSums:
    """Running sums of the random-feature SKCE and its Poisson bootstrap, over chunks of rows.

    With ``h̃_ij = k̃_ij ⟨r_i, r_j⟩``, ``d_i = ‖φ_i‖²`` and ``S = Φᵀ R`` (D × m)::

        value = Σ_{i≠j} h̃_ij / (n(n−1)) = (‖S‖²_F − Σ_i d_i ‖r_i‖²) / (n(n−1)).

    Resample b gives row i an independent Poisson(1) weight ``w_ib`` (the Poisson bootstrap,
    :func:`core.kernels.resampling.row_poisson_weights`, drawn at the row's global number, so
    the chunking and where a chunk runs do not matter); it is the U-statistic over the pairs
    of distinct draws a ≠ b of the ``N_b = Σ_i w_ib`` draws — including the w_i(w_i − 1) pairs
    of two draws of row i, whose summand is h̃_ii::

        Σ_{a≠b} h̃(s_a, s_b) = ‖Φᵀ(w ∘ R)‖²_F − Σ_i w_i d_i ‖r_i‖²,   over N_b(N_b − 1).

    ``d_i = ‖φ_i‖² = (2/D)·Σ_k (cos² + sin²)(ω_kᵀ z_i) = 1`` for every row (the map's cosine and
    sine of the same arguments, :meth:`~core.kernels.rff.FourierMap.features`), so it is
    taken as 1 rather than summed from φ's float32 values (as
    :class:`~core.kernels.rff.FourierSums` does). The plug-in value is ``‖S‖²_F / n²``.
    Memory O(chunk·(D + B·m) + D·B·m); φ and the chunk products in the map's precision
    (float32), the sums in float64. Sums of disjoint rows add (:meth:`__add__`).
    """

    def __init__(self, fourier: FourierMap, m: int, n_resamples: int, seed: int) -> None:
        self.fourier, self.m, self.n_resamples, self.seed = fourier, m, n_resamples, seed
        self.S = np.zeros((fourier.n_features, (n_resamples + 1) * m))
        self.diagonal = np.zeros(n_resamples + 1)  # Σ w_i d_i ‖r_i‖², observed (w = 1) first
        self.weights = np.zeros(n_resamples + 1)  # N_b = Σ w_i

    def add(self, points: np.ndarray, R: np.ndarray, start: int) -> None:
        """Add rows ``start …`` with scaled points ``Z/σ`` and residuals ``R``."""
        phi = self.fourier.features(points)  # in fourier.dtype (float32)
        d_r = np.einsum("ic,ic->i", R, R)  # d_i ‖r_i‖² with d_i = ‖φ_i‖² = 1 (class doc)
        W = np.ones((phi.shape[0], 1))
        if self.n_resamples:
            W = np.hstack([W, row_poisson_weights(start, start + phi.shape[0],
                                                  self.n_resamples, self.seed)])
        E = (W[:, :, None] * R[:, None, :]).reshape(phi.shape[0], -1)
        self.S += phi.T @ E.astype(phi.dtype)  # chunk product in φ's precision, sums in float64
        self.diagonal += d_r @ W
        self.weights += W.sum(axis=0)

    def __add__(self, other: SkceFourierSums) -> SkceFourierSums:
        total = SkceFourierSums(self.fourier, self.m, self.n_resamples, self.seed)
        total.S = self.S + other.S
        total.diagonal = self.diagonal + other.diagonal
        total.weights = self.weights + other.weights
        return total

    def draws(self) -> tuple[np.ndarray, float]:
        """``(draws, plug-in)``: the value, then the B resampled values; the plug-in value."""
        full = np.einsum("dc,dc->c", self.S, self.S).reshape(-1, self.m).sum(axis=1)
        pairs = np.maximum(self.weights * (self.weights - 1.0), 1.0)
        n = self.weights[0]
        return (full - self.diagonal) / pairs, float(full[0] / n**2)
