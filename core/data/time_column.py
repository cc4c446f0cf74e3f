"""The time role: a column that says when each prediction's outcome was observed, and the
periods (day, week, month, quarter, the column's own labels, or blocks of N rows) that
monitoring over time groups rows into.

A time column holds dates or timestamps (a datetime column, or text such as ``2026-09-14``,
``2026-09-14 08:30``, ``2026-W41`` for an ISO week or ``2026-Q3`` for a quarter), or an
ordered period label (whole numbers such as ``1, 2, …`` or text labels that sort in time
order, such as ``p01, p02, …``). Every check raises :class:`~core.data.problems.DataError`
with a sentence naming the column, the rows (counted from 1) and the fix.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import pandas as pd

from core.data.problems import DataError, describe_rows

#: The calendar periods of a date column, and ``"label"`` (each distinct value is a period).
PERIODS = ("day", "week", "month", "quarter", "label")

_ISO_WEEK = re.compile(r"^\d{4}-W\d{2}$")
_QUARTER = re.compile(r"^\d{4}-?Q[1-4]$")


@dataclass(frozen=True)
class TimeValues:
    """A validated time column.

    Attributes
    ----------
    column : str
        The column's name in the user's table.
    values : pandas.Series
        ``datetime64`` values when ``is_dates``, else the labels as text.
    is_dates : bool
        Whether the column holds dates (calendar periods apply) or ordered labels.
    sort_key : numpy.ndarray
        One sortable number per row: nanoseconds since the epoch, or the rank of the label.
    """

    column: str
    values: pd.Series
    is_dates: bool
    sort_key: np.ndarray

    @property
    def n(self) -> int:
        return int(self.sort_key.shape[0])

    def take(self, rows: np.ndarray) -> TimeValues:
        """The same column restricted to ``rows`` (an index array or boolean mask)."""
        rows = np.asarray(rows)
        if rows.dtype == bool:
            rows = np.flatnonzero(rows)
        return TimeValues(self.column, self.values.iloc[rows].reset_index(drop=True),
                          self.is_dates, self.sort_key[rows])

    def order(self) -> np.ndarray:
        """The row order by time; rows with the same time keep their order in the table."""
        return np.argsort(self.sort_key, kind="stable")

    def is_sorted(self) -> bool:
        """Whether the rows are already in time order."""
        return bool(np.all(np.diff(self.sort_key) >= 0))


def parse_times(series: pd.Series, column: str) -> TimeValues:
    """Validate a time column and read it as dates or as ordered labels.

    Parameters
    ----------
    series : pandas.Series
        The column as loaded from the user's table.
    column : str
        Its name, for the messages.

    Returns
    -------
    TimeValues

    Raises
    ------
    DataError
        When values are missing, or when most values are dates but some are not.
    """
    missing = series.isna().to_numpy()
    if missing.any():
        raise DataError(
            f"Time column '{column}' is empty in {describe_rows(missing)}. Monitoring orders "
            "outcomes by when they were observed; fill in those times or remove the rows.")
    if pd.api.types.is_datetime64_any_dtype(series):
        return _dates(series, column)
    if pd.api.types.is_bool_dtype(series):
        raise DataError(f"Time column '{column}' holds true/false values, not times. Choose "
                        "a column of dates, timestamps or ordered period labels.")
    if pd.api.types.is_numeric_dtype(series):
        values = series.to_numpy(dtype=float)
        if not np.all(np.isfinite(values)):
            bad = ~np.isfinite(values)
            raise DataError(f"Time column '{column}' is not a finite number in "
                            f"{describe_rows(bad)}; fix or remove those rows.")
        whole = np.all(values == np.round(values))  # 2025, not 2025.0, as a period's label
        text = (series.astype("int64") if whole else series).astype(str).reset_index(drop=True)
        return TimeValues(column, text, False, values)
    text = series.astype(str).str.strip().reset_index(drop=True)
    if text.str.match(_ISO_WEEK).all():
        return _dates(pd.to_datetime(text + "-1", format="%G-W%V-%u"), column)
    if text.str.match(_QUARTER).all():
        return _dates(pd.Series(pd.PeriodIndex(text.str.replace("-", ""), freq="Q")
                                .start_time), column)
    parsed = pd.to_datetime(text, errors="coerce", format="ISO8601")  # fast, the usual case
    if parsed.isna().any():
        parsed = pd.to_datetime(text, errors="coerce", format="mixed")
    failed = parsed.isna().to_numpy()
    if not failed.any():
        return _dates(parsed, column)
    if failed.mean() < 0.5:
        example = text[failed].iloc[0]
        raise DataError(
            f"Time column '{column}' holds dates, but {describe_rows(failed)} are not dates "
            f"(for example '{example}'). Write them as dates (2026-09-14) or remove those "
            "rows.")
    levels, codes = np.unique(text.to_numpy(dtype=str), return_inverse=True)
    return TimeValues(column, text, False, codes.astype(float))


def _dates(series: pd.Series, column: str) -> TimeValues:
    values = pd.Series(series).reset_index(drop=True)
    if getattr(values.dt, "tz", None) is not None:
        values = values.dt.tz_convert("UTC").dt.tz_localize(None)
    values = values.astype("datetime64[ns]")
    return TimeValues(column, values, True, values.to_numpy().astype("int64").astype(float))


def period_labels(times: TimeValues, period: str | int) -> np.ndarray:
    """The period of every row, as text that sorts in time order.

    Parameters
    ----------
    times : TimeValues
        The validated time column, its rows in time order.
    period : {'day', 'week', 'month', 'quarter', 'label'} or int
        A calendar period (dates only: ``2026-09-14``, ISO week ``2026-W41``, ``2026-09``,
        ``2026-Q3``), ``'label'`` (each distinct value of the column is a period), or a
        whole number N ≥ 1: consecutive blocks of N rows (``rows 1–N``).

    Returns
    -------
    numpy.ndarray
        One label per row (object array of str).

    Raises
    ------
    DataError
        A calendar period asked of a column of labels; ValueError for an unknown period.
    """
    if not isinstance(period, str):
        if isinstance(period, bool) or not isinstance(period, (int, np.integer)) or period < 1:
            raise ValueError(f"The period must be one of {', '.join(PERIODS)} or a whole "
                             f"number of rows of at least 1, not {period!r}.")
        starts = np.arange(times.n) // int(period) * int(period)
        ends = np.minimum(starts + int(period), times.n)
        width = len(f"{times.n:,}")
        return np.array([f"rows {s + 1:>{width},}–{e:,}" for s, e in zip(starts, ends,
                                                                        strict=True)],
                        dtype=object)
    if period not in PERIODS:
        raise ValueError(f"Unknown period {period!r}; choose one of "
                         f"{', '.join(repr(p) for p in PERIODS)} or a number of rows.")
    if period == "label":
        return times.values.astype(str).to_numpy(dtype=object) if not times.is_dates else \
            times.values.dt.strftime("%Y-%m-%d %H:%M:%S").to_numpy(dtype=object)
    if not times.is_dates:
        raise DataError(
            f"Time column '{times.column}' holds labels, not dates, so its rows cannot be "
            f"grouped by {period}. Choose the period 'label' (each label is one period) or a "
            "number of rows.")
    values = times.values
    if period == "day":
        labels = values.dt.strftime("%Y-%m-%d")
    elif period == "week":
        iso = values.dt.isocalendar()
        labels = iso["year"].astype(str) + "-W" + iso["week"].astype(str).str.zfill(2)
    elif period == "month":
        labels = values.dt.strftime("%Y-%m")
    else:
        labels = values.dt.year.astype(str) + "-Q" + values.dt.quarter.astype(str)
    return labels.to_numpy(dtype=object)
