"""The tile engine: kernel sums over all pairs without ever holding the n×n matrix.

Every kernel statistic in Calibration Atlas is a weighted double sum over pairs of rows,

    Q_b = Σ_i Σ_j k(z_i, z_j) e_ib e_jb          (the diagonal of Eᵀ K E)
    M   = K(Z_query, Z_ref) @ V                    (kernel-weighted sums at query points)

This module evaluates both by walking the kernel matrix in square tiles (``tile_size`` rows ×
``tile_size`` columns): pairwise distances with one BLAS product per tile (for the Gaussian,
``‖a‖² + ‖b‖² − 2 a·b`` on centred points) or direct coordinate differences (for the
Laplacian's L1 distance, where the expansion would cancel on near-duplicates), ``exp`` in
place, and one matrix product with the tile's block of E or V. Sums are accumulated in
float64. Memory is O(tile² + n·columns), never O(n²).

A test with B resamples is one pass: E holds the observed residual vector in column 0 and
one resampled residual vector per further column, so ``diag(Eᵀ K E)`` gives the observed
statistic and all B null statistics from the same kernel tiles. Tiles are independent pure
functions returning partial sums; they run on a thread pool (numpy releases the GIL in
``exp`` and BLAS), and could run on any other executor.

Kernels (DESIGN.md conventions):

* Gaussian ``k(a, b) = exp(-‖a − b‖² / (2σ²))``, ``bandwidth = σ``. A product of Gaussian
  kernels on blocks of coordinates with their own bandwidths is one Gaussian on the
  coordinates divided by their bandwidths (:func:`scale_blocks`).
* Laplacian (Luo et al., local calibration) ``k(a, b) = exp(-‖a − b‖₁ / (d·γ))``,
  ``gamma = γ``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from types import ModuleType

import numpy as np

from core.data.validation import check_choice
from core.kernels import engine
from core.kernels.engine import array_module, run_tiles

#: Tile edge on the CPU: a 512 × 512 tile (2 MiB) and its band of the weights stay in cache
#: through the product, the elementwise passes and the product with the weights; measured
#: here, a sum over 10⁹ Gaussian pairs takes 37 % less CPU than with 2,048 × 2,048 tiles
#: (32 MiB, streamed through memory), the exact consistency sums 20–35 % less (the GPU
#: engine takes its own larger tiles, :data:`~core.kernels.engine.GPU_TILE`).
DEFAULT_TILE = 512
#: Largest number of points the median heuristic looks at (a seeded subsample beyond that).
MEDIAN_SAMPLE = 2000


# --------------------------------------------------------------------------- kernel blocks


def _as_2d(points: np.ndarray) -> np.ndarray:
    points = np.asarray(points, dtype=np.float64)
    return points[:, None] if points.ndim == 1 else points


def gaussian_block(a: np.ndarray, b: np.ndarray, bandwidth: float = 1.0) -> np.ndarray:
    """Dense Gaussian kernel block ``exp(-‖a_i − b_j‖² / (2σ²))`` for a small tile.

    Parameters
    ----------
    a, b : numpy.ndarray
        ``(n_a, d)`` and ``(n_b, d)`` points.
    bandwidth : float, default 1.0
        σ.

    Returns
    -------
    numpy.ndarray
        ``(n_a, n_b)``.
    """
    return _gaussian_tile(np, _as_2d(a) / bandwidth, _as_2d(b) / bandwidth)


#: Rows of a Gaussian tile that its elementwise passes update at a time on the CPU (64 rows:
#: at most 1 MiB, which stays in a core's cache through the passes; 1.3 times faster per
#: 2,048-wide tile than whole-tile passes).
_PASS_ROWS = 64


def _gaussian_tile(xp: ModuleType, a, b, out=None):
    """The σ = 1 Gaussian block of pre-scaled points in the array module ``xp`` (into ``out``,
    a C-contiguous ``(len(a), len(b))`` buffer, when given)."""
    # the exponent −½‖a − b‖² = a·b − ½‖a‖² − ½‖b‖² as one BLAS product of the points
    # augmented by (−½‖a‖², 1) and (1, −½‖b‖²): the same terms added in the same order as a·b
    # first and the squared norms after, without two passes over the tile to subtract them.
    # The product is one BLAS call on the whole tile (the rounding of a row's products depends
    # on how many rows a call holds); the passes after it are elementwise, so taking them a
    # band of rows at a time gives the same numbers.
    left = xp.concatenate([a, -0.5 * (a * a).sum(axis=1)[:, None],
                           xp.ones((a.shape[0], 1), dtype=a.dtype)], axis=1)
    right = xp.concatenate([b, xp.ones((b.shape[0], 1), dtype=b.dtype),
                            -0.5 * (b * b).sum(axis=1)[:, None]], axis=1)
    sq = left @ right.T if out is None else xp.matmul(left, right.T, out=out)
    step = _PASS_ROWS if xp is np else max(1, sq.shape[0])
    for lo in range(0, sq.shape[0], step):
        band = sq[lo:lo + step]
        xp.minimum(band, 0.0, out=band)
        xp.exp(band, out=band)
    return sq


def laplacian_block(a: np.ndarray, b: np.ndarray, gamma: float) -> np.ndarray:
    """Dense Laplacian kernel block ``exp(-‖a_i − b_j‖₁ / (d·γ))`` (Luo et al., eq. 4).

    Computed from direct coordinate differences, exact even for near-duplicate points.

    Parameters
    ----------
    a, b : numpy.ndarray
        ``(n_a, d)`` and ``(n_b, d)`` points.
    gamma : float
        γ.

    Returns
    -------
    numpy.ndarray
        ``(n_a, n_b)``.
    """
    return _laplacian_tile(np, _as_2d(a), _as_2d(b), gamma)


def _laplacian_tile(xp: ModuleType, a, b, gamma: float):
    dist = xp.zeros((a.shape[0], b.shape[0]), dtype=a.dtype)
    for k in range(a.shape[1]):
        dist += xp.abs(a[:, k, None] - b[None, :, k])
    dist *= -1.0 / (a.shape[1] * gamma)
    return xp.exp(dist, out=dist)


def _kernel_tile(xp: ModuleType, kind: str, a, b, bandwidth: float, out=None):
    """A kernel block in the array module ``xp`` (Gaussian points not yet scaled by σ; a
    Gaussian block is written into ``out`` when given)."""
    if kind == "gaussian":
        return _gaussian_tile(xp, a / bandwidth, b / bandwidth, out) if bandwidth != 1.0 \
            else _gaussian_tile(xp, a, b, out)
    if kind == "laplacian":
        return _laplacian_tile(xp, a, b, bandwidth)
    check_choice(kind, ("gaussian", "laplacian"), "kernel", "use 'gaussian' or 'laplacian'")
    raise AssertionError("unreachable")  # check_choice raised for anything else


# --------------------------------------------------------------------------- bandwidths


def median_heuristic(points: np.ndarray, max_points: int = MEDIAN_SAMPLE, seed: int = 0) -> float:
    """Median Euclidean distance between distinct points (a seeded subsample for large n).

    The usual default bandwidth of a Gaussian kernel. Returns 1.0 when all points coincide,
    so that a degenerate input still gives a valid (constant) kernel.

    Parameters
    ----------
    points : numpy.ndarray
        ``(n, d)`` or ``(n,)``.
    max_points : int, default 2000
        Rows of the seeded subsample.
    seed : int, default 0
        Its seed.

    Returns
    -------
    float
    """
    points = _as_2d(points)
    n = points.shape[0]
    if n > max_points:
        points = points[np.random.default_rng(seed).choice(n, max_points, replace=False)]
    centred = points - points.mean(axis=0)
    sq = (centred * centred).sum(axis=1)
    d2 = centred @ centred.T
    d2 *= -2.0
    d2 += sq[:, None]
    d2 += sq[None, :]
    upper = d2[np.triu(np.ones(d2.shape, dtype=bool), k=1)]
    distances = np.sqrt(np.maximum(upper, 0.0))
    distances = distances[distances > 0]
    return float(np.median(distances)) if distances.size else 1.0


@dataclass(frozen=True)
class Standardizer:
    """Column z-scores that remember their centre and scale, so new rows map the same way.

    ``transform(X) = (X − center) / scale`` with the population standard deviation
    (DESIGN.md), so a feature bandwidth is in standard deviations of the rows it was fitted
    on. A constant column gets ``center`` = its value and ``scale`` = 1 (it becomes exactly 0).
    Tuples, not arrays, so a value hashes stably (a cache key) and prints in a report.

    Attributes
    ----------
    center, scale : tuple of float
        Per column.
    """

    center: tuple[float, ...]
    scale: tuple[float, ...]

    @classmethod
    def fit(cls, X: np.ndarray) -> Standardizer:
        """Centre and scale of every column of ``X`` (``(n, d)`` or ``(n,)``).

        Each column is divided by its largest absolute deviation before squaring, so huge
        values cannot overflow the variance.
        """
        matrix = _as_2d(X)
        if matrix.shape[0] == 0:
            return cls((0.0,) * matrix.shape[1], (1.0,) * matrix.shape[1])
        constant = matrix.max(axis=0) == matrix.min(axis=0)
        center = np.where(constant, matrix[0], matrix.mean(axis=0))
        centred = matrix - center
        largest = np.where(constant, 1.0, np.abs(centred).max(axis=0))
        sd = largest * np.sqrt(np.mean((centred / largest) ** 2, axis=0))
        sd[constant] = 1.0
        return cls(tuple(center.tolist()), tuple(sd.tolist()))

    @property
    def n_features(self) -> int:
        return len(self.center)

    def transform(self, X: np.ndarray) -> np.ndarray:
        """``(X − center) / scale`` as a new float64 array (columns as in :meth:`fit`)."""
        matrix = _as_2d(X)
        if matrix.shape[1] != self.n_features:
            raise ValueError(f"These rows have {matrix.shape[1]} features; the standardisation "
                             f"was fitted on {self.n_features}.")
        return (matrix - np.asarray(self.center)) / np.asarray(self.scale)


def standardize_features(X: np.ndarray) -> np.ndarray:
    """Column z-scores with the population standard deviation (DESIGN.md), so that a
    feature bandwidth is in standard deviations; a constant column becomes exactly 0.

    ``Standardizer.fit(X).transform(X)``; returns a new float64 array.
    """
    return Standardizer.fit(X).transform(X)


def scale_blocks(blocks: Sequence[np.ndarray], bandwidths: Sequence[float]) -> np.ndarray:
    """Coordinates for a product of Gaussian kernels as one Gaussian with σ = 1.

    ``Π_b exp(-‖u_b − v_b‖² / (2σ_b²)) = exp(-‖[u_b/σ_b]_b − [v_b/σ_b]_b‖² / 2)``.

    Parameters
    ----------
    blocks : sequence of numpy.ndarray
        ``(n, d_b)`` coordinate blocks.
    bandwidths : sequence of float
        σ_b of each block.

    Returns
    -------
    numpy.ndarray
        ``(n, Σ d_b)``.
    """
    return np.column_stack([_as_2d(b) / s for b, s in zip(blocks, bandwidths, strict=True)])


# --------------------------------------------------------------------------- scheduling


def _tiles(n: int, tile: int) -> list[tuple[int, int]]:
    return [(start, min(start + tile, n)) for start in range(0, n, tile)]


def _tile_size(tile_size: int) -> int:
    """The GPU engine takes larger tiles than the CPU default (one tile keeps it busy)."""
    return max(tile_size, engine.GPU_TILE) if engine.current().name == "gpu" else tile_size


def _prepare(points: np.ndarray, kind: str, bandwidth: float) -> np.ndarray:
    """Centre (and for the Gaussian, pre-scale) points once, so tiles skip that work."""
    points = _as_2d(points)
    if kind == "gaussian":
        points = (points - points.mean(axis=0)) / bandwidth
    return np.ascontiguousarray(points)


# --------------------------------------------------------------------------- the two sums


def _quadratic_row(module: str, z, E, item: tuple) -> np.ndarray:
    """Partial ``Σ k(z_i, z_j) e_i e_j`` of one tile row ``[lo, hi)`` against the tiles on
    and after the diagonal (off-diagonal tiles count twice); a tile task of the engine."""
    xp = array_module(module)
    lo, hi, tile, kind, scale = item
    n = z.shape[0]
    total = xp.zeros(E.shape[1], dtype=xp.float64)
    for clo in range(lo, n, tile):
        chi = min(clo + tile, n)
        block = _kernel_tile(xp, kind, z[lo:hi], z[clo:chi], scale) @ E[clo:chi]
        partial = xp.einsum("ib,ib->b", E[lo:hi], block).astype(xp.float64)
        total += partial if clo == lo else 2.0 * partial
    return total


def _matmul_rows(module: str, query, reference, V, item: tuple) -> np.ndarray:
    """``K(query[lo:hi], reference) @ V`` for one tile row; a tile task of the engine."""
    xp = array_module(module)
    lo, hi, tile, kind, scale = item
    out = xp.zeros((hi - lo, V.shape[1]), dtype=xp.float64)
    # on the CPU every tile of the row is computed in one buffer, not in fresh pages per tile
    buffer = np.empty((hi - lo) * min(tile, reference.shape[0])) if xp is np else None
    for clo in range(0, reference.shape[0], tile):
        chi = min(clo + tile, reference.shape[0])
        block = None if buffer is None else \
            buffer[:(hi - lo) * (chi - clo)].reshape(hi - lo, chi - clo)
        out += _kernel_tile(xp, kind, query[lo:hi], reference[clo:chi], scale, block) \
            @ V[clo:chi]
    return out


def quadratic_forms(
    points: np.ndarray,
    E: np.ndarray,
    bandwidth: float = 1.0,
    kind: str = "gaussian",
    exclude_diagonal: bool = True,
    tile_size: int = DEFAULT_TILE,
    n_jobs: int | None = None,
) -> np.ndarray:
    """``diag(Eᵀ K E)``: for every column e of E, ``Σ_{i,j} k(z_i, z_j) e_i e_j``.

    With ``exclude_diagonal`` the terms i = j are left out (U-statistics): since
    ``k(z, z) = 1`` for both kernels, that is ``Σ_i e_i²`` per column, subtracted exactly.
    Only tiles on and above the diagonal are computed; off-diagonal tiles count twice.

    Parameters
    ----------
    points
        ``(n, d)`` or ``(n,)`` kernel inputs.
    E
        ``(n,)`` or ``(n, B)`` weights; one quadratic form per column.
    bandwidth
        σ of the Gaussian or γ of the Laplacian.
    kind : {"gaussian", "laplacian"}
        The kernel.
    exclude_diagonal : bool, default True
        Leave out the terms i = j.
    tile_size : int
        Tile edge.
    n_jobs : int, optional
        Threads (default: the engine's).

    Returns
    -------
    numpy.ndarray
        ``(B,)`` float64 (a scalar array of shape ``()`` when E is one-dimensional).
    """
    vector = np.ndim(E) == 1
    E = np.ascontiguousarray(_as_2d(E))
    z = _prepare(points, kind, bandwidth)
    scale = 1.0 if kind == "gaussian" else bandwidth
    tile = _tile_size(tile_size)
    items = [(lo, hi, tile, kind, scale) for lo, hi in _tiles(z.shape[0], tile)]
    total = run_tiles(_quadratic_row, (z, E), items, "sum", n_jobs)
    if exclude_diagonal:
        total -= np.einsum("ib,ib->b", E, E)
    return total[0] if vector else total


def kernel_matmul(
    query: np.ndarray,
    reference: np.ndarray,
    V: np.ndarray,
    bandwidth: float = 1.0,
    kind: str = "gaussian",
    exclude_self: bool = False,
    tile_size: int = DEFAULT_TILE,
    n_jobs: int | None = None,
) -> np.ndarray:
    """``K(query, reference) @ V`` tile by tile; ``(n_query, B)``, or ``(n_query,)`` for 1-D V.

    With ``exclude_self`` (query and reference are the same rows) the diagonal ``k(z_i, z_i)
    v_i = v_i`` is removed, giving leave-one-out sums.

    Parameters
    ----------
    query, reference : numpy.ndarray
        ``(n_query, d)`` and ``(n_reference, d)`` points.
    V : numpy.ndarray
        ``(n_reference, B)`` or ``(n_reference,)`` weights.
    bandwidth : float, default 1.0
        The kernel's bandwidth.
    kind : {"gaussian", "laplacian"}
        The kernel.
    exclude_self : bool, default False
        Leave-one-out sums (query and reference are the same rows).
    tile_size : int, default 512
        Tile edge.
    n_jobs : int, optional
        Threads (default: the engine's).

    Returns
    -------
    numpy.ndarray
    """
    vector = np.ndim(V) == 1
    V = np.ascontiguousarray(_as_2d(V))
    query, reference = _as_2d(query), _as_2d(reference)
    if exclude_self and query.shape[0] != reference.shape[0]:
        raise ValueError("exclude_self needs the query and reference to be the same rows.")
    if kind == "gaussian":
        centre = reference.mean(axis=0)
        query, reference = (query - centre) / bandwidth, (reference - centre) / bandwidth
        scale = 1.0
    else:
        scale = bandwidth
    tile = _tile_size(tile_size)
    items = [(lo, hi, tile, kind, scale) for lo, hi in _tiles(query.shape[0], tile)]
    out = np.vstack(run_tiles(_matmul_rows, (query, reference, V), items, "stack", n_jobs))
    if exclude_self:
        out -= V
    return out[:, 0] if vector else out
