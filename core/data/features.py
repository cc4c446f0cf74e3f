"""Audit features, group attributes and the split column of an audit table: categorical
features one-hot encoded (missing values as their own level), group attributes as
categorical levels, split values mapped to train / calibration / test from their common
spellings (``SPLIT_SPELLINGS``).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from core.data.problems import DataError, ValidationNote, describe_rows, quote_list
from core.data.table import (
    MAX_LEVELS,
    MISSING_LEVEL,
    is_categorical,
    numeric_values,
    require_column,
)

#: Recognised spellings of split values.
SPLIT_SPELLINGS = {
    "train": "train", "training": "train", "fit": "train",
    "calibration": "calibration", "calib": "calibration", "cal": "calibration",
    "calibrate": "calibration", "validation": "calibration", "valid": "calibration",
    "val": "calibration",
    "test": "test", "testing": "test", "holdout": "test", "eval": "test",
}
SPLITS = ("train", "calibration", "test")


# --------------------------------------------------------------------------- features, groups


def _level_texts(series: pd.Series, role: str, notes: list) -> np.ndarray:
    """A categorical column as text, an object array; missing values become the level
    ``(missing)``."""
    codes, uniques = pd.factorize(series, use_na_sentinel=True)
    missing = codes < 0
    # one str() per distinct value, not per row (10⁶-row uploads)
    names = np.array([str(u) for u in uniques] + [MISSING_LEVEL], dtype=object)
    if missing.any():
        notes.append(ValidationNote(
            "warning",
            f"Column '{series.name}' ({role}) has missing values in {describe_rows(missing)}; "
            f"they form their own level '{MISSING_LEVEL}'.",
        ))
    # every distinct value occurs, so the levels are the distinct texts of these names
    n_levels = len(set(names[:-1]) | ({MISSING_LEVEL} if missing.any() else set()))
    if n_levels > MAX_LEVELS:
        numeric_hint = (
            " It looks numeric: use it as a numeric audit feature, or cut it into bands first."
            if pd.api.types.is_numeric_dtype(series) else ""
        )
        raise DataError(
            f"Column '{series.name}' ({role}) has {n_levels:,} distinct values; at most "
            f"{MAX_LEVELS} are allowed for a categorical column.{numeric_hint} Group rare values "
            "together or leave the column out."
        )
    return names[codes]


def _categorical_levels(series: pd.Series, role: str, notes: list) -> pd.Series:
    """A categorical column as strings (:func:`_level_texts`)."""
    return pd.Series(_level_texts(series, role, notes), index=series.index,
                     name=series.name).astype(str)


def encode_features(
    df: pd.DataFrame, columns: Sequence[str], notes: list
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Audit features → (original columns, numeric encoding with one-hot categoricals)."""
    role = "audit feature"
    original = pd.DataFrame(index=pd.RangeIndex(len(df)))
    encoded: dict[str, np.ndarray] = {}
    for column in columns:
        series = require_column(df, column, role).reset_index(drop=True)
        if is_categorical(series):
            levels = _categorical_levels(series, role, notes)
            original[column] = levels.to_numpy()
            categories = sorted(levels.unique())
            for level in categories:
                encoded[f"{column}={level}"] = (levels == level).to_numpy(dtype=float)
            notes.append(ValidationNote(
                "info",
                f"Audit feature '{column}' is categorical with {len(categories)} levels; it was "
                f"one-hot encoded into {len(categories)} columns.",
            ))
        else:
            values = numeric_values(series, role)
            original[column] = series.to_numpy()
            encoded[str(column)] = values
            if np.ptp(values) == 0:
                notes.append(ValidationNote(
                    "warning",
                    f"Audit feature '{column}' is constant ({values[0]:g}); it cannot reveal any "
                    "local miscalibration.",
                ))
    return original, pd.DataFrame(encoded, index=pd.RangeIndex(len(df)))  # n × 0 if none


def group_attributes(df: pd.DataFrame, columns: Sequence[str], notes: list) -> pd.DataFrame:
    groups = pd.DataFrame(index=pd.RangeIndex(len(df)))
    for column in columns:
        series = require_column(df, column, "group attribute").reset_index(drop=True)
        groups[column] = _level_texts(series, "group attribute", notes)
    return groups


def split_values(df: pd.DataFrame, column: str) -> np.ndarray:
    series = require_column(df, column, "split")
    missing = series.isna().to_numpy()
    if missing.any():
        raise DataError(
            f"Split column '{column}' is empty in {describe_rows(missing)}. Every row needs one "
            f"of {quote_list(SPLITS)}."
        )
    spelled = series.astype(str).str.strip().str.lower()
    unknown = sorted(set(spelled) - set(SPLIT_SPELLINGS))
    if unknown:
        bad = spelled.isin(unknown).to_numpy()
        raise DataError(
            f"Split column '{column}' has values {quote_list(unknown)} in {describe_rows(bad)}; "
            f"allowed are {quote_list(SPLITS)} (or 'training', 'validation', 'holdout'). "
            "Rename those values."
        )
    return spelled.map(SPLIT_SPELLINGS).to_numpy(dtype=object)

