"""Monitoring over time: anytime-valid tests that a deployed binary forecaster stays
calibrated, per period tables, and the champion/challenger comparison.

This is the public face (``from core import monitor``); one concept per module:

* :mod:`core.monitor.betting` — betting martingales mixed over a grid of bets (their wealth
  carried from one batch of rows to the next), the empirical-Bernstein stitched boundary,
  alarms and anytime-valid p-values;
* :mod:`core.monitor.eprocesses` — :func:`calibration_eprocess` (mean gap, binned after
  Arnold, Henzi & Ziegel 2023, dispersion on the calibration slope after Cox 1958, and
  their average) and :func:`group_eprocesses` (per group, Bonferroni across groups);
* :mod:`core.monitor.sequences` — confidence sequences of the running calibration gap and
  of the Brier-score difference of two models (Choe & Ramdas 2023) with an e-process for
  "the challenger is better" (Henzi & Ziegel 2022);
* :mod:`core.monitor.series` — every per-row series of a run carried batch by batch, kept
  at the rows a report shows;
* :mod:`core.monitor.periods` — per-period ECE, Brier and mean gap with intervals, per group;
* :mod:`core.monitor.monitoring` — :func:`monitor_audit`: all of it for an audited table
  with a time column, and the one-sentence verdict;
* :mod:`core.monitor.streamed` — :func:`monitor_stream`: the same for a Parquet file or
  folder read batch by batch within a memory budget;
* :mod:`core.monitor.stream_plan` — its scan pass (time order, the time column's form, the
  monitored levels) and its batches' memory plan;
* :mod:`core.monitor.simulate` — simulated streams with a planted drift (the studies).

The guarantee: with rows in the order their outcomes were observed and every forecast
issued before its outcome, a calibrated forecaster raises a false alarm — at any row, read
as often as one likes, stopped by any rule — with probability at most α.
"""

from core.monitor.eprocesses import (
    METHODS,
    CalibrationEProcess,
    GroupEProcesses,
    calibration_eprocess,
    group_eprocesses,
)
from core.monitor.monitoring import GUARANTEE, MonitorResult, MonitorSettings, monitor_audit
from core.monitor.periods import PERIOD_COLUMNS, period_table
from core.monitor.sequences import (
    BrierComparison,
    ConfidenceSequence,
    brier_comparison,
    gap_confidence_sequence,
)
from core.monitor.simulate import drifting_stream
from core.monitor.streamed import monitor_stream

__all__ = [
    "GUARANTEE",
    "METHODS",
    "PERIOD_COLUMNS",
    "BrierComparison",
    "CalibrationEProcess",
    "ConfidenceSequence",
    "GroupEProcesses",
    "MonitorResult",
    "MonitorSettings",
    "brier_comparison",
    "calibration_eprocess",
    "drifting_stream",
    "gap_confidence_sequence",
    "group_eprocesses",
    "monitor_audit",
    "monitor_stream",
    "period_table",
]
