"""The streamed audit run pass by pass (:func:`run_stream_audit`, module doc of
:mod:`core.stream`): the batches sized to the memory budget (:func:`memory_plan`), each pass
mapped over the partitions on the current engine with its progress and time, the order
statistics' further rounds, then the assembly.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from dataclasses import dataclass

from core.audit.results import AuditResult
from core.audit.settings import SAMPLE_ROWS, AuditSettings
from core.data.audit_data import AuditData
from core.data.mapping import ColumnMapping
from core.data.problems import DataError, quote_list
from core.data.stream_decoding import decode_columns
from core.data.stream_schema import categorical_columns, combine_schema, schema_columns
from core.data.stream_sources import TableSource
from core.kernels import engine
from core.local.slice_streamed import raw_codings
from core.stattests.klce_grid import GridTestResult
from core.stattests.result import TestResult
from core.stream.assemble import assemble
from core.stream.kernel_sums import KernelMerge, KernelTask, kernel_results, kernel_setup
from core.stream.plan import audited_model, check_settings, make_plan, memory_plan
from core.stream.quantile_sums import (
    OrderTask,
    QuantileTask,
    merge_orders,
    merge_quantiles,
    quantile_plan,
    slice_edges_pending,
    start_order,
)
from core.stream.row_sums import SchemaTask, SumsTask, join, merge_sums

Progress = Callable[[float, str], None]


@dataclass(frozen=True)
class StreamedAudit:
    """A streamed audit: the :class:`AuditResult` (with its :class:`~core.audit.StreamInfo`)
    and the seeded sample of the table as an :class:`AuditData` (its figures draw rows from
    it).

    Attributes
    ----------
    result : AuditResult
        The audit, with how the table was read (``result.stream``).
    sample : AuditData
        The seeded sample of the table.
    """

    result: AuditResult
    sample: AuditData


def run_stream_audit(source: TableSource, mapping: ColumnMapping,
                     settings: AuditSettings | None = None, progress: Progress | None = None,
                     sample_rows: int = SAMPLE_ROWS, model: str | None = None,
                     memory: int | None = None, batch_rows: int | None = None
                     ) -> StreamedAudit:
    """Audit a table read partition by partition (module doc) at ``settings``.

    Parameters
    ----------
    source : TableSource
        :func:`core.data.stream_sources.open_source` of a Parquet file or folder, or a DataFrame.
    mapping : ColumnMapping
        Which column plays which role (as :meth:`AuditData.from_mapping`).
    settings : AuditSettings, optional
        The pages' defaults when not given.
    progress : callable, optional
        ``progress(fraction, message)``, after every partition of every pass.
    sample_rows : int
        Rows of the seeded sample of the sections that are not sums over rows.
    model : str, optional
        Which of the mapping's prediction sets to audit (``mapping.model_names``; default the
        one in ``probs``); only its columns are read.
    memory : int, optional
        The memory budget in bytes that the batches are sized to
        (:func:`memory_plan`; default a share of this machine's memory).
    batch_rows : int, optional
        Rows of a batch, overriding the memory_use's (the results do not depend on it).

    Returns
    -------
    StreamedAudit

    Raises
    ------
    DataError
        A bad row or column, named by its row in the table.
    ValueError
        A setting a streamed audit cannot run, or a budget too small for one batch.
    """
    settings = settings or AuditSettings()
    memory_use = memory_plan(settings, memory)
    if batch_rows is not None:
        memory_use = dataclasses.replace(memory_use, batch_rows=int(batch_rows), target=0)
    # threads read the table's rows in order, cut at multiples of the batch; a cluster
    # reads each row group (frame partition) as one task, cut from its own first row
    source = source.batched(memory_use.batch_rows, across_units=engine.current().name != "dask")
    several = len(mapping.model_names) > 1
    mapping = audited_model(mapping, model)
    passes: list[tuple[str, float]] = []
    report, run = _runner(source, progress, passes)
    plan, sums, setup, kernel, order = kernel_passes(source, mapping, settings, run,
                                                     sample_rows)
    binnings, groups = quantile_plan(plan, sums, order)
    round_ = 0
    while binnings is None or slice_edges_pending(plan, order):
        round_ += 1
        merged = run(f"Order statistics, round {round_ + 2}", OrderTask(plan, order.request()),
                     decode_columns(mapping), merge_orders, 0.75, 0.8)
        order.update(merged)
        binnings, groups = quantile_plan(plan, sums, order)
    codings = raw_codings(plan.slice_columns, sums["tallies"], order,
                          settings.slice_ranges)
    quantiles = run("Equal-mass bins, equal-size groups and slices",
                    QuantileTask(plan, binnings, groups, codings),
                    decode_columns(mapping), merge_quantiles, 0.8, 0.9)
    report(0.9, "The seeded sample: smooth and curve metrics, LCB, LCE…")
    begun = time.perf_counter()
    result, sample = assemble(source, plan, sums, kernel, setup, quantiles, binnings, groups,
                              codings, lambda f, m: report(0.9 + 0.1 * f, m))
    passes.append(("Sample sections", time.perf_counter() - begun))
    report(1.0, "Audit complete")
    stream = dataclasses.replace(result.stream, passes=tuple(passes),
                                 batch_rows=memory_use.batch_rows, memory_target=memory_use.target,
                                 memory_budget=memory_use.budget,
                                 batching=memory_use.describe() if memory_use.target else
                                 f"batches of {memory_use.batch_rows:,} rows (as asked)")
    notes = (stream.describe(), *result.notes[1:])  # the first: how the rows were read
    if several:
        notes = (f"Audited model: '{mapping.model}' (columns {quote_list(list(mapping.probs))}); "
                 "the table's other prediction sets were not read.", *notes)
    return StreamedAudit(dataclasses.replace(result, notes=notes, stream=stream), sample)


def _runner(source: TableSource, progress: Progress | None, passes: list):
    """``(report, run)``: progress reporting, and a pass over the partitions that reports
    each partition done and records its time in ``passes``."""
    def report(fraction: float, message: str) -> None:
        if progress is not None:
            progress(fraction, message)

    def run(name: str, task, columns, reduce, low: float, high: float):
        begun = time.perf_counter()

        def tick(done: int, total: int) -> None:
            report(low + (high - low) * done / max(total, 1),
                   f"{name}: {done:,} of {total:,} batches")

        report(low, f"{name}: 0 of {len(source.partitions):,} batches")
        result = engine.map_partitions(task, source, columns, reduce, tick)
        passes.append((name, time.perf_counter() - begun))
        return result

    return report, run


def kernel_passes(source: TableSource, mapping: ColumnMapping, settings: AuditSettings, run,
                  sample_rows: int) -> tuple:
    """The schema, sums and random-feature passes: ``(plan, sums, setup, kernel, order)``."""
    check_settings(settings)
    if not source.partitions:
        raise ValueError(f"{source.name} has no rows.")
    missing = [c for c in decode_columns(mapping) if c not in source.columns]
    if missing:
        raise DataError(f"The table has no column {quote_list(missing)}. Its columns are "
                        f"{quote_list(list(source.columns))}.")
    first = source.read(source.partitions[0], decode_columns(mapping))
    categorical = categorical_columns(first, mapping)
    parts = run("Reading the labels and levels", SchemaTask(mapping, categorical),
                schema_columns(mapping, categorical), join, 0.0, 0.05)
    schema = combine_schema(parts, mapping, categorical, source.name)
    plan = make_plan(schema, settings, sample_rows)
    sums = run("Sums over rows", SumsTask(plan), decode_columns(mapping), merge_sums, 0.05,
               0.3)
    order = start_order(plan, sums)
    setup = kernel_setup(plan, sums)
    task = KernelTask(plan, setup, order.request())
    kernel = run(f"Random features ({setup.grid_plan.label} × "
                 f"{len(setup.grid_bandwidths)} bandwidth pairs, B = "
                 f"{setup.grid_plan.n_resamples})", task, decode_columns(mapping),
                 KernelMerge(task), 0.3, 0.75)
    for piece in kernel.pop("fragments"):  # none: the last chunk ends at the last row
        task.add(kernel, piece)
    order.update(kernel["order"])
    return plan, sums, setup, kernel, order


def stream_tests(source: TableSource, mapping: ColumnMapping,
                 settings: AuditSettings | None = None, progress: Progress | None = None
                 ) -> tuple[GridTestResult, TestResult]:
    """Only the streamed kernel tests — the KLCE bandwidth grid and the SKCE consistency
    test — from the schema, sums and random-feature passes (their level study,
    ``benchmarks/streaming.py level``).

    Parameters
    ----------
    source : TableSource
        The table, as for :func:`run_stream_audit`.
    mapping : ColumnMapping
        Which column plays which role.
    settings : AuditSettings, optional
        The pages' defaults when not given.
    progress : callable, optional
        ``progress(fraction, message)``, after every partition of every pass.

    Returns
    -------
    tuple of GridTestResult and TestResult
        The KLCE grid's result and the SKCE consistency test.
    """
    settings = settings or AuditSettings()
    _, run = _runner(source, progress, [])
    plan, _, setup, kernel, _ = kernel_passes(source, mapping, settings, run, 0)
    return kernel_results(plan, kernel, setup)
