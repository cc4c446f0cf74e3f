"""Random Fourier features: kernel tests in O(n·D·B) whose level stays exact.

For the Gaussian kernel with σ = 1 on pre-scaled points (every kernel here is one, see
:func:`core.kernels.tiles.scale_blocks`), Bochner's theorem gives ``k(z, z') = E_w cos(wᵀ(z − z'))``
with ``w ~ N(0, I)``; with D/2 frequencies drawn once (Rahimi & Recht 2007, in the paired
form that Sutherland & Schneider 2015 show has the lower variance),

    φ(z) = √(2/D) · [cos(Wᵀz), sin(Wᵀz)],   W ∈ R^{d×D/2} with N(0, 1) entries,

and ``φ(z)ᵀφ(z') = (2/D) Σ_k cos(w_kᵀ(z − z'))``, so ``‖φ(z)‖² = 1 = k(z, z)`` exactly. Write
``K̃ = ΦΦᵀ``. The U-statistic of a residual vector e becomes

    Σ_{i≠j} e_i K̃_ij e_j = ‖Φᵀe‖² − Σ_i e_i²,

so all B resampled statistics cost O(n·D·B) — one pass over the rows, accumulating the D × B
matrix Φᵀ E — instead of O(n²·B). The centred statistic (residuals minus their column mean ē)
needs only the running sums ``u = Φᵀ1``, ``Σ e_i``, ``Σ e_i²`` and n:

    Σ_{i≠j} K̃_ij (e_i − ē)(e_j − ē) = ‖Φᵀe − ē u‖² − (Σ e_i² − n ē²).

Why the test stays valid: with W drawn once (seeded), the approximate statistic is a fixed
function of the data, and consistency resampling draws exact samples from H0 given the
predictions and features; observed and resampled statistics are exchangeable under H0 whatever
D is, so the p-value ``(1 + #{null ≥ T})/(1 + B)`` keeps its level exactly. Only the power
depends on D (the approximation's variance is O(1/D)).

Precision: φ is evaluated in single precision (``FourierMap.dtype``, float32 by default), the
chunk products Φᵀ E and Φᵀ 1 in float32 and the running sums in float64. On this machine that
is about 7× faster for the cosines and 2× for the products; the rounding error (≈ 1e-6
relative) is far below the approximation's own O(1/√D), and the statistic remains a fixed
function of the data, so the level argument above is untouched.

A bandwidth grid shares one pass (:func:`accumulate_maps`): the chunk's resamples are drawn
once, every grid point's map — the same W, the arguments ``(z/σ_m) W`` — is evaluated with the
others in one product ``z [W/σ_1 … W/σ_M]`` and one cosine and sine call, and the maps'
features are multiplied with the chunk's columns together (:meth:`FourierAccumulator.add`).

Memory: the rows are walked in chunks and each chunk's resampled residuals are drawn there,
row by row from a counter-based generator keyed by the seed and the global row number
(:func:`core.kernels.resampling.row_uniforms`), so nothing of size n × B or n × D is ever held
— O(n + D·B + chunk·(D + B)) — and the sums do not depend on how the rows are chunked: a
partition accumulated on another machine (:class:`FourierAccumulator`) adds to the others'
exactly as one pass over all rows would.
"""

from __future__ import annotations

import contextvars
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from types import ModuleType

import numpy as np

from core.data.validation import check_count
from core.kernels.engine import array_module, in_threads, machine_workers, to_host
from core.kernels.engine import current as engine_now
from core.kernels.resampling import row_bernoulli_residuals

#: Rows per chunk of the accumulation.
CHUNK_ROWS = 8192
#: Default number of random features.
DEFAULT_FEATURES = 1024
#: Random Fourier features of the pages' tests when they run approximately (the KLCE
#: bandwidth grid, each of its 25 points, the Trust page's single-bandwidth test and the SKCE
#: consistency test): the level is exact
#: for any D, and the RFF study (README) measured the power at D = 256 equal to D = 1,024's
#: within its error, at a quarter of the time. Values with an interval (the SKCE row) keep
#: the default D = 1,024 (:data:`DEFAULT_FEATURES`), whose approximation error is smaller.
TEST_FEATURES = 256

#: Most features of one product in :meth:`FourierAccumulator.add` (the maps of a grid are
#: multiplied with the residual columns together up to this many): a chunk's features then
#: take at most CHUNK_ROWS × 1,024 float32 (32 MiB).
PRODUCT_FEATURES = 1024

#: ``columns(rows) -> (len(rows), C)`` residual columns of a chunk of rows; column 0 the
#: observed residuals, the others resampled row by row from the counter-based generator of
#: :mod:`core.kernels.resampling` (so the draws do not depend on the chunking).
ColumnSource = Callable[[slice], np.ndarray]


@dataclass(frozen=True)
class FourierMap:
    """A seeded draw of the D/2 frequencies ``W``: the map ``φ`` of :meth:`features`.

    Attributes
    ----------
    weights : numpy.ndarray
        ``(D/2, d)`` frequencies.
    dtype : numpy.dtype
        Precision the features are evaluated in.
    """

    weights: np.ndarray  # (d, D/2)
    dtype: type = np.float32  # precision of φ and of the chunk products

    @classmethod
    def draw(cls, d: int, n_features: int, seed: int, dtype: type = np.float32) -> FourierMap:
        """``n_features`` features (an even number): D/2 frequencies, each a cosine and a
        sine."""
        n_features = check_count("n_features", n_features, 2)
        if n_features % 2:
            raise ValueError(f"n_features must be even (a cosine and a sine per frequency), "
                             f"not {n_features}.")
        rng = np.random.default_rng([seed, d, n_features])
        return cls(rng.standard_normal((d, n_features // 2)), dtype)

    @property
    def n_features(self) -> int:
        return 2 * int(self.weights.shape[1])

    def arguments(self, points: np.ndarray, inverse_bandwidths: np.ndarray,
                  xp: ModuleType = np) -> np.ndarray:
        """``(r, k·D/2)``: the arguments ``(z/σ_m) W`` of the k maps ``z ↦ φ(z/σ_m)``, map
        after map, as one product ``z [W/σ_1 … W/σ_k]`` in :attr:`dtype`
        (``inverse_bandwidths``: ``(k, d)``, ``1/σ_m``; 0 drops a column; ``xp``: the array
        module of ``points``, numpy or CuPy)."""
        scaled = inverse_bandwidths[:, :, None] * self.weights[None, :, :]  # (k, d, D/2)
        stacked = np.ascontiguousarray(scaled.transpose(1, 0, 2)).reshape(
            self.weights.shape[0], -1).astype(self.dtype)
        return points.astype(self.dtype) @ xp.asarray(stacked)

    def features(self, points: np.ndarray) -> np.ndarray:
        """``φ(z)`` of each row of ``points`` (pre-scaled, σ = 1)."""
        argument = self.arguments(points, np.ones((1, points.shape[1])))
        half = self.n_features // 2
        out = np.empty((points.shape[0], self.n_features), self.dtype)
        np.cos(argument, out=out[:, :half])
        np.sin(argument, out=out[:, half:])
        out *= self.dtype(np.sqrt(2.0 / self.n_features))
        return out


@dataclass(frozen=True)
class FourierSums:
    """Running sums of one pass, from which plain and centred statistics follow. Sums of
    disjoint sets of rows add (:meth:`__add__`), so partitions accumulated anywhere combine
    into the sums of one pass over all rows."""

    S: np.ndarray  # (D, C) Φᵀ E
    u: np.ndarray  # (D,) Φᵀ 1
    e_sum: np.ndarray  # (C,) Σ e_i
    e2_sum: np.ndarray  # (C,) Σ e_i²  (= Σ ‖φ_i‖² e_i², the diagonal: ‖φ_i‖² = 1)
    n: int

    def __add__(self, other: FourierSums) -> FourierSums:
        return FourierSums(self.S + other.S, self.u + other.u, self.e_sum + other.e_sum,
                           self.e2_sum + other.e2_sum, self.n + other.n)

    def plain(self) -> np.ndarray:
        """``Σ_{i≠j} K̃_ij e_i e_j`` for every column."""
        return np.einsum("dc,dc->c", self.S, self.S) - self.e2_sum

    def centred(self) -> np.ndarray:
        """``Σ_{i≠j} K̃_ij (e_i − ē)(e_j − ē)`` for every column."""
        mean = self.e_sum / self.n
        shifted = self.S - self.u[:, None] * mean[None, :]
        return np.einsum("dc,dc->c", shifted, shifted) - (self.e2_sum - self.n * mean**2)


class FourierAccumulator:
    """The sums of :func:`accumulate_maps`, fed chunk by chunk: :meth:`add` takes a chunk's
    coordinates and residual columns, :meth:`sums` returns one :class:`FourierSums` per map.
    A streamed test keeps one per partition and adds their sums.

    On the GPU engine (:func:`core.kernels.engine.current`, or ``module="cupy"``) a chunk's
    features and products are computed on the device with CuPy, in the map's precision as on
    threads, and each chunk's ``Φᵀ E`` and ``Φᵀ 1`` are added to the running sums here in
    float64: the same chunks and the same residual draws, so the sums equal the threads' to
    the rounding of the float32 products."""

    def __init__(self, fourier: FourierMap, bandwidths: np.ndarray,
                 module: str | None = None) -> None:
        self.module = module or ("cupy" if engine_now().name == "gpu" else "numpy")
        self.fourier = fourier
        self.inverse = 1.0 / np.asarray(bandwidths, dtype=np.float64)  # (M, d)
        self.S = self.u = None
        self.e_sum = self.e2_sum = 0.0
        self.n = 0

    def add(self, points: np.ndarray, E: np.ndarray) -> None:
        """Add the rows ``points`` (``(r, d)``) with their residual columns ``E`` (``(r, C)``).

        k maps at a time (at most :data:`PRODUCT_FEATURES` features: all 25 maps of a D = 32
        grid), one product gives their arguments (:meth:`FourierMap.arguments`), one cosine
        and one sine call their features (``[cos A, sin A]``), and the residual columns gain a
        column of ones, so one product ``[cos A, sin A]ᵀ [E 1]`` gives every map's ``Φᵀ E`` and
        ``Φᵀ 1`` (the factor √(2/D) applied in float64)."""
        fourier = self.fourier
        self.e_sum = self.e_sum + E.sum(axis=0)
        self.e2_sum = self.e2_sum + np.einsum("ic,ic->c", E, E)
        self.n += E.shape[0]
        xp = array_module(self.module)
        rows, columns, maps = E.shape[0], E.shape[1], len(self.inverse)
        half = fourier.n_features // 2
        narrow = xp.empty((rows, columns + 1), dtype=fourier.dtype)
        narrow[:, :columns] = xp.asarray(E)
        narrow[:, columns] = 1
        if self.S is None:
            self.S = np.zeros((maps, fourier.n_features, columns))
            self.u = np.zeros((maps, fourier.n_features))
        points = xp.asarray(points)
        scale = np.sqrt(2.0 / fourier.n_features)
        together = max(1, PRODUCT_FEATURES // fourier.n_features)
        for first in range(0, maps, together):
            last = min(maps, first + together)
            argument = fourier.arguments(points, self.inverse[first:last], xp)
            phi = xp.empty((rows, 2 * argument.shape[1]), dtype=fourier.dtype)
            xp.cos(argument, out=phi[:, :argument.shape[1]])
            xp.sin(argument, out=phi[:, argument.shape[1]:])
            # (C + 1, 2·k·D/2): the product laid out as BLAS computes it fastest here
            product = scale * to_host(narrow.T @ phi).reshape(columns + 1, 2, last - first,
                                                              half)
            for wave, part in enumerate((slice(0, half), slice(half, None))):
                self.S[first:last, part] += product[:columns, wave].transpose(1, 2, 0)
                self.u[first:last, part] += product[columns, wave]

    def merge(self, other: FourierAccumulator) -> FourierAccumulator:
        """Add another accumulator's sums (of other rows, under the same maps) to these."""
        if other.S is not None:
            if self.S is None:
                self.S, self.u = other.S.copy(), other.u.copy()
            else:
                self.S += other.S
                self.u += other.u
        self.e_sum = self.e_sum + other.e_sum
        self.e2_sum = self.e2_sum + other.e2_sum
        self.n += other.n
        return self

    def sums(self) -> list[FourierSums]:
        return [FourierSums(self.S[m], self.u[m], self.e_sum, self.e2_sum, self.n)
                for m in range(len(self.inverse))]


def accumulate(points: np.ndarray, columns: ColumnSource, fourier: FourierMap,
               chunk_rows: int = CHUNK_ROWS) -> FourierSums:
    """One pass over the rows: the :class:`FourierSums` of the residual columns."""
    return accumulate_maps(points, columns, fourier, np.ones((1, points.shape[1])),
                           chunk_rows)[0]


def accumulate_maps(points: np.ndarray, columns: ColumnSource, fourier: FourierMap,
                    bandwidths: np.ndarray, chunk_rows: int = CHUNK_ROWS,
                    progress: Callable[[float], None] | None = None) -> list[FourierSums]:
    """One pass over the rows for the maps ``z ↦ φ(z / bandwidths[m])`` (``bandwidths``: ``(M, d)``,
    one row per map, ``inf`` drops a column): each chunk's columns are drawn once, the maps'
    features are evaluated and multiplied with them together (:meth:`FourierAccumulator.add`),
    and every map accumulates its Φᵀ E and Φᵀ 1. The chunks are dealt by a fixed stride into one
    group per core of this machine (:func:`machine_workers`), whatever number of threads runs
    them (fewer inside an audit's lane), and the groups' accumulators are added in group order,
    so the sums are the same on every run; ``progress(fraction)`` reports the chunks done, from
    the calling thread. On the GPU engine the same chunks, with the same residual columns, run
    one after the other on the device (:class:`FourierAccumulator`), their columns drawn ahead
    on the machine's threads (:func:`drawn_ahead`; the draws, not the device's products, bound
    that pass): the sums equal the threads' to the rounding of the float32 products."""
    n = points.shape[0]
    chunks = [slice(start, min(start + chunk_rows, n)) for start in range(0, n, chunk_rows)]
    if engine_now().name == "gpu":  # one device: the chunks in order, each on the GPU
        accumulator = FourierAccumulator(fourier, bandwidths, "cupy")
        for k, (rows, E) in enumerate(zip(chunks, drawn_ahead(columns, chunks), strict=True)):
            accumulator.add(points[rows], E)
            if progress is not None:
                progress((k + 1) / len(chunks))
        return accumulator.sums()
    groups = max(1, min(machine_workers(), len(chunks)))
    done = [0] * groups

    def work(group: int) -> FourierAccumulator:
        accumulator = FourierAccumulator(fourier, bandwidths)
        for rows in chunks[group::groups]:
            accumulator.add(points[rows], columns(rows))
            done[group] += 1
        return accumulator

    def tick() -> None:
        if progress is not None:
            progress(sum(done) / max(1, len(chunks)))

    parts = in_threads(work, list(range(groups)), tick=tick)
    total = FourierAccumulator(fourier, bandwidths)
    for part in parts:
        total.merge(part)
    return total.sums()


def drawn_ahead(columns: ColumnSource, chunks: Sequence[slice]) -> Iterator[np.ndarray]:
    """``columns(rows)`` of each chunk in order, computed on :func:`machine_workers` threads up
    to two chunks per thread ahead of the consumer (each in a copy of the caller's context),
    so the memory held is a few chunks' columns whatever the number of rows."""
    workers = machine_workers()
    if workers <= 1:
        yield from (columns(rows) for rows in chunks)
        return
    with ThreadPoolExecutor(workers) as pool:
        ahead: deque = deque()
        for k in range(len(chunks)):
            while len(ahead) < 2 * workers and k + len(ahead) < len(chunks):
                rows = chunks[k + len(ahead)]
                ahead.append(pool.submit(contextvars.copy_context().run, columns, rows))
            yield ahead.popleft().result()


def bernoulli_columns(p: np.ndarray, residuals: np.ndarray, n_resamples: int, seed: int,
                      offset: int = 0) -> ColumnSource:
    """Observed residuals and ``B`` consistency resamples ``y* − p``, ``y* ~ Bernoulli(p)``:
    row i's labels come from the counter-based generator at global row ``offset + i``
    (:func:`core.kernels.resampling.row_bernoulli_residuals`), so the draws do not depend on
    the chunking."""
    def columns(rows: slice) -> np.ndarray:
        q = p[rows]
        out = np.empty((q.shape[0], n_resamples + 1))
        out[:, 0] = residuals[rows]
        out[:, 1:] = row_bernoulli_residuals(q, offset + rows.start, n_resamples, seed)
        return out

    return columns
