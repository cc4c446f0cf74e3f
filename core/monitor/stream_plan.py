"""The plan of a monitor read batch by batch (:mod:`core.monitor.streamed`): the scan pass —
what the whole table must tell before its rows are monitored — the label values and the categorical
levels (:mod:`core.data.stream_schema`), each group level's rows (which levels are
monitored), how the time column reads (:func:`core.data.time_column.time_form`, decided over
the whole column: a batch of ISO weeks in a column of labels reads as labels), whether the rows
are in time order, and the rows of the largest period (what the kernel tests hold) — and the
batches' memory plan (:func:`memory_plan`).

In the scan each batch is read as it reads on its own; where that differs from the whole
column's form (a rare table), its times are read again as the whole column reads them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from core.data.mapping import ColumnMapping
from core.data.problems import DataError, rows_from
from core.data.stream_decoding import decode_columns
from core.data.stream_schema import (
    SchemaPart,
    StreamSchema,
    categorical_columns,
    combine_schema,
    levels_of,
    schema_part,
)
from core.data.stream_sources import Partition, TableSource
from core.data.time_column import (
    TimeForm,
    TimeScan,
    period_labels,
    read_times,
    scan_times,
    time_form,
)
from core.kernels import engine
from core.kernels.memory import GIB, MAX_BATCH_ROWS, MemoryPlan, row_bytes
from core.kernels.rff import CHUNK_ROWS
from core.monitor.monitoring import MonitorSettings

#: Equal-width bins of the per-period ECE (:func:`core.monitor.periods.period_table`).
ECE_BINS = 15
#: The monitor's memory besides its batches: the interpreter and its libraries (238 MiB
#: measured after the imports), the series kept for the report, the period table and the
#: report's figures (the whole process peaked at 522 MiB on 10⁶ rows and 552 MiB on 10⁷ in
#: batches of 57,344 rows: ``docs/studies/monitoring.md``).
BASE_BYTES = 400 * 2**20
#: Bytes a row of the current period takes while the kernel tests need its rows: its forecast,
#: outcome and features, held, joined and copied into the tests' inputs (``3 · 8 · (2 + d)``).
HELD_ROW_BYTES = 24


@dataclass(frozen=True)
class ScanPart:
    """What one batch tells of the whole table (:class:`ScanTask`)."""

    start: int
    rows: int
    schema: SchemaPart | None
    levels: dict[str, dict[str, int]]
    scan: TimeScan
    form: TimeForm | None  # how this batch's time was read for the facts below
    first: object = None  # the first and last row's time (a number, or a label's text)
    last: object = None
    unsorted: int | None = None  # the first row (of the table) earlier than the one before
    periods: tuple[tuple[str, int], ...] = ()  # each period's rows, in order
    problem: DataError | None = None


@dataclass(frozen=True)
class ScanTask:
    """The scan pass (module doc); ``form`` given: the time read that way (a second scan)."""

    mapping: ColumnMapping
    categorical: tuple[str, ...]
    period: str | int
    form: TimeForm | None = None
    count: bool = False

    def __call__(self, partition: Partition, frame: pd.DataFrame) -> list[ScanPart]:
        mapping, start = self.mapping, partition.start
        schema = None if self.form is not None else schema_part(frame, mapping,
                                                                self.categorical, start)
        levels = {}
        for group in mapping.groups if self.form is None else ():
            codes, names = levels_of(frame[group])
            counts = np.bincount(codes, minlength=len(names))
            levels[group] = {str(names[k]): int(counts[k]) for k in np.flatnonzero(counts)}
        series = frame[mapping.time]
        with rows_from(start):
            scan = scan_times(series, mapping.time, count=self.count)
            form = self.form
            try:
                form = form or time_form([scan], mapping.time)
                return [ScanPart(start, len(frame), schema, levels, scan, form,
                                 **order_facts(series, mapping.time, form, self.period, start))]
            except DataError as error:
                if self.form is not None:
                    raise
                return [ScanPart(start, len(frame), schema, levels, scan, None,
                                 problem=error)]


def order_facts(series: pd.Series, column: str, form: TimeForm, period: str | int,
                start: int) -> dict:
    """A batch's first and last time, its first row out of order and its periods' rows."""
    times = read_times(series, column, form)
    keys = times.values.to_numpy(dtype=str) if form.form == "labels" else times.sort_key
    facts: dict = {}
    if keys.shape[0]:
        facts.update(first=keys[0], last=keys[-1])
        down = np.flatnonzero(keys[1:] < keys[:-1])
        facts["unsorted"] = int(start + down[0] + 1) if down.size else None
    if isinstance(period, str) and keys.shape[0]:
        labels = period_labels(times, period)
        cuts = np.flatnonzero(labels[1:] != labels[:-1]) + 1
        bounds = np.concatenate([[0], cuts, [labels.shape[0]]])
        facts["periods"] = tuple((str(labels[a]), int(b - a))
                                 for a, b in zip(bounds[:-1], bounds[1:], strict=True))
    return facts


def join(a: list, b: list) -> list:
    """The batches' scans side by side, in order."""
    return a + b


@dataclass(frozen=True)
class Scan:
    """The table as the scan found it: its schema, how its time reads, its monitored group
    levels, the rows of its largest period, and the first row out of time order (or None)."""

    schema: StreamSchema
    form: TimeForm
    levels: dict[str, tuple[tuple[str, ...], np.ndarray]]
    largest_period: int
    unsorted: int | None


def scan_table(source: TableSource, mapping: ColumnMapping, period: str | int,
               run: Callable) -> Scan:
    """The scan pass (and its second round where needed), combined (module doc)."""
    first = source.read(source.partitions[0], decode_columns(mapping))
    categorical = categorical_columns(first, mapping)
    columns = list(dict.fromkeys([mapping.label, *categorical, mapping.time]))
    parts = run("Reading the labels, levels and times", ScanTask(mapping, categorical, period),
                columns, join, 0.0, 0.1)
    schema = combine_schema([p.schema for p in parts], mapping, categorical, source.name)
    form = time_form([p.scan for p in parts], mapping.time)
    if form is None:  # weeks or quarters in some batches only: count every batch's dates
        counted = run("Reading the times again", ScanTask(mapping, categorical, period,
                                                          count=True), columns, join, 0.1, 0.15)
        form = time_form([p.scan for p in counted], mapping.time)
    if any(p.form != form for p in parts):
        forced = run("Reading the times as the whole column reads",
                     ScanTask(mapping, categorical, period, form), [mapping.time], join,
                     0.15, 0.2)
        parts = [dataclasses.replace(forced[k], schema=p.schema, levels=p.levels)
                 for k, p in enumerate(parts)]
    for part in parts:
        if part.problem is not None:
            raise part.problem
    levels = {}
    for group in mapping.groups:
        names = schema.levels[group]
        counts = np.array([sum(p.levels[group].get(name, 0) for p in parts) for name in names])
        levels[group] = (names, counts)
    unsorted, previous = None, None
    for part in parts:
        if previous is not None and part.first < previous.last:
            unsorted = part.start
        unsorted = part.unsorted if unsorted is None else unsorted
        if unsorted is not None:
            break
        previous = part
    return Scan(schema, form, levels, _largest_period(parts, period, schema.n), unsorted)


def _largest_period(parts: list[ScanPart], period: str | int, n: int) -> int:
    """The rows of the largest period (runs of one label across batches joined)."""
    if not isinstance(period, str):
        return min(int(period), n)
    largest, label, rows = 0, None, 0
    for part in parts:
        for name, count in part.periods:
            rows = rows + count if name == label else count
            label = name
            largest = max(largest, rows)
    return largest


def memory_plan(settings: MonitorSettings, budget: int, held_rows: int,
                n_features: int) -> MemoryPlan:
    """The batches of a streamed monitor within ``budget`` bytes: the streamed audit's model
    of a batch's row (:func:`core.kernels.memory.row_bytes`: its Poisson weights, its bins,
    its decoded columns), :func:`core.kernels.engine.in_flight` batches at a time, besides
    :data:`BASE_BYTES` and — when the kernel tests hold them — the largest period's rows; the
    largest batch (a multiple of :data:`core.kernels.rff.CHUNK_ROWS`, at most
    :data:`core.kernels.memory.MAX_BATCH_ROWS`) within the budget, as
    :func:`core.kernels.memory.batch_plan` chooses an audit's.

    Raises
    ------
    ValueError
        With a sentence naming the budget needed, when even the smallest batches would not
        fit.
    """
    workers = max(1, engine.default_workers())
    in_flight = engine.in_flight(workers)
    per_row = row_bytes(settings.n_resamples, max(ECE_BINS, settings.n_bins))
    held = held_rows * HELD_ROW_BYTES * (2 + n_features)
    rows = (budget - BASE_BYTES - held) // (in_flight * per_row) // CHUNK_ROWS * CHUNK_ROWS
    rows = min(MAX_BATCH_ROWS, rows)
    if rows < CHUNK_ROWS:
        needed = BASE_BYTES + held + in_flight * CHUNK_ROWS * per_row
        kernel = (f", the largest period's {held_rows:,} rows for the per-period kernel tests "
                  f"({held / GIB:.2f} GB)" if held else "")
        raise ValueError(
            f"A memory budget of {budget / GIB:.2f} GB is below what monitoring this table "
            f"batch by batch needs: about {needed / GIB:.2f} GB ({BASE_BYTES / GIB:.2f} GB for "
            f"the process{kernel}, and {in_flight} batches of {CHUNK_ROWS:,} rows at "
            f"{per_row / 1e3:.1f} kB a row with {settings.n_resamples} bootstrap resamples). "
            f"Give --memory {needed / GIB + 0.05:.1f} or more, or fewer --resamples"
            + (", or a shorter period." if held else "."))
    return MemoryPlan(int(budget), int(rows), int(in_flight), int(per_row),
                      int(BASE_BYTES + held + in_flight * rows * per_row))
