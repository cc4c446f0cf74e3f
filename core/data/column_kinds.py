"""What a column's name and values say it holds, for the leakage screen
(:mod:`core.data.leakage`): an identifier, dates or times written as text, another model's
score, or information recorded when or after the outcome is known.
"""

from __future__ import annotations

import re
import warnings

import numpy as np
import pandas as pd

from core.data.table import MAX_LEVELS, is_categorical

#: Share of a text column's sampled values that must read as dates or times.
DATE_SHARE = 0.9
DATE_SAMPLE = 200
_DATE_HINT = re.compile(r"\d.*[-/:.]|[-/:.].*\d|(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)",
                        re.IGNORECASE)
#: A text column whose present values differ in at least this share of rows is an identifier
#: (names: 7,158 levels in 7,214 rows).
IDENTIFIER_SHARE = 0.95
#: Names of a key or row number (a unique whole-number column so named is an identifier).
KEY_NAME = re.compile(r"(^|[_\-. ])(id|key|uuid|index|idx|row|record|case|number|no|nr)$"
                      r"|^(id|key|row)[_\-. ]", re.IGNORECASE)
#: Names of another model's output: a score, decile, risk or rating.
SCORE_NAME = re.compile(r"(^|[_\-. ])(score|scores|decile|deciles|risk|rating|grade|"
                        r"predicted|prediction|pred)($|[_\-. ])", re.IGNORECASE)
#: Whole names (after lower-casing, ``-``/``.``/space read as ``_``) of information recorded
#: when or after the outcome is known: survival analysis' event and follow-up, outcome fields.
AFTER_NAMES = frozenset({
    "event", "events", "end", "stop", "exit", "outcome", "outcomes", "result", "results",
    "target", "label", "response", "status", "censor", "censored", "death", "died",
    "deceased", "followup", "follow_up", "duration_followup", "time_to_event", "survival",
    "survival_time", "fu_days", "fu_time",
})
#: Name beginnings and endings of the same (``days_to_arrest``, ``r_jail_out``, ``paid_after``).
AFTER_PARTS = re.compile(
    r"^(days|time|months|weeks|years)_(to|until|till)_|^(post|after|follow_?up|outcome)_"
    r"|_(after|afterwards|outcome|followup|follow_up|post)(_|$)|_out$|_end$|_event$",
    re.IGNORECASE)
#: Words of a label that say nothing about what it measures (``two_year_recid``: ``recid``).
LABEL_STOP_WORDS = frozenset({
    "is", "has", "had", "was", "the", "of", "in", "within", "any", "two", "one", "three",
    "year", "years", "yr", "month", "months", "day", "days", "flag", "label", "target", "y",
    "true", "actual", "observed", "class", "binary", "ind", "indicator", "bool", "new", "num",
    "count", "total",
})
#: A label about recidivism: its ``r_*`` and ``vr_*`` columns describe the reoffence.
RECIDIVISM_WORDS = ("recid", "reoffend", "reoffense", "reoffence", "rearrest", "reconvict")


def looks_like_identifier(series: pd.Series) -> bool:
    """Whether a column names its rows rather than describing them.

    There must be more than :data:`~core.data.table.MAX_LEVELS` present values, and:

    * text (names, case numbers): at least :data:`IDENTIFIER_SHARE` of them differ — a
      near-unique column such as COMPAS's ``name`` (7,158 levels in 7,214 rows);
    * whole numbers: every present value differs, and they are a run of consecutive
      integers (a row number), or increase with the rows (``id``: 1, 3, 4, …), or the column
      is named like a key (:data:`KEY_NAME`: ``id``, ``client_id``, ``case_no``). A unique
      whole-number measurement in no particular order (an amount in cents) is not one.
    """
    present = series.dropna()
    if present.size <= MAX_LEVELS:
        return False
    distinct = present.nunique()
    if is_categorical(series):
        return not pd.api.types.is_bool_dtype(series) and \
            distinct >= IDENTIFIER_SHARE * present.size
    if distinct != present.size:
        return False
    values = present.to_numpy(dtype=float)
    if not (np.all(np.isfinite(values)) and np.all(values == np.round(values))):
        return False
    consecutive = values.max() - values.min() + 1 == values.size
    increasing = bool(np.all(np.diff(values) > 0))
    return bool(consecutive or increasing or KEY_NAME.search(str(series.name)))


def looks_like_dates(series: pd.Series) -> bool:
    """A datetime column, or text of which at least :data:`DATE_SHARE` of a sample of up to
    :data:`DATE_SAMPLE` distinct present values read as dates or times (``2013-01-05``,
    ``01/05/2013 06:12``, ``Jan 5, 2013``)."""
    if pd.api.types.is_datetime64_any_dtype(series):
        return True
    if not is_categorical(series) or pd.api.types.is_bool_dtype(series):
        return False
    values = pd.Series(series.dropna().astype(str).str.strip().unique()[:DATE_SAMPLE])
    if values.empty or not values.map(lambda v: bool(_DATE_HINT.search(v))).mean() >= DATE_SHARE:
        return False
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        parsed = pd.to_datetime(values, errors="coerce", format="mixed")
    return bool(parsed.notna().mean() >= DATE_SHARE)


def _words(name: str) -> list[str]:
    """A column name's words, lower case (``twoYearRecid``, ``two-year recid`` → two, year,
    recid)."""
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", str(name))
    return [w for w in re.split(r"[^a-z0-9]+", spaced.lower()) if w]


def after_outcome_name(column: str, label: str) -> str | None:
    """Why ``column``'s name marks information recorded when or after ``label``'s outcome is
    known, or ``None``.

    Three rules, each a sentence: a name of :data:`AFTER_NAMES` or with a beginning or
    ending of :data:`AFTER_PARTS` (``event``, ``end``, ``days_to_arrest``, ``jail_out``); a
    word shared with the label, other than :data:`LABEL_STOP_WORDS` (``is_violent_recid``
    beside ``two_year_recid``); ``r_*`` and ``vr_*`` beside a label about recidivism (the
    reoffence's case, charge and dates in ProPublica's file).
    """
    words = _words(column)
    joined = "_".join(words)
    if joined in AFTER_NAMES or AFTER_PARTS.search(joined):
        return (f"'{column}' is named like information recorded when or after the outcome "
                "is known: an event, a follow-up time or an outcome field")
    label_words = {w for w in _words(label) if w not in LABEL_STOP_WORDS and len(w) > 2}
    shared = sorted(label_words & set(words))
    if shared:
        return (f"'{column}' shares the word '{shared[0]}' with the label '{label}': it most "
                "likely describes the same outcome")
    recidivism = any(w.startswith(RECIDIVISM_WORDS) for w in _words(label))
    if recidivism and words and words[0] in ("r", "vr") and len(words) > 1:
        return (f"'{column}' is an r_/vr_ column beside a label about recidivism: in "
                "ProPublica's file these describe the reoffence itself")
    return None
