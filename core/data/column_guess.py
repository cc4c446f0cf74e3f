"""First guesses of which column plays which role, from column names and contents.

The guesses only pre-fill the Data page's mapping form; the user confirms or changes them and
:meth:`core.data.audit_data.AuditData.from_mapping` validates the result.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import pandas as pd

from core.data.features import SPLIT_SPELLINGS
from core.data.predictions import columns_name_classes, label_strings
from core.data.table import MAX_LEVELS, is_categorical

LABEL_NAMES = ("label", "y", "target", "outcome", "class", "truth", "y_true", "actual",
               "observed", "labels", "ground_truth")
PROB_PATTERN = re.compile(
    r"^(p|prob|proba|probability|pred_prob|predicted_prob|y_prob|y_pred_proba)([_\-. ].+|\d+)?$",
    re.IGNORECASE,
)
LOGIT_PATTERN = re.compile(r"^(logit|logits|score|z)([_\-. ].+|\d+)?$", re.IGNORECASE)
MEMBER_PATTERN = re.compile(r"^(member|model|m)[_\-. ]?\d+$", re.IGNORECASE)
SPLIT_NAMES = ("split", "fold", "set", "partition", "subset", "part")
GROUP_NAMES = ("sex", "gender", "race", "ethnicity", "group", "site", "region", "country")
ID_PATTERN = re.compile(r"(^id$|^index$|_id$|^unnamed)", re.IGNORECASE)
MAX_GROUP_LEVELS = 12


@dataclass(frozen=True)
class ColumnGuess:
    """Suggested roles; ``label`` is ``None`` when no column looks like a label."""

    label: str | None
    probs: tuple[str, ...]
    logits: bool
    features: tuple[str, ...]
    groups: tuple[str, ...]
    split: str | None
    members: tuple[str, ...]
    models: tuple[str, ...] = ()


def guess_columns(df: pd.DataFrame) -> ColumnGuess:
    """Guess label, probability/logit, split, ensemble-member, group and feature columns."""
    columns = [str(c) for c in df.columns]
    lowered = {c: c.lower().strip() for c in columns}
    label = next((c for name in LABEL_NAMES for c in columns if lowered[c] == name), None)
    if label is None:  # the last two-valued column that is not a group attribute
        binary = [c for c in columns if df[c].nunique() == 2
                  and not any(word in lowered[c] for word in GROUP_NAMES)]
        label = binary[-1] if binary else None

    # Probability columns are recognised by name even when their contents are not numeric,
    # so that validation can say what is wrong with them.
    probs = tuple(c for c in columns if c != label and PROB_PATTERN.match(c))
    logits = False
    numeric = {c for c in columns if pd.api.types.is_numeric_dtype(df[c])}
    if not probs:  # a text column named like a score (COMPAS's 'score_text') is no logit
        probs = tuple(c for c in columns
                      if c != label and c in numeric and LOGIT_PATTERN.match(c))
        logits = bool(probs)
    probs, models = _separate_models(df, label, probs, logits)
    members = tuple(c for c in columns if c in numeric and MEMBER_PATTERN.match(c)
                    and c not in probs and c not in models)
    split = next((c for c in columns if lowered[c] in SPLIT_NAMES and _looks_like_split(df[c])),
                 None)

    taken = {label, split, *probs, *members, *models}
    candidates = [c for c in columns if c not in taken and not _looks_like_id(df[c])]
    features = tuple(c for c in candidates if _usable_feature(df[c]))
    groups = tuple(c for c in candidates if _looks_like_group(df[c], lowered[c]))
    return ColumnGuess(label, probs, logits, features, groups, split, members, models)


def _separate_models(df: pd.DataFrame, label: str | None, probs: tuple[str, ...],
                     logits: bool) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Several probability columns beside a two-valued label, not named after its classes and
    not summing to 1 in most rows (``p_prod, p_new``), are binary models, one a column: the
    first is audited, the others are further prediction sets (``ColumnMapping.models``)."""
    if logits or len(probs) < 2 or label is None or df[label].nunique() != 2:
        return probs, ()
    if columns_name_classes(probs, label_strings(df[label].dropna())):
        return probs, ()  # p_0, p_1: one model's class columns (validation checks the sums)
    values = df[list(probs)].apply(pd.to_numeric, errors="coerce")
    if values.isna().any().any():
        return probs, ()  # validation names the column that is not a probability
    summing = np.isclose(values.sum(axis=1), 1.0, atol=1e-3).mean()
    # most rows off 1: separate models; a few rows off: one model's defect, reported as such
    return (probs[:1], probs[1:]) if summing < 0.5 else (probs, ())


def _looks_like_split(series: pd.Series) -> bool:
    values = set(series.dropna().astype(str).str.strip().str.lower().unique())
    return bool(values) and values <= set(SPLIT_SPELLINGS)


def _looks_like_id(series: pd.Series) -> bool:
    if ID_PATTERN.search(str(series.name)):
        return True
    is_text = not pd.api.types.is_numeric_dtype(series)
    return is_text and len(series) > MAX_LEVELS and series.nunique() == len(series)


def _usable_feature(series: pd.Series) -> bool:
    """A column validation will accept as an audit feature, as it is.

    Categorical columns (:func:`core.data.table.is_categorical`) with at most ``MAX_LEVELS`` levels
    (missing values become a level); numeric columns without missing values (validation
    refuses those, so proposing one would fail the default mapping). A column with no value
    at all carries nothing.
    """
    if series.isna().all():
        return False
    if is_categorical(series):
        return series.nunique() <= MAX_LEVELS
    return not series.isna().any()


def _looks_like_group(series: pd.Series, name: str) -> bool:
    levels = series.nunique()  # missing values not counted: an all-missing column has 0
    if levels < 2 or levels > MAX_GROUP_LEVELS:
        return False
    named = any(word in name for word in GROUP_NAMES)
    categorical = not pd.api.types.is_numeric_dtype(series)
    return named or categorical


def group_member_columns(columns: list[str], n_classes: int) -> tuple[tuple[str, ...], ...]:
    """Ensemble member columns → one tuple per member.

    Binary: every column is one member's P(y = positive). Multiclass: columns are grouped by
    the text before their last ``_`` (``m1_cat, m1_dog`` → member ``m1``), and each group must
    hold one column per class; otherwise the columns are returned one per member and
    validation explains the mismatch.
    """
    if n_classes <= 2:
        return tuple((c,) for c in columns)
    grouped: dict[str, list[str]] = {}
    for column in columns:
        grouped.setdefault(column.rsplit("_", 1)[0], []).append(column)
    return tuple(tuple(group) for group in grouped.values())
