"""The binned grid for the LCE (:mod:`core.local.lce_estimate`) on 2-D features.

``"binned"`` (2-D features only) — per bin, the weights ``c − o`` and ``1`` are deposited on
a regular ``grid_size × grid_size`` grid by cloud-in-cell (bilinear) weights, convolved with
the kernel sampled on the grid, and interpolated back to the points with the same weights.
The L1 Laplacian factorises over coordinates, ``exp(−|Δx|/(2γ))·exp(−|Δy|/(2γ))``, and a
one-dimensional exponential kernel on a regular grid is a first-order recursive filter
(``r = exp(−h/(2γ))``; a forward plus a backward pass, minus the centre). So the grid
convolution is the exact *linear* (zero-padded, no wrap-around) discrete convolution that
an FFT with zero padding would give, computed in O(grid_size²) per bin without FFT
round-off. Time O(n + n_bins · grid_size²). The error bound is :func:`binned_error_bound`;
it grows like (grid spacing)/γ, so small γ needs the sweep.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from core.data.validation import check_count
from core.local.lce_inputs import check_features, check_gamma

#: Default number of grid nodes per axis of the binned approximation.
DEFAULT_GRID = 256


# --------------------------------------------------------------------------- binned method


def _grid_spacing(features: np.ndarray, grid_size: int) -> tuple[np.ndarray, np.ndarray]:
    """Lower corner and node spacing ``h`` per axis of the grid spanning the features.

    Nodes are ``lo + k·h``, ``k = 0 … grid_size − 1``; an axis on which all points coincide
    gets ``h = 1`` (every point then sits on node 0 of that axis).
    """
    lo = features.min(axis=0)
    span = features.max(axis=0) - lo
    h = np.where(span > 0, span / (grid_size - 1), 1.0)
    return lo, h


def _cic_weights(
    features: np.ndarray, lo: np.ndarray, h: np.ndarray, grid_size: int
) -> tuple[np.ndarray, np.ndarray]:
    """Cloud-in-cell (bilinear) nodes and weights of 2-D points: ``(n, 4)`` each.

    A point at fractional grid position ``(i + f, j + g)`` gets weights
    ``(1−f)(1−g), (1−f)g, f(1−g), fg`` on the nodes ``(i, j), (i, j+1), (i+1, j), (i+1, j+1)``;
    node ``(i, j)`` has flat index ``i·grid_size + j``.
    """
    u = (features - lo) / h
    base = np.clip(np.floor(u), 0, grid_size - 2).astype(np.int64)
    frac = np.clip(u - base, 0.0, 1.0)
    fx, fy = frac[:, 0], frac[:, 1]
    corner = base[:, 0] * grid_size + base[:, 1]
    nodes = np.column_stack([corner, corner + 1, corner + grid_size, corner + grid_size + 1])
    weights = np.column_stack([(1 - fx) * (1 - fy), (1 - fx) * fy, fx * (1 - fy), fx * fy])
    return nodes, weights


def _exponential_filter(values: np.ndarray, ratio: float | np.ndarray) -> np.ndarray:
    """``out[c, k] = Σ_m ratio_c^|k−m| values[c, m]`` along axis 1 (exact, no wrap-around).

    The causal recursion ``F[k] = v[k] + r·F[k−1]`` plus the anti-causal one
    ``B[k] = v[k] + r·B[k+1]`` count the centre twice: ``out = F + B − v``. Each step is one
    vectorised operation on a contiguous ``(channels, G)`` slice; ``0 ≤ r ≤ 1``, so the
    recursions are stable. ``ratio`` is one number, or one per channel (shape
    ``(channels, 1)``: channels filtered at several γ in the same steps).
    """
    size = values.shape[1]
    forward = np.empty_like(values)
    backward = np.empty_like(values)
    forward[:, 0] = values[:, 0]
    backward[:, -1] = values[:, -1]
    for k in range(1, size):
        np.multiply(forward[:, k - 1], ratio, out=forward[:, k])
        forward[:, k] += values[:, k]
    for k in range(size - 2, -1, -1):
        np.multiply(backward[:, k + 1], ratio, out=backward[:, k])
        backward[:, k] += values[:, k]
    forward += backward
    forward -= values
    return forward


def _grid_convolve(grid: np.ndarray, ratios: np.ndarray) -> np.ndarray:
    """Grid weights convolved with the 2-D Laplacian kernel sampled on the grid, at several γ.

    ``S[a, b] = Σ_{a', b'} exp(−(|a−a'| h_x + |b−b'| h_y) / (2γ)) W[a', b']`` for each leading
    channel of ``grid`` (``(channels, G, G)``) and each γ, as two separable exponential
    filters with the ratios ``ratios[γ] = exp(−(h_x, h_y)/(2γ))``. Returns
    ``(len(ratios), channels, G, G)`` *transposed*: ``S[a, b]`` at ``[..., b, a]`` (node
    ``(a, b)`` at flat index ``b·G + a``), as the second filter leaves it.
    """
    channels = grid.shape[0]
    count = ratios.shape[0]
    stacked = np.broadcast_to(grid, (count, *grid.shape)).reshape(count * channels,
                                                                  *grid.shape[1:])
    along_x = _exponential_filter(stacked, np.repeat(ratios[:, 0], channels)[:, None])
    along_y = _exponential_filter(np.ascontiguousarray(along_x.transpose(0, 2, 1)),
                                  np.repeat(ratios[:, 1], channels)[:, None])
    return along_y.reshape(count, channels, *grid.shape[1:])


#: Grid cells of all γ and channels :func:`binned_sums_over` filters in the same steps (a
#: 1024² grid one γ at a time, a 256² grid 16 at a time: 16 MiB an array).
_FILTER_CELLS = 2**21


def binned_sums(
    residual: np.ndarray,
    features: np.ndarray,
    groups: list[np.ndarray],
    gamma: float,
    grid_size: int,
) -> tuple[np.ndarray, np.ndarray]:
    """Grid approximation of the numerator and denominator of eq. 4 (2-D features)."""
    return binned_sums_over(residual, features, groups, [gamma], grid_size)[0]


def binned_sums_over(
    residual: np.ndarray,
    features: np.ndarray,
    groups: list[np.ndarray],
    gammas: list[float],
    grid_size: int,
) -> list[tuple[np.ndarray, np.ndarray]]:
    """:func:`binned_sums` at several γ on one grid: the cloud-in-cell weights and each
    bin's deposit, which do not depend on γ, are computed once (each γ's sums are the
    same numbers as alone)."""
    n = residual.shape[0]
    lo, h = _grid_spacing(features, grid_size)
    nodes, weights = _cic_weights(features, lo, h, grid_size)
    transposed = (nodes % grid_size) * grid_size + nodes // grid_size  # see _grid_convolve
    cells = grid_size * grid_size
    ratios = np.array([np.exp(-h / (2.0 * gamma)) for gamma in gammas])  # (γ, axis)
    at_once = max(1, _FILTER_CELLS // (2 * cells))
    sums = [np.empty((n, 2)) for _ in gammas]
    for rows in groups:
        node, weight = nodes[rows].ravel(), weights[rows]
        grid = np.stack([
            np.bincount(node, weights=(weight * residual[rows, None]).ravel(), minlength=cells),
            np.bincount(node, weights=weight.ravel(), minlength=cells),
        ]).reshape(2, grid_size, grid_size)
        at = transposed[rows]
        for start in range(0, len(gammas), at_once):
            smooth = _grid_convolve(grid, ratios[start:start + at_once])
            for out, each in zip(sums[start:start + at_once], smooth, strict=True):
                out[rows] = np.einsum("rk,crk->rc", weight, each.reshape(2, cells)[:, at])
    return [(out[:, 0], out[:, 1]) for out in sums]


def binned_error_bound(
    features: ArrayLike, gamma: float, grid_size: int = DEFAULT_GRID, n_bins: int = 15
) -> float:
    """Worst-case ``|LCE_binned − LCE_exact|`` of the binned approximation, for any labels.

    With node spacings ``h_x, h_y``, every grid node carrying weight of a point lies within
    ``h`` of it on each axis, i.e. within ``h_x + h_y`` in L1. ``log k_γ = −‖a − b‖₁/(dγ)``
    is ``1/(dγ)``-Lipschitz in each point, so a pair's grid kernel ``k̃`` (a bilinear average
    of node-pair kernels in both points) differs from ``k`` by a factor in ``[e^−τ, e^τ]``,
    ``τ = 2(h_x + h_y)/(d·γ) = (h_x + h_y)/γ`` (d = 2). Writing
    ``k̃_i = k_i(1 + η_i)`` and ``r`` the exact ratio of eq. 4,
    ``r̃ − r = Σ k_i (1 + η_i − cosh τ)(v_i − r) / Σ k̃_i``, hence::

        |r̃ − r| ≤ M · sinh(τ) · e^τ = M (e^{2τ} − 1)/2 ≈ M τ

    with ``M = max |v_i − r| ≤ 1 + 1/n_bins`` (the spread of ``v = c − o`` inside one bin).
    The typical error is far smaller (the ``η_i`` are not all aligned with ``v_i − r``).
    """
    x = check_features(features)
    if x.shape[1] != 2:
        raise ValueError(binned_dimension_message(x.shape[1]))
    g = check_gamma(gamma, 2)
    grid_size = check_count("grid_size", grid_size, 2)
    n_bins = check_count("n_bins", n_bins, 1)
    return error_bound_of_span(np.ptp(x, axis=0), g, grid_size, n_bins)


def error_bound_of_span(span: np.ndarray, gamma: float, grid_size: int, n_bins: int) -> float:
    """:func:`binned_error_bound` from the features' range per axis, ``span`` (computed once
    for every γ and grid a plan tries): node spacing ``h = span/(grid_size − 1)`` on an axis
    with a range, none on an axis where all points coincide."""
    h = np.where(span > 0, span / (grid_size - 1), 0.0)
    tau = float(np.sum(h)) / gamma
    with np.errstate(over="ignore"):  # a grid far too coarse: the bound is infinite
        return float((1.0 + 1.0 / n_bins) * np.expm1(2.0 * tau) / 2.0)


def binned_dimension_message(d: int) -> str:
    return (
        "The binned approximation works on 2-D embeddings (features with 2 columns); these "
        f"features have {d}. Use method='exact'."
    )

