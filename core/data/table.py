"""The raw table's columns, before any role is assigned: repeated column names kept openly
(:func:`deduplicate_columns`), which columns are categorical, the numeric values of a column
with its problems named, and the per-column summary of the Data page.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from core.data.problems import DataError, describe_rows, quote_list

#: Most distinct values a categorical feature or group column may have.
MAX_LEVELS = 50
#: Level given to missing values of a categorical feature or group attribute.
MISSING_LEVEL = "(missing)"


# --------------------------------------------------------------------------- table checks


@dataclass(frozen=True, eq=False)
class DeduplicatedTable:
    """A table whose column names are unique, and what was done to make them so.

    Attributes
    ----------
    frame
        the table; the caller's frame itself when no name repeats, else a new frame.
    notes
        one sentence per repeated name, for the person who loaded the table.
    ambiguous
        each repeated name whose columns hold different values → the names its
        columns were kept under (``'sex (column 3)'``, ``'sex (column 4)'``).
    """

    frame: pd.DataFrame
    notes: tuple[str, ...] = ()
    ambiguous: dict[str, tuple[str, ...]] = field(default_factory=dict)


def _same_values(a: pd.Series, b: pd.Series) -> bool:
    """Equal in every row, missing where the other is missing; numbers compare by value."""
    if a.equals(b):
        return True
    if is_numeric_feature(a) and is_numeric_feature(b):
        return bool(np.array_equal(a.to_numpy(dtype=float, na_value=np.nan),
                                   b.to_numpy(dtype=float, na_value=np.nan), equal_nan=True))
    return False


def _positions(positions: Sequence[int]) -> str:
    """``'columns 3 and 40'`` for 0-based positions (shown from 1)."""
    shown = [str(p + 1) for p in positions]
    return "columns " + (", ".join(shown[:-1]) + " and " + shown[-1] if len(shown) > 1
                         else shown[0])


def deduplicate_columns(df: pd.DataFrame) -> DeduplicatedTable:
    """Make repeated column names unique without losing or guessing at data.

    Real tables repeat headers: ProPublica's ``compas-scores-two-years.csv`` has two columns
    named ``decile_score`` and two named ``priors_count``. For each repeated name the columns
    are compared value by value (:func:`_same_values`):

    * all hold the same values: the first is kept under the name, the copies are dropped;
    * they differ: every distinct version is kept, named ``'<name> (column k)'`` after its
      first position k in the table (counted from 1), and the bare name is listed in
      ``DeduplicatedTable.ambiguous``, so that mapping it to a role can be refused
      (:meth:`AuditData.from_mapping` does) instead of silently taking one of them.

    Each case adds a sentence to ``DeduplicatedTable.notes``. The caller's frame is not
    modified.

    Parameters
    ----------
    df : pandas.DataFrame
        The table as read.

    Returns
    -------
    DeduplicatedTable
        The table with unique names, the ambiguous names and the notes.
    """
    names = list(df.columns)
    if not pd.Index(names).duplicated().any():
        return DeduplicatedTable(df)
    keep: list[int] = []
    new_names = list(names)
    notes: list[str] = []
    ambiguous: dict[str, tuple[str, ...]] = {}
    taken = {str(n) for n in names}
    seen: set = set()
    for position, name in enumerate(names):
        if name in seen:
            continue
        seen.add(name)
        positions = [i for i, other in enumerate(names) if other == name]
        if len(positions) == 1:
            keep.append(position)
            continue
        versions: list[int] = []  # first position of each distinct version
        for i in positions:
            if not any(_same_values(df.iloc[:, i], df.iloc[:, v]) for v in versions):
                versions.append(i)
        where = _positions(positions)
        if len(versions) == 1:
            keep.append(position)
            notes.append(
                f"The table has more than one column named '{name}' ({where}), with the same "
                f"values in every row; column {position + 1} was kept."
            )
            continue
        kept_as = []
        for i in versions:
            renamed = f"{name} (column {i + 1})"
            while renamed in taken:
                renamed += "'"
            taken.add(renamed)
            new_names[i] = renamed
            kept_as.append(renamed)
            keep.append(i)
        ambiguous[str(name)] = tuple(kept_as)
        copies = len(positions) - len(versions)
        dropped = f" {copies} exact {'copy was' if copies == 1 else 'copies were'} dropped." \
            if copies else ""
        notes.append(
            f"The table has more than one column named '{name}' ({where}), with different "
            f"values; they were kept as {quote_list(kept_as)}.{dropped} Map the one you mean."
        )
    keep.sort()
    frame = df.iloc[:, keep].copy()
    frame.columns = [new_names[i] for i in keep]
    return DeduplicatedTable(frame, tuple(notes), ambiguous)


def require_column(df: pd.DataFrame, column: str, role: str) -> pd.Series:
    if column in df.columns:
        return df[column]
    close = difflib.get_close_matches(str(column), [str(c) for c in df.columns], n=1)
    hint = f" Did you mean '{close[0]}'?" if close else ""
    raise DataError(
        f"Column '{column}' ({role}) is not in the table.{hint} "
        f"The table has the columns {quote_list(list(df.columns))}."
    )


def numeric_values(series: pd.Series, role: str) -> np.ndarray:
    """The column as finite float64, or a DataError naming the non-numeric or missing rows."""
    name = series.name
    if pd.api.types.is_bool_dtype(series):
        series = series.astype(float)
    numbers = pd.to_numeric(series, errors="coerce")
    text = numbers.isna().to_numpy() & series.notna().to_numpy()
    if text.any():
        example = series[text].iloc[0]
        raise DataError(
            f"Column '{name}' ({role}) must hold numbers, but {describe_rows(text)} hold text "
            f"such as '{example}'. Fix or remove those values (a decimal comma must become a "
            "decimal point), then load the table again."
        )
    values = numbers.to_numpy(dtype=float, na_value=np.nan)
    bad = ~np.isfinite(values)
    if bad.any():
        raise DataError(
            f"Column '{name}' ({role}) has missing or infinite values in {describe_rows(bad)}. "
            "Remove or fill those rows, then load the table again."
        )
    return values


def is_numeric_feature(series: pd.Series) -> bool:
    """Whether a feature column is used as a number: a numeric dtype that is not boolean.

    A boolean column (``bool`` or pandas' nullable ``boolean``) has two levels and is a
    category, not a number; integer, float and nullable numeric columns (``Int64``) are
    numeric; text, object and categorical columns are not. The one rule every part of
    ``core`` applies when it asks whether a feature is numeric.

    Parameters
    ----------
    series : pandas.Series
        One column.

    Returns
    -------
    bool
    """
    return pd.api.types.is_numeric_dtype(series) and not pd.api.types.is_bool_dtype(series)


def is_categorical(series: pd.Series) -> bool:
    """Whether a feature column is one-hot encoded (True) or used as a number (False).

    Text, categorical and boolean columns are categorical: a boolean such as ``is_female`` is
    a two-level category (``False`` / ``True``), as a user expects. Numeric columns, 0/1
    included, stay numeric. The one rule for audit features (:class:`AuditData`) and model
    features (:mod:`core.data.reference_model`).

    Parameters
    ----------
    series : pandas.Series
        One column.

    Returns
    -------
    bool
    """
    return not is_numeric_feature(series)


def summarise_columns(df: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Per-column summaries for display: ``(numeric, categorical)``.

    Numeric columns get missing count, distinct count, mean, standard deviation, minimum,
    median and maximum; the others their missing count, number of levels and top level.

    Parameters
    ----------
    df : pandas.DataFrame
        The table.

    Returns
    -------
    numeric, categorical : pandas.DataFrame
        One row per column of each kind.
    """
    numeric_rows, categorical_rows = [], []
    for column in df.columns:
        series = df[column]
        base = {"column": str(column), "missing": int(series.isna().sum())}
        if is_numeric_feature(series):
            values = series.astype(float)
            numeric_rows.append({
                **base, "distinct": int(series.nunique()), "mean": values.mean(),
                "std": values.std(ddof=0), "min": values.min(), "median": values.median(),
                "max": values.max(),
            })
        else:
            top = series.value_counts()
            categorical_rows.append({
                **base, "levels": int(series.nunique()),
                "most common": f"{top.index[0]} ({top.iloc[0]:,} rows)" if len(top) else "",
            })
    numeric = pd.DataFrame(numeric_rows, columns=["column", "missing", "distinct", "mean", "std",
                                                  "min", "median", "max"])
    categorical = pd.DataFrame(categorical_rows,
                               columns=["column", "missing", "levels", "most common"])
    return numeric, categorical

