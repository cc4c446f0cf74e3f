"""Paired tests of two models' *squared* calibration errors: the debiased binned ECE², the
smooth ECE² and the KLCE², each an unbiased U-statistic, their difference B − A tested with a
studentised wild bootstrap that holds its level whether or not the two models are calibrated.

**The statistics.** For model M with residuals ``e_i = o_i − c_i`` (outcome minus confidence
of the calibration notion) and a kernel ``k_M`` on its predictions, each criterion is

    U_M = (1/(n(n − 1))) Σ_{i≠j} k_M(i, j) e_i e_j,

unbiased for ``E[k_M(Z, Z') r_M(Z) r_M(Z')]`` with ``r_M = E[e | prediction]`` the calibration
residual, which is 0 for a calibrated model however sharp. Pairs of *distinct* rows are what
make it unbiased; the plug-in (``i = j`` kept) adds each row's noise ``e_i²`` and so grows with
the noise, which differs between two equally calibrated models of different sharpness.

* **ECE²** (equal-width bins, the same ``n_bins`` for both models; each row in the bin of its
  own model's confidence): ``k(i, j) = 1[b_i = b_j] (n − 1)/(n_b − 1)``, i.e.
  ``Σ_b (n_b/n) · (S_b² − Q_b)/(n_b(n_b − 1))`` with ``S_b = Σ_{i∈b} e_i``,
  ``Q_b = Σ_{i∈b} e_i²`` — the squared ℓ2 ECE with each bin's squared gap estimated without
  bias (Kumar, Liang & Ma 2019, "Verified Uncertainty Calibration", §5; Roelofs et al. 2022
  on the bias of the plug-in ECE). Bins with fewer than two rows count 0.
* **smooth ECE²**: the squared L2 norm of the smoothed residual of Błasiok & Nakkiran (2023),
  ``∫ ((1/n) Σ_i φ_σ(t − c_i) e_i)² dt`` with pairs of distinct rows, i.e.
  ``k(i, j) = φ_{σ√2}(c_i − c_j)`` (a Gaussian density of standard deviation σ√2), σ each
  model's own fixed-point bandwidth (:func:`core.metrics.smooth.smooth_ece_of`), integrated
  over the real line (no reflection at 0 and 1).
* **KLCE²** (Vashistha & Farahi, eq. 4): the product Gaussian kernel on (prediction, audit
  features) with one set of bandwidths for both models (resolved on the champion).

The kernel criteria's sums go through the tile engine (:func:`core.kernels.tiles.kernel_matmul`
and :func:`core.kernels.tiles.quadratic_forms`), on at most ``klce_rows`` rows.

**Why not the row bootstrap.** The difference ``D = U_B − U_A`` is a U-statistic of the kernel
``g(i, j) = k_B(i, j) e_Bi e_Bj − k_A(i, j) e_Ai e_Aj``. By Hoeffding's decomposition
``D − θ = (2/n) Σ_i (g₁(Z_i) − θ) + Q``: a linear part of variance ``4(n − 2)ζ₁/(n(n − 1))``,
``ζ₁ = Var g₁(Z)``, and a degenerate part Q of order 1/n. When both models are calibrated
``g₁ ≡ 0`` and only Q is left — a weighted sum of centred χ² variables, not a normal law. The
row bootstrap's resamples are not degenerate (the empirical law is never exactly calibrated),
so their linear part adds a spurious variance of the same order as Q's: about three times the
true variance, hence the old rejection rates 0.012, 0.001 and 0.000 at α = 0.05.

**The test.** (i) The degenerate part by the wild bootstrap of the empirically centred kernel
(Dehling & Mikosch 1994; Arcones & Giné 1992): with Rademacher signs ε_i,
``W* = Σ_{i≠j} ε_i ε_j g̃_ij / (n(n − 1))``, ``g̃_ij = g_ij − a_i − a_j + D``,
``a_i = (1/(n − 1)) Σ_{j≠i} g_ij``; its law given the data is that of Q whether or not the
models are calibrated. (ii) The linear part's variance by the unbiased estimate
``v̂ = 4(n − 2)/(n(n − 1)) · T₃/(n(n − 1)(n − 2))``, ``T₃ = Σ_i r_i² − Σ_{i≠j} g_ij²``,
``r_i = Σ_{j≠i} g_ij`` (the triple sum Σ_{i,j,k distinct} g_ij g_ik: unbiased for E[g₁²],
which is ζ₁ under H0 θ = 0). (iii) Studentise — ``t = D/s``, ``s² = v_W + max(v̂, 0)`` with
``v_W = 2 Σ_{i≠j} g̃_ij²/(n(n − 1))²`` the variance of W* — and compare t with its bootstrap
law ``t*_b = (W*_b + √v_L·Z_b) / s*_b``: Z_b standard normal, ``s*_b² = v_W + max(v_L +
v̂*_b, 0)`` the same studentiser computed in the bootstrap world, with ``v̂*_b`` the
linear-variance estimate of the wild draw (pure noise: the wild world has no linear part),
and the world's linear variance ``v_L = max(v̂ − sd(v̂*), 0)`` — the estimate less one
standard deviation of its noise. The p-value is ``(1 + #{|t*_b| ≥ |t|})/(1 + B)`` and the
interval ``D ± q·s`` with q the (1 − α) quantile of ``|t*|`` (a symmetric bootstrap-t
interval), so "p ≤ α" and "0 outside the interval" agree.

Studentising matters because v̂ is noisy exactly where it should be zero: in the degenerate
case its noise is of the order of Var(Q) and large when |D| is large; the bootstrap world
reproduces that noise (v̂*), the plain normal test with ``v_W + max(v̂, 0)`` does not (it
rejected 0.005 of exchangeable data sets). The shrinkage by sd(v̂*) keeps that noise from
entering the world twice (once as a linear part, once through v̂*) when the models are
calibrated; where they are miscalibrated ζ₁ > 0 dominates, v̂ ≫ sd(v̂*), s² → Var(D) and
t → N(0, 1), as t* does.

Candidates measured and not kept (``benchmarks/compare_candidates.py``, README *Comparing
models*): the paired swap (randomisation) test — exact when the two models' predictions are
exchangeable given the row, but when both are equally miscalibrated in *different* ways
(one over-, one under-confident) the swapped models are nearly calibrated and its null far too
narrow: it rejected 0.34 (ECE²) and 0.75 (KLCE²) at α = 0.05; the wild bootstrap alone (no
linear part) fails the same way; the studentised wild bootstrap without the linear part is
exact for calibrated models but rejected 0.09–0.15 for equally miscalibrated ones; with the
linear part but without the shrinkage it held its level everywhere but rejected only 0.015
(KLCE²) of exchangeable calibrated data sets. The measured level and power of the test kept
are in ``benchmarks/compare_study.py``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy import sparse

from core.compare.paired import PairedDifference
from core.kernels.tiles import kernel_matmul, quadratic_forms
from core.metrics.binning import bin_indices

#: Most wild-bootstrap columns per tile-engine pass (memory n × columns × 8 bytes, twice).
MAX_COLUMNS = 256


@dataclass(frozen=True)
class PairKernel:
    """The two models' kernels of one criterion, as the operations the test needs.

    ``apply(m, V)``: ``Σ_{j≠i} k_m(i, j) V_j`` for every row i and column of V (m = 0 the
    champion, 1 the challenger); ``squares(e_a, e_b)``: ``Σ_{i≠j} g_ij²`` of the difference
    kernel ``g_ij = k_1(i, j) e_bi e_bj − k_0(i, j) e_ai e_aj``.
    """

    apply: Callable[[int, np.ndarray], np.ndarray]
    squares: Callable[[np.ndarray, np.ndarray], float]
    label: str


# --------------------------------------------------------------------------- the kernels


def bin_kernel(conf_a: np.ndarray, conf_b: np.ndarray, n_bins: int) -> PairKernel:
    """ECE²: ``k(i, j) = 1[b_i = b_j] (n − 1)/(n_b − 1)`` on shared equal-width bins."""
    edges = np.linspace(0.0, 1.0, n_bins + 1)
    bins = [bin_indices(c, edges) for c in (conf_a, conf_b)]
    n = conf_a.shape[0]
    weights = []
    for b in bins:
        counts = np.bincount(b, minlength=n_bins)
        weights.append(np.where(counts >= 2, (n - 1) / np.maximum(counts - 1, 1), 0.0))

    members = [sparse.csr_matrix((np.ones(n), (b, np.arange(n))), shape=(n_bins, n))
               for b in bins]

    def apply(m: int, V: np.ndarray) -> np.ndarray:
        b, w = bins[m], weights[m]
        return (np.asarray(members[m] @ V)[b] - V) * w[b][:, None]

    def squares(e_a: np.ndarray, e_b: np.ndarray) -> float:
        total = 0.0
        for b, w, x in ((bins[1], weights[1], e_b * e_b), (bins[0], weights[0], e_a * e_a)):
            s1 = np.bincount(b, x, minlength=n_bins)
            s2 = np.bincount(b, x * x, minlength=n_bins)
            total += float(np.sum(w**2 * (s1 * s1 - s2)))
        cell = bins[0] * n_bins + bins[1]
        x = e_a * e_b
        s1 = np.bincount(cell, x, minlength=n_bins * n_bins)
        s2 = np.bincount(cell, x * x, minlength=n_bins * n_bins)
        both = np.outer(weights[0], weights[1]).ravel()
        return total - 2.0 * float(np.sum(both * (s1 * s1 - s2)))

    return PairKernel(apply, squares, f"{n_bins} shared equal-width bins")


def gaussian_kernel(points_a: np.ndarray, points_b: np.ndarray, scale_a: float = 1.0,
                    scale_b: float = 1.0) -> PairKernel:
    """``k_m(i, j) = scale_m · exp(−‖z_mi − z_mj‖²/2)`` on pre-scaled points (bandwidth 1),
    through the tile engine: ``K² `` is the Gaussian of the points times √2, and ``K_A ∘ K_B``
    the Gaussian of the two point sets side by side."""
    points = (np.atleast_2d(points_a.T).T, np.atleast_2d(points_b.T).T)
    scales = (scale_a, scale_b)

    def apply(m: int, V: np.ndarray) -> np.ndarray:
        out = np.concatenate([
            kernel_matmul(points[m], points[m], V[:, s:s + MAX_COLUMNS], exclude_self=True)
            for s in range(0, V.shape[1], MAX_COLUMNS)], axis=1)
        return scales[m] * out

    def squares(e_a: np.ndarray, e_b: np.ndarray) -> float:
        root2 = np.sqrt(2.0)
        own_b = float(quadratic_forms(root2 * points[1], e_b * e_b))
        own_a = float(quadratic_forms(root2 * points[0], e_a * e_a))
        cross = float(quadratic_forms(np.hstack(points), e_a * e_b))
        return scale_b**2 * own_b + scale_a**2 * own_a - 2.0 * scale_a * scale_b * cross

    return PairKernel(apply, squares, "Gaussian kernel, tile engine")


def smooth_points(conf: np.ndarray, sigma: float) -> tuple[np.ndarray, float]:
    """Points and scale of the smooth ECE²'s kernel ``φ_{σ√2}(c_i − c_j)``:
    ``c/(σ√2)`` and ``1/(2σ√π)``."""
    return conf / (sigma * np.sqrt(2.0)), 1.0 / (2.0 * sigma * np.sqrt(np.pi))


# --------------------------------------------------------------------------- the test


def _linear_variance(r: np.ndarray, squares: float, n: int) -> np.ndarray:
    """``4(n − 2)/(n(n − 1)) · T₃/(n(n − 1)(n − 2))`` with ``T₃ = Σ r_i² − Σ_{i≠j} g_ij²``
    (per column of r)."""
    t3 = np.sum(r * r, axis=0) - squares
    return 4.0 * t3 / (n * (n - 1)) ** 2


def squared_error_difference(
    kernel: PairKernel, e_a: np.ndarray, e_b: np.ndarray, n_resamples: int,
    seed: int | None, alpha: float, name: str,
) -> PairedDifference:
    """The studentised wild-bootstrap test of ``U_B − U_A`` (module docstring) for residuals
    ``e_a``, ``e_b`` of the two models on the same rows and their kernels."""
    n = e_a.shape[0]
    pairs = n * (n - 1)
    rng = np.random.default_rng(seed)
    signs = rng.choice(np.array([-1.0, 1.0]), size=(n, n_resamples))
    normal = rng.standard_normal(n_resamples)
    # one pass per model: column 0 the observed residuals, the others the signed ones
    applied = []
    for m, e in ((0, e_a), (1, e_b)):
        V = np.empty((n, n_resamples + 1))
        V[:, 0] = e
        V[:, 1:] = signs * e[:, None]
        applied.append(kernel.apply(m, V) * e[:, None])
    G = applied[1] - applied[0]  # column 0: r_i = Σ_{j≠i} g_ij; others: (G ε)_i
    r = G[:, 0]
    total = float(r.sum())
    u = [float(np.sum(applied[m][:, 0])) / pairs for m in (0, 1)]
    difference = total / pairs
    squares = kernel.squares(e_a, e_b)
    linear = max(float(_linear_variance(r, squares, n)), 0.0)
    # the centred kernel g̃ = g − a_i − a_j + D: its wild products and sum of squares
    a = r / (n - 1)
    sum_signs = signs.sum(axis=0)
    a_signs = a @ signs
    centred = (G[:, 1:] - a[:, None] * (sum_signs[None, :] - signs) - (a_signs[None, :]
               - a[:, None] * signs) + difference * (sum_signs[None, :] - signs))
    wild = np.einsum("ib,ib->b", signs, centred) / pairs
    sum_a, sum_a2 = float(a.sum()), float(a @ a)
    off = (2 * (n - 1) * sum_a2 + pairs * difference**2 + 2 * (sum_a**2 - sum_a2)
           - 4 * difference * (n - 1) * sum_a)
    centred_squares = max(squares + off - 2.0 * (2.0 * float(a @ r) - difference * total), 0.0)
    v_wild = 2.0 * centred_squares / pairs**2
    noise = _linear_variance(centred, centred_squares, n)
    scale = float(np.sqrt(v_wild + linear))
    if scale > 0:
        shrunk = max(linear - float(np.std(noise)), 0.0)  # the world's linear variance
        world = (wild + np.sqrt(shrunk) * normal) / np.sqrt(
            v_wild + np.maximum(shrunk + noise, 0.0))
        t = difference / scale
        p_value = float((1 + np.count_nonzero(np.abs(world) >= abs(t))) / (1 + n_resamples))
        q = float(np.quantile(np.abs(world), 1.0 - alpha))
    else:  # identical models: nothing varies
        p_value, q = (1.0 if difference == 0 else 0.0), 0.0
    return PairedDifference(
        value_a=u[0], value_b=u[1], difference=difference, variance=scale**2,
        std_error=scale, ci_low=difference - q * scale, ci_high=difference + q * scale,
        p_value=p_value,
        method=f"{name}: studentised wild bootstrap of the U-statistic difference "
               f"(B = {n_resamples}; {kernel.label}), bootstrap-t interval",
    )
