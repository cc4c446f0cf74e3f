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
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from core.data.problems import DataError, describe_rows, row_offset

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


#: How a time column is read, decided over the whole column (:func:`time_form`): a datetime
#: column, numbers, ISO weeks, quarters, text dates, or ordered text labels.
TIME_FORMS = ("datetime", "number", "iso-week", "quarter", "date-text", "labels")


@dataclass(frozen=True)
class TimeForm:
    """How a whole time column is read: one of :data:`TIME_FORMS`, and for numbers whether
    every value is whole (then ``2025`` is a period's label, not ``2025.0``)."""

    form: str
    whole: bool = True


@dataclass(frozen=True)
class TimeScan:
    """What one part of a time column says about how the whole column is read
    (:func:`scan_times`).

    Attributes
    ----------
    rows : int
        Rows of the part.
    base : {'datetime', 'number', 'text'}
        The part's type.
    whole : bool
        Numbers: whether every value is whole.
    weeks, quarters : bool
        Text: whether every value is an ISO week (``2026-W41``), a quarter (``2026-Q3``).
    failed : int
        Text: values that are not dates (−1: not counted, every value a week or a quarter).
    failed_rows : tuple of int
        The first five of them, as rows of the table (from 1).
    example : str
        The first of them.
    parsed : pandas.Series or None
        The part's dates, kept when asked (a column read in one part).
    """

    rows: int
    base: str
    whole: bool = True
    weeks: bool = False
    quarters: bool = False
    failed: int = 0
    failed_rows: tuple[int, ...] = ()
    example: str = ""
    parsed: pd.Series | None = field(default=None, repr=False, compare=False)


def scan_times(series: pd.Series, column: str, count: bool = False,
               keep: bool = False) -> TimeScan:
    """Check one part of a time column (the whole column, or a batch of a streamed table:
    rows are named as rows of the table inside :func:`core.data.problems.rows_from`) and say
    what it allows.

    Parameters
    ----------
    series : pandas.Series
        The part's values.
    column : str
        The column's name, for the messages.
    count : bool
        Count the values that are not dates also when every value is an ISO week or a
        quarter (needed when other parts are not).
    keep : bool
        Keep the parsed dates of a text part (:attr:`TimeScan.parsed`).

    Returns
    -------
    TimeScan

    Raises
    ------
    DataError
        Missing values, true/false values, or numbers that are not finite.
    """
    missing = series.isna().to_numpy()
    if missing.any():
        raise DataError(
            f"Time column '{column}' is empty in {describe_rows(missing)}. Monitoring orders "
            "outcomes by when they were observed; fill in those times or remove the rows.")
    if pd.api.types.is_datetime64_any_dtype(series):
        return TimeScan(len(series), "datetime")
    if pd.api.types.is_bool_dtype(series):
        raise DataError(f"Time column '{column}' holds true/false values, not times. Choose "
                        "a column of dates, timestamps or ordered period labels.")
    if pd.api.types.is_numeric_dtype(series):
        values = series.to_numpy(dtype=float)
        if not np.all(np.isfinite(values)):
            bad = ~np.isfinite(values)
            raise DataError(f"Time column '{column}' is not a finite number in "
                            f"{describe_rows(bad)}; fix or remove those rows.")
        return TimeScan(len(series), "number", bool(np.all(values == np.round(values))))
    text = series.astype(str).str.strip().reset_index(drop=True)
    weeks, quarters = bool(text.str.match(_ISO_WEEK).all()), bool(text.str.match(_QUARTER).all())
    if (weeks or quarters) and not count:
        return TimeScan(len(series), "text", weeks=weeks, quarters=quarters, failed=-1)
    parsed = _text_dates(text)
    failed = parsed.isna().to_numpy()
    rows = np.flatnonzero(failed)
    return TimeScan(len(series), "text", weeks=weeks, quarters=quarters, failed=int(rows.size),
                    failed_rows=tuple(int(r) + 1 + row_offset() for r in rows[:5]),
                    example=str(text.iloc[rows[0]]) if rows.size else "",
                    parsed=parsed if keep else None)


def time_form(scans: list[TimeScan], column: str) -> TimeForm | None:
    """How the whole column is read, from its parts' scans (in order); None when a part of
    ISO weeks or quarters must be scanned again with ``count=True`` (other parts are not
    weeks or quarters).

    Raises
    ------
    DataError
        Parts of different types, or a column that holds mostly dates and some values that
        are not.
    """
    bases = {scan.base for scan in scans}
    if len(bases) > 1:
        raise DataError(f"Time column '{column}' holds {' and '.join(sorted(bases))} values in "
                        "different parts of the table; give it one type throughout.")
    base = bases.pop() if bases else "text"
    if base != "text":
        return TimeForm(base, all(scan.whole for scan in scans))
    if all(scan.weeks for scan in scans):
        return TimeForm("iso-week")
    if all(scan.quarters for scan in scans):
        return TimeForm("quarter")
    if any(scan.failed < 0 for scan in scans):
        return None
    failed = sum(scan.failed for scan in scans)
    rows = sum(scan.rows for scan in scans)
    if failed == 0:
        return TimeForm("date-text")
    if failed / rows < 0.5:
        first = [r for scan in scans for r in scan.failed_rows][:5]
        noun = "row" if failed == 1 else "rows"
        example = next(scan.example for scan in scans if scan.failed)
        raise DataError(
            f"Time column '{column}' holds dates, but {failed:,} {noun} ({noun} "
            f"{', '.join(str(r) for r in first)}{', …' if failed > 5 else ''}) are not dates "
            f"(for example '{example}'). Write them as dates (2026-09-14) or remove those "
            "rows.")
    return TimeForm("labels")


def read_times(series: pd.Series, column: str, form: TimeForm,
               parsed: pd.Series | None = None) -> TimeValues:
    """A part of a time column read as ``form`` (its scan and :func:`time_form` passed):
    dates, or labels whose ``sort_key`` is the number, or the rank of the text within the
    part (compare text labels of different parts as text). ``parsed``: the part's text dates
    when its scan kept them."""
    if form.form == "datetime":
        return _dates(series, column)
    if form.form == "number":
        text = (series.astype("int64") if form.whole else series).astype(str)
        return TimeValues(column, text.reset_index(drop=True), False,
                          series.to_numpy(dtype=float))
    text = series.astype(str).str.strip().reset_index(drop=True)
    if form.form == "iso-week":
        weeks = pd.to_datetime(text + "-1", format="%G-W%V-%u", errors="coerce")
        if weeks.isna().any():
            bad = weeks.isna().to_numpy()
            raise DataError(f"Time column '{column}' holds ISO weeks, but {describe_rows(bad)} "
                            f"name no week of their year (for example '{text[bad].iloc[0]}'); "
                            "weeks run from W01 to W52 or W53.")
        return _dates(weeks, column)
    if form.form == "quarter":
        return _dates(pd.Series(pd.PeriodIndex(text.str.replace("-", ""), freq="Q")
                                .start_time), column)
    if form.form == "date-text":
        return _dates(_text_dates(text) if parsed is None else parsed, column)
    _, codes = np.unique(text.to_numpy(dtype=str), return_inverse=True)
    return TimeValues(column, text, False, codes.astype(float))


def parse_times(series: pd.Series, column: str) -> TimeValues:
    """Validate a time column and read it as dates or as ordered labels
    (:func:`scan_times`, :func:`time_form` and :func:`read_times` on the whole column).

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
    scan = scan_times(series, column, keep=True)
    return read_times(series, column, time_form([scan], column), scan.parsed)  # one part: a form


def _text_dates(text: pd.Series) -> pd.Series:
    """Text read as dates (NaT where it is not one): ISO 8601, else any format pandas knows."""
    parsed = pd.to_datetime(text, errors="coerce", format="ISO8601")  # fast, the usual case
    if parsed.isna().any():
        parsed = pd.to_datetime(text, errors="coerce", format="mixed")
    return parsed


def _dates(series: pd.Series, column: str) -> TimeValues:
    values = pd.Series(series).reset_index(drop=True)
    if getattr(values.dt, "tz", None) is not None:
        values = values.dt.tz_convert("UTC").dt.tz_localize(None)
    values = values.astype("datetime64[ns]")
    return TimeValues(column, values, True, values.to_numpy().astype("int64").astype(float))


def period_labels(times: TimeValues, period: str | int, start: int = 0,
                  total: int | None = None) -> np.ndarray:
    """The period of every row, as text that sorts in time order.

    Parameters
    ----------
    times : TimeValues
        The validated time column, its rows in time order (or a batch of them: rows
        ``start …`` of a table of ``total`` rows).
    period : {'day', 'week', 'month', 'quarter', 'label'} or int
        A calendar period (dates only: ``2026-09-14``, ISO week ``2026-W41``, ``2026-09``,
        ``2026-Q3``), ``'label'`` (each distinct value of the column is a period), or a
        whole number N ≥ 1: consecutive blocks of N rows (``rows 1–N``).
    start : int
        The table's row of ``times``' first row (a batch of a streamed table).
    total : int, optional
        The table's rows (default: those of ``times``).

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
        total = times.n if total is None else int(total)
        starts = np.arange(start, start + times.n) // int(period) * int(period)
        ends = np.minimum(starts + int(period), total)
        width = len(f"{total:,}")
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
