"""Slice findings of a table read partition by partition: every slice's sums over all rows.

:func:`core.local.slice_discovery.discover_slices` holds every row. A table larger than memory
(:mod:`core.stream`) gets the same family of slices and the same per-slice sums, added
up partition by partition:

1. **columns** (:class:`ColumnTally`, with the audit's sums pass): for each numeric column its
   rows below zero and up to ``n_ranges + 1`` distinct values with their counts — whether it
   is taken level by level or in quantile ranges, as :func:`core.local.slice_space.code_column`
   decides — and, for the ranges, the exact order statistics at the positions that NumPy's
   linear quantile interpolates between (:func:`quantile_positions`, :func:`linear_quantiles`;
   the audit's histogram refinement, :mod:`core.metrics.order_statistics`, finds them: the
   values below zero as the order statistics of their negatives);
2. **cells** (:func:`cell_sums`, with the audit's equal-mass pass): each row's *raw* code per
   column (a categorical column's level in the table's sorted levels, a numeric level's rank
   among the distinct values, a quantile range's index) and, for every block of at most
   ``depth`` columns, each cell's rows, a hash sum of the rows it holds (so a cell with the
   rows of a simpler slice is known without its rows), and per tested class Σy, Σp,
   Σp(1 − p) and Σp(1 − p)(1 − 2p);
3. **the family** (:func:`streamed_family`): the raw codes renumbered as in memory (levels
   largest first, ties by name; empty ranges dropped), the cells walked block by block in the
   same order with the same minimum size and duplicate rule, so the slices, their names,
   parents and sums are those of ``discover_slices`` on the same rows (equal to 1e-10:
   ``tests/test_stream.py``).

**Inference** (:func:`streamed_discovery`). The counts, gaps, standardised statistics T and
intervals come from the exact sums over all rows. The max-|T| null needs each row's
resampled outcome for every slice at once; it is drawn on the audit's seeded sample of rows
instead — B consistency resamples of the sample's rows, each slice's statistic standardised
by the sample's own Σp(1 − p). T is a standardised sum of independent terms, so its joint null
law is, to first order, Gaussian with the correlations Σ_{S∩S'} p(1 − p)/√(V_S V_S'), which the
sample estimates (each slice holds at least 1 % of the rows, so a sample of 200,000 holds
about 2,000 of each); the level this gives is measured in ``benchmarks/streaming.py``. The
per-slice p-values (Benjamini–Hochberg's input) are the Edgeworth expansion of the exact
first four cumulants (:func:`edgeworth_p_values`; Hall 1992, §2.2) in place of the in-memory
saddlepoint, whose Newton steps need the rows: a slice holds at least 1 % of the rows (10⁴ at
10⁶ rows), where the expansion is within a few per cent of the exact tail down to 10⁻⁶
(``tests/test_stream.py``).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np
from scipy.special import ndtr

from core.local.slice_discovery import (
    SliceDiscovery,
    finish_discovery,
    slice_targets,
    standardized,
)
from core.local.slice_resampling import RowScores, slice_sums
from core.local.slice_space import (
    CellMap,
    Coding,
    Condition,
    Slice,
    SliceFamily,
    _conditions,
    _number,
    _parents,
    default_min_rows,
    range_label,
)
from core.stattests.poisson_binomial import slice_moments

#: Sums per tested class and cell: Σy, Σp, Σp(1 − p), and the third and fourth cumulants
#: Σp(1 − p)(1 − 2p), Σp(1 − p)(1 − 6p(1 − p)).
TARGET_SUMS = 5
_MASK32 = np.uint64(0xFFFFFFFF)


# --------------------------------------------------------------------------- quantiles


def quantile_positions(n: int, n_ranges: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """NumPy's ``linear`` quantiles at ``linspace(0, 1, n_ranges + 1)`` of ``n`` values:
    ``(previous, next, gamma)``, the sorted positions each quantile interpolates between and
    the weight (Hyndman & Fan's method 7, as ``numpy.quantile`` computes it)."""
    q = np.linspace(0.0, 1.0, n_ranges + 1)
    virtual = (n - 1) * q
    previous = np.floor(virtual)
    gamma = virtual - previous
    previous = np.clip(previous, 0, n - 1).astype(np.int64)
    following = np.clip(previous + 1, 0, n - 1)
    below, above = virtual < 0, virtual >= n - 1
    previous[below] = following[below] = 0
    previous[above] = following[above] = n - 1
    return previous, following, gamma


def linear_quantiles(values_at: np.ndarray, next_at: np.ndarray, gamma: np.ndarray
                     ) -> np.ndarray:
    """``numpy.quantile``'s interpolation between the order statistics ``values_at`` and
    ``next_at`` with weights ``gamma`` (its ``_lerp``: from the nearer end)."""
    a, b = np.asarray(values_at, dtype=np.float64), np.asarray(next_at, dtype=np.float64)
    diff = b - a
    out = a + diff * gamma
    upper = gamma >= 0.5
    out[upper] = (b - diff * (1 - gamma))[upper]
    return out


# --------------------------------------------------------------------------- columns


@dataclass(frozen=True)
class SliceColumn:
    """One column slices are cut on: ``categorical`` (codes into ``levels``, the table's
    sorted levels) or ``numeric`` (values)."""

    name: str
    kind: str
    levels: tuple[str, ...] = ()


@dataclass
class ColumnTally:
    """A numeric column's rows, rows below zero, whether every value is a whole number, and
    its first ``limit`` distinct values with their counts (``None`` once there are more):
    added up partition by partition."""

    rows: int
    negative: int
    distinct: dict | None
    whole: bool
    limit: int

    @classmethod
    def of(cls, values: np.ndarray, limit: int) -> ColumnTally:
        unique, counts = np.unique(values, return_counts=True)
        distinct = None if unique.size > limit else \
            {float(v): int(c) for v, c in zip(unique, counts, strict=True)}
        return cls(int(values.size), int(np.count_nonzero(values < 0)), distinct,
                   bool(np.all(unique == np.round(unique))), limit)

    def merge(self, other: ColumnTally) -> ColumnTally:
        distinct = None
        if self.distinct is not None and other.distinct is not None:
            distinct = dict(self.distinct)
            for value, count in other.distinct.items():
                distinct[value] = distinct.get(value, 0) + count
            if len(distinct) > self.limit:
                distinct = None
        return ColumnTally(self.rows + other.rows, self.negative + other.negative, distinct,
                           self.whole and other.whole, self.limit)


def order_keys(column: int) -> tuple[tuple, tuple]:
    """The order-statistics vectors of numeric column ``column``: the negatives of its values
    below zero, and its values at or above zero (both non-negative, as
    :mod:`core.metrics.order_statistics` needs)."""
    return ("slice-column", column, "negative"), ("slice-column", column, "positive")


def order_values(values: np.ndarray, key: tuple) -> np.ndarray:
    """A numeric column's values of the order-statistics vector ``key`` (:func:`order_keys`)."""
    if key[2] == "negative":
        return -values[values < 0]
    return values[values >= 0] + 0.0


def order_positions(tally: ColumnTally, column: int, n_ranges: int) -> dict:
    """The positions of :func:`order_keys`'s vectors that the column's quantile edges need."""
    previous, following, _ = quantile_positions(tally.rows, n_ranges)
    negative, positive = order_keys(column)
    wanted: dict = {negative: [], positive: []}
    for t in np.union1d(previous, following):
        if t < tally.negative:
            wanted[negative].append(int(tally.negative - 1 - t))
        else:
            wanted[positive].append(int(t - tally.negative))
    return wanted


def order_statistic(order, tally: ColumnTally, column: int, t: int) -> float:
    """The ``t``-th smallest value of a numeric column from the resolved order statistics."""
    negative, positive = order_keys(column)
    if t < tally.negative:
        return -order.at(negative, tally.negative - 1 - t).value
    return order.at(positive, t - tally.negative).value


@dataclass(frozen=True)
class RawCoding:
    """How a column's raw codes are computed on a partition: a categorical column's level
    index, a numeric level's rank among ``values``, or a quantile range of ``edges``."""

    column: SliceColumn
    values: np.ndarray | None = None  # the distinct values (numeric, taken level by level)
    edges: np.ndarray | None = None  # the unique quantile edges (numeric ranges)
    whole: bool = False  # every value a whole number (how ranges are named)

    @property
    def size(self) -> int:
        if self.column.kind == "categorical":
            return len(self.column.levels)
        if self.values is not None:
            return int(self.values.size)
        return int(self.edges.size - 1)

    def codes(self, data: np.ndarray) -> np.ndarray:
        """Raw codes of a partition's column (categorical: the level codes themselves)."""
        if self.column.kind == "categorical":
            return np.asarray(data, dtype=np.int64)
        if self.values is not None:
            return np.searchsorted(self.values, data).astype(np.int64)
        index = np.searchsorted(self.edges, data, side="right") - 1
        return np.clip(index, 0, self.edges.size - 2).astype(np.int64)


def raw_codings(columns: tuple[SliceColumn, ...], tallies: dict, order, n_ranges: int
                ) -> tuple[RawCoding, ...]:
    """Each column's :class:`RawCoding`: levels for categorical columns and numeric ones with
    at most ``n_ranges`` distinct values, else the exact quantile edges (as
    :func:`core.local.slice_space.code_column`)."""
    out = []
    for j, column in enumerate(columns):
        if column.kind == "categorical":
            out.append(RawCoding(column))
            continue
        tally = tallies[j]
        if tally.distinct is not None:
            out.append(RawCoding(column, values=np.array(sorted(tally.distinct), dtype=float)))
            continue
        previous, following, gamma = quantile_positions(tally.rows, n_ranges)
        at = np.array([order_statistic(order, tally, j, int(t)) for t in previous])
        after = np.array([order_statistic(order, tally, j, int(t)) for t in following])
        out.append(RawCoding(column, edges=np.unique(linear_quantiles(at, after, gamma)),
                             whole=tally.whole))
    return tuple(out)


# --------------------------------------------------------------------------- cell sums


def row_hashes(first: int, n: int) -> np.ndarray:
    """SplitMix64 of the audited row numbers ``first … first + n − 1`` (Steele et al. 2014):
    a cell's sum of them (mod 2⁶⁴) tells its set of rows apart from any other's."""
    z = np.arange(first, first + n, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)
    with np.errstate(over="ignore"):
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def blocks_of(n_columns: int, depth: int) -> list[tuple[int, ...]]:
    """Every set of at most ``depth`` columns, in :func:`enumerate_slices`' order."""
    return [block for r in range(min(depth, n_columns) + 1)
            for block in itertools.combinations(range(n_columns), r)]


@dataclass
class CellSums:
    """Per block: its cells (raw mixed-radix codes, increasing), their rows, hash sums
    (mod 2⁶⁴) and ``(cells, classes × TARGET_SUMS)`` float sums."""

    blocks: list
    cells: list
    rows: list
    hashes: list
    sums: list

    def merge(self, other: CellSums) -> CellSums:
        for b in range(len(self.blocks)):
            cells = np.concatenate([self.cells[b], other.cells[b]])
            unique, inverse = np.unique(cells, return_inverse=True)
            inverse = inverse.ravel()
            rows = np.zeros(unique.size, dtype=np.int64)
            np.add.at(rows, inverse, np.concatenate([self.rows[b], other.rows[b]]))
            hashes = np.zeros(unique.size, dtype=np.uint64)
            np.add.at(hashes, inverse, np.concatenate([self.hashes[b], other.hashes[b]]))
            sums = np.zeros((unique.size, self.sums[b].shape[1]))
            np.add.at(sums, inverse, np.concatenate([self.sums[b], other.sums[b]]))
            self.cells[b], self.rows[b], self.hashes[b], self.sums[b] = \
                unique, rows, hashes, sums
        return self


def row_targets(p: np.ndarray, labels: np.ndarray, notion: str, names: tuple[str, ...]
                ) -> np.ndarray:
    """Each row's terms of every tested class (:func:`slice_targets`): y, p, p(1 − p),
    p(1 − p)(1 − 2p) and p(1 − p)(1 − 6p(1 − p)), ``(rows, classes × TARGET_SUMS)``."""
    scores, targets = slice_targets(p, labels, notion, names, 0)
    outcomes = [scores.arrays[1]] if len(targets) == 1 else \
        [(labels == c).astype(np.float64) for c in range(len(targets))]
    columns = []
    for (_, q), y in zip(targets, outcomes, strict=True):
        v = q * (1.0 - q)
        columns += [y, q, v, v * (1.0 - 2.0 * q), v * (1.0 - 6.0 * v)]
    return np.column_stack(columns)


def cell_sums(raw: np.ndarray, sizes: tuple[int, ...], depth: int, targets: np.ndarray,
              hashes: np.ndarray) -> CellSums:
    """The cell sums of one partition (module doc, step 2): ``raw`` its ``(rows, columns)``
    raw codes (−1: none), ``sizes`` each column's raw codes, ``targets`` the
    ``(rows, classes × TARGET_SUMS)`` per-row terms, ``hashes`` the rows' hashes."""
    blocks = blocks_of(raw.shape[1], depth)
    low = (hashes & _MASK32).astype(np.float64)
    high = (hashes >> np.uint64(32)).astype(np.float64)
    out = CellSums(blocks, [], [], [], [])
    for block in blocks:
        cell = np.zeros(raw.shape[0], dtype=np.int64)
        valid = np.ones(raw.shape[0], dtype=bool)
        for column in block:
            valid &= raw[:, column] >= 0
            cell = cell * sizes[column] + raw[:, column]
        unique, inverse = np.unique(cell[valid], return_inverse=True)
        inverse = inverse.ravel()
        rows = np.bincount(inverse, minlength=unique.size).astype(np.int64)
        # hash sums exactly: two 32-bit halves, each summed in float64 below 2⁵³
        hashes_sum = np.zeros(unique.size, dtype=np.uint64)
        for start in range(0, inverse.size, 1 << 20):
            part = slice(start, start + (1 << 20))
            lo = np.bincount(inverse[part], low[valid][part], unique.size).astype(np.uint64)
            hi = np.bincount(inverse[part], high[valid][part], unique.size).astype(np.uint64)
            with np.errstate(over="ignore"):
                hashes_sum += lo + (hi << np.uint64(32))
        sums = np.column_stack([np.bincount(inverse, targets[valid, k], unique.size)
                                for k in range(targets.shape[1])]) \
            if targets.shape[1] else np.zeros((unique.size, 0))
        out.cells.append(unique)
        out.rows.append(rows)
        out.hashes.append(hashes_sum)
        out.sums.append(sums.reshape(unique.size, targets.shape[1]))
    return out


# --------------------------------------------------------------------------- the family


@dataclass(frozen=True)
class StreamedFamily:
    """The family of :func:`streamed_family`: the codings as in memory, each raw code's final
    code per column (−1: absent), and the slices' sums (``(K, classes × TARGET_SUMS)``)."""

    codings: tuple[Coding, ...]
    recode: tuple[np.ndarray, ...]
    blocks: tuple[tuple[int, ...], ...]
    cell_maps: tuple[CellMap, ...]
    slices: tuple
    block_of: np.ndarray
    cell_of: np.ndarray
    parents: tuple[tuple[int, ...], ...]
    sizes: np.ndarray
    sums: np.ndarray
    n_ranges: int
    depth: int
    min_rows: int
    n_small: int
    n_duplicates: int

    def family_of(self, raw: np.ndarray) -> SliceFamily:
        """The :class:`SliceFamily` of these slices on rows whose raw codes are ``raw`` (the
        seeded sample's): what the chunked resampling walks."""
        codes = np.column_stack([np.where(raw[:, j] >= 0, self.recode[j][np.maximum(
            raw[:, j], 0)], -1) for j in range(raw.shape[1])]) if raw.shape[1] else \
            np.zeros((raw.shape[0], 0), dtype=np.int32)
        return SliceFamily(self.slices, self.codings, codes.astype(np.int32), self.blocks,
                           self.cell_maps, self.block_of, self.cell_of, self.parents,
                           self.sizes, self.n_ranges, self.depth, self.min_rows, self.n_small,
                           self.n_duplicates)


def _final_coding(coding: RawCoding, counts: np.ndarray) -> tuple[Coding, np.ndarray]:
    """The in-memory coding of a column from its raw codes' counts (module doc, step 3)."""
    name = coding.column.name
    recode = np.full(coding.size, -1, dtype=np.int64)
    conditions: list[Condition] = []
    if coding.edges is not None:
        edges = coding.edges
        for j in np.flatnonzero(counts):
            low, high = float(edges[j]), float(edges[j + 1])
            closed = j == edges.size - 2
            recode[j] = len(conditions)
            conditions.append(Condition(name, range_label(name, low, high, closed,
                                                          coding.whole),
                                        low=low, high=high, closed=closed))
        return Coding(name, "numeric", tuple(conditions)), recode
    if coding.values is not None:
        labels = [_number(v) for v in coding.values]
    else:
        labels = list(coding.column.levels)
    present = [i for i in range(coding.size) if counts[i] > 0]
    for i in sorted(present, key=lambda i: (-counts[i], labels[i])):
        recode[i] = len(conditions)
        if coding.values is not None:
            value = float(coding.values[i])
            conditions.append(Condition(name, f"{name} = {labels[i]}", low=value, high=value,
                                        closed=True))
        else:
            conditions.append(Condition(name, f"{name} = {labels[i]}", level=labels[i]))
    return Coding(name, "categorical", tuple(conditions)), recode


def _final_cells(cells: np.ndarray, block: tuple[int, ...], raw_sizes: tuple[int, ...],
                 recode: tuple[np.ndarray, ...], levels: tuple[int, ...]) -> np.ndarray:
    """Raw mixed-radix cell codes of a block as the final codes (−1 where a digit is
    absent)."""
    final = np.zeros(cells.size, dtype=np.int64)
    valid = np.ones(cells.size, dtype=bool)
    rest = cells.copy()
    digits = []
    for column in reversed(block):
        rest, digit = np.divmod(rest, raw_sizes[column])
        digits.append((column, digit))
    for column, digit in reversed(digits):
        code = recode[column][digit]
        valid &= code >= 0
        final = final * levels[column] + code
    return np.where(valid, final, -1)


def streamed_family(codings: tuple[RawCoding, ...], cells: CellSums, n_ranges: int,
                    depth: int, n_rows: int, min_rows: int | None = None) -> StreamedFamily:
    """The slices of the merged cell sums (module doc, step 3), walked as
    :func:`core.local.slice_space.enumerate_slices` walks a table in memory."""
    min_rows = default_min_rows(n_rows) if min_rows is None else min_rows
    raw_sizes = tuple(c.size for c in codings)
    final, recode = [], []
    for j, coding in enumerate(codings):
        b = cells.blocks.index((j,))
        counts = np.zeros(coding.size, dtype=np.int64)
        counts[cells.cells[b]] = cells.rows[b]
        made, codes = _final_coding(coding, counts)
        final.append(made)
        recode.append(codes)
    levels = tuple(c.levels for c in final)
    width = cells.sums[0].shape[1] if cells.sums else 0
    slices, block_of, cell_of, sizes, parents, sums, cell_maps = [], [], [], [], [], [], []
    seen: dict[tuple[int, int], int] = {}
    index_of: dict[tuple[tuple[int, ...], int], int] = {}
    n_small = n_duplicates = 0
    for b, block in enumerate(cells.blocks):
        codes = _final_cells(cells.cells[b], block, raw_sizes, tuple(recode), levels)
        order = np.argsort(codes, kind="stable")
        kept: list[tuple[int, int]] = []
        for i in order[codes[order] >= 0].tolist():
            c, size = int(codes[i]), int(cells.rows[b][i])
            if size == 0:
                continue
            if size < min_rows:
                n_small += 1
                continue
            key = (size, int(cells.hashes[b][i]))
            if key in seen:
                n_duplicates += 1
                index_of[(block, c)] = seen[key]
                continue
            k = len(slices)
            seen[key] = k
            index_of[(block, c)] = k
            kept.append((c, k))
            slices.append(Slice(_conditions(final, levels, block, c)))
            block_of.append(b)
            cell_of.append(c)
            sizes.append(size)
            sums.append(cells.sums[b][i])
            parents.append(_parents(block, c, levels, index_of))
        total = int(np.prod([levels[c] for c in block], dtype=np.int64)) if block else 1
        cell_maps.append(CellMap.of([c for c, _ in kept], [k for _, k in kept], total))
    return StreamedFamily(
        tuple(final), tuple(recode), tuple(cells.blocks), tuple(cell_maps), tuple(slices),
        np.asarray(block_of, dtype=np.int64), np.asarray(cell_of, dtype=np.int64),
        tuple(parents), np.asarray(sizes, dtype=np.int64),
        np.asarray(sums, dtype=np.float64).reshape(len(slices), width), n_ranges, depth,
        min_rows, n_small, n_duplicates)


# --------------------------------------------------------------------------- inference


def edgeworth_p_values(sizes: np.ndarray, counts: np.ndarray, mean: np.ndarray,
                       variance: np.ndarray, kappa3: np.ndarray, kappa4: np.ndarray
                       ) -> np.ndarray:
    """Two-sided ``P(|S − μ| ≥ |s − μ|)`` of Poisson-binomial counts from their first four
    cumulants: the normal distribution with a continuity correction and the Edgeworth terms
    of order n^(−1/2) and n^(−1) (Hall 1992, §2.2),

        P(S ≤ x) ≈ Φ(z) − φ(z)·[γ He₂(z)/6 + κ He₃(z)/24 + γ² He₅(z)/72],

    ``z = (x + ½ − μ)/σ``, ``γ = κ₃/σ³``, ``κ = κ₄/σ⁴`` and the Hermite polynomials
    ``He₂ = z² − 1``, ``He₃ = z³ − 3z``, ``He₅ = z⁵ − 10z³ + 15z`` (module doc)."""
    deviation = np.abs(counts - mean)
    upper = np.ceil(mean + deviation - 1e-7)
    lower = np.floor(mean - deviation + 1e-7)
    sd = np.sqrt(variance)

    def cdf(z: np.ndarray) -> np.ndarray:
        density = np.exp(-0.5 * z**2) / np.sqrt(2 * np.pi)
        return ndtr(z) - density * (skew * (z**2 - 1) / 6 + excess * (z**3 - 3 * z) / 24
                                    + skew**2 * (z**5 - 10 * z**3 + 15 * z) / 72)

    with np.errstate(divide="ignore", invalid="ignore"):
        skew, excess = kappa3 / sd**3, kappa4 / sd**4
        up = 1.0 - cdf((upper - 0.5 - mean) / sd)
        low = cdf((lower + 0.5 - mean) / sd)
    up = np.where(upper > sizes, 0.0, np.clip(up, 0.0, 1.0))
    low = np.where(lower < 0, 0.0, np.clip(low, 0.0, 1.0))
    degenerate = variance <= 0
    up[degenerate] = (deviation[degenerate] <= 1e-9).astype(float)
    low[degenerate] = 0.0
    return np.minimum(1.0, up + low)


def streamed_discovery(family: StreamedFamily, sample_raw: np.ndarray, scores: RowScores,
                       targets: list[tuple[str, np.ndarray]], *, alpha: float,
                       error_rate: str, notion: str, n_resamples: int, seed: int,
                       n_rows: int, progress=None) -> SliceDiscovery:
    """The findings of a streamed family (module doc, inference): observed statistics, gaps,
    intervals and p-values from the exact sums over all ``n_rows`` rows; the max-|T| null
    from ``scores`` — B consistency resamples of the sample's rows, whose raw codes are
    ``sample_raw`` and whose probabilities of each tested class are ``targets``."""
    sample = family.family_of(sample_raw)
    parts, null = sample_parts(sample, family.sums, scores, targets, n_resamples, seed,
                               progress)
    return finish_discovery(sample, parts, null, alpha, error_rate, notion, n_resamples, seed,
                            sampled_scope("Streamed", n_rows, sample.n, n_resamples))


def sampled_scope(how: str, n_rows: int, sample_rows: int, n_resamples: int) -> str:
    """Where the findings' numbers came from, after ``how``: sums over all ``n_rows`` rows,
    the null from a seeded sample of ``sample_rows``."""
    return (f"{how}: every slice's rows, counts, gaps, statistics and intervals are sums over "
            f"all {n_rows:,} audited rows; the max-|T| null is drawn from B = "
            f"{n_resamples:,} consistency resamples of a seeded sample of {sample_rows:,} of "
            "them, and the per-slice p-values are Edgeworth expansions of the exact "
            "cumulants.")


def sample_parts(sample: SliceFamily, sums: np.ndarray, scores: RowScores,
                 targets: list[tuple[str, np.ndarray]], n_resamples: int, seed: int,
                 progress=None) -> tuple[list[dict], np.ndarray]:
    """:func:`core.local.slice_discovery.finish_discovery`'s inputs: per tested class the
    exact sums (``sums``, ``(K, classes × TARGET_SUMS)``; the slices' sizes are
    ``sample.sizes``) with their p-values, and the ``(tests, B)`` null statistics of the
    rows of ``sample`` (each slice standardised by the sample's own Σp(1 − p))."""
    resampled = slice_sums(sample, scores, seed, progress)
    parts, nulls = [], []
    sizes = sample.sizes.astype(np.float64)
    for t, (class_name, q) in enumerate(targets):
        exact = sums[:, t * TARGET_SUMS:(t + 1) * TARGET_SUMS]
        counts, mean, variance, kappa3, kappa4 = (exact[:, k] for k in range(TARGET_SUMS))
        parts.append({"class": class_name, "rows": sizes, "mean": mean, "variance": variance,
                      "counts": counts,
                      "p_value": edgeworth_p_values(sizes, counts, mean, variance, kappa3,
                                                    kappa4)})
        _, sample_mean, sample_variance = slice_moments(sample.chunks, q)
        block = resampled[:, t * (n_resamples + 1):(t + 1) * (n_resamples + 1)]
        nulls.append(standardized(block[:, 1:], sample_mean, sample_variance))
    return parts, (np.concatenate(nulls) if nulls else np.zeros((0, n_resamples)))
