"""Which columns of a raw table a reference model may learn from: label leakage, identifiers,
dates, other models' scores.

A raw table often holds the outcome in another form. ProPublica's COMPAS file has
``two_year_recid`` and beside it ``is_recid`` (any reoffence, so 1 whenever
``two_year_recid`` is), a dozen ``r_*`` and ``vr_*`` columns filled in only for people who
reoffended, and the survival analysis' ``event`` (a reoffence at *any* time, equal to the
label in 89% of rows) and ``end`` (days of follow-up, short for those who reoffended). A model
that learns from them audits a model that cannot exist when the prediction is made (issues
20 and 29). :func:`screen_features` proposes the default model features of
:func:`core.data.reference_model.train_reference_model` and says, one sentence per column,
why each other column is left out. The evidence of leakage is graded (:data:`GRADES`):

* **certain** (reason ``"leak"``) — the column separates the label by itself, on the
  training rows:

  - its single-feature AUC (:func:`single_feature_auc`) is at least :data:`LEAK_AUC` = 0.98;
  - or one class never leaves values that at most :data:`CONFINED_SHARE` = 10% of the other
    rows take (:func:`confined_share`): every reoffender has ``is_recid = 1``, and only the
    few others who reoffended after two years do. For a text column with more than
    :data:`~core.data.table.MAX_LEVELS` levels the rule reads only whether a value is present
    (many small levels would confine anything);

* **likely** (reason ``"suspect"``), any of (:func:`suspect_evidence`):

  - a single-feature AUC that is at least :data:`LIKELY_AUC` = 0.85 beyond doubt: the
    one-sided 95% lower bound of the AUC (Hanley & McNeil's standard error) is at least 0.85,
    so a legitimate column whose AUC is below 0.85 is flagged in at most 5% of training parts;
  - a name that marks information recorded after the outcome (:func:`after_outcome_name`):
    ``event``, ``end``, ``outcome``, ``days_to_*``, ``*_after*``, ``*_out``, …, a word shared
    with the label (``is_violent_recid`` next to ``two_year_recid``), ``r_*`` / ``vr_*`` next
    to a label about recidivism;
  - a value present almost only in one class (:func:`one_class_presence`): at least
    :data:`PRESENCE_PURITY` = 80% of the rows where it is filled in (or where it is missing)
    are of one class that makes up at most 60% of the rows, beyond doubt (Wilson's 95% lower
    bound), as a field recorded only once the outcome happened is;

* **an identifier** — a value in (almost) every row differs (:func:`looks_like_identifier`):
  names, case numbers, and whole numbers such as ``id`` that are unique and ordered like the
  rows or named like a key;
* **dates or times as text** — one-hot encoding a date memorises the training days;
* **another model's score** (reason ``"score"``) — a column named like a score, decile, risk
  or rating (COMPAS's ``decile_score``, ``score_text``);
* another model's **probability column**, **numbers with missing values** (training refuses
  them), **more than 50 levels**, **empty** or **constant** columns.

The statistics are in :mod:`core.data.leakage_statistics`, the readings of a column's name and
values in :mod:`core.data.column_kinds`. The first reason that applies speaks, in the order
empty, date, identifier, certain, likely, score, probability, constant, levels, missing (a
column of distinct timestamps is a date).
Choosing such a column anyway still trains; :func:`leakage_warnings` gives the sentence that
names it and its evidence, which the reference-model result carries. How often the rules flag
a legitimate column, and miss a leak, is measured by ``python -m benchmarks.leakage_study``;
the grades follow the
target-leakage checks of AutoML tools (univariate importance against a high and a moderate
threshold) and data-validation suites (a feature that predicts the label by itself).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from core.data.column_guess import PROB_PATTERN
from core.data.column_kinds import (
    SCORE_NAME,
    after_outcome_name,
    looks_like_dates,
    looks_like_identifier,
)
from core.data.leakage_statistics import (
    auc_lower_bound,
    confined_share,
    one_class_presence,
    single_feature_auc,
)
from core.data.table import MAX_LEVELS, is_categorical

#: Single-feature AUC (binary) or Hand & Till's M (multiclass) at which a column is taken for
#: the outcome in another form (issue 20).
LEAK_AUC = 0.98
#: A class confined to values that at most this share of the other rows take is a leak.
CONFINED_SHARE = 0.10
#: Single-feature AUC whose one-sided 95% lower bound makes a column a *likely* leak.
LIKELY_AUC = 0.85
#: Why a column is left out of the default model features, in the order they are shown.
REASONS = ("leak", "suspect", "identifier", "date", "score", "probability", "missing",
           "levels", "empty", "constant", "split")
#: How strong the evidence of leakage is, for the reasons that speak of it.
GRADES = {"leak": "certain", "suspect": "likely"}
#: The reasons whose columns, chosen anyway, carry a warning on every page of the table.
WARNED_REASONS = ("leak", "suspect", "identifier", "date", "score")


@dataclass(frozen=True)
class LeftOut:
    """One column that is not proposed as a model feature, and why.

    Attributes
    ----------
    column : str
        The column.
    reason : str
        One of :data:`REASONS`.
    evidence : str
        What was found, as a sentence.
    auc : float or None
        The column's single-feature AUC on the training rows, where it was computed.
    """

    column: str
    reason: str
    evidence: str
    auc: float | None = None

    @property
    def grade(self) -> str | None:
        """``"certain"`` or ``"likely"`` for the evidence of leakage, else ``None``."""
        return GRADES.get(self.reason)

    @property
    def sentence(self) -> str:
        """The evidence and what it means for the default."""
        if self.reason in GRADES:
            return (f"{self.evidence} Left out of the model features; add it back only if it "
                    "is known when the prediction is made.")
        if self.reason == "score":
            return (f"{self.evidence} Left out of the model features; add it back only if the "
                    "reference model is meant to build on that score.")
        return self.evidence

    @property
    def ticked(self) -> str:
        """The sentence when the column is ticked as a model feature, before training."""
        return (f"{self.evidence} Ticked anyway: the model will learn from it, and every page "
                "of the audited table will say so.")

    @property
    def warning(self) -> str:
        """The sentence when the column is chosen anyway (after training)."""
        if self.reason in GRADES:
            return (f"Model feature {self.evidence} The model was trained on it anyway: its "
                    "predictions may rest on the outcome itself, and so would the audit.")
        if self.reason == "score":
            return (f"Model feature {self.evidence} The model was trained on it anyway: it "
                    "audits a re-fit of that score as much as the outcome.")
        return f"Model feature {self.evidence} It was used anyway."


@dataclass(frozen=True)
class FeatureScreen:
    """The default model features of a raw table and the columns left out.

    Attributes
    ----------
    label : str
        The label column.
    kept : tuple of str
        The proposed model features, in table order.
    left_out : tuple of LeftOut
        The other columns (the label excepted), in the order of :data:`REASONS`.
    auc : dict
        Single-feature AUC on the training rows of every column it was computed for.
    train_rows : int
        How many rows the AUCs were computed on.
    """

    label: str
    kept: tuple[str, ...]
    left_out: tuple[LeftOut, ...]
    auc: dict[str, float] = field(default_factory=dict)
    train_rows: int = 0

    def leaks(self) -> tuple[LeftOut, ...]:
        """The columns left out because they separate the label (certain evidence)."""
        return tuple(item for item in self.left_out if item.reason == "leak")

    def suspects(self) -> tuple[LeftOut, ...]:
        """The columns left out as likely leaks."""
        return tuple(item for item in self.left_out if item.reason == "suspect")

    def flagged(self) -> tuple[LeftOut, ...]:
        """The columns a reference model should not learn from without the user meaning it:
        certain and likely leaks, identifiers, dates and other models' scores."""
        return tuple(item for item in self.left_out if item.reason in WARNED_REASONS)

    def status(self, column: str) -> LeftOut | None:
        """Why ``column`` is left out, or ``None`` when it is proposed (or unknown)."""
        return next((item for item in self.left_out if item.column == column), None)


# --------------------------------------------------------------------------- the screen


def _class_value(classes: Sequence[str] | None, k: int | None) -> str:
    return f"'{classes[k]}'" if classes is not None and k is not None else f"class {k}"


def _leak_evidence(column: str, label: str, auc: float, confined: tuple[float, int | None],
                   classes: Sequence[str] | None, n: int) -> str:
    share, k = confined
    if auc >= LEAK_AUC:
        how = f"by itself separates '{label}' almost perfectly (single-feature AUC {auc:.3f}"
    else:
        how = (f"takes, in every training row where '{label}' is {_class_value(classes, k)}, "
               f"values that only {share:.0%} of the other rows take (single-feature AUC "
               f"{auc:.3f}")
    return (f"'{column}' {how} on the {n:,} training rows): it is most likely the outcome in "
            "another form, or recorded after it.")


def suspect_evidence(series: pd.Series, y: np.ndarray, label: str, auc: float,
                     classes: Sequence[str] | None = None) -> str | None:
    """The sentence of a *likely* leak (:data:`GRADES`), or ``None``.

    Parameters
    ----------
    series : pandas.Series
        The column on the training rows.
    y : numpy.ndarray
        Integer labels of those rows.
    label : str
        The label's name.
    auc : float
        The column's single-feature AUC on those rows (:func:`single_feature_auc`).
    classes : sequence of str, optional
        Class names, for the sentence.

    Returns
    -------
    str or None
        The first of the three rules of the module docstring that applies (the name, the
        strength, the presence), as a sentence.
    """
    named = after_outcome_name(str(series.name), label)
    if named:
        return f"{named} (single-feature AUC {auc:.3f})." if np.isfinite(auc) else f"{named}."
    n = int(np.asarray(y).size)
    lower = auc_lower_bound(auc, y)
    if np.isfinite(lower) and lower >= LIKELY_AUC:
        return (f"'{series.name}' by itself separates '{label}' strongly (single-feature AUC "
                f"{auc:.3f} on the {n:,} training rows, at least {LIKELY_AUC} beyond doubt): "
                "few honest predictors are that strong alone; it may be the outcome in "
                "another form, or recorded after it.")
    share, k, present = one_class_presence(series, y)
    if k is not None:
        where = "filled in" if present else "missing"
        return (f"'{series.name}' is {where} almost only where '{label}' is "
                f"{_class_value(classes, k)} ({share:.0%} of those rows): a field set only "
                f"for one outcome is most likely recorded after it (single-feature AUC "
                f"{auc:.3f}).")
    return None


def _kind(series: pd.Series, name: str) -> tuple[str, str] | None:
    """``(reason, sentence)`` when the column's contents rule it out, else ``None``."""
    present = series.dropna()
    if present.empty:
        return "empty", f"'{name}' is empty in every row."
    if looks_like_dates(series):
        return "date", (f"'{name}' holds dates or times as text: as categories they would be "
                        "memorised, not generalised; derive a number from them (days between "
                        "two dates, say) to use them.")
    if looks_like_identifier(series):
        distinct = present.nunique()
        how = ("differs in every row" if distinct == present.size else
               f"takes {distinct:,} different values in {present.size:,} rows")
        return "identifier", (f"'{name}' {how}: an identifier, from which a model learns "
                              "nothing that carries over to new rows.")
    if SCORE_NAME.search(name) and not PROB_PATTERN.match(name):
        return "score", (f"'{name}' is named like a score, decile, risk or rating next to the "
                         "label: most likely another model's output (COMPAS's own scores "
                         "are such columns).")
    if PROB_PATTERN.match(name) and not is_categorical(series):
        return "probability", (f"'{name}' is named like a model's predicted probability; a "
                               "reference model should not learn from another model's output.")
    if present.nunique() == 1:
        return "constant", f"'{name}' takes one value in every row; it carries nothing."
    if is_categorical(series):
        levels = present.nunique()
        if levels > MAX_LEVELS:
            return "levels", (f"'{name}' has {levels:,} levels (more than {MAX_LEVELS}); group "
                              "them into fewer categories to use it.")
        return None
    missing = int(series.isna().sum())
    if missing:
        return "missing", (f"'{name}' is numeric with {missing:,} missing value"
                           f"{'s' if missing != 1 else ''}; impute them (or leave the column "
                           "out) to use it.")
    return None


def screen_features(df: pd.DataFrame, label: str, y: np.ndarray | None = None,
                    train: np.ndarray | None = None, columns: Sequence[str] | None = None,
                    classes: Sequence[str] | None = None, seed: int = 0) -> FeatureScreen:
    """Split a table's columns into proposed model features and columns left out, with why.

    Parameters
    ----------
    df : pandas.DataFrame
        The raw table, its repeated names already made unique
        (:func:`~core.data.table.deduplicate_columns`).
    label : str
        The label column (never a feature).
    y : numpy.ndarray, optional
        Integer labels ``0..m-1`` of every row; ``None`` skips the leakage rules (a label
        that could not be read).
    train : numpy.ndarray, optional
        Which rows the leakage statistics use (the training part); ``None``: all.
    columns : sequence of str, optional
        The columns to screen (default: every column but the label).
    classes : sequence of str, optional
        Class names, for the sentences.
    seed : int
        Seeds the cross-fitting folds.

    Returns
    -------
    FeatureScreen
        A column is left out for the first reason it meets, in the order empty, date,
        identifier, certain leak, likely leak, then the other kinds (module docstring).
    """
    names = [str(c) for c in (df.columns if columns is None else columns) if str(c) != label]
    rows = np.ones(len(df), dtype=bool) if train is None else np.asarray(train, dtype=bool)
    labels = None if y is None else np.asarray(y, dtype=np.int64)[rows]
    kept, left_out, aucs = [], [], {}
    for name in names:
        series = df[name]
        kind = _kind(series, name)
        if kind is not None and kind[0] in ("empty", "identifier", "date"):
            left_out.append(LeftOut(name, *kind))
            continue
        if labels is not None:
            part = series[rows].reset_index(drop=True)
            auc = single_feature_auc(part, labels, seed)
            aucs[name] = auc
            confined = confined_share(part, labels)
            if auc >= LEAK_AUC or confined[0] <= CONFINED_SHARE:
                left_out.append(LeftOut(name, "leak", _leak_evidence(
                    name, label, auc, confined, classes, int(rows.sum())), auc))
                continue
            suspect = suspect_evidence(part, labels, label, auc, classes)
            if suspect is not None:
                left_out.append(LeftOut(name, "suspect", suspect, auc))
                continue
        if kind is not None:
            left_out.append(LeftOut(name, *kind, aucs.get(name)))
            continue
        kept.append(name)
    left_out.sort(key=lambda item: REASONS.index(item.reason))
    return FeatureScreen(label, tuple(kept), tuple(left_out), aucs, int(rows.sum()))


def leakage_warnings(screen: FeatureScreen, chosen: Sequence[str]) -> tuple[str, ...]:
    """Sentences for the chosen model features the screen left out as certain or likely
    leaks, identifiers, dates or other models' scores: the model is trained anyway, and the
    audit should say so on every page."""
    chosen = set(chosen)
    return tuple(item.warning for item in screen.left_out
                 if item.column in chosen and item.reason in WARNED_REASONS)
