"""Local calibration error (LCE) and maximum local calibration error (MLCE).

Luo et al., "Local Calibration: Metrics and Recalibration". For a data set
``D = ((x_1, y_1), …, (x_n, y_n))`` with top-label confidences ``c_i`` and correctness
``o_i = 1[f(x_i) = y_i]``, and ``β(x)`` the indices of the points whose confidence lies in the
same confidence bin as ``x``, the LCE at ``x`` is (paper eq. 4)::

    LCE_γ(x) = | Σ_{i∈β(x)} (c_i − o_i) k_γ(x, x_i)  /  Σ_{i∈β(x)} k_γ(x, x_i) |

with the Laplacian kernel on a feature embedding ``φ(x) ∈ ℝ^d`` (paper §3.2)::

    k_γ(x, x') = exp(−‖φ(x) − φ(x')‖₁ / (d·γ))

and the MLCE is its maximum, ``MLCE_γ = max_x LCE_γ(x)`` (paper eq. 5). Here ``x`` runs over
the data points themselves, so ``x`` is one of the ``x_i`` (it is part of ``D``) and enters
both sums with ``k_γ(x, x) = 1``; the denominator is therefore at least 1. The signed value
(the paper's SLCE, App. D) drops the absolute value: it is *confidence minus accuracy*, so a
positive value means the model is over-confident near ``x`` and a negative one
under-confident — the opposite sign of the reliability table's ``gap`` (frequency minus
confidence) in :mod:`core.metrics`.

Limits (paper Lemma 1 / Lemma 2, Fig. 1):

* ``γ → ∞``: ``k_γ → 1``, every point's LCE becomes its bin's ``|conf(B) − acc(B)|`` and the
  MLCE becomes the binned MCE with the same bins (``gamma=numpy.inf`` computes this limit).
* ``γ → 0``: only the point itself (and exact duplicates of its features in its bin) keeps
  weight, so ``LCE(x_j) → |c_j − o_j|`` and ``MLCE → max_j |c_j − o_j|``: the confidence of
  the most confidently wrong prediction. For a classifier that makes any mistake at a
  confidence near 1 this is ≈ 1 — the plateau at small γ of Fig. 1.

Conventions shared with the reliability diagram: ``conf``/``correct`` are top-label
(``core.metrics.confidence_outcome(probs, y, "top-label")``), bins are ``n_bins`` equal-width
bins, right-closed as in :func:`core.metrics.bin_indices` (a confidence of exactly 1.0 is in
the last bin, one exactly on an inner edge in the bin below it).

Three evaluation methods (:func:`plan_method` chooses; every result says which ran):

* ``"pairs"`` — per bin, one :func:`core.kernels.kernel_matmul` of the bin's points against
  themselves with ``V = [c − o, 1]`` gives numerator and denominator in one tiled pass; no
  n×n matrix, memory O(n + tile²), time O(Σ_b n_b² · d). Any d.
* ``"sweep"`` (1-D and 2-D features) — exact to rounding in O(n log² n): the L1 Laplacian
  factorises within each quadrant around a point into a factor of each point, so the sums
  are weighted dominance sums, computed by divide and conquer over the x order with prefix
  sums along y (:func:`_sweep_sums_bin`). About 10 s per γ on a million rows on this
  two-core machine, where the pair sums would take hours.
* ``"binned"`` (2-D features only) — per bin, the weights ``c − o`` and ``1`` are deposited on
  a regular ``grid_size × grid_size`` grid by cloud-in-cell (bilinear) weights, convolved with
  the kernel sampled on the grid, and interpolated back to the points with the same weights.
  The L1 Laplacian factorises over coordinates, ``exp(−|Δx|/(2γ))·exp(−|Δy|/(2γ))``, and a
  one-dimensional exponential kernel on a regular grid is a first-order recursive filter
  (``r = exp(−h/(2γ))``; a forward plus a backward pass, minus the centre). So the grid
  convolution is the exact *linear* (zero-padded, no wrap-around) discrete convolution that
  an FFT with zero padding would give, computed in O(grid_size²) per bin without FFT
  round-off. Time O(n + n_bins · grid_size²). The error bound is :func:`binned_error_bound`;
  it grows like (grid spacing)/γ, so small γ needs the sweep.

``"exact"`` is the cheaper of the two exact methods; ``"auto"`` keeps the pair sums on small
data and otherwise takes the grid where its worst-case bound is at most
:data:`AUTO_MAX_ERROR` (and it is cheaper), else the sweep.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from core._binning import bin_edges, bin_indices
from core._validation import check_choice, check_count
from core.kernels import kernel_matmul

METHODS = ("auto", "exact", "binned", "pairs", "sweep")
#: Tile edge of the exact method; small tiles keep the Laplacian's element-wise passes in cache.
LCE_TILE = 256
#: Default number of grid nodes per axis of the binned approximation.
DEFAULT_GRID = 256
#: ``method="auto"`` keeps the exact pair sums while they take at most this many seconds per γ…
AUTO_SECONDS = 1.0
#: …above, it uses a grid of :data:`AUTO_GRIDS` nodes per axis (2-D features) whose worst-case
#: error (:func:`binned_error_bound`) is at most this, when that is cheaper than the sweep.
AUTO_MAX_ERROR = 0.05
AUTO_GRIDS = (256, 512, 1024)


# --------------------------------------------------------------------------- input checks


def _check_vectors(conf: ArrayLike, correct: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """Float64 confidences in [0, 1] and correctness 0/1 of equal length."""
    try:
        c = np.asarray(conf, dtype=np.float64)
        o = np.asarray(correct, dtype=np.float64)
    except (TypeError, ValueError) as err:
        raise ValueError("conf and correct must contain numbers.") from err
    if c.ndim != 1 or o.ndim != 1:
        raise ValueError(
            "conf and correct must be 1-D arrays with one value per prediction (top-label "
            "confidence and 1/0 for a correct/wrong prediction)."
        )
    if c.shape[0] == 0:
        raise ValueError("conf is empty: at least one prediction is needed.")
    if c.shape[0] != o.shape[0]:
        raise ValueError(
            f"conf has {c.shape[0]} values but correct has {o.shape[0]}; they need one value "
            "per prediction each."
        )
    bad = ~(np.isfinite(c) & (c >= 0.0) & (c <= 1.0))
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"conf must hold confidences between 0 and 1; {int(bad.sum())} values are not "
            f"(first in row {row}: {c[row]})."
        )
    bad = ~((o == 0.0) | (o == 1.0))
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise ValueError(
            "correct must be 1 (prediction right) or 0 (prediction wrong); "
            f"{int(bad.sum())} values are not (first in row {row}: {o[row]})."
        )
    return c, o


def _check_features(features: ArrayLike, n: int | None = None) -> np.ndarray:
    """Float64 ``(n, d)`` finite feature embedding (``n`` rows when given)."""
    try:
        x = np.asarray(features, dtype=np.float64)
    except (TypeError, ValueError) as err:
        raise ValueError("features must contain numbers (the feature embedding).") from err
    if x.ndim != 2:
        raise ValueError(
            "features must be a 2-D array with one row per prediction and one column per "
            f"embedding dimension; this one has {x.ndim} dimension(s) (for a single feature "
            "use features.reshape(-1, 1))."
        )
    if n is not None and x.shape[0] != n:
        raise ValueError(
            f"features has {x.shape[0]} rows but there are {n} predictions; they need one "
            "row per prediction."
        )
    if x.shape[0] == 0 or x.shape[1] == 0:
        raise ValueError(
            f"features is empty (shape {x.shape}): at least one row and one embedding "
            "dimension are needed."
        )
    finite = np.isfinite(x)
    if not finite.all():
        row = int(np.argwhere(~finite)[0][0])
        raise ValueError(
            f"features has {int((~finite).sum())} missing or infinite values (first in row "
            f"{row})."
        )
    return x


def _check_gamma(gamma: float, d: int) -> float:
    """γ > 0 (``numpy.inf`` allowed: the γ → ∞ limit); 1/(d·γ) must be representable."""
    try:
        g = float(gamma)
    except (TypeError, ValueError) as err:
        raise ValueError(f"gamma must be a positive number, not {gamma!r}.") from err
    if np.isnan(g) or g <= 0.0:
        raise ValueError(f"gamma (the kernel bandwidth) must be a positive number, not {g}.")
    if not np.isfinite(1.0 / (d * g)):
        raise ValueError(f"gamma = {g} is too small to compute with; use gamma ≥ 1e-300.")
    return g


def _check_method(method: str) -> str:
    return check_choice(method, METHODS, "method",
                        "choose 'auto', 'exact', 'binned', 'pairs' or 'sweep'")


def _check_n_jobs(n_jobs: int | None) -> int | None:
    return None if n_jobs is None else check_count("n_jobs", n_jobs, 1)


# --------------------------------------------------------------------------- bins


def confidence_bins(conf: ArrayLike, n_bins: int = 15) -> np.ndarray:
    """Confidence bin of every prediction: ``n_bins`` equal-width bins ``(e_b, e_{b+1}]``.

    The bins of the reliability diagram (:func:`core.metrics.bin_edges` with
    ``strategy="uniform"`` and :func:`core.metrics.bin_indices`): bin 0 includes 0 and a
    confidence of exactly 1.0 is in bin ``n_bins − 1``. Returns ``(n,)`` int64 bin numbers.
    """
    n_bins = check_count("n_bins", n_bins, 1)
    c = np.asarray(conf, dtype=np.float64)
    return bin_indices(c, bin_edges(c, n_bins, "uniform")).astype(np.int64)


def _bin_groups(bins: np.ndarray) -> list[np.ndarray]:
    """Row indices of every non-empty bin (ascending rows within each bin)."""
    order = np.argsort(bins, kind="stable")
    cuts = np.flatnonzero(np.diff(bins[order])) + 1
    return np.split(order, cuts)


# --------------------------------------------------------------------------- exact method


def _exact_sums(
    residual: np.ndarray,
    features: np.ndarray,
    groups: list[np.ndarray],
    gamma: float,
    tile_size: int,
    n_jobs: int | None,
) -> tuple[np.ndarray, np.ndarray]:
    """Numerator ``Σ_{i∈β} (c_i − o_i) k(x_j, x_i)`` and denominator ``Σ_{i∈β} k(x_j, x_i)``.

    One :func:`kernel_matmul` per bin with ``V = [c − o, 1]`` (paper eq. 4, both sums at once).
    """
    n = residual.shape[0]
    sums = np.empty((n, 2))
    V = np.column_stack([residual, np.ones(n)])
    for rows in groups:
        points = features[rows]
        sums[rows] = kernel_matmul(points, points, V[rows], gamma, kind="laplacian",
                                   tile_size=tile_size, n_jobs=n_jobs)
    return sums[:, 0], sums[:, 1]


# --------------------------------------------------------------------------- sweep method

#: Largest spread of ``w/a`` inside one block for which the sweep uses plain prefix sums
#: (terms are scaled by ``exp(w − min w)`` ≤ e^SAFE, far from float64's overflow at e^709).
_SWEEP_SAFE_RANGE = 600.0


@dataclass(frozen=True)
class _SweepLevel:
    """One level of the divide-and-conquer over the x order, independent of γ and weights.

    The rows (in x order) are cut into blocks of ``width`` consecutive x ranks; ``flat`` lists
    each block's rows in y order, block after block (the last block padded with the dummy row
    ``m``); ``left`` marks the rows in the first half of their block (smaller x), ``right``
    the others. ``spread`` is the largest ``x-range + y-range`` of a block.
    """

    flat: np.ndarray
    width: int
    left: np.ndarray
    right: np.ndarray
    x: np.ndarray
    y: np.ndarray
    low: np.ndarray  # (blocks, 2): per block min x, min y
    high: np.ndarray  # (blocks, 2): per block max x, max y
    spread: float


def _sweep_levels(points: np.ndarray) -> list[_SweepLevel]:
    m = points.shape[0]
    order = np.arange(m)
    by_x = np.lexsort((order, points[:, 0]))
    rank = np.empty(m + 1, dtype=np.int64)
    rank[by_x] = order
    rank[m] = -1
    by_y = np.lexsort((order, points[:, 1]))
    padded = np.vstack([points, np.zeros((1, 2))])
    levels = []
    for k in range(int(np.ceil(np.log2(m))) if m > 1 else 0):
        width = 2 << k
        blocks = -(-m // width)
        flat = by_y[np.argsort(rank[by_y] >> (k + 1), kind="stable")]
        flat = np.concatenate([flat, np.full(blocks * width - m, m)])
        real = flat != m
        left = real & (((rank[flat] >> k) & 1) == 0)
        x, y = padded[flat, 0], padded[flat, 1]
        shape = (blocks, width)
        low = np.column_stack([np.where(real, x, np.inf).reshape(shape).min(axis=1),
                               np.where(real, y, np.inf).reshape(shape).min(axis=1)])
        high = np.column_stack([np.where(real, x, -np.inf).reshape(shape).max(axis=1),
                                np.where(real, y, -np.inf).reshape(shape).max(axis=1)])
        x[~real], y[~real] = low[-1, 0], low[-1, 1]  # padding: inside the last block's box
        levels.append(_SweepLevel(flat, width, left, real & ~left, x, y, low, high,
                                  float(np.max((high - low).sum(axis=1)))))
    return levels


def _prefix(values: np.ndarray, forward: bool, in_logs: bool) -> np.ndarray:
    """Inclusive prefix sums (or log-sum-exp) along the last axis, forwards or backwards."""
    if not forward:
        values = values[..., ::-1]
    total = np.logaddexp.accumulate(values, axis=-1) if in_logs else np.cumsum(values, axis=-1)
    return total if forward else total[..., ::-1]


def _sweep_sums_bin(points: np.ndarray, weights: np.ndarray, gammas: Sequence[float]
                    ) -> np.ndarray:
    """``S[g, c, j] = Σ_i weights[c, i] · exp(−‖x_j − x_i‖₁ / (d·γ_g))`` over all rows i of one
    confidence bin (j itself included), exactly, for d = 1 or 2 and non-negative weights.

    d = 2: each pair i ≠ j lies in exactly one quadrant of j (strict orders: by x then row
    number, by y then row number). In the quadrant with signs (s_x, s_y), the kernel is
    ``exp((w_i − w_j)/a)``, ``w = s_x·x + s_y·y``, ``a = d·γ``, with ``w_i ≤ w_j`` — a product
    of a factor of i and a factor of j. So each quadrant's sum is a weighted 2-D dominance sum,
    computed by divide and conquer on the x ranks: at level k, every block of 2^(k+1)
    consecutive x ranks sends its lower half's weights to its upper half (or back, for
    s_x = −1) with one prefix sum per block along the y order (forwards for s_y = 1, backwards
    for s_y = −1). Every pair is counted at exactly one level, in exactly one quadrant. To
    stay in float64 range each block's terms are scaled by ``exp(w − min_block w)`` when the
    block's spread of ``w/a`` allows, and summed as logarithms (``logaddexp``) when it does
    not (small γ). d = 1 is the same with one block and no y. Time O(m log² m)… O(m log m)
    per γ after an O(m log² m) layout shared by every γ; memory O(m log m).
    """
    m, d = points.shape
    channels = weights.shape[0]
    result = np.empty((len(gammas), channels, m))
    padded_w = np.hstack([weights, np.zeros((channels, 1))])
    with np.errstate(divide="ignore"):
        log_w = np.log(padded_w)
    if d == 1:
        order = np.lexsort((np.arange(m), points[:, 0]))
        x = points[order, 0]
        w_sorted, lw_sorted = padded_w[:, order], log_w[:, order]
        for g, gamma in enumerate(gammas):
            scaled = x / gamma
            total = w_sorted.copy()
            for sign in (1.0, -1.0):  # i before j (x_i ≤ x_j), then i after j
                w = sign * scaled
                terms = lw_sorted + w
                shifted = np.full_like(terms, -np.inf)
                if sign > 0:
                    shifted[:, 1:] = _prefix(terms, True, True)[:, :-1]
                else:
                    shifted[:, :-1] = _prefix(terms, False, True)[:, 1:]
                with np.errstate(over="ignore", invalid="ignore"):
                    total += np.exp(shifted - w)
            result[g][:, order] = total
        return result
    out = np.zeros((len(gammas), channels, m + 1))
    out[:, :, :m] = weights
    for level in _sweep_levels(points):
        blocks = level.flat.size // level.width
        w_level = padded_w[:, level.flat]
        sources = {1.0: np.where(level.left, w_level, 0.0),
                   -1.0: np.where(level.right, w_level, 0.0)}
        log_sources = None
        for g, gamma in enumerate(gammas):
            a = d * float(gamma)
            xa, ya = level.x / a, level.y / a
            in_logs = level.spread / a > _SWEEP_SAFE_RANGE
            if in_logs and log_sources is None:
                lw_level = log_w[:, level.flat]
                log_sources = {1.0: np.where(level.left, lw_level, -np.inf),
                               -1.0: np.where(level.right, lw_level, -np.inf)}
            into = {}
            for sx in (1.0, -1.0):
                into[sx] = np.zeros((channels, level.flat.size))
                for sy in (1.0, -1.0):
                    w = sx * xa + sy * ya
                    if in_logs:
                        total = _prefix((log_sources[sx] + w).reshape(channels, blocks,
                                                                      level.width),
                                        sy > 0, True).reshape(channels, -1)
                        with np.errstate(over="ignore", invalid="ignore"):
                            into[sx] += np.exp(total - w)
                        continue
                    lowest = np.repeat((np.where(sx > 0, level.low[:, 0], -level.high[:, 0])
                                        + np.where(sy > 0, level.low[:, 1],
                                                   -level.high[:, 1])) / a, level.width)
                    w -= lowest  # in [0, spread / a]: exp stays finite
                    total = _prefix((sources[sx] * np.exp(w)).reshape(channels, blocks,
                                                                       level.width),
                                    sy > 0, False).reshape(channels, -1)
                    np.negative(w, out=w)
                    into[sx] += total * np.exp(w)
            # a row receives from the lower half when it is in the upper one, and back
            out[g][:, level.flat] += np.where(level.right, into[1.0], into[-1.0])
    return out[:, :, :m]


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


def _exponential_filter(values: np.ndarray, ratio: float) -> np.ndarray:
    """``out[:, k] = Σ_m ratio^|k−m| values[:, m]`` along axis 1 (exact, no wrap-around).

    The causal recursion ``F[k] = v[k] + r·F[k−1]`` plus the anti-causal one
    ``B[k] = v[k] + r·B[k+1]`` count the centre twice: ``out = F + B − v``. Each step is one
    vectorised operation on a contiguous ``(channels, G)`` slice; ``0 ≤ r ≤ 1``, so the
    recursions are stable.
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


def _grid_convolve(grid: np.ndarray, h: np.ndarray, gamma: float) -> np.ndarray:
    """Grid weights convolved with the 2-D Laplacian kernel sampled on the grid.

    ``S[a, b] = Σ_{a', b'} exp(−(|a−a'| h_x + |b−b'| h_y) / (2γ)) W[a', b']`` for each leading
    channel of ``grid`` (``(channels, G, G)``), as two separable exponential filters.
    """
    rx, ry = np.exp(-h / (2.0 * gamma))
    along_x = _exponential_filter(grid, float(rx))
    along_y = _exponential_filter(np.ascontiguousarray(along_x.transpose(0, 2, 1)), float(ry))
    return along_y.transpose(0, 2, 1)


def _binned_sums(
    residual: np.ndarray,
    features: np.ndarray,
    groups: list[np.ndarray],
    gamma: float,
    grid_size: int,
) -> tuple[np.ndarray, np.ndarray]:
    """Grid approximation of the numerator and denominator of eq. 4 (2-D features)."""
    n = residual.shape[0]
    lo, h = _grid_spacing(features, grid_size)
    nodes, weights = _cic_weights(features, lo, h, grid_size)
    cells = grid_size * grid_size
    sums = np.empty((n, 2))
    for rows in groups:
        node, weight = nodes[rows].ravel(), weights[rows]
        grid = np.stack([
            np.bincount(node, weights=(weight * residual[rows, None]).ravel(), minlength=cells),
            np.bincount(node, weights=weight.ravel(), minlength=cells),
        ]).reshape(2, grid_size, grid_size)
        smooth = _grid_convolve(grid, h, gamma).reshape(2, cells)
        sums[rows] = np.einsum("rk,crk->rc", weight, smooth[:, nodes[rows]])
    return sums[:, 0], sums[:, 1]


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
    x = _check_features(features)
    if x.shape[1] != 2:
        raise ValueError(_binned_dimension_message(x.shape[1]))
    g = _check_gamma(gamma, 2)
    grid_size = check_count("grid_size", grid_size, 2)
    n_bins = check_count("n_bins", n_bins, 1)
    _, h = _grid_spacing(x, grid_size)
    span = np.ptp(x, axis=0)
    tau = float(np.sum(np.where(span > 0, h, 0.0))) / g
    with np.errstate(over="ignore"):  # a grid far too coarse: the bound is infinite
        return float((1.0 + 1.0 / n_bins) * np.expm1(2.0 * tau) / 2.0)


def _binned_dimension_message(d: int) -> str:
    return (
        "The binned approximation works on 2-D embeddings (features with 2 columns); these "
        f"features have {d}. Use method='exact'."
    )


# --------------------------------------------------------------------------- choosing a method


@dataclass(frozen=True)
class LceMethod:
    """How the LCE at one γ is computed, and what that costs and guarantees.

    ``name`` is ``"pairs"`` (the tile engine's exact double sum), ``"sweep"`` (exact, the
    dominance-sum sweep, 1-D and 2-D features) or ``"binned"`` (grid approximation, 2-D);
    ``error_bound`` the worst-case ``|LCE − exact LCE|`` (0 for the exact methods: rounding
    only, about 1e-12); ``seconds`` the estimated time on this machine; ``exact_seconds`` that
    of the cheapest exact method (what "compute exactly" would cost); ``reason`` why it was
    chosen.
    """

    name: str
    grid_size: int | None
    error_bound: float
    seconds: float
    exact_seconds: float
    reason: str

    @property
    def exact(self) -> bool:
        return self.name != "binned"

    def describe(self) -> str:
        """One phrase for a caption, e.g. ``binned approximation (1024 × 1024 grid),
        |error| ≤ 0.0079``."""
        if self.exact:
            return f"exact ({'dominance-sum sweep' if self.name == 'sweep' else 'pair sums'})"
        return (f"binned approximation ({self.grid_size} × {self.grid_size} grid), "
                f"|error| ≤ {self.error_bound:.2g}")


@functools.cache
def _speeds() -> tuple[float, float, float]:
    """Seconds per pair (tile engine, d = 2), per row·level (sweep, logarithmic path) and per
    row-or-cell (binned), measured once per process on small problems (about 0.1 s)."""
    rng = np.random.default_rng(0)
    points = rng.random((4096, 2))
    weights = np.vstack([rng.random(4096) * 2, np.ones(4096)])
    v = np.column_stack([weights[0] - 1, weights[1]])
    kernel_matmul(points[:512], points[:512], v[:512], 0.1, kind="laplacian")  # warm-up
    start = time.perf_counter()
    kernel_matmul(points[:2048], points[:2048], v[:2048], 0.1, kind="laplacian",
                  tile_size=LCE_TILE)
    pair = (time.perf_counter() - start) / 2048**2
    start = time.perf_counter()
    _sweep_sums_bin(points, weights, [1e-4])
    sweep = (time.perf_counter() - start) / (4096 * 12)
    groups = [np.arange(4096)]
    start = time.perf_counter()
    _binned_sums(v[:, 0], points, groups, 0.1, 256)
    binned = (time.perf_counter() - start) / (4096 + 256**2)
    return pair, sweep, binned


def _levels(n: int) -> int:
    return max(1, int(np.ceil(np.log2(max(n, 2)))))


def plan_method(features: ArrayLike, gamma: float, method: str = "auto",
                grid_size: int | None = None, n_bins: int = 15,
                bin_sizes: ArrayLike | None = None) -> LceMethod:
    """The computation :func:`lce` runs at ``gamma``, with its cost and error bound.

    * ``"pairs"`` — the exact double sum, O(Σ_b n_b²) (any d);
    * ``"sweep"`` — exact, O(n log² n) (d ≤ 2; see :func:`_sweep_sums_bin`);
    * ``"exact"`` — the cheaper of the two exact algorithms;
    * ``"binned"`` — the grid approximation (d = 2), error at most :func:`binned_error_bound`;
    * ``"auto"`` — ``"pairs"`` while its estimated time is at most :data:`AUTO_SECONDS`
      (small data: unchanged results); above that, for 2-D features the smallest grid of
      :data:`AUTO_GRIDS` whose bound is at most :data:`AUTO_MAX_ERROR` when it is cheaper
      than the sweep, else the cheaper exact algorithm.

    Times are estimated from speeds measured once per process (:func:`_speeds`); the exact
    pair cost uses the confidence-bin sizes ``bin_sizes`` when given (else one bin of all
    rows, an upper bound). ``grid_size`` fixes the grid of ``"binned"`` (default
    :data:`DEFAULT_GRID`); ``"auto"`` chooses its own.
    """
    method = _check_method(method)
    x = _check_features(features)
    n, d = x.shape
    g = _check_gamma(gamma, d)
    n_bins = check_count("n_bins", n_bins, 1)
    sizes = np.array([n]) if bin_sizes is None else np.asarray(bin_sizes, dtype=np.float64)
    pair_speed, sweep_speed, binned_speed = _speeds()
    pairs_s = pair_speed * float(np.sum(sizes**2))
    # d = 2: O(1) passes per row and level; d = 1: about half a level's work per row
    sweep_s = sweep_speed * float(sum(s * (_levels(s) if d == 2 else 0.5) for s in sizes))
    exact_s = pairs_s if d > 2 else min(pairs_s, sweep_s)
    if method in ("binned", "sweep") and (d != 2 if method == "binned" else d > 2):
        raise ValueError(_binned_dimension_message(d) if method == "binned" else
                         f"The sweep computes the LCE on 1-D or 2-D features; these have {d}. "
                         "Use method='exact'.")

    def binned(size: int, reason: str) -> LceMethod:
        seconds = binned_speed * (n + np.count_nonzero(sizes) * size**2)
        return LceMethod("binned", size, binned_error_bound(x, g, size, n_bins), seconds,
                         exact_s, reason)

    def exact(reason: str) -> LceMethod:
        name = "pairs" if d > 2 or pairs_s <= sweep_s else "sweep"
        return LceMethod(name, None, 0.0, exact_s, exact_s, reason)

    if method == "binned":
        return binned(grid_size or DEFAULT_GRID, "as asked")
    if method == "pairs":
        return LceMethod("pairs", None, 0.0, pairs_s, exact_s, "as asked")
    if method == "sweep":
        return LceMethod("sweep", None, 0.0, sweep_s, exact_s, "as asked")
    if method == "exact":
        return exact("as asked")
    if pairs_s <= AUTO_SECONDS or d > 2:
        return LceMethod("pairs", None, 0.0, pairs_s, exact_s,
                         f"the exact sums take about {pairs_s:.1g} s here")
    if d == 2:
        for size in AUTO_GRIDS:
            if binned_error_bound(x, g, size, n_bins) <= AUTO_MAX_ERROR:
                candidate = binned(size, "")
                if candidate.seconds < exact_s:
                    return replace(candidate, reason=(
                        f"the exact LCE would take about {exact_s:,.0f} s here; the grid's "
                        f"worst-case error is at most {candidate.error_bound:.2g}"))
                break
    return exact(f"no grid of up to {AUTO_GRIDS[-1]} nodes per axis is within "
                 f"{AUTO_MAX_ERROR:g} at γ = {g:g}" if d == 2 else "1-D features")


def choose_method(
    features: ArrayLike,
    gamma: float,
    method: str = "auto",
    grid_size: int = DEFAULT_GRID,
    n_bins: int = 15,
) -> str:
    """The name of the method :func:`plan_method` picks (``"pairs"``, ``"sweep"`` or
    ``"binned"``), with all rows counted as one confidence bin."""
    return plan_method(features, gamma, method, grid_size, n_bins).name


# --------------------------------------------------------------------------- LCE and MLCE


@dataclass(frozen=True)
class _Prepared:
    """Validated inputs shared by every γ of a curve."""

    residual: np.ndarray  # c − o
    features: np.ndarray
    groups: list[np.ndarray]

    @property
    def bin_sizes(self) -> np.ndarray:
        return np.array([rows.size for rows in self.groups])


def _prepare(conf: ArrayLike, correct: ArrayLike, features: ArrayLike, n_bins: int) -> _Prepared:
    c, o = _check_vectors(conf, correct)
    x = _check_features(features, c.shape[0])
    bins = confidence_bins(c, check_count("n_bins", n_bins, 1))
    return _Prepared(c - o, x, _bin_groups(bins))


def _sweep_signed(data: _Prepared, gammas: Sequence[float],
                  progress: Callable[[float, str], None] | None = None) -> np.ndarray:
    """Signed eq. 4 at every γ by the sweep: ``(len(gammas), n)``. The weights ``c − o + 1``
    and ``1`` are non-negative; the numerator is their difference."""
    n = data.residual.shape[0]
    out = np.empty((len(gammas), n))
    done = 0
    for rows in data.groups:
        if progress is not None:
            progress(done / n, f"exact sweep at {len(gammas)} bandwidth(s): "
                               f"{done:,} of {n:,} rows")
        done += rows.size
        weights = np.vstack([data.residual[rows] + 1.0, np.ones(rows.size)])
        sums = _sweep_sums_bin(data.features[rows], weights, gammas)
        out[:, rows] = (sums[:, 0] - sums[:, 1]) / sums[:, 1]
    return np.clip(out, -1.0, 1.0)


def _signed_lce(
    data: _Prepared,
    gamma: float,
    plan: LceMethod,
    tile_size: int,
    n_jobs: int | None,
) -> np.ndarray:
    """Signed eq. 4 (``numerator / denominator``), clipped to [−1, 1] against round-off."""
    if plan.name == "sweep":
        return _sweep_signed(data, [gamma])[0]
    if plan.name == "binned":
        num, den = _binned_sums(data.residual, data.features, data.groups, gamma,
                                plan.grid_size)
    else:
        num, den = _exact_sums(data.residual, data.features, data.groups, gamma, tile_size,
                               n_jobs)
    return np.clip(num / den, -1.0, 1.0)


@dataclass(frozen=True)
class LceResult:
    """LCE values (eq. 4) with the computation that produced them."""

    values: np.ndarray  # (n,) signed or absolute, as asked
    gamma: float
    signed: bool
    method: LceMethod


def lce_result(
    conf: ArrayLike,
    correct: ArrayLike,
    features: ArrayLike,
    gamma: float,
    n_bins: int = 15,
    signed: bool = False,
    method: str = "auto",
    grid_size: int | None = None,
    tile_size: int = LCE_TILE,
    n_jobs: int | None = None,
) -> LceResult:
    """:func:`lce` with the :class:`LceMethod` that ran (for a caption: which computation,
    its error bound, and what the exact one would cost)."""
    data = _prepare(conf, correct, features, n_bins)
    g = _check_gamma(gamma, data.features.shape[1])
    if grid_size is not None:
        grid_size = check_count("grid_size", grid_size, 2)
    plan = plan_method(data.features, g, method, grid_size, n_bins, data.bin_sizes)
    values = _signed_lce(data, g, plan, check_count("tile_size", tile_size, 1),
                         _check_n_jobs(n_jobs))
    return LceResult(values if signed else np.abs(values), g, bool(signed), plan)


def lce(
    conf: ArrayLike,
    correct: ArrayLike,
    features: ArrayLike,
    gamma: float,
    n_bins: int = 15,
    signed: bool = False,
    method: str = "auto",
    grid_size: int | None = None,
    tile_size: int = LCE_TILE,
    n_jobs: int | None = None,
) -> np.ndarray:
    """Local calibration error of every prediction (Luo et al., eq. 4).

    ::

        LCE_γ(x_j) = | Σ_{i∈β(x_j)} (c_i − o_i) k_γ(x_j, x_i) / Σ_{i∈β(x_j)} k_γ(x_j, x_i) |
        k_γ(a, b) = exp(−‖a − b‖₁ / (d·γ))

    ``β(x_j)`` are the predictions in the same of ``n_bins`` equal-width confidence bins as
    ``x_j`` (right-closed, as :func:`core.metrics.bin_indices`), ``x_j`` itself included.

    Parameters
    ----------
    conf
        ``(n,)`` top-label confidences ``c_i`` in [0, 1].
    correct
        ``(n,)`` 1 if the prediction was right, 0 if wrong (``o_i``). Both come from
        ``core.metrics.confidence_outcome(probs, y, "top-label")``.
    features
        ``(n, d)`` feature embedding ``φ(x_i)`` (e.g. t-SNE or PCA coordinates).
    gamma
        kernel bandwidth γ > 0; ``numpy.inf`` gives the γ → ∞ limit (the bin's gap).
    n_bins
        number of equal-width confidence bins (15 in the paper).
    signed
        return ``Σ(c − o)k / Σk`` without the absolute value — confidence minus
        accuracy, so positive means over-confident and negative under-confident.
    method
        ``"exact"`` (the cheaper of ``"pairs"``, the tile engine, and ``"sweep"``, exact in
        O(n log² n) for 1-D and 2-D features), ``"binned"`` (grid approximation, 2-D
        features, error at most :func:`binned_error_bound`) or ``"auto"``
        (:func:`plan_method`; :func:`lce_result` reports which ran).
    grid_size
        grid nodes per axis of the binned approximation (default :data:`DEFAULT_GRID`;
        ``"auto"`` picks its own from :data:`AUTO_GRIDS`).
    tile_size
        tile edge of the exact method's :func:`core.kernels.kernel_matmul`.
    n_jobs
        worker threads of the exact method (``None``: the tile engine's default).

    Returns
    -------
    ``(n,)`` float64, in [0, 1] (signed: in [−1, 1]).
    """
    return lce_result(conf, correct, features, gamma, n_bins, signed, method, grid_size,
                      tile_size, n_jobs).values


def mlce(
    conf: ArrayLike,
    correct: ArrayLike,
    features: ArrayLike,
    gamma: float,
    n_bins: int = 15,
    method: str = "auto",
    grid_size: int | None = None,
    tile_size: int = LCE_TILE,
    n_jobs: int | None = None,
) -> float:
    """Maximum local calibration error, ``MLCE_γ = max_j LCE_γ(x_j)`` (Luo et al., eq. 5).

    Tends to the binned MCE with the same bins as γ → ∞ (Lemma 1) and to
    ``max_j |c_j − o_j|`` as γ → 0. Arguments as :func:`lce`.
    """
    return float(np.max(lce(conf, correct, features, gamma, n_bins, False, method, grid_size,
                            tile_size, n_jobs)))


def _check_gammas(gammas: ArrayLike, d: int) -> np.ndarray:
    try:
        g = np.atleast_1d(np.asarray(gammas, dtype=np.float64))
    except (TypeError, ValueError) as err:
        raise ValueError("gammas must be a list of positive bandwidths.") from err
    if g.ndim != 1 or g.size == 0:
        raise ValueError("gammas must be a non-empty list of bandwidths.")
    return np.array([_check_gamma(value, d) for value in g])


def mlce_curve(
    conf: ArrayLike,
    correct: ArrayLike,
    features: ArrayLike,
    gammas: ArrayLike,
    n_bins: int = 15,
    method: str = "auto",
    grid_size: int | None = None,
    tile_size: int = LCE_TILE,
    n_jobs: int | None = None,
    progress: Callable[[float, str], None] | None = None,
) -> pd.DataFrame:
    """MLCE (eq. 5) and mean LCE (eq. 4) over a grid of bandwidths (Luo et al., Fig. 1, 3).

    Returns one row per γ in the given order: ``gamma``, ``mlce`` = ``max_j LCE_γ(x_j)``,
    ``mean_lce`` = ``(1/n) Σ_j LCE_γ(x_j)``, ``method`` (which computation ran at that γ:
    ``"pairs"``, ``"sweep"`` or ``"binned"``; under ``"auto"`` it depends on γ through the
    binned error bound) and ``error_bound`` (its worst-case ``|LCE − exact|``, which bounds
    the error of both the MLCE and the mean; 0 for the exact methods). The γ values that
    the sweep computes share one layout per confidence bin. ``progress(fraction, message)``
    is called before each γ.
    """
    data = _prepare(conf, correct, features, n_bins)
    if grid_size is not None:
        grid_size = check_count("grid_size", grid_size, 2)
    tile_size = check_count("tile_size", tile_size, 1)
    n_jobs = _check_n_jobs(n_jobs)
    checked = _check_gammas(gammas, data.features.shape[1])
    plans = [plan_method(data.features, g, method, grid_size, n_bins, data.bin_sizes)
             for g in checked]
    sweep = [k for k, plan in enumerate(plans) if plan.name == "sweep"]
    values: dict[int, np.ndarray] = {}
    if sweep:
        share = len(sweep) / len(plans)
        report = None if progress is None else \
            (lambda f, m: progress(share * f, f"MLCE over γ: {m}"))
        values.update(zip(sweep, np.abs(_sweep_signed(data, [checked[k] for k in sweep],
                                                      report)), strict=True))
    rest = [k for k in range(len(plans)) if k not in values]
    for done, k in enumerate(rest):
        if progress is not None:
            progress((len(sweep) + done) / len(plans),
                     f"MLCE over γ: γ = {checked[k]:.3g} ({plans[k].name})…")
        values[k] = np.abs(_signed_lce(data, checked[k], plans[k], tile_size, n_jobs))
    rows = [{"gamma": g, "mlce": float(values[k].max()), "mean_lce": float(values[k].mean()),
             "method": plans[k].name, "error_bound": plans[k].error_bound}
            for k, g in enumerate(checked)]
    return pd.DataFrame(rows, columns=["gamma", "mlce", "mean_lce", "method", "error_bound"])


# --------------------------------------------------------------------------- per-bin views


def _check_lce_values(lce_values: ArrayLike, n: int) -> np.ndarray:
    v = np.asarray(lce_values, dtype=np.float64)
    if v.ndim != 1 or v.shape[0] != n:
        raise ValueError(
            f"lce_values must be a 1-D array with one LCE per prediction ({n}); got shape "
            f"{v.shape}."
        )
    if not (np.isfinite(v) & (np.abs(v) <= 1.0)).all():
        raise ValueError("lce_values must be LCE values between −1 and 1 (as lce returns).")
    return v


def bin_summary(
    conf: ArrayLike, correct: ArrayLike, lce_values: ArrayLike, n_bins: int = 15
) -> pd.DataFrame:
    """Per confidence bin: the global calibration of the bin beside its local errors.

    One row per bin ``b`` (empty bins kept, with count 0 and NaN statistics): ``bin``,
    ``bin_lower``, ``bin_upper``, ``count`` ``n_b``, ``mean_confidence`` ``conf(B_b)``,
    ``accuracy`` ``acc(B_b)``, ``gap`` = ``conf(B_b) − acc(B_b)`` (positive = over-confident,
    the sign of the signed LCE), ``calibration_error`` = ``|conf(B_b) − acc(B_b)|`` (the
    bin's term of the MCE, paper eq. 3), ``mean_lce`` and ``max_lce`` of ``lce_values`` over
    the bin. Paper §3.3 / Fig. 2 compare ``mean_lce`` with ``calibration_error``: a mean LCE
    well above the bin's error means over- and under-confident regions cancel in the bin.
    """
    c, o = _check_vectors(conf, correct)
    v = _check_lce_values(lce_values, c.shape[0])
    n_bins = check_count("n_bins", n_bins, 1)
    bins = confidence_bins(c, n_bins)
    edges = bin_edges(c, n_bins, "uniform")
    counts = np.bincount(bins, minlength=n_bins)
    filled = counts > 0

    def mean_of(values: np.ndarray) -> np.ndarray:
        total = np.bincount(bins, weights=values, minlength=n_bins)
        return np.divide(total, counts, out=np.full(n_bins, np.nan), where=filled)

    max_lce = np.full(n_bins, -np.inf)
    np.maximum.at(max_lce, bins, v)
    mean_conf, acc = mean_of(c), mean_of(o)
    return pd.DataFrame({
        "bin": np.arange(n_bins),
        "bin_lower": edges[:-1],
        "bin_upper": edges[1:],
        "count": counts.astype(np.int64),
        "mean_confidence": mean_conf,
        "accuracy": acc,
        "gap": mean_conf - acc,
        "calibration_error": np.abs(mean_conf - acc),
        "mean_lce": mean_of(v),
        "max_lce": np.where(filled, max_lce, np.nan),
    })


def lce_cdf(lce_values: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """Empirical CDF of LCE values: sorted values ``v_(k)`` and fractions ``k/m``.

    ``F(v_(k)) = k/m`` for the ``m`` values (Luo et al., Fig. 2 right panels). An empty
    input gives two empty arrays.
    """
    v = np.asarray(lce_values, dtype=np.float64)
    if v.ndim != 1 or not np.isfinite(v).all():
        raise ValueError("lce_values must be a 1-D array of finite LCE values.")
    return np.sort(v), np.arange(1, v.shape[0] + 1) / max(v.shape[0], 1)


@dataclass(frozen=True)
class BinCdf:
    """The LCE distribution of one confidence bin against that bin's calibration error."""

    bin: int
    values: np.ndarray  # sorted LCE values of the bin
    fraction: np.ndarray  # cumulative fraction, k/m
    calibration_error: float  # |conf(B) − acc(B)| (NaN for an empty bin)
    mean_lce: float
    share_above: float  # fraction of the bin's points with LCE above the bin's error


def bin_lce_cdf(
    conf: ArrayLike, correct: ArrayLike, lce_values: ArrayLike, bin_index: int,
    n_bins: int = 15,
) -> BinCdf:
    """CDF of the LCE inside one confidence bin with the bin's ``|conf(B) − acc(B)|``.

    The right panels of Luo et al. Fig. 2: a CDF lying right of the bin's calibration error
    (``share_above`` near 1) shows local miscalibration that the bin average hides.
    """
    c, o = _check_vectors(conf, correct)
    v = _check_lce_values(lce_values, c.shape[0])
    n_bins = check_count("n_bins", n_bins, 1)
    if isinstance(bin_index, bool) or not isinstance(bin_index, int | np.integer) or not (
        0 <= bin_index < n_bins
    ):
        raise ValueError(f"bin_index must be a bin number from 0 to {n_bins - 1}, not "
                         f"{bin_index!r}.")
    inside = confidence_bins(c, n_bins) == bin_index
    values, fraction = lce_cdf(v[inside])
    if not inside.any():
        return BinCdf(int(bin_index), values, fraction, np.nan, np.nan, np.nan)
    error = float(abs(c[inside].mean() - o[inside].mean()))
    return BinCdf(int(bin_index), values, fraction, error, float(values.mean()),
                  float(np.mean(values > error)))
