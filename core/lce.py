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

Two evaluation methods:

* ``"exact"`` — per bin, one :func:`core.kernels.kernel_matmul` of the bin's points against
  themselves with ``V = [c − o, 1]`` gives numerator and denominator in one tiled pass; no
  n×n matrix, memory O(n + tile²), time O(Σ_b n_b² · d).
* ``"binned"`` (2-D features only) — per bin, the weights ``c − o`` and ``1`` are deposited on
  a regular ``grid_size × grid_size`` grid by cloud-in-cell (bilinear) weights, convolved with
  the kernel sampled on the grid, and interpolated back to the points with the same weights.
  The L1 Laplacian factorises over coordinates, ``exp(−|Δx|/(2γ))·exp(−|Δy|/(2γ))``, and a
  one-dimensional exponential kernel on a regular grid is a first-order recursive filter
  (``r = exp(−h/(2γ))``; a forward plus a backward pass, minus the centre). So the grid
  convolution is the exact *linear* (zero-padded, no wrap-around) discrete convolution that
  an FFT with zero padding would give, computed in O(grid_size²) per bin without FFT
  round-off. Time O(n + n_bins · grid_size²). The error bound is :func:`binned_error_bound`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from core._binning import bin_edges, bin_indices
from core._validation import check_choice, check_count
from core.kernels import kernel_matmul

METHODS = ("exact", "binned", "auto")
#: Tile edge of the exact method; small tiles keep the Laplacian's element-wise passes in cache.
LCE_TILE = 256
#: Default number of grid nodes per axis of the binned approximation.
DEFAULT_GRID = 256
#: ``method="auto"`` uses the binned approximation above this many points (2-D features only)…
AUTO_MIN_POINTS = 100_000
#: …and only when its worst-case error bound (:func:`binned_error_bound`) is at most this.
AUTO_MAX_ERROR = 0.05


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
    return check_choice(method, METHODS, "method", "choose 'exact', 'binned' or 'auto'")


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
    return float((1.0 + 1.0 / n_bins) * np.expm1(2.0 * tau) / 2.0)


def _binned_dimension_message(d: int) -> str:
    return (
        "The binned approximation works on 2-D embeddings (features with 2 columns); these "
        f"features have {d}. Use method='exact'."
    )


def choose_method(
    features: ArrayLike,
    gamma: float,
    method: str = "auto",
    grid_size: int = DEFAULT_GRID,
    n_bins: int = 15,
) -> str:
    """The method :func:`lce` runs: ``"exact"`` or ``"binned"`` (for the UI to report).

    ``"auto"`` picks ``"binned"`` for 2-D features with more than :data:`AUTO_MIN_POINTS`
    rows whose :func:`binned_error_bound` is at most :data:`AUTO_MAX_ERROR`; otherwise
    ``"exact"``. ``"binned"`` requires 2-D features.
    """
    method = _check_method(method)
    x = _check_features(features)
    n, d = x.shape
    if method == "binned" and d != 2:
        raise ValueError(_binned_dimension_message(d))
    if method != "auto":
        return method
    if d != 2 or n <= AUTO_MIN_POINTS:
        return "exact"
    bound = binned_error_bound(x, gamma, grid_size, n_bins)
    return "binned" if bound <= AUTO_MAX_ERROR else "exact"


# --------------------------------------------------------------------------- LCE and MLCE


@dataclass(frozen=True)
class _Prepared:
    """Validated inputs shared by every γ of a curve."""

    residual: np.ndarray  # c − o
    features: np.ndarray
    groups: list[np.ndarray]


def _prepare(conf: ArrayLike, correct: ArrayLike, features: ArrayLike, n_bins: int) -> _Prepared:
    c, o = _check_vectors(conf, correct)
    x = _check_features(features, c.shape[0])
    bins = confidence_bins(c, check_count("n_bins", n_bins, 1))
    return _Prepared(c - o, x, _bin_groups(bins))


def _signed_lce(
    data: _Prepared,
    gamma: float,
    method: str,
    grid_size: int,
    tile_size: int,
    n_jobs: int | None,
) -> np.ndarray:
    """Signed eq. 4 (``numerator / denominator``), clipped to [−1, 1] against round-off."""
    if method == "binned":
        num, den = _binned_sums(data.residual, data.features, data.groups, gamma, grid_size)
    else:
        num, den = _exact_sums(data.residual, data.features, data.groups, gamma, tile_size,
                               n_jobs)
    return np.clip(num / den, -1.0, 1.0)


def lce(
    conf: ArrayLike,
    correct: ArrayLike,
    features: ArrayLike,
    gamma: float,
    n_bins: int = 15,
    signed: bool = False,
    method: str = "auto",
    grid_size: int = DEFAULT_GRID,
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
        ``"exact"`` (tile engine), ``"binned"`` (grid approximation, 2-D features,
        error at most :func:`binned_error_bound`) or ``"auto"`` (:func:`choose_method`).
    grid_size
        grid nodes per axis of the binned approximation.
    tile_size
        tile edge of the exact method's :func:`core.kernels.kernel_matmul`.
    n_jobs
        worker threads of the exact method (``None``: the tile engine's default).

    Returns
    -------
    ``(n,)`` float64, in [0, 1] (signed: in [−1, 1]).
    """
    data = _prepare(conf, correct, features, n_bins)
    g = _check_gamma(gamma, data.features.shape[1])
    chosen = choose_method(data.features, g, method, check_count("grid_size", grid_size, 2),
                           n_bins)
    values = _signed_lce(data, g, chosen, grid_size, check_count("tile_size", tile_size, 1),
                         _check_n_jobs(n_jobs))
    return values if signed else np.abs(values)


def mlce(
    conf: ArrayLike,
    correct: ArrayLike,
    features: ArrayLike,
    gamma: float,
    n_bins: int = 15,
    method: str = "auto",
    grid_size: int = DEFAULT_GRID,
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
    grid_size: int = DEFAULT_GRID,
    tile_size: int = LCE_TILE,
    n_jobs: int | None = None,
) -> pd.DataFrame:
    """MLCE (eq. 5) and mean LCE (eq. 4) over a grid of bandwidths (Luo et al., Fig. 1, 3).

    Returns one row per γ in the given order: ``gamma``, ``mlce`` = ``max_j LCE_γ(x_j)``,
    ``mean_lce`` = ``(1/n) Σ_j LCE_γ(x_j)`` and ``method`` (which evaluation ran at that γ;
    under ``"auto"`` it can depend on γ through the binned error bound).
    """
    data = _prepare(conf, correct, features, n_bins)
    grid_size = check_count("grid_size", grid_size, 2)
    tile_size = check_count("tile_size", tile_size, 1)
    n_jobs = _check_n_jobs(n_jobs)
    rows = []
    for g in _check_gammas(gammas, data.features.shape[1]):
        chosen = choose_method(data.features, g, method, grid_size, n_bins)
        values = np.abs(_signed_lce(data, g, chosen, grid_size, tile_size, n_jobs))
        rows.append({"gamma": g, "mlce": float(values.max()), "mean_lce": float(values.mean()),
                     "method": chosen})
    return pd.DataFrame(rows, columns=["gamma", "mlce", "mean_lce", "method"])


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
