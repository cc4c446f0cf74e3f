"""Calibration per period: for each period (and each group within it) the ECE and Brier score
with bootstrap intervals and the mean gap with its interval, and on request each period's own
SKCE and KLCE tests — the table a monitoring report plots period by period.

Every number of a cell is a formula of sums over its rows, added batch by batch
(:class:`PeriodTable`), so a table read in memory and one streamed in batches of any size get
the same table. The ECE (L1, equal-width bins) is :func:`core.metrics.binning.ece_from_sums`
of the bins' sums ``(n_b, Σ p, Σ y)`` and the Brier score the mean of
:func:`core.metrics.scores.brier_rows`, as :func:`core.metrics.metrics_table` computes them;
their intervals are the **Poisson bootstrap** of the streamed audit
(:mod:`core.metrics.streamed`: resample b gives row i an independent Poisson(1) weight drawn
at the row's number in the table, :func:`core.kernels.resampling.row_poisson_weights`; Hanley
& MacGibbon 2006, Chamandy et al. 2012), read by the basic-bootstrap rule of every metrics
table (:func:`core.metrics.intervals.reported_estimate`). The mean gap
``ḡ = (1/n) Σ (y_i − p_i)`` gets the Wald interval ``ḡ ± z_{1−(1−level)/2} s/√n``, ``s²`` the
sample variance of ``y − p`` from ``Σ (y − p)`` and ``Σ (y − p)²``. These intervals are
fixed-sample: each is valid for its own period read once; the anytime-valid statements are
the e-processes and confidence sequences of :mod:`core.monitor.eprocesses` and
:mod:`core.monitor.sequences`.

The kernel tests run on a period's rows (its ``'all'`` row) where the period is large enough:
at least ``min_rows`` rows and both outcomes; how each runs — exact tiles, or random Fourier
features with D and B sized to the period — is the test's own plan
(:func:`core.kernels.computation.plan`: exact while it takes a few seconds here), recorded in
``skce_computation`` and ``klce_computation``. They need the period's rows at once, so only
then does the table hold a period's rows (its forecasts, outcomes and features) until the
period ends.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from core.data.distributions import norm_ppf
from core.data.groups import MIN_GROUP_ROWS
from core.data.validation import check_count
from core.metrics.binning import ece_from_sums
from core.metrics.descriptions import METRIC_DESCRIPTIONS
from core.metrics.intervals import check_level, reported_estimate
from core.metrics.scores import brier_rows
from core.metrics.streamed import poisson_weights, uniform_binning
from core.monitor.eprocesses import binary_forecast
from core.stattests.klce import klce_test
from core.stattests.skce import skce_test

#: Columns of :func:`period_table`.
PERIOD_COLUMNS = ("period", "group", "rows", "mean_forecast", "observed_rate", "gap",
                  "gap_low", "gap_high", "ece", "ece_low", "ece_high", "brier", "brier_low",
                  "brier_high", "skce_p", "klce_p", "skce_computation", "klce_computation")
#: Label of the rows of all groups together.
ALL_ROWS = "all"
#: Rows a table in memory is added at a time (the Poisson weights of a chunk: rows × B).
CHUNK_ROWS = 1 << 15


@dataclass(frozen=True)
class CellSettings:
    """What every cell of a period table computes (:func:`period_table`'s arguments,
    checked)."""

    n_bins: int = 15
    n_resamples: int = 100
    level: float = 0.95
    seed: int = 0
    min_rows: int = MIN_GROUP_ROWS
    skce_resamples: int = 0
    klce_resamples: int = 0

    @property
    def kernel_tests(self) -> bool:
        """Whether the periods' kernel tests run (then a period's rows are held)."""
        return self.skce_resamples > 0 or self.klce_resamples > 0


class CellSums:
    """The sums of one cell (a period, or a group within it), added batch by batch: rows,
    ``Σ (y − p)``, ``Σ (y − p)²``, the ECE bins' ``(n_b, Σ p, Σ y)`` and ``Σ`` Brier terms,
    and the Poisson-weighted bin sums of every resample."""

    def __init__(self, settings: CellSettings) -> None:
        self.binning = uniform_binning(settings.n_bins)
        self.sums = np.zeros(3)  # rows, Σ gap, Σ gap²
        self.bins = np.zeros((4, settings.n_bins))  # n_b, Σ p, Σ y, Σ brier per bin
        self.boot = np.zeros((4, settings.n_resamples, settings.n_bins))  # the same, weighted

    def add(self, p: np.ndarray, labels: np.ndarray, weights: np.ndarray | None) -> None:
        """Add rows (their forecasts, outcomes and ``(rows, B)`` Poisson weights)."""
        gap = labels - p
        self.sums += [p.shape[0], gap.sum(), (gap * gap).sum()]
        ids = self.binning.ids(p)
        K = self.bins.shape[1]
        values = np.column_stack([np.ones(p.shape[0]), p, labels, brier_rows(p, labels)])
        for j in range(4):
            self.bins[j] += np.bincount(ids, weights=values[:, j], minlength=K)
        if weights is None or not self.boot.shape[1]:
            return
        order = np.argsort(ids, kind="stable")  # each bin's rows together: one product a bin
        ids, values, weights = ids[order], values[order], weights[order]
        bounds = np.searchsorted(ids, np.arange(K + 1))
        for k in np.flatnonzero(np.diff(bounds)):
            rows = slice(bounds[k], bounds[k + 1])
            self.boot[:, :, k] += values[rows].T @ weights[rows]

    def row(self, period: str, group: str, settings: CellSettings) -> dict:
        """The cell's row of :data:`PERIOD_COLUMNS` (metrics NaN below ``min_rows`` rows)."""
        row = dict.fromkeys(PERIOD_COLUMNS, np.nan)
        n = int(self.sums[0])
        row.update(period=period, group=group, rows=n, skce_computation=None,
                   klce_computation=None)
        if n < settings.min_rows:
            return row
        counts, s_p, s_y, s_brier = self.bins
        gap = self.sums[1] / n
        variance = max(self.sums[2] - self.sums[1] * gap, 0.0) / (n - 1) if n > 1 else np.nan
        half = norm_ppf(0.5 + settings.level / 2.0) * np.sqrt(variance) / np.sqrt(n)
        ece = float(ece_from_sums(counts, s_p, s_y, "l1"))
        brier = float(s_brier.sum() / n)
        ece_low = ece_high = brier_low = brier_high = np.nan
        if settings.n_resamples:
            boot = self.boot
            ece_low, ece_high = self._interval(ece_from_sums(boot[0], boot[1], boot[2], "l1"),
                                               ece, "ece_l1", settings.level)
            brier_low, brier_high = self._interval(boot[3].sum(axis=1) / boot[0].sum(axis=1),
                                                   brier, "brier", settings.level)
        row.update(mean_forecast=float(s_p.sum() / n), observed_rate=float(s_y.sum() / n),
                   gap=float(gap), gap_low=float(gap - half), gap_high=float(gap + half),
                   ece=ece, ece_low=ece_low, ece_high=ece_high, brier=brier,
                   brier_low=brier_low, brier_high=brier_high)
        return row

    @staticmethod
    def _interval(draws: np.ndarray, value: float, key: str,
                  level: float) -> tuple[float, float]:
        draws = np.asarray(draws, dtype=np.float64)
        description = METRIC_DESCRIPTIONS[key]
        _, low, high = reported_estimate(draws[np.isfinite(draws)], value, level, "basic",
                                         description.bounds, None, description.biased)
        return low, high


class PeriodSums:
    """One period's cells — all its rows, then each group level's — added batch by batch,
    and its rows while the kernel tests need them."""

    def __init__(self, label: str, attributes: tuple[str, ...], settings: CellSettings) -> None:
        self.label, self.attributes, self.settings = label, attributes, settings
        self.all = CellSums(settings)
        self.levels: dict[str, dict[str, CellSums]] = {a: {} for a in attributes}
        self.held: list[tuple[np.ndarray, ...]] = []

    def add(self, p: np.ndarray, labels: np.ndarray, groups: dict[str, np.ndarray],
            X: np.ndarray | None, weights: np.ndarray | None) -> None:
        """Add the period's rows of a batch (each group attribute's level, as text)."""
        self.all.add(p, labels, weights)
        for attribute in self.attributes:
            values = groups[attribute]
            for value in np.unique(values):
                mask = values == value
                cell = self.levels[attribute].get(value)
                if cell is None:
                    cell = self.levels[attribute][value] = CellSums(self.settings)
                cell.add(p[mask], labels[mask], None if weights is None else weights[mask])
        if self.settings.kernel_tests:
            self.held.append((p, labels, X))

    def rows(self) -> list[dict]:
        """The period's rows of the table: all its rows, then each group level's (levels
        sorted as text)."""
        settings = self.settings
        first = self.all.row(self.label, ALL_ROWS, settings)
        if self.held and first["rows"] >= settings.min_rows:
            p = np.concatenate([h[0] for h in self.held])
            labels = np.concatenate([h[1] for h in self.held])
            X = None if self.held[0][2] is None else np.concatenate([h[2] for h in self.held])
            first.update(_kernel_tests(p, labels, X, settings))
        self.held = []
        out = [first]
        for attribute in self.attributes:
            for value in sorted(self.levels[attribute]):
                out.append(self.levels[attribute][value].row(
                    self.label, f"{attribute} = {value}", settings))
        return out


def _kernel_tests(p: np.ndarray, labels: np.ndarray, X: np.ndarray | None,
                  settings: CellSettings) -> dict:
    """The period's SKCE and KLCE tests (each where asked and both outcomes occur)."""
    if np.unique(labels).size < 2:
        return {}
    both = np.column_stack([1.0 - p, p])
    out = {}
    if settings.skce_resamples > 0:
        test = skce_test(both, labels, n_resamples=settings.skce_resamples, seed=settings.seed)
        out.update(skce_p=test.p_value, skce_computation=test.parameters.get("computation"))
    if settings.klce_resamples > 0:
        test = klce_test(both, labels, X, n_resamples=settings.klce_resamples,
                         seed=settings.seed)
        out.update(klce_p=test.p_value, klce_computation=test.parameters.get("computation"))
    return out


class PeriodTable:
    """The period table of rows in time order read batch by batch: each period's sums until
    it ends, then its rows (:meth:`PeriodSums.rows`), in the order the periods first appear.

    Parameters
    ----------
    attributes : tuple of str
        The group attributes.
    settings : CellSettings
        What each cell computes.
    """

    def __init__(self, attributes: tuple[str, ...], settings: CellSettings) -> None:
        self.attributes, self.settings = attributes, settings
        self.open: dict[str, PeriodSums] = {}
        self.done: dict[str, list[dict]] = {}
        self.order: list[str] = []

    def add(self, start: int, p: np.ndarray, labels: np.ndarray, periods: np.ndarray,
            groups: dict[str, np.ndarray], X: np.ndarray | None,
            ended: tuple[str, ...] = ()) -> None:
        """Add a batch: rows ``start …`` of the table (their periods, and each group
        attribute's levels as text); then close the periods ``ended`` (none of their rows
        come later)."""
        weights = poisson_weights(start, p.shape[0], self.settings.n_resamples,
                                  self.settings.seed)
        for label in pd.unique(periods):
            mask = periods == label
            period = self.open.get(label)
            if period is None:
                if label in self.done:
                    raise ValueError(f"Period '{label}' has rows after it ended.")
                period = self.open[label] = PeriodSums(label, self.attributes, self.settings)
                self.order.append(label)
            period.add(p[mask], labels[mask], {a: v[mask] for a, v in groups.items()},
                       None if X is None else X[mask], None if weights is None else weights[mask])
        for label in ended:
            self.done[label] = self.open.pop(label).rows()

    def table(self) -> pd.DataFrame:
        """The table, every period closed."""
        for label in list(self.open):
            self.done[label] = self.open.pop(label).rows()
        rows = [row for label in self.order for row in self.done[label]]
        return pd.DataFrame(rows, columns=list(PERIOD_COLUMNS))


def period_table(probs: ArrayLike, y: ArrayLike, periods: ArrayLike,
                 groups: pd.DataFrame | None = None, n_bins: int = 15,
                 n_resamples: int = 100, level: float = 0.95, seed: int = 0,
                 min_rows: int = MIN_GROUP_ROWS, skce_resamples: int = 0,
                 features: ArrayLike | None = None, klce_resamples: int = 0) -> pd.DataFrame:
    """Per period, overall and per group: rows, mean forecast, observed rate, mean gap, ECE
    and Brier score with intervals, and (optionally) the SKCE and KLCE tests' p-values.

    Parameters
    ----------
    probs, y : array_like
        ``(n,)`` forecasts ``P(y = 1)`` and 0/1 outcomes.
    periods : array_like
        ``(n,)`` period label of each row; the table keeps the order of first appearance
        (rows in time order give periods in time order).
    groups : pandas.DataFrame, optional
        Group attributes, one column each (as text); each level gets its own rows, labelled
        ``'race = Black'``.
    n_bins : int
        Equal-width bins of the ECE.
    n_resamples : int
        Poisson bootstrap resamples of the ECE and Brier intervals (0: no intervals).
    level : float
        Level of every interval.
    seed : int
        Seed of the bootstrap (each row's weights are drawn at its row number).
    min_rows : int
        Cells (a period, or a group within it) with fewer rows get NaN metrics.
    skce_resamples : int
        With B > 0, each period's ``'all'`` row gets ``skce_p``, the p-value of
        :func:`core.stattests.skce.skce_test` (consistency resampling, B resamples; exact
        tiles or random features as its plan decides for the period's size, said in
        ``skce_computation``), where the period has ``min_rows`` rows and both outcomes;
        0: NaN.
    features : array_like, optional
        ``(n, d)`` encoded audit features, for the KLCE test (None: the test uses the
        prediction kernel only).
    klce_resamples : int
        With B > 0, each period's ``'all'`` row gets ``klce_p``, the p-value of
        :func:`core.stattests.klce.klce_test` (I-trustworthy eq. 4; the default null, B
        resamples, median-heuristic bandwidths of the period's rows; exact or random
        features as its plan decides, said in ``klce_computation``), where the period is
        large enough (as the SKCE); 0: NaN.

    Returns
    -------
    pandas.DataFrame
        Columns :data:`PERIOD_COLUMNS`; the ``'all'`` rows first within each period.

    Raises
    ------
    ValueError
        Invalid forecasts or labels, or ``periods``/``groups`` of another length.
    """
    p, labels = binary_forecast(probs, y)
    periods = np.asarray(periods).astype(str)
    if periods.shape != p.shape:
        raise ValueError(f"periods must hold one label per row: {p.shape[0]} forecasts, "
                         f"{periods.size} period labels.")
    if groups is not None and len(groups) != p.shape[0]:
        raise ValueError(f"groups must have one row per forecast: {p.shape[0]} forecasts, "
                         f"{len(groups)} group rows.")
    settings = CellSettings(check_count("n_bins", n_bins, 1),
                            check_count("n_resamples", n_resamples, 0), check_level(level),
                            seed, check_count("min_rows", min_rows, 1),
                            check_count("skce_resamples", skce_resamples, 0),
                            check_count("klce_resamples", klce_resamples, 0))
    X = None if features is None else np.asarray(features, dtype=np.float64)
    if X is not None and X.shape[0] != p.shape[0]:
        raise ValueError(f"features must have one row per forecast: {p.shape[0]} forecasts, "
                         f"{X.shape[0]} feature rows.")
    columns = {} if groups is None else {column: groups[column].astype(str).to_numpy()
                                          for column in groups.columns}
    labels_, last = np.unique(periods[::-1], return_index=True)
    ends = np.sort(p.shape[0] - 1 - last)  # each period's last row
    closing = labels_[np.argsort(p.shape[0] - 1 - last)]
    table = PeriodTable(tuple(columns), settings)
    at = 0
    for start in range(0, p.shape[0], CHUNK_ROWS):
        stop = min(start + CHUNK_ROWS, p.shape[0])
        done = int(np.searchsorted(ends, stop))  # periods whose last row is before stop
        chunk = slice(start, stop)
        table.add(start, p[chunk], labels[chunk], periods[chunk],
                  {c: v[chunk] for c, v in columns.items()}, None if X is None else X[chunk],
                  tuple(closing[at:done]))
        at = done
    return table.table()
