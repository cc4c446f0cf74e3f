"""Sums of per-row scores over every slice, for the observed data and B null resamples at once.

The whole family's statistics are one product: the ``(K, n)`` slice-by-row incidence matrix A
(:class:`core.local.slice_space.SliceFamily`) times an ``(n, C)`` matrix of per-row columns —
column 0 the observed scores, the others resampled under the null:

    Σ = A · D,   D = [d⁽⁰⁾ | d⁽¹⁾ | … | d⁽ᴮ⁾],   Σ_kb = Σ_{i ∈ slice k} d_i⁽ᵇ⁾.

It is never formed whole. The rows are walked in chunks; each chunk is one tile-engine task
(:func:`core.kernels.engine.run_tiles`, so it runs on the thread pool, a Dask cluster or the
GPU) that builds its rows' part of A from the codes (:meth:`SliceFamily.membership`), draws
its rows' resampled columns from a generator seeded by ``(seed, chunk)`` — as
:mod:`core.kernels.rff` does, so the result does not depend on the engine or the number of
workers — and returns the ``(K, C)`` partial product, added up in float64. Memory is
O(chunk · C + K · C) per task, whatever n; chunks are sized so that a chunk's D holds about
:data:`CHUNK_CELLS` numbers.

**The seam.** What is summed is a :class:`RowScores`: per-row arrays and a module-level
``draw(arrays, rng, n_resamples) -> (rows, C)`` function that returns a chunk's observed
column(s) and its resamples. Calibration uses :func:`bernoulli_draw` (labels redrawn from
the predictions: ``[y, ỹ⁽¹⁾, …]``, 0/1, so the float32 products are exact counts) and
:func:`categorical_draw` (one block of columns per class). Any other per-row score with a
null that resamples rows independently — a paired difference of two models' losses with
random sign flips, say — plugs in with its own ``draw``; the max-|T| machinery of
:mod:`core.stattests.multiple_testing` then needs only the sums. A chunk's product is taken
in float32 (the partial sums are added in float64): exact for 0/1 columns, about 1e-7
relative for real-valued scores — the same for the observed column as for the resamples,
so the resampling test's validity is untouched.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy import sparse

from core.kernels.engine import machine_workers, run_tiles
from core.kernels.resampling import cumulative_probabilities, inverse_cdf
from core.local.slice_space import SliceFamily, membership_matrix

#: Numbers in one chunk's column matrix D (float32: 32 MiB).
CHUNK_CELLS = 1 << 23
#: Bounds of a chunk, in rows.
MIN_CHUNK_ROWS, MAX_CHUNK_ROWS = 256, 16_384
#: Rows of uniforms drawn at once inside a chunk.
_DRAW_ROWS = 256
#: Partial products held before they are added (bounds memory on long walks).
BATCH_BYTES = 256 << 20

Draw = Callable[[tuple[np.ndarray, ...], np.random.Generator, int], np.ndarray]


@dataclass(frozen=True)
class RowScores:
    """What is summed over each slice (module doc): ``arrays`` (each with one entry per row,
    first axis) and ``draw``, a module-level function ``draw(chunk_arrays, rng, B)`` that
    returns the chunk's ``(rows, width)`` columns, float32.

    Attributes
    ----------
    arrays : tuple of numpy.ndarray
        Per-row arrays, rows on the first axis.
    draw : callable
        ``draw(chunk_arrays, rng, B)``, a module-level function.
    n_resamples : int
        B.
    width : int
        Columns ``draw`` returns.
    """

    arrays: tuple[np.ndarray, ...]
    draw: Draw
    n_resamples: int
    width: int


def bernoulli_draw(arrays: tuple[np.ndarray, ...], rng: np.random.Generator,
                   n_resamples: int) -> np.ndarray:
    """``[y, ỹ⁽¹⁾, …, ỹ⁽ᴮ⁾]`` with ``ỹ⁽ᵇ⁾_i ~ Bernoulli(p_i)`` (consistency resampling):
    ``arrays = (p, y)``, y the observed 0/1 outcome."""
    p, y = arrays
    out = np.empty((p.shape[0], n_resamples + 1), dtype=np.float32)
    out[:, 0] = y
    for rows, u in _uniform_blocks(rng, p.shape[0], n_resamples):
        np.less(u, p[rows, None], out=out[rows, 1:])
    return out


def _uniform_blocks(rng: np.random.Generator, n: int, n_resamples: int):
    """``(rows, U)`` for consecutive blocks of rows, U uniform ``(len(rows), B)`` in one reused
    buffer: the numbers of ``rng.random((n, B))`` in the same order, without allocating (and
    page-faulting) an n × B array per chunk."""
    buffer = np.empty((min(n, _DRAW_ROWS), n_resamples))
    for start in range(0, n, _DRAW_ROWS):
        rows = slice(start, min(n, start + _DRAW_ROWS))
        u = buffer[:rows.stop - start]
        rng.random(out=u)
        yield rows, u


def categorical_draw(arrays: tuple[np.ndarray, ...], rng: np.random.Generator,
                     n_resamples: int) -> np.ndarray:
    """One block of ``1 + B`` columns per class c: ``[1(y = c), 1(ỹ⁽¹⁾ = c), …]`` with
    ``ỹ⁽ᵇ⁾_i ~ Categorical(P_i)`` drawn once for all classes (consistency resampling):
    ``arrays = (P, y)``."""
    P, y = arrays
    m = P.shape[1]
    cumulative = cumulative_probabilities(P)
    out = np.empty((P.shape[0], m * (n_resamples + 1)), dtype=np.float32)
    width = n_resamples + 1
    for c in range(m):
        out[:, c * width] = y == c
    for rows, u in _uniform_blocks(rng, P.shape[0], n_resamples):
        labels = inverse_cdf(cumulative[rows, None, :], u)
        for c in range(m):
            np.equal(labels, c, out=out[rows, c * width + 1:(c + 1) * width])
    return out


def chunk_rows(width: int, family: SliceFamily) -> int:
    """Rows per chunk for ``width`` columns (about :data:`CHUNK_CELLS` numbers), and no more
    than the family's membership walk takes at once (:meth:`SliceFamily.walk_rows`)."""
    rows = np.clip(CHUNK_CELLS // max(1, width), MIN_CHUNK_ROWS, MAX_CHUNK_ROWS)
    return int(min(rows, family.walk_rows(MAX_CHUNK_ROWS)))


#: Draws whose columns are 0/1 (outcomes and redrawn labels): their float32 sums are exact
#: counts in any order of addition, so a chunk sums its rows by cell first.
COUNTING_DRAWS = (bernoulli_draw, categorical_draw)


def _chunk_sums(xp_name: str, item: tuple) -> np.ndarray:
    """One task: the ``(K, width)`` partial product of a chunk of rows (module doc).

    For 0/1 columns (:data:`COUNTING_DRAWS`) the rows are first summed within their cells —
    rows with the same code in every column lie in the same slices — and the cells' sums
    then over the slices: ``Aᵀ D = (A_cellsᵀ)(Cᵀ D)`` with C the rows' one cell each, a
    product with one stored entry per row instead of one per row and block (about 16 times
    fewer at depth 2), the same counts. Other scores keep the one product, whose float32
    rounding does depend on how the rows are grouped."""
    (chunk, seed, arrays, draw, n_resamples, codes, levels, blocks, cell_maps, n_slices,
     counting) = item
    columns = draw(arrays, np.random.default_rng([seed, chunk]), n_resamples)
    cell_rows = None
    if counting and codes.shape[1]:
        first, cell_of = row_cells(codes, levels)
        rows = codes.shape[0]
        cell_rows = sparse.csr_matrix(
            (np.ones(rows, dtype=np.float32), cell_of, np.arange(rows + 1)),
            shape=(rows, first.size))
        codes = codes[first]
    ones = membership_matrix(codes, levels, blocks, cell_maps, n_slices)
    if xp_name == "cupy":
        import cupy
        from cupyx.scipy import sparse as device_sparse
        columns = cupy.asarray(columns)
        if cell_rows is not None:
            columns = device_sparse.csr_matrix(cell_rows).T @ columns
        return device_sparse.csr_matrix(ones).T @ columns
    if cell_rows is not None:
        columns = cell_rows.T @ columns
    return np.asarray(ones.T @ columns)


def row_cells(codes: np.ndarray, levels: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
    """The distinct rows of ``codes`` (``(rows, columns)``, −1 for none): the index of each
    one's first row, and each row's cell among them. A row's cell is its mixed-radix code
    (one digit a column, −1 included) where that fits 62 bits, else its row of codes."""
    radix = [level + 1 for level in levels]
    if np.prod(np.asarray(radix, dtype=np.float64)) < 2.0 ** 62:
        key = np.zeros(codes.shape[0], dtype=np.int64)
        for column, base in enumerate(radix):
            key = key * base + (codes[:, column] + 1)
        _, first, cell_of = np.unique(key, return_index=True, return_inverse=True)
    else:
        _, first, cell_of = np.unique(codes, axis=0, return_index=True, return_inverse=True)
    return first, cell_of.ravel()


def chunk_items(family: SliceFamily, scores: RowScores, seed: int) -> list[tuple]:
    """The tasks of :func:`slice_sums`, one per chunk of rows: everything a task needs travels
    in its item (its rows' arrays and codes, the family's cell maps), so nothing is shared."""
    step = chunk_rows(scores.width, family)
    counting = scores.draw in COUNTING_DRAWS
    return [
        (k, seed, tuple(np.ascontiguousarray(a[start:start + step]) for a in scores.arrays),
         scores.draw, scores.n_resamples, family.codes[start:start + step],
         family.codings_levels, family.blocks, family.cell_maps, family.n_slices, counting)
        for k, start in enumerate(range(0, family.n, step))
    ]


def slice_sums(family: SliceFamily, scores: RowScores, seed: int = 0,
               progress: Callable[[float], None] | None = None) -> np.ndarray:
    """``Σ_{i ∈ slice k}`` of every column of ``scores`` (module doc): a ``(K, width)``
    float64 array, column 0 (or each class block's first column) observed.

    ``progress(fraction)`` is called after each batch of chunks.

    Parameters
    ----------
    family : SliceFamily
        The slices.
    scores : RowScores
        What is summed.
    seed : int, default 0
        Seed of the chunks' draws.
    progress : callable, optional
        ``progress(fraction)``.

    Returns
    -------
    numpy.ndarray
    """
    items = chunk_items(family, scores, seed)
    partial = family.n_slices * scores.width * 8
    batch = max(2 * machine_workers(), min(64, BATCH_BYTES // max(1, partial)))
    total = np.zeros((family.n_slices, scores.width))
    for first in range(0, len(items), batch):
        total += run_tiles(_chunk_sums, (), items[first:first + batch], reduce="sum")
        if progress is not None:
            progress(min(1.0, (first + batch) / max(1, len(items))))
    return total

