"""Monitoring an audited table over time: its rows put in time order, the per-period table,
the calibration e-process overall and per group, the confidence sequence of the running gap,
the champion/challenger comparison, and one sentence that says what an auditor should know.

:func:`monitor_audit` is what the *Over time* page, the ``calibration-atlas monitor`` command
and its report share. Its guarantee and assumptions are those of
:mod:`core.monitor.eprocesses`: rows ordered by the time their outcomes were observed
(the table's time column; rows with equal times keep the table's order), each forecast
issued before its outcome; then the alarm's false-alarm rate is at most ``alpha`` for every
way of reading it, overall and family-wise across all groups.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from core.data.audit_data import AuditData
from core.data.groups import MIN_GROUP_ROWS
from core.data.problems import DataError
from core.data.time_column import PERIODS, period_labels
from core.data.validation import check_choice, check_count, check_fraction, check_seed
from core.monitor.eprocesses import (
    DEFAULT_BINS,
    METHODS,
    CalibrationEProcess,
    GroupEProcesses,
)
from core.monitor.periods import ALL_ROWS, period_table
from core.monitor.sequences import BrierComparison, ConfidenceSequence
from core.monitor.series import MonitorSeries, SeriesState, group_plans

#: What the alarm guarantees and assumes, as the report states it.
GUARANTEE = (
    "Type-I error ≤ α under continuous monitoring: if the model is calibrated at every time "
    "given the past (E[y | past, p] = p), the chance that the e-process ever reaches 1/α — "
    "read after every row, every period, or whenever, and stopped by any rule — is at most "
    "α (Ville's inequality); per group, each level alarms at G/α, so the chance of any "
    "false group alarm is at most α (Bonferroni). Assumptions: the rows are ordered by the "
    "time their outcomes were observed, and every forecast was issued before its outcome.")


@dataclass(frozen=True)
class MonitorSettings:
    """What :func:`monitor_audit` computes.

    Attributes
    ----------
    period : str or int
        ``'day'``, ``'week'``, ``'month'``, ``'quarter'``, ``'label'`` or N rows.
    alpha : float
        Level of the alarm (overall, and family-wise across groups).
    method : str
        The calibration e-process (:data:`core.monitor.eprocesses.METHODS`).
    n_bins : int
        Bins of the binned e-process.
    n_resamples : int
        Poisson bootstrap resamples of the per-period ECE and Brier intervals.
    skce_resamples : int
        Resamples of the per-period SKCE test (0: not run).
    klce_resamples : int
        Resamples of the per-period KLCE test over the audit features (0: not run).
    seed : int
        Seed of the bootstrap.
    challenger : str or None
        Another prediction set of the table to compare with the audited model (the
        champion); None: none.
    """

    period: str | int = "month"
    alpha: float = 0.05
    method: str = "combined"
    n_bins: int = DEFAULT_BINS
    n_resamples: int = 100
    seed: int = 0
    challenger: str | None = None
    skce_resamples: int = 0
    klce_resamples: int = 0

    def checked(self) -> MonitorSettings:
        """The settings, or ValueError naming the one that is not valid."""
        if isinstance(self.period, str):
            check_choice(self.period, PERIODS, "period",
                         f"choose one of {', '.join(PERIODS)} or a number of rows")
        else:
            check_count("The period (a number of rows)", self.period, 1)
        check_fraction("alpha", self.alpha)
        check_choice(self.method, METHODS, "monitoring method")
        check_count("n_bins", self.n_bins, 1)
        check_count("n_resamples", self.n_resamples, 0)
        check_count("skce_resamples", self.skce_resamples, 0)
        check_count("klce_resamples", self.klce_resamples, 0)
        check_seed(self.seed)
        return self


@dataclass(frozen=True)
class MonitorResult:
    """Everything a monitoring report shows, rows in time order.

    Attributes
    ----------
    settings : MonitorSettings
    time_column : str
        The table's time column.
    periods : numpy.ndarray
        The period label of every row (of every kept row: ``rows``).
    table : pandas.DataFrame
        :func:`core.monitor.periods.period_table`, with the e-value and anytime-valid
        p-value at each period's end (``e_value``, ``p_value``) of its row's group.
    eprocess : CalibrationEProcess
        The overall calibration e-process.
    groups : dict of str to GroupEProcesses
        Per group attribute; every level alarms at ``G/alpha`` with G all levels monitored.
    gap_sequence : ConfidenceSequence
        Of the running calibration gap.
    comparison : BrierComparison or None
        Champion (the audited model) against ``settings.challenger``.
    model : str
        The audited model's name.
    sorted_rows : bool
        Whether the table had to be put in time order.
    time_labels : numpy.ndarray
        The time of every (kept) row.
    rows : numpy.ndarray or None
        The rows (0-based, in time order) that ``periods``, ``time_labels`` and every per-row
        series hold: a streamed table keeps the rows the figures draw, the alarm rows and
        each period's last row (:mod:`core.monitor.series`); None: every row.
    n_rows : int or None
        The table's rows when ``rows`` is not None.
    notes : tuple of str
        How the table was read (a streamed table: its batches and memory plan).
    """

    settings: MonitorSettings
    time_column: str
    periods: np.ndarray
    table: pd.DataFrame
    eprocess: CalibrationEProcess
    groups: dict[str, GroupEProcesses]
    gap_sequence: ConfidenceSequence
    comparison: BrierComparison | None
    model: str
    sorted_rows: bool = False
    time_labels: np.ndarray = field(default_factory=lambda: np.array([]), repr=False)
    rows: np.ndarray | None = field(default=None, repr=False)
    n_rows: int | None = None
    notes: tuple[str, ...] = ()

    @property
    def n(self) -> int:
        """Rows of the table."""
        return int(self.periods.shape[0]) if self.n_rows is None else int(self.n_rows)

    def positions(self, rows: np.ndarray | int) -> np.ndarray | int:
        """Where rows of the table (kept rows: every row, or those of ``rows``) lie in the
        per-row series."""
        if self.rows is None:
            return rows
        at = np.searchsorted(self.rows, rows)
        if not np.all(self.rows[np.minimum(at, self.rows.size - 1)] == rows):
            raise ValueError("A row that this streamed result did not keep was asked for.")
        return at

    def period_of(self, row: int) -> str:
        """The period of a kept row."""
        return str(self.periods[self.positions(row)])

    @property
    def first_alarm(self) -> tuple[str, int] | None:
        """Who alarmed first (``'all rows'`` or ``'race = Black'``) and the row, or None."""
        alarms = []
        if self.eprocess.alarm is not None:
            alarms.append((self.eprocess.alarm, "all rows"))
        for attribute, family in self.groups.items():
            for level, process in family.processes.items():
                if process.alarm is not None:
                    alarms.append((process.alarm, f"{attribute} = {level}"))
        if not alarms:
            return None
        row, who = min(alarms)
        return who, row

    def period_name(self, label: str) -> str:
        """``'week 2026-W41'``, ``'month 2026-09'``, ``'period p07'`` or ``'rows 1–1,000'``."""
        if isinstance(self.settings.period, str) and self.settings.period != "label":
            return f"{self.settings.period} {label}"
        return label if label.startswith("rows") else f"period {label}"

    @property
    def verdict(self) -> str:
        """One sentence: no alarm through which period, and where the first alarm was raised
        (``'No alarm through 2026-09; alarm raised in month 2026-10 for race = Black …'``).
        "No alarm" is not proof of calibration: the e-process had not gathered evidence
        against it."""
        order = list(pd.unique(self.periods))
        alarm = self.first_alarm
        if alarm is None:
            return (f"No alarm through {order[-1]}: no evidence of miscalibration at "
                    f"α = {self.settings.alpha:g} over {self.n:,} rows (largest overall e-value "
                    f"{self.eprocess.max_e_value:.3g}, alarm line {1 / self.settings.alpha:g}).")
        who, row = alarm
        label = self.period_of(row)
        position = order.index(label)
        before = (f"No alarm through {order[position - 1]}; alarm" if position else "Alarm")
        return (f"{before} raised in {self.period_name(label)} for {who} (row {row + 1:,} "
                f"in time order; false-alarm rate ≤ {self.settings.alpha:g} however often "
                "the table is re-audited).")


def monitor_audit(audit: AuditData, settings: MonitorSettings | None = None) -> MonitorResult:
    """Monitor a binary audited table that has a time column.

    Parameters
    ----------
    audit : AuditData
        A binary table with a time role (``audit.times``); its group attributes are monitored
        per level (levels with fewer than 30 rows are left out).
    settings : MonitorSettings, optional
        Period, level, method, intervals, challenger.

    Returns
    -------
    MonitorResult

    Raises
    ------
    DataError
        No time column, more than two classes, or an unknown challenger model.
    """
    settings = (settings or MonitorSettings()).checked()
    if audit.times is None:
        raise DataError("This table has no time column. Map the column that says when each "
                        "outcome was observed as the time column to monitor it over time.")
    if not audit.is_binary:
        raise DataError(f"Monitoring over time is for binary models; this table has "
                        f"{audit.n_classes} classes.")
    if settings.challenger is not None and settings.challenger not in audit.model_probs:
        raise DataError(f"There is no model '{settings.challenger}' in this table; its "
                        f"models are {', '.join(audit.model_names)}.")
    times = audit.times
    sorted_rows = not times.is_sorted()
    ordered = audit.subset(times.order()) if sorted_rows else audit
    p, y = ordered.positive_probs, ordered.y
    periods = period_labels(ordered.times, settings.period)
    attributes = {column: np.unique(ordered.groups[column].astype(str).to_numpy(),
                                    return_inverse=True) for column in ordered.groups.columns}
    plans = group_plans({column: (names, np.bincount(codes, minlength=len(names)))
                         for column, (names, codes) in attributes.items()}, settings.alpha,
                        MIN_GROUP_ROWS)
    challenger = None
    if settings.challenger is not None and settings.challenger != ordered.model:
        challenger = ordered.model_probs[settings.challenger][:, 1]
    state = SeriesState(ordered.n, settings.alpha, settings.method, settings.n_bins, plans,
                        challenger is not None, keep_all=True)
    state.update(p, y, {column: codes for column, (_, codes) in attributes.items()},
                 challenger)
    series = state.finish()
    table = period_table(p, y, periods, ordered.groups if ordered.groups.shape[1] else None,
                         n_resamples=settings.n_resamples, seed=settings.seed,
                         skce_resamples=settings.skce_resamples,
                         features=ordered.X if ordered.X.shape[1] else None,
                         klce_resamples=settings.klce_resamples)
    return MonitorResult(settings, times.column, periods,
                         with_period_evidence(table, periods, series), series.eprocess,
                         series.groups, series.gap_sequence, series.comparison, ordered.model,
                         sorted_rows, ordered.times.values.to_numpy())


def with_period_evidence(table: pd.DataFrame, periods: np.ndarray,
                         series: MonitorSeries) -> pd.DataFrame:
    """The e-value and anytime-valid p-value at each period's last row, per table row
    (``periods``: the period of each row the series hold, every period's last row among
    them)."""
    last = {label: int(np.flatnonzero(periods == label)[-1]) for label in pd.unique(periods)}
    processes = {ALL_ROWS: series.eprocess}
    for attribute, family in series.groups.items():
        processes.update({f"{attribute} = {level}": process
                          for level, process in family.processes.items()})
    anytime = {group: process.p_values for group, process in processes.items()}
    e_values, p_values = [], []
    for period, group in zip(table["period"], table["group"], strict=True):
        process = processes.get(group)
        e_values.append(np.nan if process is None else float(process.e_values[last[period]]))
        p_values.append(np.nan if process is None else float(anytime[group][last[period]]))
    return table.assign(e_value=e_values, p_value=p_values)
