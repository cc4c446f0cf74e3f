"""Monitoring a table read batch by batch (:func:`monitor_stream`): the same
:class:`~core.monitor.monitoring.MonitorResult` as :func:`~core.monitor.monitoring.monitor_audit`
for a Parquet file or folder of any size, in a bounded memory.

The table is read as the streamed audit reads it — a
:class:`~core.data.stream_sources.TableSource` cut into batches of the rows the memory
budget allows (:func:`core.monitor.stream_plan.memory_plan`, the audit's model of a batch's
row), read in row order on this machine's threads
(:func:`core.kernels.engine.map_partitions`), each batch validated and decoded with
:class:`~core.data.audit_data.AuditData`'s checks (:mod:`core.data.stream_schema`,
:mod:`core.data.stream_decoding`) — in two passes:

1. **scan** (:mod:`core.monitor.stream_plan`) — the label values and the group levels with
   their rows (which levels are monitored), how the time column reads
   (:func:`core.data.time_column.time_form`: dates, numbers or labels, decided over the
   whole column), whether the rows are in time order, and the rows of every period;
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
from core.data.stream_schema import StreamSchema
from core.data.stream_sources import Partition, TableSource
from core.data.time_column import TimeForm, period_labels, read_times
from core.kernels import engine
from core.kernels.memory import default_budget, fits_in_memory
from core.monitor.monitoring import (
    MonitorResult,
    MonitorSettings,
    monitor_audit,
    with_period_evidence,
)
from core.monitor.periods import CellSettings, PeriodTable
from core.monitor.series import SeriesState, group_plans
from core.monitor.stream_plan import ECE_BINS, Scan, memory_plan, scan_table

Progress = Callable[[float, str], None]


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
