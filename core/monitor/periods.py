"""Calibration per period: for each period (and each group within it) the ECE and Brier score
with bootstrap intervals and the mean gap with its interval — the table a monitoring report
plots period by period.

The ECE (L1, equal-width bins) and the Brier score and their intervals are those of
:func:`core.metrics.metrics_table` on the period's rows (basic bootstrap over rows). The mean
gap ``ḡ = (1/n) Σ (y_i − p_i)`` gets the Wald interval ``ḡ ± z_{1−(1−level)/2} s/√n`` with
``s`` the sample standard deviation of ``y − p``. These intervals are fixed-sample: each is
valid for its own period read once; the anytime-valid statements are the e-processes and
confidence sequences of :mod:`core.monitor.eprocesses` and :mod:`core.monitor.sequences`.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike
from scipy.stats import norm

from core.data.groups import MIN_GROUP_ROWS
from core.data.validation import check_count
from core.metrics.global_metrics import METRIC_NAMES, metrics_table
from core.metrics.intervals import check_level
from core.monitor.eprocesses import binary_forecast
from core.stattests.klce import klce_test
from core.stattests.skce import skce_test

#: Columns of :func:`period_table`.
PERIOD_COLUMNS = ("period", "group", "rows", "mean_forecast", "observed_rate", "gap",
                  "gap_low", "gap_high", "ece", "ece_low", "ece_high", "brier", "brier_low",
                  "brier_high", "skce_p", "klce_p")
#: Label of the rows of all groups together.
ALL_ROWS = "all"


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
        Bootstrap resamples of the ECE and Brier intervals (0: no intervals).
    level : float
        Level of every interval.
    seed : int
        Seed of the bootstrap.
    min_rows : int
        Cells (a period, or a group within it) with fewer rows get NaN metrics.
    skce_resamples : int
        With B > 0, each period's ``'all'`` row gets ``skce_p``, the p-value of
        :func:`core.stattests.skce.skce_test` (consistency resampling, B resamples; exact
        tiles or random features as its plan decides for the period's size); 0: NaN.
    features : array_like, optional
        ``(n, d)`` encoded audit features, for the KLCE test (None: the test uses the
        prediction kernel only).
    klce_resamples : int
        With B > 0, each period's ``'all'`` row gets ``klce_p``, the p-value of
        :func:`core.stattests.klce.klce_test` (I-trustworthy eq. 4; the default null, B
        resamples, median-heuristic bandwidths of the period's rows; exact or random
        features as its plan decides); 0: NaN.

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
    n_bins = check_count("n_bins", n_bins, 1)
    n_resamples = check_count("n_resamples", n_resamples, 0)
    level = check_level(level)
    min_rows = check_count("min_rows", min_rows, 1)
    skce_resamples = check_count("skce_resamples", skce_resamples, 0)
    klce_resamples = check_count("klce_resamples", klce_resamples, 0)
    X = None if features is None else np.asarray(features, dtype=np.float64)
    if X is not None and X.shape[0] != p.shape[0]:
        raise ValueError(f"features must have one row per forecast: {p.shape[0]} forecasts, "
                         f"{X.shape[0]} feature rows.")
    cells = []
    for period in pd.unique(periods):
        in_period = periods == period
        cells.append((period, ALL_ROWS, in_period))
        for column in ([] if groups is None else groups.columns):
            values = groups[column].astype(str).to_numpy()
            for value in sorted(set(values[in_period])):
                cells.append((period, f"{column} = {value}", in_period & (values == value)))
    rows = [_cell(period, group, p[mask], labels[mask], n_bins, n_resamples, level, seed,
                  min_rows, skce_resamples if group == ALL_ROWS else 0,
                  None if X is None else X[mask], klce_resamples if group == ALL_ROWS else 0)
            for period, group, mask in cells]
    return pd.DataFrame(rows, columns=list(PERIOD_COLUMNS))


def _cell(period: str, group: str, p: np.ndarray, labels: np.ndarray, n_bins: int,
          n_resamples: int, level: float, seed: int, min_rows: int,
          skce_resamples: int, X: np.ndarray | None, klce_resamples: int) -> dict:
    row = dict.fromkeys(PERIOD_COLUMNS, np.nan)
    row.update(period=period, group=group, rows=int(p.shape[0]))
    if p.shape[0] < min_rows:
        return row
    gap = labels - p
    half = norm.ppf(0.5 + level / 2.0) * np.std(gap, ddof=1) / np.sqrt(p.shape[0])
    table = metrics_table(p, labels, n_bins=n_bins, n_resamples=n_resamples, level=level,
                          seed=seed).set_index("metric")
    ece, brier = table.loc[METRIC_NAMES["ece_l1"]], table.loc[METRIC_NAMES["brier"]]
    row.update(mean_forecast=float(p.mean()), observed_rate=float(labels.mean()),
               gap=float(gap.mean()), gap_low=float(gap.mean() - half),
               gap_high=float(gap.mean() + half), ece=ece["value"], ece_low=ece["ci_low"],
               ece_high=ece["ci_high"], brier=brier["value"], brier_low=brier["ci_low"],
               brier_high=brier["ci_high"])
    both = np.column_stack([1.0 - p, p])
    if skce_resamples > 0 and np.unique(labels).size == 2:
        row["skce_p"] = skce_test(both, labels, n_resamples=skce_resamples, seed=seed).p_value
    if klce_resamples > 0 and np.unique(labels).size == 2:
        row["klce_p"] = klce_test(both, labels, X, n_resamples=klce_resamples,
                                  seed=seed).p_value
    return row
