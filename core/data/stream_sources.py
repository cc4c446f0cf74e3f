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

What a partition's rows mean is learnt in a first, light pass
(:mod:`core.data.stream_schema`) and each partition decoded with :class:`AuditData`'s checks
(:mod:`core.data.stream_decoding`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from core.data.problems import DataError, quote_list
from core.data.readers import PARQUET_SUFFIXES

#: Rows per partition when a pandas DataFrame is streamed (Parquet's default row group).
PARTITION_ROWS = 1 << 20

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
                    f"{len(units):,} row group{'s' if len(units) != 1 else ''}, "
                    f"{self.n:,} rows{batches})")
        return f"{self.name} ({self.kind} DataFrame, {len(units):,} partition" \
               f"{'s' if len(units) != 1 else ''}, " \
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
