"""``audit`` on a table read batch by batch: when to stream, and the streamed run."""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence
from typing import TextIO

from core.audit import AuditSettings, default_bootstrap
from core.cli.audit_report import finish
from core.cli.options import option_settings
from core.cli.progress import ProgressBar
from core.data.mapping import ColumnMapping
from core.data.stream_sources import open_source
from core.kernels.memory import default_budget, fits_in_memory
from core.stream.runner import run_stream_audit


def should_stream(options: argparse.Namespace) -> bool:
    """Whether ``audit`` reads its table batch by batch: asked (``--stream``), a folder, or a
    Parquet file whose audit in memory would exceed the ``--memory`` budget
    (:func:`core.kernels.memory.fits_in_memory`)."""
    if getattr(options, "stream", False) or options.data.is_dir():
        return True
    if options.data.suffix.lower() in (".parquet", ".pq") and options.data.is_file():
        import pyarrow.parquet as pq

        try:
            rows = pq.ParquetFile(options.data).metadata.num_rows
        except Exception:  # noqa: BLE001 — an unreadable file gets read_table's sentence
            return False
        budget = getattr(options, "memory", None)
        return not fits_in_memory(rows, default_budget() if budget is None else budget)
    return False




def mapping_of(options: argparse.Namespace) -> ColumnMapping:
    """The column roles of ``audit``'s options."""
    return ColumnMapping(label=options.label,
                         probs=(options.prob,) if options.prob else tuple(options.probs),
                         logits=options.logits, features=tuple(options.features),
                         groups=tuple(options.groups), split=options.split)


def run_streamed(options: argparse.Namespace, methods: Sequence[str], stream: TextIO) -> int:
    """The ``audit`` command on a table read partition by partition
    (:func:`core.stream.run_stream_audit`): progress per partition of every pass,
    the time of each pass and this process's peak memory at the end."""
    start = time.perf_counter()
    source = open_source(options.data)
    stream.write(f"Streaming {source.describe()}.\n")
    settings = AuditSettings(**{"n_bootstrap": default_bootstrap(source.n),
                                **option_settings(options)})
    bar = ProgressBar(stream, "audit ", every_message=True)
    try:
        streamed = run_stream_audit(source, mapping_of(options), settings, progress=bar,
                                    sample_rows=options.sample_rows,
                                    memory=getattr(options, "memory", None))
    finally:
        bar.close()
    info = streamed.result.stream
    stream.write(f"Read in {info.batching}.\n")
    stream.write("Passes: " + ", ".join(f"{name} {seconds:.1f} s"
                                        for name, seconds in info.passes) + ".\n")
    stream.write(f"Peak memory of this process: {peak_memory_mib():,.0f} MiB.\n")
    return finish(streamed.result, streamed.sample, settings, options.out, options.formats,
                  stream, methods, start, options.fail_on)


def peak_memory_mib() -> float:
    """This process's peak resident memory (MiB)."""
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

