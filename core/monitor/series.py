"""The per-row series of a monitoring run — the calibration e-process overall and per group,
the confidence sequence of the running gap, the champion/challenger comparison — carried from
one batch of rows to the next (:class:`SeriesState`) and kept at the rows a report shows.

A table read in memory keeps every row of every series. A streamed one cannot (10⁸ rows of
a dozen series would be gigabytes), and needs only some: the evenly spaced rows the figures
draw (:func:`shown_rows`; every row up to :data:`FULL_SERIES_ROWS`), every alarm row, and
each period's last row (the per-period table's e-value and anytime-valid p-value). Those
rows are known as the batches go by — an alarm is the first crossing, found in its batch —
and the running maximum of each e-process is carried, so the anytime-valid p-value at a kept
row is exact. Every series is computed by the carried states of
:mod:`core.monitor.eprocesses` and :mod:`core.monitor.sequences`, whose batches give the
numbers of one pass bit for bit.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from core.monitor.betting import MixtureWealth, bet_grid, e_values_of, first_crossing
from core.monitor.eprocesses import (
    COMPONENTS,
    CalibrationEProcess,
    CalibrationState,
    GroupEProcesses,
    GroupState,
    combine,
)
from core.monitor.sequences import BrierComparison, ConfidenceSequence, RunningMean

#: Points drawn of a per-row series (evenly spaced rows, plus every alarm row).
MAX_POINTS = 3_000
#: Up to this many rows the series are kept (and written) at every row; beyond, at
#: :func:`shown_rows`, the alarm rows and the periods' last rows.
FULL_SERIES_ROWS = 100_000
#: What the confidence sequences bound, in words.
GAP_QUANTITY = "running calibration gap (outcome − forecast)"
BRIER_QUANTITY = "running Brier score difference (champion − challenger)"


def shown_rows(n: int, extra: tuple[int | None, ...] = ()) -> np.ndarray:
    """At most :data:`MAX_POINTS` evenly spaced row indices, the last row and ``extra`` rows."""
    rows = np.linspace(0, n - 1, min(n, MAX_POINTS)).astype(np.int64)
    keep = [r for r in extra if r is not None]
    return np.unique(np.concatenate([rows, np.asarray(keep, dtype=np.int64)]))


@dataclass(frozen=True)
class GroupPlan:
    """One group attribute's monitored levels: ``names`` all its levels (code order),
    ``codes`` those monitored, ``counts`` every level's rows, ``alpha`` the attribute's share
    of the level (each monitored level alarms at ``len(codes)/alpha``)."""

    names: tuple[str, ...]
    codes: tuple[int, ...]
    counts: tuple[int, ...]
    alpha: float

    @property
    def threshold(self) -> float:
        return max(len(self.codes), 1) / self.alpha


def group_plans(attributes: dict[str, tuple[Sequence[str], np.ndarray]], alpha: float,
                min_rows: int) -> dict[str, GroupPlan]:
    """Each attribute's monitored levels (those with at least ``min_rows`` rows) and its share
    of ``alpha``, so that every level alarms at ``G/alpha`` with G all levels of all
    attributes monitored; attributes with no such level are left out.

    Parameters
    ----------
    attributes : dict of str to (level names, counts)
        Each attribute's levels (sorted, code order) and their rows.
    alpha : float
        The family-wise level.
    min_rows : int
        The fewest rows a monitored level has.

    Returns
    -------
    dict of str to GroupPlan
    """
    kept = {attribute: tuple(k for k, count in enumerate(counts) if count >= min_rows)
            for attribute, (_, counts) in attributes.items()}
    total = sum(len(codes) for codes in kept.values())
    return {attribute: GroupPlan(tuple(str(n) for n in names), kept[attribute],
                                 tuple(int(c) for c in counts),
                                 alpha * len(kept[attribute]) / total)
            for attribute, (names, counts) in attributes.items() if kept[attribute]}


class _Tracked:
    """One e-process along the stream: its alarm, running peak and values at the kept
    rows."""

    def __init__(self, threshold: float, names: Sequence[str]) -> None:
        self.threshold = threshold
        self.alarm: int | None = None
        self.peak = 0.0
        self.kept: list[np.ndarray] = []
        self.peaks: list[np.ndarray] = []
        self.parts: dict[str, list[np.ndarray]] = {name: [] for name in names}

    def update(self, log_e: np.ndarray, start: int) -> None:
        """Note the alarm if this batch (rows ``start …``) holds the first crossing."""
        if self.alarm is None:
            hit = first_crossing(log_e, self.threshold)
            self.alarm = None if hit is None else start + hit

    def keep(self, log_e: np.ndarray, parts: dict[str, np.ndarray], at: np.ndarray) -> None:
        """Keep the batch's e-values, peaks and components at its rows ``at``."""
        values = e_values_of(log_e)
        peaks = np.maximum.accumulate(np.concatenate([[self.peak], values]))[1:]
        self.peak = float(peaks[-1]) if peaks.size else self.peak
        self.kept.append(values[at])
        self.peaks.append(peaks[at])
        for name, series in parts.items():
            self.parts[name].append(e_values_of(series[at]))

    def process(self, alpha: float, method: str, keep: np.ndarray | None,
                full: bool) -> CalibrationEProcess:
        select = slice(None) if keep is None else keep
        return CalibrationEProcess(
            e_values=np.concatenate(self.kept)[select], alarm=self.alarm, alpha=alpha,
            threshold=self.threshold, method=method,
            components={name: np.concatenate(v)[select] for name, v in self.parts.items()},
            peaks=None if full else np.concatenate(self.peaks)[select])


class SeriesState:
    """Every per-row series of a monitoring run, read batch by batch in time order.

    Parameters
    ----------
    n : int
        Rows of the whole table.
    alpha : float
        The overall level (the alarm line ``1/alpha``).
    method : str
        The calibration e-process (:data:`core.monitor.eprocesses.METHODS`).
    n_bins : int
        Bins of the binned e-process.
    groups : dict of str to GroupPlan
        Each group attribute's monitored levels.
    challenger : bool
        Whether a challenger's forecasts come with every batch.
    keep_all : bool
        Keep every row (a table in memory); else the rows of the module docstring.
    """

    def __init__(self, n: int, alpha: float, method: str, n_bins: int,
                 groups: dict[str, GroupPlan], challenger: bool, keep_all: bool) -> None:
        self.n, self.alpha, self.method = int(n), float(alpha), method
        self.keep_all = keep_all or n <= FULL_SERIES_ROWS
        self.full = keep_all
        self.shown = shown_rows(self.n)
        self.start = 0
        self.rows: list[np.ndarray] = []
        self.state = CalibrationState(method, n_bins)
        self.overall = _Tracked(1.0 / alpha, COMPONENTS[method])
        self.plans = groups
        self.groups = {attribute: GroupState(plan.codes, method, n_bins)
                       for attribute, plan in groups.items()}
        self.levels = {attribute: {k: _Tracked(plan.threshold, COMPONENTS[method])
                                   for k in plan.codes} for attribute, plan in groups.items()}
        self.gap = RunningMean(-1.0, 1.0, alpha)
        self.gap_kept: list[tuple[np.ndarray, ...]] = []
        self.brier = RunningMean(-1.0, 1.0, alpha) if challenger else None
        self.brier_wealth = MixtureWealth(bet_grid(two_sided=False)) if challenger else None
        self.brier_tracked = _Tracked(1.0 / alpha, ()) if challenger else None
        self.brier_kept: list[tuple[np.ndarray, ...]] = []
        self.extras: dict[str, list[np.ndarray]] = {}

    def update(self, p: np.ndarray, labels: np.ndarray, codes: dict[str, np.ndarray],
               challenger: np.ndarray | None = None, ends: np.ndarray | None = None,
               extras: dict[str, np.ndarray] | None = None) -> None:
        """Read the next batch of rows: forecasts ``p``, outcomes ``labels``, each group
        attribute's level codes, the challenger's forecasts, ``ends`` (indices in the batch)
        of rows to keep besides the shown and alarm rows — a period's last row, or a row that
        may be one — and ``extras``, other per-row arrays to keep at the same rows (the
        rows' periods and times)."""
        n, start = p.shape[0], self.start
        if n == 0:
            return
        parts = self.state.update(p, labels)
        log_e = combine(parts)
        self.overall.update(log_e, start)
        carried = {attribute: state.update(p, labels, codes[attribute])
                   for attribute, state in self.groups.items()}
        logs = {attribute: {k: combine(v) for k, v in levels.items()}
                for attribute, levels in carried.items()}
        for attribute, levels in logs.items():
            for k, values in levels.items():
                self.levels[attribute][k].update(values, start)
        gap = self.gap.update(labels - p)
        brier = brier_log = None
        if self.brier is not None:
            delta = (p - labels) ** 2 - (challenger - labels) ** 2
            brier = self.brier.update(delta)
            brier_log = self.brier_wealth.update(delta)
            self.brier_tracked.update(brier_log, start)
        at = self._kept(n, ends)
        self.rows.append(start + at)
        for name, values in (extras or {}).items():
            self.extras.setdefault(name, []).append(values[at])
        self.overall.keep(log_e, parts, at)
        for attribute, levels in logs.items():
            for k, values in levels.items():
                self.levels[attribute][k].keep(values, carried[attribute][k], at)
        self.gap_kept.append(tuple(series[at] for series in gap))
        if brier is not None:
            self.brier_kept.append(tuple(series[at] for series in brier))
            self.brier_tracked.keep(brier_log, {}, at)
        self.start += n

    def _kept(self, n: int, ends: np.ndarray | None) -> np.ndarray:
        """The batch's rows to keep (indices in the batch)."""
        if self.keep_all:
            return np.arange(n)
        start, stop = self.start, self.start + n
        shown = self.shown[(self.shown >= start) & (self.shown < stop)] - start
        alarms = [t.alarm for t in self._tracked() if t.alarm is not None
                  and start <= t.alarm < stop]
        extra = np.asarray([a - start for a in alarms], dtype=np.int64)
        ends = np.empty(0, dtype=np.int64) if ends is None else np.asarray(ends, np.int64)
        return np.unique(np.concatenate([shown, extra, ends]))

    def _tracked(self) -> list[_Tracked]:
        tracked = [self.overall, *(t for levels in self.levels.values()
                                   for t in levels.values())]
        return tracked + ([self.brier_tracked] if self.brier_tracked is not None else [])

    def finish(self, ends: np.ndarray | None = None) -> MonitorSeries:
        """The series at the kept rows; ``ends`` (rows of the table) are the rows to keep
        besides the shown and alarm rows (rows kept in a batch as maybe a period's last that
        were not are dropped). None: every row kept so far."""
        rows = np.concatenate(self.rows) if self.rows else np.empty(0, dtype=np.int64)
        keep = None
        if not self.keep_all and ends is not None:
            wanted = shown_rows(self.n, tuple(t.alarm for t in self._tracked()))
            keep = np.flatnonzero(np.isin(rows, np.union1d(wanted, ends)))
            rows = rows[keep]
        select = slice(None) if keep is None else keep
        eprocess = self.overall.process(self.alpha, self.method, keep, self.full)
        groups = {}
        for attribute, plan in self.plans.items():
            processes = {plan.names[k]: tracked.process(plan.alpha, self.method, keep,
                                                        self.full)
                         for k, tracked in self.levels[attribute].items()}
            rows_of = {plan.names[k]: int(plan.counts[k]) for k in plan.codes}
            groups[attribute] = GroupEProcesses(tuple(processes), processes, rows_of,
                                                plan.alpha)
        gap = ConfidenceSequence(*_joined(self.gap_kept, select), self.alpha, GAP_QUANTITY)
        comparison = None
        if self.brier_tracked is not None:
            sequence = ConfidenceSequence(*_joined(self.brier_kept, select), self.alpha,
                                          BRIER_QUANTITY)
            tracked = self.brier_tracked
            comparison = BrierComparison(
                sequence, np.concatenate(tracked.kept)[select], tracked.alarm, self.alpha,
                None if self.full else np.concatenate(tracked.peaks)[select])
        extras = {name: np.concatenate(values)[select] for name, values in self.extras.items()}
        return MonitorSeries(None if self.full else rows, eprocess, groups, gap, comparison,
                             extras)


def _joined(kept: list[tuple[np.ndarray, ...]], select) -> list[np.ndarray]:
    """A sequence's (estimate, lower, upper) kept batch by batch, joined."""
    return [np.concatenate([batch[k] for batch in kept])[select] for k in range(3)]


@dataclass(frozen=True)
class MonitorSeries:
    """The series of a monitoring run (:meth:`SeriesState.finish`).

    Attributes
    ----------
    rows : numpy.ndarray or None
        The rows (0-based, increasing) every series below holds; None: every row.
    eprocess : CalibrationEProcess
        The overall calibration e-process.
    groups : dict of str to GroupEProcesses
        Per group attribute.
    gap_sequence : ConfidenceSequence
        Of the running calibration gap.
    comparison : BrierComparison or None
        Champion against challenger.
    extras : dict of str to numpy.ndarray
        The other per-row arrays given to :meth:`SeriesState.update`, at the same rows.
    """

    rows: np.ndarray | None
    eprocess: CalibrationEProcess
    groups: dict[str, GroupEProcesses]
    gap_sequence: ConfidenceSequence
    comparison: BrierComparison | None
    extras: dict[str, np.ndarray] = field(default_factory=dict)
