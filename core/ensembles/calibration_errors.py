"""Calibration-error estimators of a combined prediction, with their gradients.

The credal-set test (Jürgens et al., ``papers/credal-set-calibration-test.txt``, §2.2) measures
the calibration of a combined prediction ``f = Σ_m λ_m f^(m)`` with three consistent,
differentiable estimators. All take an ``(n, K)`` matrix ``F`` of predictions on the simplex
(a binary problem as ``(1 − p, p)``) and integer labels; two also return ``∂ĝ/∂F`` so that the
weight network (:mod:`core.ensembles.weights`) can be trained on them.

``ce2``  The squared L2 calibration error with the leave-one-out Dirichlet kernel-density
         ratio of Popordanoska et al. (2022), paper eq. 6 with p = 2::

             CE₂ = 1/n Σ_j ‖r̂_j − f_j‖²,
             r̂_j = Σ_{i≠j} k(f_j; f_i) e_{y_i} / Σ_{i≠j} k(f_j; f_i),
             k(z; f_i) = Dir(z; f_i/h + 1) = Π_k z_k^{f_ik/h} / B(f_i/h + 1),

         ``r̂_j`` the kernel estimate of E[Y | f(X) = f_j]. For K = 2 the Dirichlet kernel is the
         Beta kernel of the binary estimator and ‖·‖² counts both coordinates, i.e. twice the
         squared error of P(y = 1), as in the reference code.
``cekl`` The Kullback–Leibler (negative-entropy Bregman) calibration error of Popordanoska et
         al. (2024), paper eq. 8, with the same ratio::

             CE_KL = 1/n Σ_j ⟨r̂_j, log(r̂_j / f_j)⟩.

``skce`` The unbiased squared kernel calibration error (Widmann et al.; paper eq. 9 squared)
         with a Gaussian kernel on the prediction vectors, through
         :func:`core.metrics.skce_estimate.skce` and
         the tile engine. Centred at 0 under calibration, so it can be negative.

Bandwidths: the paper's text states none; ``DEFAULT_BANDWIDTH`` h = 0.1 is the value of the
authors' reference configuration for CE₂, used for CE_KL too; the SKCE uses the median
heuristic on the prediction vectors. Every estimator takes an explicit bandwidth instead.

The kernel-density ratio is computed in row tiles (``TILE`` rows against all n), so memory is
O(TILE · n), never an n × n matrix; the weights of a row are a softmax of log-kernels, which
keeps the Dirichlet densities (up to e^(1/h)) from overflowing.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy.special import digamma, gammaln, xlogy

from core.kernels.resampling import cumulative_probabilities, inverse_cdf
from core.kernels.tiles import kernel_matmul, median_heuristic, quadratic_forms
from core.metrics.skce_estimate import skce as skce_value

#: Bandwidth h of the Dirichlet kernel (the reference configuration's value for CE₂).
DEFAULT_BANDWIDTH = 0.1
#: Predictions are clipped into [EPS, 1] before logarithms (as the reference code does).
EPS = 1e-10
#: Rows per tile of the leave-one-out kernel ratio.
TILE = 1024


# --------------------------------------------------------------------------- the KDE ratio


def _log_beta(F: np.ndarray, h: float) -> np.ndarray:
    """``log B(f_i/h + 1) = Σ_k lnΓ(f_ik/h + 1) − lnΓ(Σ_k f_ik/h + K)`` per row."""
    A = F / h + 1.0
    return gammaln(A).sum(axis=1) - gammaln(A.sum(axis=1))


def _loo_weights(logF: np.ndarray, F: np.ndarray, log_b: np.ndarray, h: float,
                 lo: int, hi: int) -> np.ndarray:
    """Rows lo..hi of the leave-one-out kernel weights ``W_ji ∝ k(f_j; f_i)``, i ≠ j."""
    L = logF[lo:hi] @ F.T / h - log_b[None, :]
    L[np.arange(hi - lo), np.arange(lo, hi)] = -np.inf
    L -= L.max(axis=1, keepdims=True)
    np.exp(L, out=L)
    L /= L.sum(axis=1, keepdims=True)
    return L


def kde_ratio(F: np.ndarray, y: np.ndarray, bandwidth: float = DEFAULT_BANDWIDTH
              ) -> np.ndarray:
    """Leave-one-out Dirichlet kernel estimate ``r̂_j`` of E[e_Y | f(X) = f_j], ``(n, K)``.

    Parameters
    ----------
    F : ndarray of shape (n, K)
        Predictions on the simplex.
    y : ndarray of shape (n,)
        Integer labels 0..K−1.
    bandwidth : float
        h of the Dirichlet kernel ``Dir(z; f_i/h + 1)``.

    Returns
    -------
    ndarray of shape (n, K)
        ``r̂_j = Σ_{i≠j} k(f_j; f_i) e_{y_i} / Σ_{i≠j} k(f_j; f_i)``.
    """
    F = np.clip(F, EPS, 1.0)
    logF, log_b = np.log(F), _log_beta(F, bandwidth)
    Y = _one_hot(y, F.shape[1])
    out = np.empty_like(F)
    for lo in range(0, F.shape[0], TILE):
        hi = min(lo + TILE, F.shape[0])
        out[lo:hi] = _loo_weights(logF, F, log_b, bandwidth, lo, hi) @ Y
    return out


def _one_hot(y: np.ndarray, K: int) -> np.ndarray:
    return (np.asarray(y)[:, None] == np.arange(K)[None, :]).astype(np.float64)


def _ratio_error(F: np.ndarray, y: np.ndarray, h: float, divergence: str,
                 gradient: bool) -> tuple[float, np.ndarray | None]:
    """CE₂ or CE_KL and (optionally) its gradient with respect to F, tile by tile.

    With ``log k_ji = Σ_k log f_jk f_ik/h − log B(f_i/h + 1)`` and W the row-softmax of the
    log-kernels (i ≠ j), ``r̂_j = Σ_i W_ji e_{y_i}`` and, for g_j = ∂ĝ/∂r̂_j,
    ``∂ĝ/∂log k_ji = D_ji = W_ji ⟨g_j, e_{y_i} − r̂_j⟩``. Then

        ∂ĝ/∂f_jk += (D F)_jk / (h f_jk) + ∂ĝ/∂f_jk|direct,
        ∂ĝ/∂f_ik += (Dᵀ log F)_ik / h − (Σ_j D_ji) (ψ(α_ik) − ψ(Σ_k α_ik)) / h,

    with α_i = f_i/h + 1 and ψ the digamma function.
    """
    F = np.clip(F, EPS, 1.0)
    n, K = F.shape
    logF, log_b = np.log(F), _log_beta(F, h)
    Y = _one_hot(y, K)
    A = F / h + 1.0
    dlog_b = (digamma(A) - digamma(A.sum(axis=1))[:, None]) / h
    total = 0.0
    grad = np.zeros_like(F) if gradient else None
    for lo in range(0, n, TILE):
        hi = min(lo + TILE, n)
        W = _loo_weights(logF, F, log_b, h, lo, hi)
        R = W @ Y
        Fj = F[lo:hi]
        if divergence == "l2":
            diff = R - Fj
            total += float((diff * diff).sum())
            g_r, g_f = 2.0 * diff / n, -2.0 * diff / n
        else:
            logR = np.log(np.maximum(R, 1e-300))
            total += float(xlogy(R, R).sum() - (R * logF[lo:hi]).sum())
            g_r, g_f = (logR - logF[lo:hi] + 1.0) / n, -R / (Fj * n)
        if grad is None:
            continue
        D = W * (g_r @ Y.T - (g_r * R).sum(axis=1, keepdims=True))
        grad[lo:hi] += (D @ F) / (h * Fj) + g_f
        grad += (D.T @ logF[lo:hi]) / h - D.sum(axis=0)[:, None] * dlog_b
    return total / n, grad


def ce2(F: np.ndarray, y: np.ndarray, bandwidth: float = DEFAULT_BANDWIDTH) -> float:
    """Squared L2 calibration error with the leave-one-out Dirichlet KDE ratio.

    ``CE₂ = 1/n Σ_j ‖r̂_j − f_j‖²`` (paper eq. 6 with p = 2; Popordanoska et al. 2022), r̂ from
    :func:`kde_ratio`. Consistent and asymptotically unbiased; slightly above 0 on calibrated
    data at finite n (paper App. A, Fig. 5).

    Parameters
    ----------
    F : ndarray of shape (n, K)
        Combined predictions on the simplex.
    y : ndarray of shape (n,)
        Integer labels 0..K−1.
    bandwidth : float
        h of the Dirichlet kernel.

    Returns
    -------
    float
    """
    return _ratio_error(F, y, bandwidth, "l2", gradient=False)[0]


def cekl(F: np.ndarray, y: np.ndarray, bandwidth: float = DEFAULT_BANDWIDTH) -> float:
    """Kullback–Leibler calibration error with the leave-one-out Dirichlet KDE ratio.

    ``CE_KL = 1/n Σ_j ⟨r̂_j, log(r̂_j / f_j)⟩`` (paper eq. 8; Popordanoska et al. 2024: the
    Bregman divergence of the negative entropy, i.e. the calibration term of the log loss).
    Predictions are clipped below at ``EPS`` before the logarithm.

    Parameters
    ----------
    F : ndarray of shape (n, K)
        Combined predictions on the simplex.
    y : ndarray of shape (n,)
        Integer labels 0..K−1.
    bandwidth : float
        h of the Dirichlet kernel.

    Returns
    -------
    float
    """
    return _ratio_error(F, y, bandwidth, "kl", gradient=False)[0]


def skce(F: np.ndarray, y: np.ndarray, bandwidth: float | None = None) -> float:
    """Unbiased SKCE of the prediction vectors (paper eq. 9 squared; Widmann et al. 2019).

    ``SKCE = 1/(n(n−1)) Σ_{i≠j} exp(−‖f_i − f_j‖²/(2σ²)) ⟨e_{y_i} − f_i, e_{y_j} − f_j⟩``,
    evaluated by :func:`core.metrics.skce_estimate.skce` through the tile engine.

    Parameters
    ----------
    F : ndarray of shape (n, K)
        Combined predictions on the simplex.
    y : ndarray of shape (n,)
        Integer labels 0..K−1.
    bandwidth : float or None
        σ; None = the median heuristic on the rows of F.

    Returns
    -------
    float
    """
    return skce_value(F, y, bandwidth=bandwidth)


def _skce_with_gradient(F: np.ndarray, y: np.ndarray, sigma: float,
                        gradient: bool) -> tuple[float, np.ndarray | None]:
    """Unbiased SKCE and ``∂SKCE/∂F``.

    With R = onehot(y) − F and S = Σ_{i≠j} k_ij ⟨r_i, r_j⟩,
    ``∂S/∂f_i = −2 Σ_{j≠i} k_ij r_j − (2/σ²) Σ_{j≠i} k_ij ⟨r_i, r_j⟩ (f_i − f_j)``; the sums
    are kernel-weighted sums of the columns of R and of ``r_c ∘ f_d`` (tile engine).
    """
    n, K = F.shape
    R = _one_hot(y, K) - F
    products = (R[:, :, None] * F[:, None, :]).reshape(n, K * K)
    V = kernel_matmul(F, F, np.hstack([R, products]), sigma, exclude_self=True)
    KR, KRF = V[:, :K], V[:, K:].reshape(n, K, K)
    value = float((R * KR).sum() / (n * (n - 1)))
    if not gradient:
        return value, None
    inner = (R * KR).sum(axis=1)  # Σ_j k_ij ⟨r_i, r_j⟩
    weighted = np.einsum("ic,icd->id", R, KRF)  # Σ_j k_ij ⟨r_i, r_j⟩ f_j
    grad = -2.0 * KR - 2.0 / sigma**2 * (inner[:, None] * F - weighted)
    return value, grad / (n * (n - 1))


# --------------------------------------------------------------------------- many resamples


def resample_counts(F: np.ndarray, n_resamples: int, rng: np.random.Generator,
                    rows_fixed: bool = False) -> np.ndarray:
    """``(n, B, K)`` label counts of B resamples with consistency-redrawn labels.

    Resample b draws n rows with replacement (or keeps every row once, ``rows_fixed``);
    each drawn copy of row a gets a label ``ỹ ~ Cat(f_a)`` of its own; ``N[a, b, c]`` counts
    the copies of row a with label c.
    """
    n, K = F.shape
    if rows_fixed:
        rows = np.broadcast_to(np.arange(n), (n_resamples, n))
    else:
        rows = rng.integers(0, n, size=(n_resamples, n))
    u = rng.random((n_resamples, n))
    labels = inverse_cdf(cumulative_probabilities(F)[rows], u)
    flat = (rows * n_resamples + np.arange(n_resamples)[:, None]) * K + labels
    return np.bincount(flat.ravel(), minlength=n * n_resamples * K).reshape(n, n_resamples, K)


def _kernel_tiles(F: np.ndarray, h: float):
    """Row tiles ``(lo, hi, K̃, d)`` of the Dirichlet kernel ``k(f_a; f_i)``: K̃ the
    off-diagonal entries (diagonal 0), each row scaled by its largest off-diagonal entry, and
    d the diagonal ``k(f_a; f_a)`` on the same scale (capped at e^700 — a row's own copies
    then dominate, which is the limit). Ratios are unchanged by the row scaling, and keeping
    the diagonal apart avoids cancellation in ``Σ_i − k_aa``."""
    logF, log_b = np.log(F), _log_beta(F, h)
    for lo in range(0, F.shape[0], TILE):
        hi = min(lo + TILE, F.shape[0])
        L = logF[lo:hi] @ F.T / h - log_b[None, :]
        own = np.arange(hi - lo), np.arange(lo, hi)
        diagonal = L[own].copy()
        L[own] = -np.inf
        top = L.max(axis=1, keepdims=True)
        L -= top
        yield lo, hi, np.exp(L, out=L), np.exp(np.minimum(diagonal - top[:, 0], 700.0))


def _ratio_statistics(F: np.ndarray, counts: np.ndarray, h: float, divergence: str
                      ) -> np.ndarray:
    """CE₂ or CE_KL of every resample described by ``counts`` (:func:`resample_counts`).

    A copy of row a with label c sees every other drawn copy: with the off-diagonal kernel
    sums ``O_ab = Σ_{i≠a} k(f_a; f_i) N_ib`` (label-count vectors), ``o_ab`` their totals and
    ``d_a = k(f_a; f_a)``, its leave-one-out ratio is
    ``r̂_abc = (O_ab + d_a (N_ab − e_c)) / (o_ab + d_a (Σ_c N_abc − 1))``, and
    ``ĝ_b = 1/n Σ_a Σ_c N_abc d(r̂_abc, f_a)``. The kernel sums of all B resamples come from
    one product per row tile: no per-resample kernel pass. A resample in which a row drawn
    once has no drawn neighbour within the float range of the row scaling (an isolated
    point under a narrow kernel) is recomputed directly on its rows.
    """
    F = np.clip(F, EPS, 1.0)
    n, B, K = counts.shape
    N = counts.astype(np.float64)
    total = np.zeros(B)
    degenerate = np.zeros(B, dtype=bool)
    for lo, hi, Kt, d in _kernel_tiles(F, h):
        Nt = N[lo:hi]
        copies = Nt.sum(axis=2)
        d = d[:, None]
        near = (Kt @ N.reshape(n, B * K)).reshape(hi - lo, B, K)
        others = near.sum(axis=2)
        rest = others + d * (copies - 1.0)
        degenerate |= ((copies > 0) & (rest < 1e-250)).any(axis=0)
        rest = np.maximum(rest, 1e-250)
        f = np.broadcast_to(F[lo:hi][:, None, :], near.shape)
        for c in range(K):
            drawn = Nt[:, :, c] > 0
            R = near + d[:, :, None] * Nt
            R[:, :, c] = near[:, :, c] + d * (Nt[:, :, c] - 1.0)
            R = np.divide(R, rest[:, :, None], out=f.copy(), where=drawn[:, :, None])
            if divergence == "l2":
                value = ((R - f) ** 2).sum(axis=2)
            else:
                value = xlogy(R, R).sum(axis=2) - (R * np.log(f)).sum(axis=2)
            total += (Nt[:, :, c] * value).sum(axis=0)
    total /= n
    key = "ce2" if divergence == "l2" else "cekl"
    for b in np.flatnonzero(degenerate):
        rows, labels = np.nonzero(counts[:, b, :])
        times = counts[rows, b, labels]
        total[b] = ESTIMATOR_FUNCTIONS[key](F[np.repeat(rows, times)],
                                            np.repeat(labels, times), h)
    return total


def _skce_statistics(F: np.ndarray, counts: np.ndarray, sigma: float) -> np.ndarray:
    """Unbiased SKCE of every resample: with ``E_ab = N_ab − (Σ_c N_abc) f_a`` the summed
    residuals of row a's copies, ``Σ_{j≠j'} k r_j·r_j' = Σ_{a,a'} k_aa' ⟨E_ab, E_a'b⟩ −
    Σ_a Σ_c N_abc ‖e_c − f_a‖²`` (copies of a row have k = 1 between them); all B columns in
    one tile-engine pass (:func:`core.kernels.tiles.quadratic_forms`)."""
    n, B, K = counts.shape
    N = counts.astype(np.float64)
    E = N - N.sum(axis=2, keepdims=True) * F[:, None, :]
    forms = quadratic_forms(F, E.reshape(n, B * K), sigma, exclude_diagonal=False)
    squared = ((1.0 - F) ** 2 + (F * F).sum(axis=1, keepdims=True) - F * F)  # ‖e_c − f_a‖²
    diagonal = np.einsum("abc,ac->b", N, squared)
    return (forms.reshape(B, K).sum(axis=1) - diagonal) / (n * (n - 1))


def resampled_values(key: str, F: np.ndarray, counts: np.ndarray, bandwidth: float
                     ) -> np.ndarray:
    """ĝ of each resample described by ``counts`` ``(n, B, K)`` (:func:`resample_counts`),
    the predictions F fixed; equal to ĝ on the drawn rows and labels, all B in one pass."""
    if key == "skce":
        return _skce_statistics(F, counts, bandwidth)
    return _ratio_statistics(F, counts, bandwidth, "l2" if key == "ce2" else "kl")


# --------------------------------------------------------------------------- the registry


@dataclass(frozen=True)
class CalibrationErrorSpec:
    """One calibration-error estimator of the credal-set test.

    Attributes
    ----------
    key : str
        Registry key (kebab-case).
    label : str
        Name for tables and figures.
    scoring_rule : str
        The proper score the weight network is trained with: ``"brier"`` or ``"log"``
        (paper §3.5: log loss with CE_KL, the Brier score otherwise).
    default_bandwidth : float or None
        None means the median heuristic (SKCE).
    description : str
        One sentence for the app.
    """

    key: str
    label: str
    scoring_rule: str
    default_bandwidth: float | None
    description: str

    def bandwidth_for(self, F: np.ndarray, bandwidth: float | None) -> float:
        """The bandwidth to use on predictions F: the given one, else the default, else the
        median heuristic of the rows of F."""
        if bandwidth is not None:
            return float(bandwidth)
        if self.default_bandwidth is not None:
            return self.default_bandwidth
        return median_heuristic(F)

    def value(self, F: np.ndarray, y: np.ndarray, bandwidth: float) -> float:
        """The estimate ĝ(F, y) at a fixed bandwidth."""
        return ESTIMATOR_FUNCTIONS[self.key](F, y, bandwidth)

    def value_and_gradient(self, F: np.ndarray, y: np.ndarray, bandwidth: float,
                           gradient: bool = True) -> tuple[float, np.ndarray | None]:
        """ĝ(F, y) and ∂ĝ/∂F (None without ``gradient``)."""
        if self.key == "skce":
            return _skce_with_gradient(F, y, bandwidth, gradient)
        return _ratio_error(F, y, bandwidth, "l2" if self.key == "ce2" else "kl", gradient)


ESTIMATORS: dict[str, CalibrationErrorSpec] = {
    "ce2": CalibrationErrorSpec(
        "ce2", "CE₂", "brier", DEFAULT_BANDWIDTH,
        "Squared L2 distance between the prediction and the kernel estimate of the outcome "
        "frequency at that prediction (Dirichlet kernel, leave-one-out); ≥ 0, slightly "
        "above 0 even when calibrated."),
    "cekl": CalibrationErrorSpec(
        "cekl", "CE_KL", "log", DEFAULT_BANDWIDTH,
        "Kullback–Leibler divergence from the kernel estimate of the outcome frequency to "
        "the prediction: the calibration part of the log loss; ≥ 0."),
    "skce": CalibrationErrorSpec(
        "skce", "SKCE", "brier", None,
        "Unbiased squared kernel calibration error (Gaussian kernel on the prediction "
        "vectors, median-heuristic bandwidth); centred at 0 when calibrated."),
}

#: ``name -> function(F, y, bandwidth)`` for callers that want the plain estimate.
ESTIMATOR_FUNCTIONS: dict[str, Callable[..., float]] = {"ce2": ce2, "cekl": cekl, "skce": skce}
