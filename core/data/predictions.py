"""Labels, predicted probabilities and ensemble members decoded from their columns and
checked.

Probabilities must be finite and in [0, 1] and rows of a multiclass matrix must sum to 1;
overshoots of at most ``CLIP_TOLERANCE`` and row sums within ``SUM_TOLERANCE`` of 1 are
repaired and reported, never silently. Logits and scores are mapped by the sigmoid or softmax.
Binary labels may be 0/1, true/false, yes/no or two names (``POSITIVE_SPELLINGS``);
multiclass labels are matched to probability columns named after the classes.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from core.data.problems import DataError, ValidationNote, describe_rows, quote_list
from core.data.table import numeric_values, require_column
from core.data.validation import probability_matrix, sigmoid, softmax

#: Largest overshoot of [0, 1] that is clipped (and reported) instead of rejected.
CLIP_TOLERANCE = 1e-6
#: Largest deviation of a row sum from 1 that is renormalised (and reported).
SUM_TOLERANCE = 1e-3
#: Row sums closer to 1 than this are floating-point noise; they are renormalised unreported.
SUM_NOISE = 1e-6
#: Label value spellings recognised as the positive class of a binary problem.
POSITIVE_SPELLINGS = ("1", "1.0", "true", "yes", "y", "positive", "pos")


def probability_columns(
    df: pd.DataFrame, columns: Sequence[str], logits: bool, role: str, notes: list
) -> np.ndarray:
    """Columns → an (n, m) row-stochastic matrix; one column means binary P(y=1).

    Logits are mapped by the sigmoid (one column) or softmax (m columns). Probabilities outside
    [0, 1] by at most ``CLIP_TOLERANCE`` are clipped, rows whose sums differ from 1 by at most
    ``SUM_TOLERANCE`` are renormalised; both are reported in ``notes``. Anything else raises.
    """
    values = np.column_stack([numeric_values(require_column(df, c, role), role) for c in columns])
    names = ", ".join(f"'{c}'" for c in columns)
    if logits:
        if values.shape[1] == 1:
            return probability_matrix(sigmoid(values[:, 0]))
        return softmax(values)

    outside = (values < -CLIP_TOLERANCE) | (values > 1.0 + CLIP_TOLERANCE)
    if outside.any():
        col = int(np.flatnonzero(outside.any(axis=0))[0])
        rows = outside[:, col]
        raise DataError(
            f"Column '{columns[col]}' ({role}) must hold probabilities between 0 and 1, but "
            f"{describe_rows(rows)} lie outside (values from {values[:, col].min():.4g} to "
            f"{values[:, col].max():.4g}). If these are logits or scores, mark the columns as "
            "logits; otherwise correct those rows."
        )
    overshoot = (values < 0.0) | (values > 1.0)
    if overshoot.any():
        notes.append(ValidationNote(
            "warning",
            f"{describe_rows(overshoot.any(axis=1))} in {names} lay outside [0, 1] by at most "
            f"{CLIP_TOLERANCE:g} (rounding); they were clipped to [0, 1].",
        ))
        values = np.clip(values, 0.0, 1.0)

    if values.shape[1] == 1:
        return np.column_stack([1.0 - values[:, 0], values[:, 0]])

    sums = values.sum(axis=1)
    deviation = np.abs(sums - 1.0)
    far = deviation > SUM_TOLERANCE
    if far.any():
        first = int(np.flatnonzero(far)[0])
        raise DataError(
            f"The probabilities in {names} ({role}) must sum to 1 in every row, but "
            f"{describe_rows(far)} differ from 1 by more than {SUM_TOLERANCE:g} (row {first + 1} "
            f"sums to {sums[first]:.4g}). Add the missing class column, or mark the columns as "
            "logits if they are unnormalised scores."
        )
    if (deviation > SUM_NOISE).any():
        notes.append(ValidationNote(
            "warning",
            f"{describe_rows(deviation > SUM_NOISE)} of {names} summed to within "
            f"{SUM_TOLERANCE:g} of 1 but not exactly; they were renormalised to sum to 1.",
        ))
    if (sums <= 0).any():
        raise DataError(f"Some rows of {names} are all zero ({describe_rows(sums <= 0)}).")
    return values / sums[:, None]


def given_probabilities(values, n: int, n_classes: int, role: str) -> np.ndarray:
    """An ``(n, m)`` probability matrix given as an array (a derived dataset's, e.g. a
    recalibrated model's), checked like the table's columns and returned as float64.

    A binary problem also takes ``(n,)`` P(y = positive). Values outside [0, 1] by more than
    ``CLIP_TOLERANCE``, rows whose sums differ from 1 by more than ``SUM_TOLERANCE``, NaN or
    infinite values and a wrong shape raise :class:`DataError` with a sentence naming the
    rows; values within those tolerances are kept as given (nothing is repaired).
    """
    try:
        matrix = np.array(values, dtype=np.float64)
    except (TypeError, ValueError):
        raise DataError(f"The {role} must be numbers; got {type(values).__name__} values that "
                        "are not.") from None
    if matrix.ndim == 1 and n_classes == 2 and matrix.shape[0] == n:
        matrix = np.column_stack([1.0 - matrix, matrix])
    if matrix.shape != (n, n_classes):
        binary = f", or ({n},) P(y = positive)" if n_classes == 2 else ""
        raise DataError(
            f"The {role} must have shape ({n}, {n_classes}) — one row per row of the data, one "
            f"column per class{binary} — but have shape {matrix.shape}.")
    finite = np.isfinite(matrix).all(axis=1)
    if not finite.all():
        raise DataError(f"The {role} must be finite, but {describe_rows(~finite)} hold NaN or "
                        "infinite values.")
    outside = ((matrix < -CLIP_TOLERANCE) | (matrix > 1.0 + CLIP_TOLERANCE)).any(axis=1)
    if outside.any():
        raise DataError(
            f"The {role} must lie between 0 and 1, but {describe_rows(outside)} lie outside "
            f"(values from {matrix.min():.4g} to {matrix.max():.4g}).")
    sums = matrix.sum(axis=1)
    far = np.abs(sums - 1.0) > SUM_TOLERANCE
    if far.any():
        first = int(np.flatnonzero(far)[0])
        raise DataError(
            f"The {role} must sum to 1 in every row, but {describe_rows(far)} differ from 1 by "
            f"more than {SUM_TOLERANCE:g} (row {first + 1} sums to {sums[first]:.4g}).")
    return matrix


# --------------------------------------------------------------------------- labels


def label_strings(series: pd.Series) -> np.ndarray:
    """Labels as strings, with integral floats written as integers (1.0 → '1')."""
    if pd.api.types.is_bool_dtype(series):
        return np.where(series.to_numpy(dtype=bool), "True", "False").astype(object)
    if pd.api.types.is_numeric_dtype(series):
        values, where = np.unique(series.to_numpy(dtype=float), return_inverse=True)
        integral = bool(np.all(values == np.round(values)))
        names = [str(int(v)) if integral else repr(float(v)) for v in values]
        return np.array(names, dtype=object)[where.ravel()]
    return series.astype(str).str.strip().to_numpy(dtype=object)


def _class_names_from_columns(columns: Sequence[str]) -> list[list[str]]:
    """Candidate class names for probability columns, most literal first.

    The column names themselves; with a prefix such as ``p_``/``prob_``/``proba_`` removed;
    with the columns' common prefix removed.
    """
    candidates = [[str(c) for c in columns]]
    for prefix in ("proba_", "prob_", "probability_", "p_", "logit_", "score_", "p"):
        if all(str(c).startswith(prefix) and len(str(c)) > len(prefix) for c in columns):
            candidates.append([str(c)[len(prefix):] for c in columns])
            break
    common = len(common_prefix([str(c) for c in columns]))
    if common > 0:
        stripped = [str(c)[common:] for c in columns]
        if all(stripped):
            candidates.append(stripped)
    return candidates


def common_prefix(words: list[str]) -> str:
    first, last = min(words), max(words)
    i = 0
    while i < min(len(first), len(last)) and first[i] == last[i]:
        i += 1
    return first[:i]


def columns_name_classes(columns: Sequence[str], labels: np.ndarray) -> bool:
    """Whether probability columns are named after the label's classes (``p_0, p_1`` for
    labels 0/1, ``p_cat, p_dog``): one model's class columns, not several models."""
    present = {str(v).lower() for v in labels}
    return any(present <= {n.lower() for n in names}
               for names in _class_names_from_columns(columns))


def binary_labels(
    labels: np.ndarray, label: str, prob_column: str, positive: str | None
) -> tuple[np.ndarray, tuple[str, str]]:
    """Binary labels (one probability column) → y in {0, 1} and (negative, positive) names."""
    values = sorted(set(labels))
    if len(values) > 2:
        raise DataError(
            f"Label column '{label}' has {len(values)} distinct values ({quote_list(values)}) "
            f"but only one probability column ('{prob_column}') was given. A binary problem "
            "needs exactly two label values; for multiclass, map one probability column per class."
        )
    if len(values) < 2:
        raise DataError(
            f"Label column '{label}' holds only one class ('{values[0]}') in all {len(labels):,} "
            "rows. Calibration cannot be assessed without both outcomes; load data that contains "
            "both classes."
        )
    if positive is not None:
        positive = str(positive).strip()
        if positive not in values:
            raise DataError(
                f"The positive class '{positive}' does not occur in label column '{label}', "
                f"whose values are {quote_list(values)}. Choose one of those."
            )
    else:
        stems = {names[0].lower() for names in _class_names_from_columns([prob_column])}
        by_name = [v for v in values if v.lower() in stems]
        spelled = [v for v in values if v.lower() in POSITIVE_SPELLINGS]
        if set(values) == {"-1", "1"}:
            positive = "1"
        elif len(by_name) == 1:
            positive = by_name[0]
        elif len(spelled) == 1:
            positive = spelled[0]
        else:
            raise DataError(
                f"Label column '{label}' has the values {quote_list(values)}; say which one is "
                f"the positive class, the event whose probability column '{prob_column}' holds."
            )
    negative = values[0] if values[1] == positive else values[1]
    return (labels == positive).astype(np.int64), (negative, positive)


def multiclass_labels(
    labels: np.ndarray, label: str, columns: Sequence[str]
) -> tuple[np.ndarray, tuple[str, ...]]:
    """Labels → indices of ``columns``: by class name, or by position for labels 0..m-1."""
    present = set(labels)
    for names in _class_names_from_columns(columns):
        if present <= set(names) and len(set(names)) == len(names):
            index = {name: i for i, name in enumerate(names)}
            return np.array([index[v] for v in labels], dtype=np.int64), tuple(names)
        lowered = [n.lower() for n in names]
        if {v.lower() for v in present} <= set(lowered) and len(set(lowered)) == len(lowered):
            index = {name: i for i, name in enumerate(lowered)}
            y = np.array([index[v.lower()] for v in labels], dtype=np.int64)
            return y, tuple(names)
    positions = {str(i) for i in range(len(columns))}
    if present <= positions:
        return labels.astype(np.int64), tuple(_class_names_from_columns(columns)[-1])
    unmatched = sorted(present - set(_class_names_from_columns(columns)[-1]))
    raise DataError(
        f"Label column '{label}' has values {quote_list(unmatched)} that match none of the "
        f"probability columns ({quote_list(list(columns))}). Name each probability column "
        f"after its class (for example 'p_{unmatched[0]}'), or use the labels 0 to "
        f"{len(columns) - 1} in the order of the probability columns."
    )


def member_matrix(
    df: pd.DataFrame, columns: Sequence[str], logits: bool, n_classes: int, notes: list
) -> np.ndarray:
    if len(columns) not in (1, n_classes) or (len(columns) == 1 and n_classes != 2):
        raise DataError(
            f"Ensemble member ({quote_list(list(columns))}) must have one probability column "
            f"per class ({n_classes}), or a single column for a binary problem."
        )
    return probability_columns(df, columns, logits, "ensemble member probability", notes)



def model_matrix(
    df: pd.DataFrame, name: str, columns: Sequence[str], logits: bool, n_classes: int,
    notes: list
) -> np.ndarray:
    """Another model's prediction set, checked like the audited one: one column (binary) or
    one column per class in the same class order as the audited model's columns."""
    if len(columns) not in (1, n_classes) or (len(columns) == 1 and n_classes != 2):
        raise DataError(
            f"Model '{name}' ({quote_list(list(columns))}) must have one probability column "
            f"per class ({n_classes}), in the same class order as the audited model's columns, "
            "or a single column P(y = positive) for a binary problem."
        )
    return probability_columns(df, columns, logits, f"probability of model '{name}'", notes)
