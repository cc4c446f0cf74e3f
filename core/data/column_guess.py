"""First guesses of which column plays which role, from column names and contents.

The guesses only pre-fill the Data page's mapping form; the user confirms or changes them and
:meth:`core.data.audit_data.AuditData.from_mapping` validates the result.

Audit features follow the papers: the local-calibration audits of I-trustworthy (COMPAS: sex,
age, race) and of Luo et al. test over the people's protected or demographic attributes,
numeric and categorical alike. A table with at most :data:`MAX_AUDIT_FEATURES` usable columns
gets them all; a wider one gets the usable columns named like a protected attribute
(:data:`PROTECTED_WORDS`), or without any the first :data:`MAX_AUDIT_FEATURES`, because the
kernel test loses power with every feature added (I-trustworthy's Type-II study: from 0.6%
misses at d = 10 to 53% at d = 50 with N = 500); :attr:`ColumnGuess.features_note` names what
was left out.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
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
#: Name words of protected or demographic attributes: the papers' audit features.
PROTECTED_WORDS = ("sex", "gender", "age", "race", "ethnicity", "ethnic", "religion",
                   "nationality", "disability", "marital")
#: Most audit features proposed by default.
MAX_AUDIT_FEATURES = 5


@dataclass(frozen=True)
class ColumnGuess:
    """Suggested roles; ``label`` is ``None`` when no column looks like a label.

    ``features`` are the proposed audit features (see the module's note), ``candidates``
    every column validation would accept as one, ``features_note`` a sentence naming the
    candidates left out of the proposal (``None`` when none was).

    Attributes
    ----------
    label : str or None
        The proposed label column.
    probs : tuple of str
        The proposed probability (or logit) columns.
    logits : bool
        Whether they look like logits.
    features, groups : tuple of str
        Proposed audit features and group attributes.
    split : str or None
        The proposed split column.
    members : tuple of str
        Columns that look like ensemble members.
    candidates : tuple of str
        Every column validation would accept as an audit feature.
    features_note : str or None
        The sentence on candidates left out.
    models : tuple of str
        Other prediction sets found.
    """

    label: str | None
    probs: tuple[str, ...]
    logits: bool
    features: tuple[str, ...]
    groups: tuple[str, ...]
    split: str | None
    members: tuple[str, ...]
    candidates: tuple[str, ...] = ()
    features_note: str | None = None
    models: tuple[str, ...] = ()


def guess_columns(df: pd.DataFrame) -> ColumnGuess:
    """Guess label, probability/logit, split, ensemble-member, group and feature columns.

    Parameters
    ----------
    df : pandas.DataFrame
        The uploaded table.

    Returns
    -------
    ColumnGuess
        The proposed roles of the columns.
    """
    columns = [str(c) for c in df.columns]
    lowered = {c: c.lower().strip() for c in columns}
    label = next((c for name in LABEL_NAMES for c in columns if lowered[c] == name), None)
    if label is None:  # the last two-valued column that is not a group attribute or a split
        binary = [c for c in columns if df[c].nunique() == 2
                  and not any(word in lowered[c] for word in GROUP_NAMES)
                  and not _looks_like_split(df[c])]
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
    usable = tuple(c for c in candidates if _usable_feature(df[c]))
    groups = tuple(c for c in candidates if _looks_like_group(df[c], lowered[c]))
    protected_groups = tuple(c for c in groups if _protected_word(c))
    features, note = propose_audit_features(usable)
    return ColumnGuess(label, probs, logits, features, protected_groups or groups, split,
                       members, usable, note, models)


def _words(name: str) -> list[str]:
    return [w for w in re.split(r"[^a-z0-9]+", name.lower()) if w]


def _protected_word(name: str) -> str | None:
    """The :data:`PROTECTED_WORDS` entry a column name is made of or contains, if any."""
    words = _words(name)
    return next((w for w in words if w in PROTECTED_WORDS), None)


def propose_audit_features(usable: Sequence[str]) -> tuple[tuple[str, ...], str | None]:
    """The default audit features among the ``usable`` columns, and a sentence on the rest.

    All of them when there are at most :data:`MAX_AUDIT_FEATURES`. Otherwise the columns named
    like a protected attribute: one per attribute word, the column named exactly so where
    there is one (COMPAS's ``age`` rather than ``age_cat``), in table order; without any, the
    first usable columns. At most :data:`MAX_AUDIT_FEATURES` either way.
    """
    if len(usable) <= MAX_AUDIT_FEATURES:
        return tuple(usable), None
    exact = {w: c for c in usable for w in [c.lower().strip()] if w in PROTECTED_WORDS}
    chosen: dict[str, str] = {}
    for column in usable:
        word = _protected_word(column)
        if word is not None and word not in chosen:
            chosen[word] = exact.get(word, column)
    protected = [c for c in usable if c in chosen.values()]
    proposal = tuple((protected or list(usable))[:MAX_AUDIT_FEATURES])
    rest = [c for c in usable if c not in proposal]
    if not rest:
        return proposal, None
    shown = ", ".join(rest[:8]) + (f" and {len(rest) - 8} more" if len(rest) > 8 else "")
    why = ("the protected attributes the papers audit over (I-trustworthy's COMPAS audit: sex, "
           "age, race)" if protected else f"the first {len(proposal)} usable columns")
    return proposal, (
        f"Proposed {len(proposal)} of {len(usable)} usable columns as audit features — {why}. "
        f"Left out: {shown}. Add those the audit is about; the kernel test loses power with "
        "every feature added.")


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

    Parameters
    ----------
    columns : list of str
        The table's column names.
    n_classes : int
        Classes of the problem.
    """
    if n_classes <= 2:
        return tuple((c,) for c in columns)
    grouped: dict[str, list[str]] = {}
    for column in columns:
        grouped.setdefault(column.rsplit("_", 1)[0], []).append(column)
    return tuple(tuple(group) for group in grouped.values())
