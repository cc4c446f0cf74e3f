"""Tables read partition by partition: a Parquet file, a folder of Parquet files, a Dask
DataFrame (or a pandas one, cut into partitions), for audits of more rows than memory holds.

A :class:`TableSource` lists the partitions of a table with the global number of each
partition's first row. Opened (:func:`open_source`), its partitions are the table's own
units — the row groups of the Parquet files (sorted by path, so the order is the same on
every run), or the partitions of a DataFrame — whose sizes the user never chose: one row
group may hold the whole file. :meth:`TableSource.batched` cuts every unit into **batches**
of at most ``batch_rows`` rows (a size the memory plan gives,
:mod:`core.kernels.memory`), and :meth:`TableSource.batches` reads them in order, only the
columns asked for: a Parquet row group through ``ParquetFile.iter_batches`` (so no more than
a batch of it is decoded at once), a Dask partition once, then cut. A streamed pass holds a
few batches at a time, whatever the file's row groups, the folder's file sizes or the
frame's partitions.

Decoding a partition needs a few facts about the whole table: the label values (which
classes there are, and which is positive), the levels of categorical features and group
attributes (so that every partition one-hot encodes the same columns) and how many rows each
partition audits (so that a seeded sample or a row's place among the audited rows is the
same wherever it is computed). :func:`schema_part` collects them from one partition's label,
categorical and split columns, :func:`combine_schema` joins the partitions' parts into a
:class:`StreamSchema` — the first, light pass of a streamed audit.

:func:`decode` then validates and decodes a partition with the same checks and sentences as
:meth:`core.data.audit_data.AuditData.from_mapping` (the same functions: probability columns,
numeric values, splits), row numbers counted over the whole table
(:func:`core.data.problems.rows_from`), so a bad row in the 37th partition is named by its
row in the table. What only the whole table can show (fewer than two classes, too many levels)
is checked on the schema.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from core.data.audit_data import MIN_ROWS, AuditData
from core.data.features import SPLITS, split_values
from core.data.mapping import ColumnMapping, check_roles_distinct
from core.data.predictions import (
    binary_labels,
    label_strings,
    multiclass_labels,
    probability_columns,
)
from core.data.problems import DataError, ValidationNote, describe_rows, quote_list, rows_from
from core.data.readers import PARQUET_SUFFIXES
from core.data.table import MAX_LEVELS, MISSING_LEVEL, is_categorical, numeric_values

#: Rows per partition when a pandas DataFrame is streamed (Parquet's default row group).
PARTITION_ROWS = 1 << 20


# --------------------------------------------------------------------------- sources


@dataclass(frozen=True)
class Partition:
    """One unit of streamed work: ``rows`` rows from global row ``start`` (0-based) — rows
    ``offset …`` of row group ``row_group`` of the Parquet file ``path``, or of partition
    ``unit`` of a frame (``None``: partition ``index``, a partition not cut into batches)."""

    index: int
    start: int
    rows: int
    path: str | None = None
    row_group: int | None = None
    offset: int = 0
    unit: int | None = None

    @property
    def unit_index(self) -> int:
        """The table unit (row group of the table, frame partition) this batch is cut from."""
        return self.index if self.unit is None else self.unit

    def read_unit(self) -> tuple:
        """What is read whole to reach this batch: ``(path, row_group)`` or the frame
        partition's number."""
        return (self.path, self.row_group) if self.path is not None else self.unit_index


@dataclass(frozen=True, eq=False)
class TableSource:
    """A table too large to hold, as partitions read one at a time.

    ``frame`` is the Dask or pandas DataFrame of a frame source (``None`` for Parquet,
    read from ``partitions[i].path``); ``columns`` are the table's column names.

    Attributes
    ----------
    name : str
        The source's name, for messages and the report.
    columns : tuple of str
        The table's column names.
    partitions : tuple
        The partitions, read one at a time.
    frame : object or None
        The Dask or pandas DataFrame of a frame source.
    kind : {"parquet", "dask", "pandas"}
        What the source is.
    """

    name: str
    columns: tuple[str, ...]
    partitions: tuple[Partition, ...]
    frame: object | None = field(default=None, repr=False)
    kind: str = "parquet"  # "parquet", "dask" or "pandas"

    batch_rows: int = 0  # the most rows of a batch (0: the table's own partitions)
    units: tuple[Partition, ...] = ()  # the table's own partitions, once batched

    @property
    def n(self) -> int:
        return sum(p.rows for p in self.partitions)

    def batched(self, batch_rows: int, across_units: bool = True) -> TableSource:
        """The source read in batches of ``batch_rows`` rows (the last one shorter).

        ``across_units`` (threads): batch k holds the table's rows ``k·batch_rows …``,
        whatever the row groups, files or frame partitions they lie in — so a table gives
        the same batches however it was written. Otherwise (a Dask cluster, where each row
        group or frame partition is one task) each unit is cut from its own first row. The
        batches' global row numbers are the rows', so every result keyed to row numbers
        (seeds, chunks, samples) is the same whatever ``batch_rows``."""
        batch_rows = int(batch_rows)
        if batch_rows < 1:
            raise ValueError(f"batch_rows must be a positive number of rows, not {batch_rows}.")
        units = self.units or self.partitions
        batches: list[Partition] = []
        if across_units:
            n = sum(u.rows for u in units)
            first = units[0].start if units else 0
            for start in range(first, first + n, batch_rows):
                batches.append(Partition(len(batches), start, min(batch_rows, first + n - start)))
        else:
            for unit in units:
                for offset in range(0, unit.rows, batch_rows):
                    batches.append(dataclasses.replace(
                        unit, index=len(batches), start=unit.start + offset,
                        rows=min(batch_rows, unit.rows - offset), offset=unit.offset + offset,
                        unit=unit.unit_index))
        return dataclasses.replace(self, partitions=tuple(batches), batch_rows=batch_rows,
                                   units=tuple(units))

    def batches(self, columns: Sequence[str], partitions: Sequence[Partition] | None = None
                ) -> Iterator[tuple[Partition, pd.DataFrame]]:
        """``(partition, frame)`` of every partition (or of ``partitions``, in increasing row
        order), only ``columns``, index 0 … rows − 1. The units (row groups, frame
        partitions) the rows lie in are read once each and in order — a Parquet row group by
        ``ParquetFile.iter_batches``, never whole — and their rows cut at the partitions'
        bounds."""
        columns = list(dict.fromkeys(columns))
        wanted = list(self.partitions if partitions is None else partitions)
        if not wanted:
            return
        stop = wanted[-1].start + wanted[-1].rows
        size = max(1, min(max(p.rows for p in wanted), 1 << 16))
        pieces = self._pieces(columns, wanted[0].start, stop, size)
        held: list[pd.DataFrame] = []  # rows read and not yet handed out, from row ``at``
        at, held_rows = wanted[0].start, 0
        for partition in wanted:
            end = partition.start + partition.rows
            while at + held_rows < end:
                piece_start, piece = next(pieces)
                if not held:
                    at = piece_start
                held.append(piece)
                held_rows += len(piece)
            frame = held[0] if len(held) == 1 else pd.concat(held, ignore_index=True)
            yield partition, frame.iloc[partition.start - at:end - at].reset_index(drop=True)
            rest = frame.iloc[end - at:]
            held, held_rows, at = ([rest] if len(rest) else []), len(rest), end

    def _pieces(self, columns: list[str], first: int, stop: int, size: int
                ) -> Iterator[tuple[int, pd.DataFrame]]:
        """``(start, frame)``: the rows ``first … stop − 1`` in consecutive pieces of at most
        about ``size`` rows, read unit by unit."""
        for unit in self.units or self.partitions:
            begin, end = unit.start, unit.start + unit.rows
            if end <= first or begin >= stop:
                continue
            if self.kind == "parquet":
                yield from parquet_pieces(unit, columns, first, stop, size)
                continue
            if self.kind == "pandas":
                whole = self.frame.iloc[max(begin, first):min(end, stop)]
                begin = max(begin, first)
            else:
                whole = self.frame.get_partition(unit.unit_index)[columns].compute()
            for at in range(0, len(whole), size):
                yield begin + at, whole.iloc[at:at + size][columns].reset_index(drop=True)

    def read(self, partition: Partition, columns: Sequence[str]) -> pd.DataFrame:
        """The rows of one partition, only ``columns``, index 0 … rows − 1."""
        [(_, frame)] = self.batches(columns, [partition])
        return frame

    def without_frame(self) -> TableSource:
        """The source as sent to a cluster's workers: a Parquet source reads its files there;
        a frame source's partitions travel as the frame's own tasks instead."""
        return self if self.kind == "parquet" else dataclasses.replace(self, frame=None)

    def describe(self) -> str:
        """``'scores/ (38 Parquet files, 96 row groups, 100,000,000 rows; 763 batches of at
        most 131,072 rows)'``."""
        units = self.units or self.partitions
        count = len(self.partitions)
        batches = (f"; {count:,} batch{'es' if count != 1 else ''} of at most "
                   f"{self.batch_rows:,} rows") if self.batch_rows else ""
        if self.kind == "parquet":
            files = len({p.path for p in units})
            return (f"{self.name} ({files:,} Parquet file{'s' if files > 1 else ''}, "
                    f"{len(units):,} row groups, {self.n:,} rows{batches})")
        return f"{self.name} ({self.kind} DataFrame, {len(units):,} partitions, " \
               f"{self.n:,} rows{batches})"


def parquet_pieces(unit: Partition, columns: list[str], first: int, stop: int, size: int
                   ) -> Iterator[tuple[int, pd.DataFrame]]:
    """``(start, frame)`` of the rows ``first … stop − 1`` that lie in one row group
    (``unit``), decoded by ``ParquetFile.iter_batches`` a record batch of ``size`` rows at a
    time, its column chunks read through a 1 MiB buffer: never the whole row group at
    once."""
    import pyarrow.parquet as pq

    # pre_buffer=False with a read buffer: a column chunk is read a megabyte at a time;
    # pre-buffering reads the whole row group's chunks first (10⁷ rows in one row group:
    # 503 MiB against 198 MiB for reading it, measured)
    reader = pq.ParquetFile(unit.path, pre_buffer=False, buffer_size=1 << 20).iter_batches(
        batch_size=size, row_groups=[unit.row_group], columns=columns, use_threads=False)
    at = unit.start
    for batch in reader:
        begin, end = at, at + batch.num_rows
        at = end
        if end <= first:
            continue
        if begin >= stop:
            break
        lo, hi = max(first, begin) - begin, min(stop, end) - begin
        yield begin + lo, batch.slice(lo, hi - lo).to_pandas()


def parquet_files(path: Path) -> list[Path]:
    """The Parquet files of a file or folder (recursively, by path), or a DataError."""
    if not path.exists():
        raise DataError(f"'{path}' does not exist. Give a Parquet file or a folder of Parquet "
                        "files.")
    if path.is_file():
        if path.suffix.lower() not in PARQUET_SUFFIXES:
            raise DataError(
                f"'{path.name}' is not a Parquet file; only Parquet files and folders of them "
                "are read partition by partition. Convert it to Parquet (pandas: "
                "read_csv(...).to_parquet(...)), or audit it in memory.")
        return [path]
    files = sorted(f for f in path.rglob("*") if f.is_file()
                   and f.suffix.lower() in PARQUET_SUFFIXES and not f.name.startswith((".", "_")))
    if not files:
        raise DataError(f"The folder '{path}' holds no Parquet files (*.parquet, *.pq).")
    return files


def open_source(source: str | Path | object, name: str | None = None,
                partition_rows: int = PARTITION_ROWS) -> TableSource:
    """A :class:`TableSource` for a Parquet file, a folder of Parquet files (every file with
    the same columns), a Dask DataFrame or a pandas DataFrame (cut into partitions of
    ``partition_rows``); raises DataError with a sentence when the files cannot be read or
    do not agree.

    Parameters
    ----------
    source : str, pathlib.Path, dask or pandas DataFrame
        What to read.
    name : str, optional
        A name for messages and the report (default: the file or folder name).
    partition_rows : int
        Rows per partition of a pandas DataFrame.

    Returns
    -------
    TableSource

    Raises
    ------
    DataError
        When the files cannot be read or do not agree.
    """
    if isinstance(source, pd.DataFrame):
        frame = source.reset_index(drop=True)
        starts = range(0, len(frame), partition_rows) if len(frame) else [0]
        parts = tuple(Partition(k, s, min(partition_rows, len(frame) - s))
                      for k, s in enumerate(starts))
        return TableSource(name or "DataFrame", tuple(map(str, frame.columns)), parts, frame,
                           "pandas")
    if hasattr(source, "npartitions") and hasattr(source, "map_partitions"):
        lengths = source.map_partitions(len).compute()
        starts = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(int)
        parts = tuple(Partition(k, int(s), int(r))
                      for k, (s, r) in enumerate(zip(starts, lengths, strict=True)))
        return TableSource(name or "Dask DataFrame", tuple(map(str, source.columns)), parts,
                           source, "dask")
    return _parquet_source(Path(source), name)


def _parquet_source(path: Path, name: str | None) -> TableSource:
    import pyarrow.parquet as pq

    partitions, columns, start = [], None, 0
    for file in parquet_files(path):
        try:
            metadata = pq.ParquetFile(file).metadata
            names = tuple(str(c) for c in pq.ParquetFile(file).schema_arrow.names)
        except Exception as error:  # noqa: BLE001 — pyarrow raises many types for bad files
            raise DataError(f"The file '{file}' could not be read as Parquet "
                            f"({str(error).strip().splitlines()[0]}). Export it again.") from None
        if columns is None:
            columns = names
        elif names != columns:
            raise DataError(
                f"The Parquet files in '{path}' do not share their columns: '{file.name}' has "
                f"{quote_list(names)}, the first file {quote_list(columns)}. Every file of a "
                "folder must hold the same columns.")
        for group in range(metadata.num_row_groups):
            rows = metadata.row_group(group).num_rows
            if rows:
                partitions.append(Partition(len(partitions), start, rows, str(file), group))
                start += rows
    return TableSource(name or path.name or str(path), columns or (), tuple(partitions))


# --------------------------------------------------------------------------- schema


@dataclass(frozen=True)
class SchemaPart:
    """What one partition tells of the whole table (:func:`schema_part`)."""

    rows: int
    labels: frozenset[str]
    levels: dict[str, frozenset[str]]  # categorical column → its values (as strings)
    splits: dict[str, int]  # split → rows of the partition in it (empty: no split column)
    missing: tuple[ValidationNote, ...] = ()


def categorical_columns(source_frame: pd.DataFrame, mapping: ColumnMapping) -> tuple[str, ...]:
    """The mapped features and every group attribute that are categorical (one-hot encoded
    features, group levels), judged from the columns' types as
    :func:`core.data.table.is_categorical` does."""
    features = [c for c in mapping.features if is_categorical(source_frame[c])]
    return tuple(dict.fromkeys([*features, *mapping.groups]))


def schema_columns(mapping: ColumnMapping, categorical: Sequence[str]) -> list[str]:
    """The columns the schema pass reads: the label, the categorical ones and the split."""
    return list(dict.fromkeys([mapping.label, *categorical,
                               *([mapping.split] if mapping.split else [])]))


def _levels_of(series: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """``(codes, names)``: a categorical column's values as strings, missing values as
    ``'(missing)'`` (as :class:`AuditData` reads them)."""
    codes, uniques = pd.factorize(series, use_na_sentinel=True)
    names = np.array([str(u) for u in uniques] + [MISSING_LEVEL], dtype=object)
    return np.where(codes < 0, len(uniques), codes), names


def schema_part(frame: pd.DataFrame, mapping: ColumnMapping, categorical: Sequence[str],
                start: int) -> SchemaPart:
    """The label values, categorical levels and split counts of one partition (rows
    ``start + 1 …`` of the table); a missing label or a bad split value raises DataError
    naming rows of the table."""
    with rows_from(start):
        label = frame[mapping.label]
        missing = label.isna().to_numpy()
        if missing.any():
            raise DataError(
                f"Label column '{mapping.label}' is empty in {describe_rows(missing)}. Remove "
                "those rows or fill in their labels, then load the table again.")
        levels, notes = {}, []
        for column in categorical:
            codes, names = _levels_of(frame[column])
            levels[column] = frozenset(names[np.unique(codes)])
            absent = codes == len(names) - 1
            if absent.any():
                notes.append(ValidationNote(
                    "warning", f"Column '{column}' has missing values in "
                    f"{describe_rows(absent)}; they form their own level '{MISSING_LEVEL}'."))
        splits = {}
        if mapping.split:
            values = split_values(frame, mapping.split)
            splits = {s: int(np.count_nonzero(values == s)) for s in SPLITS}
    return SchemaPart(len(frame), frozenset(np.unique(label_strings(label))), levels, splits,
                      tuple(notes))


@dataclass(frozen=True)
class StreamSchema:
    """The facts of the whole table that decoding a partition needs (:func:`combine_schema`).

    ``classes`` in column order (binary: negative, positive); ``label_codes`` each label
    value's class; ``levels`` the sorted levels of each categorical column; ``categorical``
    the categorical audit features; ``feature_names`` the encoded feature columns (as
    :attr:`AuditData.feature_names`); ``split_rows[k]`` the rows of partition k in each split.
    """

    mapping: ColumnMapping
    n: int
    classes: tuple[str, ...]
    label_codes: dict[str, int]
    levels: dict[str, tuple[str, ...]]
    categorical: tuple[str, ...]
    feature_names: tuple[str, ...]
    split_rows: tuple[dict[str, int], ...]
    partition_rows: tuple[int, ...] = ()
    notes: tuple[ValidationNote, ...] = ()
    reversed: bool = False  # two probability columns, the first one's class named positive

    @property
    def n_classes(self) -> int:
        return len(self.classes)

    def part_rows(self, part: str) -> np.ndarray:
        """Rows of each partition that ``part`` audits (``"all"``, or a split)."""
        if part == "all" or self.mapping.split is None:
            return np.array(self.partition_rows, dtype=np.int64)
        return np.array([r.get(part, 0) for r in self.split_rows], dtype=np.int64)


def combine_schema(parts: Sequence[SchemaPart], mapping: ColumnMapping,
                   categorical: Sequence[str], name: str) -> StreamSchema:
    """Join the partitions' :class:`SchemaPart` (in partition order) into the table's
    :class:`StreamSchema`; the whole-table checks of :class:`AuditData` (at least
    ``MIN_ROWS`` rows, two classes, labels matching the probability columns, at most
    ``MAX_LEVELS`` levels) raise DataError here."""
    check_roles_distinct(mapping)
    n = sum(p.rows for p in parts)
    if n < MIN_ROWS:
        raise DataError(f"The table has only {n} rows; at least {MIN_ROWS} are needed to "
                        "assess calibration. Load more data.")
    values = np.array(sorted(set().union(*(p.labels for p in parts))), dtype=object)
    notes: list[ValidationNote] = []
    reversed_ = False
    if len(mapping.probs) == 1:
        if len(values) < 2:
            raise DataError(
                f"Label column '{mapping.label}' holds only one class ('{values[0]}') in all "
                f"{n:,} rows. Calibration cannot be assessed without both outcomes; load data "
                "that contains both classes.")
        codes, classes = binary_labels(values, mapping.label, mapping.probs[0],
                                       mapping.positive)
    else:
        codes, classes = multiclass_labels(values, mapping.label, mapping.probs)
        if len(values) < 2:
            raise DataError(
                f"Label column '{mapping.label}' holds only one class ('{values[0]}') in all "
                f"{n:,} rows. Calibration cannot be assessed from a single class; load data "
                "that contains several classes.")
        reversed_ = False
        if mapping.positive is not None and len(classes) == 2:
            if str(mapping.positive) == classes[0]:  # as AuditData: the named class is column 1
                codes, classes, reversed_ = 1 - codes, classes[::-1], True
            elif str(mapping.positive) != classes[1]:
                raise DataError(f"The positive class '{mapping.positive}' is not one of the "
                                f"classes {quote_list(classes)}.")
        absent = [c for i, c in enumerate(classes) if i not in set(codes)]
        if absent:
            notes.append(ValidationNote(
                "info", f"No row has the label {quote_list(absent)}; those classes have "
                "predicted probabilities but no observations."))
    levels = {}
    for column in categorical:
        found = sorted(set().union(*(p.levels[column] for p in parts)))
        if len(found) > MAX_LEVELS:
            role = "group attribute" if column in mapping.groups and \
                column not in mapping.features else "audit feature"
            raise DataError(
                f"Column '{column}' ({role}) has {len(found):,} distinct values; at most "
                f"{MAX_LEVELS} are allowed for a categorical column. Group rare values "
                "together or leave the column out.")
        levels[column] = tuple(found)
    features = tuple(c for c in mapping.features if c in categorical)
    names: list[str] = []
    for column in mapping.features:
        if column in levels:
            names += [f"{column}={level}" for level in levels[column]]
            notes.append(ValidationNote(
                "info", f"Audit feature '{column}' is categorical with {len(levels[column])} "
                f"levels; it was one-hot encoded into {len(levels[column])} columns."))
        else:
            names.append(str(column))
    seen: set[str] = set()
    for part in parts:
        for note in part.missing:
            key = note.message.split(" in ")[0]
            if key not in seen:  # the first partition's rows name each column's problem
                seen.add(key)
                notes.append(note)
    return StreamSchema(mapping, n, tuple(classes),
                        {str(v): int(c) for v, c in zip(values, codes, strict=True)}, levels,
                        features, tuple(names), tuple(p.splits for p in parts),
                        tuple(p.rows for p in parts), tuple(notes), reversed_)


# --------------------------------------------------------------------------- decoding


@dataclass(frozen=True)
class Chunk:
    """One decoded partition (or part of one): rows ``start …`` of the table.

    ``probs`` ``(r, m)`` on the simplex, ``y`` class indices, ``X`` the encoded audit
    features (``schema.feature_names``), ``groups`` each group attribute's level index into
    ``schema.levels``, ``split`` the split of each row (or ``None``), ``notes`` what was
    repaired (clipped overshoots, renormalised rows), naming rows of the table.
    """

    start: int
    y: np.ndarray
    probs: np.ndarray
    X: np.ndarray
    groups: dict[str, np.ndarray]
    split: np.ndarray | None
    notes: tuple[ValidationNote, ...] = ()

    @property
    def rows(self) -> int:
        return int(self.y.shape[0])

    def take(self, rows: np.ndarray) -> Chunk:
        """The rows ``rows`` (indices or a mask) of this chunk (``start`` kept: the rows are
        no longer contiguous, so only the arrays are meaningful)."""
        return Chunk(self.start, self.y[rows], self.probs[rows], self.X[rows],
                     {g: v[rows] for g, v in self.groups.items()},
                     None if self.split is None else self.split[rows], self.notes)


def decode_columns(mapping: ColumnMapping) -> list[str]:
    """The columns :func:`decode` reads."""
    return list(dict.fromkeys([mapping.label, *mapping.probs, *mapping.features,
                               *mapping.groups, *([mapping.split] if mapping.split else [])]))


def decode(frame: pd.DataFrame, schema: StreamSchema, start: int) -> Chunk:
    """Validate and decode one partition (rows ``start + 1 …`` of the table) with the checks
    and sentences of :class:`AuditData`; raises DataError naming rows of the table."""
    mapping = schema.mapping
    notes: list[ValidationNote] = []
    with rows_from(start):
        probs = probability_columns(frame, mapping.probs, mapping.logits, "probability", notes)
        labels = label_strings(frame[mapping.label])
        lookup = schema.label_codes
        y = np.fromiter((lookup[v] for v in labels), dtype=np.int64, count=len(labels)) \
            if len(labels) < 64 else _codes_of(labels, lookup)
        if schema.reversed:
            probs = probs[:, ::-1]
        columns = []
        for column in mapping.features:
            if column in schema.categorical:
                codes = _codes_in(frame[column], schema.levels[column])
                columns += [(codes == k).astype(float) for k in range(len(schema.levels[column]))]
            else:
                columns.append(numeric_values(frame[column].reset_index(drop=True),
                                              "audit feature"))
        X = np.column_stack(columns) if columns else np.empty((len(frame), 0))
        groups = {g: _codes_in(frame[g], schema.levels[g]) for g in mapping.groups}
        split = split_values(frame, mapping.split) if mapping.split else None
    return Chunk(start, y, probs, X, groups, split, tuple(notes))


def _codes_of(labels: np.ndarray, lookup: dict[str, int]) -> np.ndarray:
    values, inverse = np.unique(labels.astype(str), return_inverse=True)
    return np.array([lookup[v] for v in values], dtype=np.int64)[inverse.ravel()]


def _codes_in(series: pd.Series, levels: tuple[str, ...]) -> np.ndarray:
    """Each value's index among the table's sorted ``levels``."""
    codes, names = _levels_of(series)
    index = {level: k for k, level in enumerate(levels)}
    return np.array([index.get(str(name), -1) for name in names], dtype=np.int64)[codes]


# --------------------------------------------------------------------------- containers


def audit_data(chunk: Chunk, schema: StreamSchema, name: str,
               notes: tuple = ()) -> AuditData:
    """An :class:`AuditData` of decoded rows (a streamed audit's seeded sample): the table's
    classes, encoded features and levels, whatever rows the chunk holds, with the whole
    table's validation ``notes``."""
    mapping = schema.mapping
    feature_frame = pd.DataFrame(index=pd.RangeIndex(chunk.rows))
    at = 0
    for column in mapping.features:
        if column in schema.categorical:
            width = len(schema.levels[column])
            codes = chunk.X[:, at:at + width].argmax(axis=1)
            feature_frame[column] = np.asarray(schema.levels[column], dtype=object)[codes]
            at += width
        else:
            feature_frame[column] = chunk.X[:, at]
            at += 1
    groups = pd.DataFrame({g: np.asarray(schema.levels[g], dtype=object)[chunk.groups[g]]
                           for g in mapping.groups}, index=pd.RangeIndex(chunk.rows))
    return AuditData(y=chunk.y, probs=chunk.probs, classes=schema.classes, X=chunk.X,
                     feature_names=schema.feature_names, feature_frame=feature_frame,
                     groups=groups, split=chunk.split, report=tuple(notes), mapping=mapping,
                     name=name)


def concatenate(chunks: Sequence[Chunk]) -> Chunk:
    """The rows of several chunks, in order, as one."""
    if not chunks:
        raise ValueError("No rows to concatenate.")
    first = chunks[0]
    return Chunk(first.start, np.concatenate([c.y for c in chunks]),
                 np.concatenate([c.probs for c in chunks]),
                 np.concatenate([c.X for c in chunks]),
                 {g: np.concatenate([c.groups[g] for c in chunks]) for g in first.groups},
                 None if first.split is None else np.concatenate([c.split for c in chunks]),
                 tuple(n for c in chunks for n in c.notes))


def _mix(words: np.ndarray) -> np.ndarray:
    """SplitMix64's finaliser (Steele, Lea & Flood 2014) on unsigned 64-bit words: every
    input bit changes about half of the output bits."""
    z = words + np.uint64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def chunk_digest(chunk: Chunk) -> np.ndarray:
    """A digest of a chunk's decoded rows that does not depend on how the table was cut:
    each row's values and global row number are mixed into one 64-bit word
    (:func:`_mix`), and the digest is two sums of the rows' words mod 2⁶⁴ (of the words,
    and of the words mixed again). Chunks' digests add (``+``, wrapping), so the digest of
    a table is the same whatever its batches, row groups or files."""
    with np.errstate(over="ignore"):
        h = _mix(np.arange(chunk.start, chunk.start + chunk.rows, dtype=np.uint64))
        for array in (chunk.y, chunk.probs, chunk.X, *chunk.groups.values()):
            words = np.ascontiguousarray(array, dtype=np.float64 if array.dtype.kind == "f"
                                         else np.int64).reshape(chunk.rows, -1).view(np.uint64)
            for column in words.T:
                h = _mix(h ^ column)
        if chunk.split is not None:
            values, codes = np.unique(np.asarray(chunk.split, dtype=str), return_inverse=True)
            words = np.array([int.from_bytes(hashlib.sha1(v.encode()).digest()[:8], "little")
                              for v in values], dtype=np.uint64)
            h = _mix(h ^ words[codes.ravel()])
        return np.array([h.sum(dtype=np.uint64), _mix(h).sum(dtype=np.uint64)],
                        dtype=np.uint64)


def stream_fingerprint(digest: np.ndarray, schema: StreamSchema) -> str:
    """The fingerprint of a streamed table from the sum of its chunks' digests
    (:func:`chunk_digest`)."""
    hashed = hashlib.sha1(b"stream")
    hashed.update(np.asarray(digest, dtype=np.uint64).tobytes())
    hashed.update(repr((schema.classes, schema.feature_names)).encode())
    return hashed.hexdigest()[:16]


def merge_notes(notes: Sequence[ValidationNote], limit: int = 8) -> tuple[ValidationNote, ...]:
    """The partitions' repair notes, at most ``limit`` (then one saying how many more)."""
    unique = list(dict.fromkeys(notes))
    if len(unique) <= limit:
        return tuple(unique)
    return (*unique[:limit], ValidationNote(
        "warning", f"… and {len(unique) - limit:,} more notes of the same kinds in later "
        "partitions."))

