"""The rows and columns a section works on: the audited part, the audit features, the
reference and query rows of LCB, the columns slices are cut from."""

from __future__ import annotations

import numpy as np
import pandas as pd

from core.audit.settings import PARTS
from core.data.audit_data import AuditData
from core.data.table import is_numeric_feature
from core.data.validation import check_choice
from core.kernels.spec import KernelSpec


def audit_part(audit: AuditData, part: str) -> tuple[AuditData, str]:
    """The rows audited: one split (when the data has it and it is not empty) or all rows.

    Parameters
    ----------
    audit : AuditData
        The validated data.
    part : str
        One of ``PARTS``: a split, or ``"all"``.
    """
    check_choice(part, PARTS, "part", f"choose one of {', '.join(PARTS)}")
    if audit.split is None or part == "all" or not np.any(audit.split == part):
        return audit, "all rows"
    return audit.split_part(part), part


def feature_columns(audit: AuditData, features: tuple[str, ...] | None) -> tuple[str, ...]:
    """The audit features used (``None``: every mapped feature), checked against the data.

    Parameters
    ----------
    audit : AuditData
        The validated data.
    features : tuple of str or None
        The chosen audit features (``None``: every mapped one).
    """
    return feature_columns_of(tuple(audit.feature_frame.columns), features)


def feature_columns_of(mapped: tuple[str, ...], features: tuple[str, ...] | None
                       ) -> tuple[str, ...]:
    """:func:`feature_columns` against the ``mapped`` audit features (a streamed table's)."""
    mapped = tuple(mapped)
    if features is None:
        return mapped
    unknown = [f for f in features if f not in mapped]
    if unknown:
        raise ValueError(f"Audit feature(s) {', '.join(map(repr, unknown))} are not mapped; "
                         f"the mapped audit features are {', '.join(map(repr, mapped)) or 'none'}.")
    return tuple(features)


def local_inputs(audit: AuditData, features: tuple[str, ...], class_index: int | None
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, KernelSpec]:
    """``(probs, y, X, spec)`` of the local statistics: no features → ``X = None``; binary
    data ignores ``class_index`` (the positive class is tested)."""
    X = audit.feature_matrix(features) if features else None
    return audit.probs, audit.y, X, KernelSpec(class_index=tested_class(audit, class_index))


def tested_class(audit: AuditData, class_index: int | None) -> int | None:
    """The class the local statistics test one-vs-rest: ``None`` (the positive class) for
    binary data, else ``class_index`` (class 0 when not given)."""
    return None if audit.is_binary else (0 if class_index is None else class_index)


def reference_and_query(audit: AuditData) -> tuple[AuditData, AuditData, str]:
    """LCB's labelled reference rows and the rows it is evaluated at (paper §4: reference =
    calibration split, query = test split; without both, all rows leave-one-out).

    Parameters
    ----------
    audit : AuditData
        The validated data.
    """
    if audit.split is not None and {"calibration", "test"} <= set(audit.split):
        return (audit.split_part("calibration"), audit.split_part("test"),
                "reference: calibration split, evaluated on the test split")
    return audit, audit, "all rows, each left out of its own estimate"


# --------------------------------------------------------------------------- reliability



def slice_names(audit: AuditData, features: tuple[str, ...]) -> tuple[str, ...]:
    """The columns slices are made of by default: the audit features ``features`` and every
    group attribute that is not among them.

    Parameters
    ----------
    audit : AuditData
        The validated data.
    features : tuple of str
        The audit features.
    """
    return tuple(features) + tuple(g for g in audit.groups.columns if g not in features)


def slice_frame(audit: AuditData, names: tuple[str, ...]) -> pd.DataFrame:
    """The named audit features and group attributes, as given (categoricals as text)."""
    columns = []
    for name in names:
        if name in audit.feature_frame.columns:
            columns.append(audit.feature_frame[name])
        elif name in audit.groups.columns:
            columns.append(audit.groups[name])
        else:
            known = [*audit.feature_frame.columns, *audit.groups.columns]
            raise ValueError(f"{name!r} is neither an audit feature nor a group attribute; "
                             f"choose from {', '.join(map(repr, known)) or 'none'}.")
    return pd.concat(columns, axis=1) if columns else pd.DataFrame(index=range(audit.n))



def numeric_features(audit: AuditData, names: tuple[str, ...]) -> list[str]:
    """The named audit features that are numeric (a boolean is two levels, not a number):
    what LCB is drawn against.

    Parameters
    ----------
    audit : AuditData
        The validated data.
    names : tuple of str
        Audit feature names.
    """
    return [c for c in names if is_numeric_feature(audit.feature_frame[c])]

