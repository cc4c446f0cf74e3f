"""Monitoring a table read batch by batch (:func:`monitor_stream`): the same
:class:`~core.monitor.monitoring.MonitorResult` as :func:`~core.monitor.monitoring.monitor_audit`
for a Parquet file or folder of any size, in a bounded memory.

The table is read as the streamed audit reads it — a
:class:`~core.data.stream_sources.TableSource` cut into batches of the rows the memory
budget allows (:func:`core.kernels.memory.batch_plan`), read in row order on this machine's
threads (:func:`core.kernels.engine.map_partitions`), each batch validated and decoded with
:class:`~core.data.audit_data.AuditData`'s checks (:mod:`core.data.stream_schema`,
:mod:`core.data.stream_decoding`) — in two passes:

1. **scan** — the label values and the group levels with their rows (which levels are
   monitored), how the time column reads (:func:`core.data.time_column.time_form`: dates,
   numbers or labels, decided over the whole column), whether the rows are in time order,
   and the rows of every period (again, in the rare table whose batches read differently
   from the whole column);
2. **monitor** — every batch's periods labelled and its rows folded, in order, into the
   carried state of every e-process and confidence sequence
   (:class:`~core.monitor.series.SeriesState`) and of the per-period sums
   (:class:`~core.monitor.periods.PeriodTable`), whose cells are written when their period
   ends.

Every carried number is the one-pass number (the e-processes bit for bit, the sums to
rounding), so the result is the in-memory one whatever the batches. What is held: a few
batches, the series at the rows a report shows (:mod:`core.monitor.series`), and — only
when the per-period kernel tests are asked for — the current period's forecasts, outcomes and
features, counted in the memory plan.

The e-processes need the rows in time order. A table whose rows are not is read into memory
and sorted (:func:`~core.monitor.monitoring.monitor_audit`) when its audit in memory fits the
budget (:func:`core.kernels.memory.fits_in_memory`); a larger one is refused with a sentence
that says how to sort it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from core.data.audit_data import AuditData
from core.data.groups import MIN_GROUP_ROWS
from core.data.mapping import ColumnMapping
from core.data.predictions import model_matrix
from core.data.problems import DataError, ValidationNote, quote_list, rows_from
from core.data.stream_decoding import decode, decode_columns, merge_notes
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
from core.kernels.memory import (
    GIB,
    MAX_BATCH_ROWS,
    MemoryPlan,
    default_budget,
    fits_in_memory,
    row_bytes,
)
from core.kernels.rff import CHUNK_ROWS
from core.monitor.monitoring import (
    MonitorResult,
    MonitorSettings,
    monitor_audit,
    with_period_evidence,
)
from core.monitor.periods import CellSettings, PeriodTable
from core.monitor.series import SeriesState, group_plans

Progress = Callable[[float, str], None]
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


@dataclass(frozen=True)
class MonitorBatch:
    """One batch decoded for monitoring (:class:`MonitorTask`)."""

    start: int
    p: np.ndarray
    y: np.ndarray
    codes: dict[str, np.ndarray]
    challenger: np.ndarray | None
    periods: np.ndarray
    times: np.ndarray
    X: np.ndarray | None
    notes: tuple[ValidationNote, ...]


@dataclass(frozen=True)
class MonitorTask:
    """The monitor pass's work on a batch: decode it (AuditData's checks, rows named as rows
    of the table), read its challenger, times and periods."""

    schema: StreamSchema
    form: TimeForm
    period: str | int
    challenger: tuple[str, tuple[str, ...]] | None
    features: bool

    def __call__(self, partition: Partition, frame: pd.DataFrame) -> MonitorBatch:
        schema, start = self.schema, partition.start
        chunk = decode(frame, schema, start)
        notes = list(chunk.notes)
        challenger = None
        if self.challenger is not None:
            name, columns = self.challenger
            with rows_from(start):
                matrix = model_matrix(frame, name, columns, schema.mapping.logits, 2, notes)
            challenger = matrix[:, 0] if schema.reversed else matrix[:, 1]
        column = schema.mapping.time
        times = read_times(frame[column], column, self.form)
        return MonitorBatch(start, chunk.probs[:, 1], chunk.y, chunk.groups, challenger,
                            period_labels(times, self.period, start, schema.n),
                            times.values.to_numpy(), chunk.X if self.features else None,
                            tuple(notes))


class MonitorFold:
    """The monitor pass's fold, in row order on the calling thread: every batch into the
    series' state and the period table (module doc); ``merge(a, b)`` of
    :func:`core.kernels.engine.map_partitions` (``a`` the fold, or the first batch)."""

    def __init__(self, series: SeriesState, table: PeriodTable, schema: StreamSchema) -> None:
        self.series, self.table, self.schema = series, table, schema
        self.names = {group: np.asarray(schema.levels[group], dtype=object)
                      for group in schema.mapping.groups}
        self.current: str | None = None  # the period the last batch ended in
        self.ends: list[int] = []  # every period's last row, so far
        self.notes: list[ValidationNote] = []

    def __call__(self, total: object, batch: MonitorBatch) -> MonitorFold:
        if isinstance(total, MonitorBatch):
            self.add(total)
        self.add(batch)
        return self

    def add(self, batch: MonitorBatch) -> None:
        """Fold the next batch in."""
        periods, n = batch.periods, batch.p.shape[0]
        if n == 0:
            return
        cuts = np.flatnonzero(periods[1:] != periods[:-1])
        if self.current is not None and periods[0] != self.current:
            self.ends.append(batch.start - 1)
        self.ends += [batch.start + int(c) for c in cuts]
        ended = tuple(dict.fromkeys(
            ([self.current] if self.current is not None and periods[0] != self.current
             else []) + [str(periods[c]) for c in cuts]))
        monitored = {group: batch.codes[group] for group in self.series.plans}
        self.series.update(batch.p, batch.y, monitored, batch.challenger,
                           ends=np.append(cuts, n - 1),
                           extras={"periods": periods, "times": batch.times})
        groups = {group: self.names[group][codes] for group, codes in batch.codes.items()}
        self.table.add(batch.start, batch.p, batch.y, periods, groups, batch.X, ended)
        self.current = str(periods[-1])
        self.notes += batch.notes


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


def monitor_stream(source: TableSource, mapping: ColumnMapping,
                   settings: MonitorSettings | None = None, memory: int | None = None,
                   batch_rows: int | None = None, progress: Progress | None = None
                   ) -> MonitorResult:
    """Monitor a binary table with a time column read batch by batch (module doc).

    Parameters
    ----------
    source : TableSource
        :func:`core.data.stream_sources.open_source` of a Parquet file or folder, or a
        DataFrame.
    mapping : ColumnMapping
        Which column plays which role; ``mapping.time`` is required, one probability column.
    settings : MonitorSettings, optional
        Period, level, method, intervals, kernel tests, challenger.
    memory : int, optional
        The memory budget in bytes (default :func:`core.kernels.memory.default_budget`).
    batch_rows : int, optional
        Rows of a batch, overriding the memory plan's (the result does not depend on it).
    progress : callable, optional
        ``progress(fraction, message)`` after every batch of every pass.

    Returns
    -------
    MonitorResult
        As :func:`~core.monitor.monitoring.monitor_audit` returns for the same rows; its
        series at the rows a report shows (``rows``), ``notes`` saying how it was read.

    Raises
    ------
    DataError
        A bad row or column (named by its row in the table), no time column, more than two
        classes, an unknown challenger, or rows out of time order in a table too large to
        sort in memory.
    ValueError
        A budget too small for one batch.
    """
    settings = (settings or MonitorSettings()).checked()
    if mapping.time is None:
        raise DataError("This table has no time column. Map the column that says when each "
                        "outcome was observed as the time column to monitor it over time.")
    models = dict(mapping.models)
    if settings.challenger is not None and settings.challenger not in mapping.model_names:
        raise DataError(f"There is no model '{settings.challenger}' in this table; its "
                        f"models are {', '.join(mapping.model_names)}.")
    wanted = [*decode_columns(mapping), mapping.time,
              *(c for columns in models.values() for c in columns)]
    missing = [c for c in dict.fromkeys(wanted) if c not in source.columns]
    if missing:
        raise DataError(f"The table has no column {quote_list(missing)}. Its columns are "
                        f"{quote_list(list(source.columns))}.")
    if not source.partitions:
        raise DataError(f"{source.name} has no rows.")
    budget = default_budget() if memory is None else int(memory)
    report = progress or (lambda fraction, message: None)
    scan_plan = memory_plan(settings, budget, 0, 0)
    scanned = source.batched(batch_rows or scan_plan.batch_rows)
    scan = scan_table(scanned, mapping, settings.period, _runner(scanned, report))
    if scan.unsorted is not None:
        return _sorted_in_memory(source, mapping, settings, budget, scan, wanted)
    if scan.schema.n_classes != 2:
        raise DataError(f"Monitoring over time is for binary models; this table has "
                        f"{scan.schema.n_classes} classes.")
    kernel = settings.skce_resamples > 0 or settings.klce_resamples > 0
    features = len(scan.schema.feature_names) if kernel and settings.klce_resamples else 0
    plan = memory_plan(settings, budget, scan.largest_period if kernel else 0, features)
    if batch_rows is not None:
        plan = dataclasses.replace(plan, batch_rows=int(batch_rows), target=0)
    batched = source.batched(plan.batch_rows)
    plans = group_plans(scan.levels, settings.alpha, MIN_GROUP_ROWS)
    challenger = None
    if settings.challenger is not None and settings.challenger != mapping.model_names[0]:
        challenger = (settings.challenger, tuple(models[settings.challenger]))
    series = SeriesState(scan.schema.n, settings.alpha, settings.method, settings.n_bins, plans,
                         challenger is not None, keep_all=False)
    table = PeriodTable(tuple(mapping.groups), CellSettings(
        ECE_BINS, settings.n_resamples, 0.95, settings.seed, MIN_GROUP_ROWS,
        settings.skce_resamples, settings.klce_resamples))
    fold = MonitorFold(series, table, scan.schema)
    task = MonitorTask(scan.schema, scan.form, settings.period, challenger, features > 0)
    merged = _runner(batched, report)("Monitoring", task, wanted, fold, 0.2, 1.0)
    if isinstance(merged, MonitorBatch):  # one batch: nothing was merged
        fold.add(merged)
    ends = np.asarray([*fold.ends, scan.schema.n - 1], dtype=np.int64)
    kept = series.finish(ends)
    periods = kept.extras["periods"]
    read = (f"Read {batched.describe()} in "
            + (plan.describe() if plan.target else f"batches of {plan.batch_rows:,} rows")
            + "; the series are kept at the rows the report shows.")
    notes = (read, *(note.message for note in merge_notes(
        [*scan.schema.notes, *fold.notes])))
    return MonitorResult(settings, mapping.time, periods,
                         with_period_evidence(table.table(), periods, kept), kept.eprocess,
                         kept.groups, kept.gap_sequence, kept.comparison,
                         mapping.model_names[0], False, kept.extras["times"], kept.rows,
                         scan.schema.n, notes)


def _runner(source: TableSource, report: Progress) -> Callable:
    """A pass over the batches on this machine's threads, in row order, with progress."""
    def run(name: str, task, columns, merge, low: float, high: float):
        def tick(done: int, total: int) -> None:
            report(low + (high - low) * done / max(total, 1),
                   f"{name}: {done:,} of {total:,} batches")

        report(low, f"{name}: 0 of {len(source.partitions):,} batches")
        with engine.use("threads"):  # the fold is in row order: no cluster's merge tree
            return engine.map_partitions(task, source, columns, merge, tick)

    return run


def _sorted_in_memory(source: TableSource, mapping: ColumnMapping, settings: MonitorSettings,
                      budget: int, scan: Scan, columns: list[str]) -> MonitorResult:
    """A table whose rows are not in time order: sorted in memory when it fits the budget,
    else a sentence."""
    row = scan.unsorted
    if not fits_in_memory(scan.schema.n, budget):
        raise DataError(
            f"The rows of {source.name} are not in time order (row {row + 1:,} is earlier than "
            f"row {row:,} in '{mapping.time}'), and its {scan.schema.n:,} rows are too many to "
            "sort in memory within the budget. Write the table sorted by time (pandas: "
            f"frame.sort_values('{mapping.time}', kind='stable').to_parquet(...)), or give "
            "more memory (--memory).")
    frame = pd.concat([part for _, part in source.batches(list(dict.fromkeys(columns)))],
                      ignore_index=True)
    result = monitor_audit(AuditData.from_mapping(frame, mapping, name=source.name), settings)
    return dataclasses.replace(result, notes=(
        f"The rows of {source.name} were not in time order (row {row + 1:,} is earlier than "
        f"row {row:,}); the table was read into memory and sorted.", *result.notes))
