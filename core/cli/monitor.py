"""``calibration-atlas monitor``: calibration over time from a terminal or a scheduled job.

::

    calibration-atlas monitor DATA --time COL --prob COL --label COL [--group COL ...]
        [--feature COL ...] [--period day|week|month|quarter|label|N] [--alpha A]
        [--method combined|mean-gap|binned|dispersion] [--challenger COL] [--resamples B]
        [--skce-resamples B] [--klce-resamples B] [--seed S] [--memory GB]
        [--fail-on alarm] [--out DIR]

``DATA`` is a CSV or TSV file, read into memory, validated like every audit
(:class:`core.data.audit_data.AuditData`, with the time role) and monitored by
:func:`core.monitor.monitor_audit`; or a Parquet file or a folder of Parquet files (a table
partitioned by month, say), read batch by batch within the ``--memory`` budget, only the
columns monitoring needs, by :func:`core.monitor.monitor_stream` (the same result). Either is
written by :func:`core.report.monitoring.write_monitor_report`. Exit status 0 on success; 2
on bad input (the sentence names the column, rows and fix); 1 when ``--fail-on alarm`` is
given and an e-process (overall or a group's) crossed its alarm line — the report is written
first.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import TextIO

from core.cli.options import add_output_options, memory_budget
from core.cli.progress import ProgressBar
from core.cli.streamed import peak_memory_mib
from core.data.audit_data import AuditData
from core.data.mapping import ColumnMapping
from core.data.readers import PARQUET_SUFFIXES, read_table
from core.data.stream_sources import open_source
from core.data.time_column import PERIODS
from core.monitor.eprocesses import METHODS
from core.monitor.monitoring import MonitorResult, MonitorSettings, monitor_audit
from core.monitor.streamed import monitor_stream
from core.report.monitoring import write_monitor_report

MONITOR_EPILOG = """\
examples:
  calibration-atlas monitor decisions.csv --time decision_date --prob p_default \\
      --label defaulted --group race --group sex --period month --fail-on alarm
  calibration-atlas monitor scores/ --time day --prob p --label y --period week \\
      --challenger p_new --memory 2 --out monitor-2026-11   # a folder of Parquet files

writes DIR/monitor.html, DIR/results.json (settings, verdict, the per-period table, the
e-processes), DIR/tables/periods.csv and DIR/tables/eprocess.csv. The alarm's false-alarm
rate is at most --alpha however often the job runs on the growing table, provided the rows'
times are when their outcomes were observed and every forecast was issued before its
outcome. Parquet is read batch by batch, its rows in the order they are stored (they must be
in time order, or few enough to sort in memory). Exit status: 0 success, 2 bad input, 1 an
alarm with --fail-on alarm (the report is written first)."""


def period_option(text: str) -> str | int:
    """An argparse type: a calendar period, ``label``, or a whole number of rows."""
    if text in PERIODS:
        return text
    try:
        rows = int(text)
    except ValueError:
        rows = 0
    if rows < 1:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a period; choose one of {', '.join(PERIODS)} or a number of "
            "rows such as 1000")
    return rows


def add_monitor_command(commands) -> None:
    """The ``monitor`` subcommand and its options."""
    monitor = commands.add_parser(
        "monitor", help="monitor calibration over time with anytime-valid alarms",
        description=__doc__.split("\n\n")[0], epilog=MONITOR_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    monitor.add_argument("data", metavar="DATA", type=Path,
                         help="CSV, TSV or Parquet file, or a folder of Parquet files; "
                              "example: decisions.csv")
    monitor.add_argument("--time", metavar="COL", required=True,
                         help="when each outcome was observed: dates, timestamps, ISO weeks "
                              "(2026-W41), quarters (2026-Q3) or ordered period labels; "
                              "example: --time decision_date")
    monitor.add_argument("--prob", metavar="COL", required=True,
                         help="the model's P(y = positive class); example: --prob p_default")
    monitor.add_argument("--label", metavar="COL", required=True,
                         help="the observed class (two classes); example: --label defaulted")
    monitor.add_argument("--positive", metavar="VALUE",
                         help="the label value of the positive class (default: 1, true, yes "
                              "or the larger value); example: --positive default")
    monitor.add_argument("--group", metavar="COL", action="append", default=[],
                         dest="groups",
                         help="a group attribute monitored per level, once per attribute; "
                              "example: --group race --group sex")
    monitor.add_argument("--feature", metavar="COL", action="append", default=[],
                         dest="features",
                         help="an audit feature of the per-period KLCE test (local calibration "
                              "over the features), once per column; example: --feature age "
                              "--feature income")
    monitor.add_argument("--period", type=period_option, default="month",
                         help=f"period of the table and figures: {', '.join(PERIODS)} or N "
                              "rows (default month); example: --period week")
    monitor.add_argument("--alpha", metavar="A", type=float, default=0.05,
                         help="false-alarm rate, overall and family-wise across groups "
                              "(default 0.05); example: --alpha 0.01")
    monitor.add_argument("--method", choices=METHODS, default="combined",
                         help="the calibration e-process (default combined: the average of "
                              "the mean-gap, the binned and the dispersion e-processes); "
                              "example: --method binned")
    monitor.add_argument("--challenger", metavar="COL",
                         help="a second model's P(y = positive) on the same rows: the "
                              "confidence sequence of the Brier difference; example: "
                              "--challenger p_new")
    monitor.add_argument("--resamples", metavar="B", type=int, default=100,
                         help="bootstrap resamples of the per-period ECE and Brier intervals "
                              "(default 100; 0: none, fastest); example: --resamples 200")
    monitor.add_argument("--skce-resamples", metavar="B", type=int, default=0,
                         help="run the SKCE calibration test on every period with B "
                              "resamples (default 0: not run; about a second a period of a "
                              "few thousand rows); example: --skce-resamples 200")
    monitor.add_argument("--klce-resamples", metavar="B", type=int, default=0,
                         help="run the KLCE local calibration test on every period with B "
                              "resamples (default 0: not run; the prediction kernel and the "
                              "--feature columns, median-heuristic bandwidths of the period's "
                              "rows); example: --klce-resamples 200")
    monitor.add_argument("--seed", metavar="S", type=int, default=0,
                         help="seed of the bootstrap (default 0); example: --seed 7")
    monitor.add_argument("--memory", metavar="GB", type=memory_budget, default=None,
                         help="memory a Parquet table's batches may use, in GB (default: a "
                              "quarter of this machine's memory, at most 2); example: "
                              "--memory 1.5")
    monitor.add_argument("--fail-on", choices=("alarm",), default=None,
                         help="exit with status 1 (after writing the report) when an "
                              "e-process crossed its alarm line; example: --fail-on alarm")
    add_output_options(monitor)


def monitor_mapping(options: argparse.Namespace) -> ColumnMapping:
    """The column roles of ``monitor``'s options."""
    models = ((options.challenger, (options.challenger,)),) if options.challenger else ()
    return ColumnMapping(label=options.label, probs=(options.prob,), positive=options.positive,
                         features=tuple(options.features), groups=tuple(options.groups),
                         models=models, time=options.time)


def is_parquet(path: Path) -> bool:
    """Whether ``monitor`` streams ``path``: a folder, or a Parquet file."""
    return path.is_dir() or path.suffix.lower() in PARQUET_SUFFIXES


def monitored(options: argparse.Namespace, settings: MonitorSettings,
              stream: TextIO) -> MonitorResult:
    """The monitoring of ``DATA``: a Parquet file or folder batch by batch, with a progress
    bar; a CSV or TSV file in memory."""
    mapping = monitor_mapping(options)
    if not is_parquet(options.data):
        audit = AuditData.from_mapping(read_table(options.data).frame, mapping,
                                       name=options.data.name)
        return monitor_audit(audit, settings)
    bar = ProgressBar(stream, "monitor ", every_message=True)
    try:
        result = monitor_stream(open_source(options.data), mapping, settings,
                                memory=options.memory, progress=bar)
    finally:
        bar.close()
    stream.write(f"{result.notes[0]}\nPeak memory of this process: "
                 f"{peak_memory_mib():,.0f} MiB.\n")
    return result


def run_monitor(options: argparse.Namespace, stream: TextIO) -> int:
    """The ``monitor`` command: read, validate, monitor, write; the exit status."""
    start = time.perf_counter()
    settings = MonitorSettings(period=options.period, alpha=options.alpha,
                               method=options.method, n_resamples=options.resamples,
                               seed=options.seed, challenger=options.challenger,
                               skce_resamples=options.skce_resamples,
                               klce_resamples=options.klce_resamples)
    result = monitored(options, settings, stream)
    written = write_monitor_report(result, options.data.name, options.out)
    stream.write(f"{result.verdict}\n")
    stream.write(f"Monitored {result.n:,} rows in {time.perf_counter() - start:.1f} s; wrote "
                 + ", ".join(str(p) for p in written) + ".\n")
    if options.fail_on == "alarm" and result.first_alarm is not None:
        return 1
    return 0
