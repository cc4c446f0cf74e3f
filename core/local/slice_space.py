"""The slices an auditor can name: levels, quantile ranges and their intersections.

:func:`enumerate_slices` turns a table of audit features and group attributes into a
:class:`SliceFamily`:

* every column becomes a **coding** — one code per row (−1: none) and one :class:`Condition`
  per code. A categorical column (text, boolean, or numeric with at most ``n_ranges``
  distinct values) gets one condition per level (``race = Black``); a numeric column gets
  ``n_ranges`` quantile ranges (``age 18–31``; fewer where ties merge quantiles); missing
  values get a condition of their own (``income missing``);
* a **block** is a set of columns (the empty block, each column alone, each pair, each
  triple up to ``depth``); the codes of a block's columns split the rows into cells — a
  partition, so every row lies in at most one slice of each block;
* every cell with at least ``min_rows`` rows is a :class:`Slice` (the conjunction of its
  conditions; the empty block is "all rows"), unless a slice of lower depth (or earlier in
  the enumeration) holds exactly the same rows — then it is left out as a duplicate, so no
  set of rows is tested twice.

The family never stores the n × K incidence matrix: :meth:`SliceFamily.membership` builds the
rows-by-slices sparse matrix of any range of rows on demand from the codes (O(rows ×
blocks)), which is what the chunked resampling (:mod:`core.local.slice_resampling`) and the
marginal tail probabilities (:mod:`core.stattests.poisson_binomial`) walk. Memory is the codes,
``n × columns`` small integers. :meth:`SliceFamily.incidence` gives the full K × n matrix
for other uses (model comparison reuses the family with its own per-row scores).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy import sparse

from core.data.table import is_numeric_feature
from core.data.validation import check_count

#: Default number of quantile ranges of a numeric column.
DEFAULT_RANGES = 4
#: Deepest conjunction offered.
MAX_DEPTH = 3
#: Smallest slice, in rows, and as a share of all rows (the default is the larger).
MIN_SLICE_ROWS = 30
MIN_SLICE_SHARE = 0.01
#: A block's cells are counted with bincount below this many cell codes, else with unique.
_DENSE_CELLS = 10_000_000
#: Rows per chunk of a membership walk, and the most row × block cells one chunk builds.
WALK_ROWS, WALK_CELLS = 65_536, 1 << 22
#: A block's cell → slice table is a dense array up to this many cell codes.
_DENSE_LOOKUP = 1 << 20


def default_min_rows(n: int) -> int:
    """``max(30, 1 % of the rows)``: smaller slices give gaps too noisy to act on."""
    return max(MIN_SLICE_ROWS, math.ceil(MIN_SLICE_SHARE * n))


@dataclass(frozen=True)
class Condition:
    """One condition on one column: a level, a range ``[low, high)`` (``[low, high]`` for the
    last range), or missing. ``label`` is how reports name it."""

    feature: str
    label: str
    level: str | None = None
    low: float | None = None
    high: float | None = None
    closed: bool = False
    missing: bool = False

    def holds(self, column: pd.Series) -> np.ndarray:
        """Boolean mask of the rows of ``column`` (the same column, any rows) that satisfy it."""
        missing = column.isna().to_numpy()
        if self.missing:
            return missing
        if self.level is not None:
            return ~missing & (column.astype(str).to_numpy() == self.level)
        values = pd.to_numeric(column, errors="coerce").to_numpy(dtype=np.float64)
        with np.errstate(invalid="ignore"):
            below = values <= self.high if self.closed else values < self.high
            return ~missing & (values >= self.low) & below


@dataclass(frozen=True)
class Slice:
    """A conjunction of conditions on different columns; no condition is "all rows"."""

    conditions: tuple[Condition, ...] = ()

    @property
    def name(self) -> str:
        return " ∧ ".join(c.label for c in self.conditions) or "all rows"

    @property
    def depth(self) -> int:
        return len(self.conditions)

    def mask(self, frame: pd.DataFrame) -> np.ndarray:
        """The rows of ``frame`` (with the family's columns) inside the slice."""
        mask = np.ones(len(frame), dtype=bool)
        for condition in self.conditions:
            mask &= condition.holds(frame[condition.feature])
        return mask


@dataclass(frozen=True)
class Coding:
    """One column as codes ``0..L−1`` (−1: the row meets none of its conditions)."""

    feature: str
    kind: str  # "categorical" or "numeric"
    conditions: tuple[Condition, ...]

    @property
    def levels(self) -> int:
        return len(self.conditions)


@dataclass(frozen=True)
class CellMap:
    """The slice index of each tested cell of one block: a dense table over the block's cell
    codes when they are few (:data:`_DENSE_LOOKUP`), else the sorted cells and a binary
    search."""

    keys: np.ndarray  # int64, increasing
    ids: np.ndarray  # int32
    dense: np.ndarray | None = None

    @classmethod
    def of(cls, keys: list[int], ids: list[int], cells: int) -> CellMap:
        keys_array = np.asarray(keys, dtype=np.int64)
        ids_array = np.asarray(ids, dtype=np.int32)
        dense = None
        if cells <= _DENSE_LOOKUP:
            dense = np.full(cells, -1, dtype=np.int32)
            dense[keys_array] = ids_array
        return cls(keys_array, ids_array, dense)

    def slices_of(self, cell: np.ndarray) -> np.ndarray:
        """The slice index of each row's cell (−1 for none or an untested cell)."""
        if self.dense is not None:
            return np.where(cell >= 0, self.dense[np.maximum(cell, 0)], -1)
        if self.keys.size == 0:
            return np.full(cell.shape, -1, dtype=np.int32)
        at = np.minimum(np.searchsorted(self.keys, cell), self.keys.size - 1)
        return np.where(self.keys[at] == cell, self.ids[at], -1)


@dataclass(frozen=True)
class SliceFamily:
    """Every slice tested, with what is needed to find its rows (module doc).

    ``slices[k]`` lies in block ``blocks[block_of[k]]`` as cell ``cell_of[k]``;
    ``cell_maps[b]`` maps a cell of block b to its slice index (−1: too small or a
    duplicate); ``parents[k]`` are
    the slices with one condition less (their representatives where a parent was a
    duplicate); ``sizes[k]`` its rows.

    Attributes
    ----------
    slices : tuple
        The slices.
    codings, codes, blocks, cell_maps, block_of, cell_of
        How each slice's rows are found (above).
    parents : tuple
        The slices with one condition less.
    sizes : numpy.ndarray
        Rows of each slice.
    n_ranges, depth, min_rows : int
        The settings.
    n_small, n_duplicates : int
        Slices left out as too small or as duplicates.
    """

    slices: tuple[Slice, ...]
    codings: tuple[Coding, ...]
    codes: np.ndarray = field(repr=False)  # (n, columns) int32
    blocks: tuple[tuple[int, ...], ...]
    cell_maps: tuple[CellMap, ...] = field(repr=False)
    block_of: np.ndarray = field(repr=False)
    cell_of: np.ndarray = field(repr=False)
    parents: tuple[tuple[int, ...], ...]
    sizes: np.ndarray
    n_ranges: int
    depth: int
    min_rows: int
    n_small: int  # candidate cells below min_rows
    n_duplicates: int  # cells with the same rows as an earlier slice

    @property
    def n(self) -> int:
        return int(self.codes.shape[0])

    @property
    def n_slices(self) -> int:
        return len(self.slices)

    @property
    def names(self) -> list[str]:
        return [s.name for s in self.slices]

    def membership(self, start: int = 0, stop: int | None = None) -> sparse.csr_matrix:
        """Rows ``start:stop`` by slices: a ``(rows, K)`` CSR matrix of ones (float32)."""
        stop = self.n if stop is None else stop
        return membership_matrix(self.codes[start:stop], self.codings_levels, self.blocks,
                                 self.cell_maps, self.n_slices)

    @property
    def codings_levels(self) -> tuple[int, ...]:
        return tuple(c.levels for c in self.codings)

    def walk_rows(self, limit: int = WALK_ROWS) -> int:
        """Rows per chunk of a walk over the membership: at most ``limit``, fewer where there
        are many blocks, so that a chunk's rows × blocks stays near :data:`WALK_CELLS`."""
        return int(np.clip(WALK_CELLS // max(1, len(self.blocks)), 64, limit))

    def chunks(self, rows: int | None = None) -> Iterator[tuple[int, sparse.csr_matrix]]:
        """``(start, membership of rows start:start + rows)`` over all rows (default
        :meth:`walk_rows`)."""
        rows = self.walk_rows() if rows is None else rows
        for start in range(0, self.n, rows):
            yield start, self.membership(start, min(self.n, start + rows))

    def incidence(self) -> sparse.csr_matrix:
        """The ``(K, n)`` slice-by-row incidence matrix (ones), built in full."""
        return self.membership().T.tocsr()

    def mask(self, k: int) -> np.ndarray:
        """Boolean mask of the rows of slice ``k`` (from the codes, no table needed)."""
        block = self.blocks[self.block_of[k]]
        return _cell_codes(self.codes, self.codings_levels, block) == self.cell_of[k]

    def describe(self) -> str:
        """One sentence: how many slices, of what, and what was left out."""
        kinds = {"categorical": 0, "numeric": 0}
        for coding in self.codings:
            kinds[coding.kind] += 1
        columns = ", ".join(f"{count} {kind}" for kind, count in kinds.items() if count)
        left = []
        if self.n_small:
            left.append(f"{self.n_small:,} smaller than {self.min_rows:,} rows")
        if self.n_duplicates:
            left.append(f"{self.n_duplicates:,} with the same rows as a simpler slice")
        left_text = f"; left out: {' and '.join(left)}" if left else ""
        return (f"{self.n_slices:,} slices of {len(self.codings)} columns ({columns or 'none'}): "
                f"each level, {self.n_ranges} quantile ranges of each numeric column and their "
                f"intersections up to depth {self.depth}, at least {self.min_rows:,} rows each"
                f"{left_text}.")


# --------------------------------------------------------------------------- codings


def _number(value: float) -> str:
    if float(value).is_integer() and abs(value) < 1e15:
        return str(int(value))
    return f"{value:.4g}"


def range_label(name: str, low: float, high: float, closed: bool, whole: bool) -> str:
    """How a report names the range ``[low, high)`` (``[low, high]`` when ``closed``) of a
    column: whole numbers by their first and last value, both included (``age 18–31``)."""
    if whole:
        first, top = math.ceil(low), (high if closed else math.ceil(high) - 1)
        text = _number(first) if top <= first else f"{_number(first)}–{_number(top)}"
        return f"{name} {text}"
    return f"{name} in [{_number(low)}, {_number(high)}{']' if closed else ')'}"


def code_column(name: str, column: pd.Series, n_ranges: int) -> tuple[Coding, np.ndarray]:
    """The coding of one column (module doc) and its codes (hash-based: no sort of n values)."""
    missing = column.isna().to_numpy()
    numeric = is_numeric_feature(column)
    codes = np.full(len(column), -1, dtype=np.int32)
    conditions: list[Condition] = []
    values = column.to_numpy(dtype=np.float64, na_value=np.nan) if numeric else None
    present = values[~missing] if numeric else None
    if numeric and _more_values_than(present, n_ranges):
        edges = np.unique(np.quantile(present, np.linspace(0.0, 1.0, n_ranges + 1)))
        whole = bool(np.all(present == np.round(present)))
        index = np.clip(np.searchsorted(edges, values, side="right") - 1, 0, edges.size - 2)
        for j in np.flatnonzero(np.bincount(index[~missing], minlength=edges.size - 1)):
            low, high = float(edges[j]), float(edges[j + 1])
            closed = j == edges.size - 2
            codes[~missing & (index == j)] = len(conditions)
            conditions.append(Condition(name, range_label(name, low, high, closed, whole),
                                        low=low, high=high, closed=closed))
        kind = "numeric"
    else:
        # levels, largest first (ties by name); a numeric level is the range [v, v]
        factor, uniques = pd.factorize(present if numeric else column[~missing])
        counts = np.bincount(factor, minlength=len(uniques))
        labels = [_number(v) if numeric else str(v) for v in uniques]
        order = sorted(range(len(uniques)), key=lambda i: (-counts[i], labels[i]))
        recode = np.empty(len(uniques), dtype=np.int32)
        recode[order] = np.arange(len(order), dtype=np.int32)
        codes[~missing] = recode[factor]
        for i in order:
            if numeric:
                value = float(uniques[i])
                conditions.append(Condition(name, f"{name} = {labels[i]}", low=value,
                                            high=value, closed=True))
            else:
                conditions.append(Condition(name, f"{name} = {labels[i]}", level=labels[i]))
        kind = "categorical"
    if missing.any():
        codes[missing] = len(conditions)
        conditions.append(Condition(name, f"{name} missing", missing=True))
    return Coding(name, kind, tuple(conditions)), codes


def _more_values_than(values: np.ndarray, limit: int) -> bool:
    """Whether ``values`` has more than ``limit`` distinct values (a sample answers first)."""
    return pd.unique(values[:10_000]).size > limit or pd.unique(values).size > limit


def _cell_codes(codes: np.ndarray, levels: tuple[int, ...], block: tuple[int, ...]
                ) -> np.ndarray:
    """Each row's cell in ``block`` (mixed-radix code of its columns' codes), −1 if none."""
    cell = np.zeros(codes.shape[0], dtype=np.int64)
    valid = np.ones(codes.shape[0], dtype=bool)
    for column in block:
        part = codes[:, column]
        valid &= part >= 0
        cell = cell * levels[column] + part
    cell[~valid] = -1
    return cell


def membership_matrix(codes: np.ndarray, levels: tuple[int, ...],
                      blocks: tuple[tuple[int, ...], ...], cell_maps: tuple[CellMap, ...],
                      n_slices: int) -> sparse.csr_matrix:
    """``(rows, K)`` CSR matrix of ones: row i has column k where row i lies in slice k.

    One column of slice indices per block (each row lies in at most one cell of a block), the
    −1 entries dropped row by row."""
    ids = np.empty((codes.shape[0], len(blocks)), dtype=np.int32)
    for j, (block, cells) in enumerate(zip(blocks, cell_maps, strict=True)):
        ids[:, j] = cells.slices_of(_cell_codes(codes, levels, block))
    valid = ids >= 0
    indptr = np.zeros(codes.shape[0] + 1, dtype=np.int64)
    np.cumsum(valid.sum(axis=1), out=indptr[1:])
    indices = ids[valid]
    return sparse.csr_matrix((np.ones(indices.size, dtype=np.float32), indices, indptr),
                             shape=(codes.shape[0], n_slices))


# --------------------------------------------------------------------------- enumeration


def enumerate_slices(features: pd.DataFrame, n_ranges: int = DEFAULT_RANGES, depth: int = 2,
                     min_rows: int | None = None) -> SliceFamily:
    """Every slice of ``features`` (module doc): all rows, each level or quantile range, and
    their intersections up to ``depth`` columns, each with at least ``min_rows`` rows.

    Parameters
    ----------
    features : pandas.DataFrame
        Audit features and group attributes, one row per prediction; column names must be
        unique.
    n_ranges : int
        Quantile ranges of each numeric column (columns with at most this many distinct
        values are taken level by level).
    depth : int
        Most columns in one slice: 1, 2 (pairwise intersections, the default) or 3.
    min_rows : int, optional
        Smallest slice (default :func:`default_min_rows`, ``max(30, 1 % of the rows)``).

    Returns
    -------
    SliceFamily
    """
    if not isinstance(features, pd.DataFrame):
        raise ValueError("features must be a pandas DataFrame with one column per audit feature "
                         "or group attribute.")
    duplicated = features.columns[features.columns.duplicated()].unique()
    if len(duplicated):
        raise ValueError(f"features has repeated column names ({', '.join(map(str, duplicated))});"
                         " give each column a name of its own.")
    n_ranges = check_count("n_ranges", n_ranges, 2)
    depth = check_count("depth", depth, 1)
    if depth > MAX_DEPTH:
        raise ValueError(f"depth must be 1, 2 or 3 (columns in one slice), not {depth}.")
    n = len(features)
    min_rows = default_min_rows(n) if min_rows is None else check_count("min_rows", min_rows, 1)
    codings, columns = [], []
    for name in features.columns:
        coding, codes = code_column(str(name), features[name].reset_index(drop=True), n_ranges)
        if coding.levels:
            codings.append(coding)
            columns.append(codes)
    codes = np.column_stack(columns) if columns else np.zeros((n, 0), dtype=np.int32)
    levels = tuple(c.levels for c in codings)
    blocks = [block for r in range(min(depth, len(codings)) + 1)
              for block in itertools.combinations(range(len(codings)), r)]
    hashes = np.random.default_rng(0).random(n)
    slices: list[Slice] = []
    block_of, cell_of, sizes, parents = [], [], [], []
    cell_maps: list[CellMap] = []
    seen: dict[tuple[int, float], int] = {}
    index_of: dict[tuple[tuple[int, ...], int], int] = {}  # (block, cell) → slice (or its twin)
    n_small = n_duplicates = 0
    for b, block in enumerate(blocks):
        cell = _cell_codes(codes, levels, block)
        cells = int(np.prod([levels[c] for c in block], dtype=np.int64)) if block else 1
        valid = cell >= 0
        if cells <= _DENSE_CELLS:
            counts = np.bincount(cell[valid], minlength=cells)
            sums = np.bincount(cell[valid], hashes[valid], minlength=cells)
            present = np.flatnonzero(counts)
        else:
            present, inverse, counts_present = np.unique(cell[valid], return_inverse=True,
                                                         return_counts=True)
            counts = dict(zip(present.tolist(), counts_present.tolist(), strict=True))
            sums = dict(zip(present.tolist(), np.bincount(inverse, hashes[valid]).tolist(),
                            strict=True))
        kept: list[tuple[int, int]] = []
        for c in present.tolist():
            size = int(counts[c])
            if size < min_rows:
                n_small += 1
                continue
            key = (size, float(sums[c]))
            if key in seen:
                n_duplicates += 1
                index_of[(block, c)] = seen[key]
                continue
            conditions = _conditions(codings, levels, block, c)
            k = len(slices)
            seen[key] = k
            index_of[(block, c)] = k
            kept.append((c, k))
            slices.append(Slice(conditions))
            block_of.append(b)
            cell_of.append(c)
            sizes.append(size)
            parents.append(_parents(block, c, levels, index_of))
        cell_maps.append(CellMap.of([c for c, _ in kept], [k for _, k in kept], cells))
    return SliceFamily(
        tuple(slices), tuple(codings), codes.astype(np.int32), tuple(blocks), tuple(cell_maps),
        np.asarray(block_of, dtype=np.int64), np.asarray(cell_of, dtype=np.int64),
        tuple(parents), np.asarray(sizes, dtype=np.int64), n_ranges, depth, min_rows, n_small,
        n_duplicates)


def _digits(block: tuple[int, ...], cell: int, levels: tuple[int, ...]) -> list[int]:
    """The columns' codes of a block's cell (inverse of the mixed-radix code)."""
    digits = []
    for column in reversed(block):
        cell, digit = divmod(cell, levels[column])
        digits.append(digit)
    return digits[::-1]


def _conditions(codings: list[Coding], levels: tuple[int, ...], block: tuple[int, ...],
                cell: int) -> tuple[Condition, ...]:
    return tuple(codings[column].conditions[digit]
                 for column, digit in zip(block, _digits(block, cell, levels), strict=True))


def _parents(block: tuple[int, ...], cell: int, levels: tuple[int, ...],
             index_of: dict[tuple[tuple[int, ...], int], int]) -> tuple[int, ...]:
    """The slices with one condition less (a parent holds at least the child's rows, so it
    was kept, or its twin was)."""
    if not block:
        return ()
    digits = _digits(block, cell, levels)
    found = []
    for drop in range(len(block)):
        rest = block[:drop] + block[drop + 1:]
        rest_digits = digits[:drop] + digits[drop + 1:]
        code = 0
        for column, digit in zip(rest, rest_digits, strict=True):
            code = code * levels[column] + digit
        parent = index_of.get((rest, code))
        if parent is not None and parent not in found:
            found.append(parent)
    return tuple(found)
