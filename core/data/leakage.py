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

The first reason that applies speaks, in the order empty, date, identifier, certain, likely,
score, probability, constant, levels, missing (a column of distinct timestamps is a date).
Choosing such a column anyway still trains; :func:`leakage_warnings` gives the sentence that
names it and its evidence, which the reference-model result carries. How often the rules flag
a legitimate column, and miss a leak, is measured by ``python -m benchmarks.leakage_study``;
the grades follow the
target-leakage checks of AutoML tools (univariate importance against a high and a moderate
threshold) and data-validation suites (a feature that predicts the label by itself).
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy.stats import rankdata

from core.data.column_guess import PROB_PATTERN
from core.data.table import MAX_LEVELS, MISSING_LEVEL, is_categorical

#: Single-feature AUC (binary) or Hand & Till's M (multiclass) at which a column is taken for
#: the outcome in another form (issue 20).
LEAK_AUC = 0.98
#: A class confined to values that at most this share of the other rows take is a leak.
CONFINED_SHARE = 0.10
#: Fewest training rows a class needs before its confinement counts: if the share of the
#: class's rows inside such a region were below 90%, all 30 falling inside would happen with
#: probability at most 0.9³⁰ ≈ 0.04.
CONFINED_MIN_ROWS = 30
#: Folds of the cross-fitted level shares of a categorical column (in-sample shares of many
#: small levels would separate any label).
FOLDS = 5
#: Share of a text column's sampled values that must read as dates or times.
DATE_SHARE = 0.9
DATE_SAMPLE = 200
_DATE_HINT = re.compile(r"\d.*[-/:.]|[-/:.].*\d|(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)",
                        re.IGNORECASE)
#: Single-feature AUC whose one-sided 95% lower bound makes a column a *likely* leak.
LIKELY_AUC = 0.85
#: One-sided normal quantile of that lower bound.
LOWER_BOUND_Z = 1.6448536269514722
#: Share of one class among the rows where a column is filled in (or missing) that makes it
#: a likely leak, when Wilson's 95% lower bound of that share reaches it ...
PRESENCE_PURITY = 0.80
#: ... on at least this many rows, and when the class makes up at most this share of all rows
#: (a class of 80% of the rows is that pure anywhere).
PRESENCE_MIN_ROWS = 30
PRESENCE_MAX_PRIOR = 0.60
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


# --------------------------------------------------------------------------- statistics


def _auc(score: np.ndarray, positive: np.ndarray) -> float:
    """Mann–Whitney AUC of ``score`` for ``positive`` against the rest (ties count ½)."""
    n_pos = int(positive.sum())
    n_neg = positive.size - n_pos
    if n_pos == 0 or n_neg == 0:
        return float("nan")
    ranks = rankdata(score)
    return float((ranks[positive].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


def _levels(series: pd.Series) -> np.ndarray:
    """A categorical column's values as text, missing values as their own level."""
    text = series.astype(object).where(series.notna(), MISSING_LEVEL)
    return np.array([str(v) for v in text], dtype=object)


def _numbers(series: pd.Series) -> np.ndarray:
    return series.to_numpy(dtype=float, na_value=np.nan)


def _fold_shares(levels: np.ndarray, y: np.ndarray, m: int, seed: int) -> np.ndarray:
    """``(n, m)`` class shares of each row's level, each computed from the other folds
    (unseen levels: the classes' overall shares)."""
    n = y.size
    folds = np.random.default_rng(seed).permutation(n) % FOLDS
    codes, index = np.unique(levels, return_inverse=True)
    onehot = np.zeros((n, m))
    onehot[np.arange(n), y] = 1.0
    shares = np.empty((n, m))
    for fold in range(FOLDS):
        held = folds == fold
        counts = np.zeros((codes.size, m))
        np.add.at(counts, index[~held], onehot[~held])
        totals = counts.sum(axis=1, keepdims=True)
        overall = onehot[~held].mean(axis=0) if (~held).any() else np.full(m, 1.0 / m)
        table = np.where(totals > 0, counts / np.maximum(totals, 1), overall)
        shares[held] = table[index[held]]
    return shares


def _pair_auc(series: pd.Series, y: np.ndarray, i: int, j: int,
              shares: np.ndarray | None) -> float:
    """AUC of the column for class ``j`` against class ``i`` on their rows, either way round:
    a numeric column by its values (missing values placed below or above all others,
    whichever separates better), a categorical one by its cross-fitted level shares."""
    rows = (y == i) | (y == j)
    positive = y[rows] == j
    if shares is not None:
        s = shares[rows]
        total = s[:, i] + s[:, j]
        score = np.divide(s[:, j], total, out=np.full(total.shape, 0.5), where=total > 0)
        return _auc(score, positive)
    values = _numbers(series)[rows]
    missing = np.isnan(values)
    placements = [values] if not missing.any() else [
        np.where(missing, np.nanmin(values) - 1 if (~missing).any() else 0.0, values),
        np.where(missing, np.nanmax(values) + 1 if (~missing).any() else 0.0, values)]
    best = 0.5
    for score in placements:
        a = _auc(score, positive)
        best = max(best, a, 1.0 - a)
    return best


def single_feature_auc(series: pd.Series, y: np.ndarray, seed: int = 0) -> float:
    """How well one column separates the label by itself, on the rows given.

    Binary labels: the AUC of the column as a score, in whichever direction is higher —
    a numeric column by its values (missing values below or above all others, whichever
    separates better); a categorical one (:func:`~core.data.table.is_categorical`, missing
    values a level of their own) by the share of positives of each row's level, computed from
    the other four of five folds so that many small levels cannot fake a separation.
    More classes: Hand & Till's (2001) M, the mean over all pairs of classes of that pairwise
    AUC (for a categorical column, the score of a row for the pair (i, j) is its level's
    share of class j among classes i and j). 1 means some ordering of the column's values
    puts every row of each class above every row of another; 0.5, no information.

    Parameters
    ----------
    series
        the column.
    y
        integer labels ``0..m-1``, one per row.
    seed
        seeds the folds.
    """
    y = np.asarray(y, dtype=np.int64)
    m = int(y.max()) + 1 if y.size else 0
    present = [k for k in range(m) if (y == k).any()]
    if len(present) < 2:
        return float("nan")
    shares = _fold_shares(_levels(series), y, m, seed) if is_categorical(series) else None
    pairs = [_pair_auc(series, y, i, j, shares)
             for a, i in enumerate(present) for j in present[a + 1:]]
    return float(np.mean(pairs))


def hanley_mcneil_se(auc: float, n_pos: int, n_neg: int) -> float:
    """Standard error of an AUC from ``n_pos`` and ``n_neg`` rows (Hanley & McNeil 1982):

    .. math::

        \\mathrm{SE}^2 = \\frac{A(1-A) + (n_1 - 1)(Q_1 - A^2) + (n_0 - 1)(Q_2 - A^2)}
        {n_1 n_0}, \\quad Q_1 = \\frac{A}{2-A}, \\quad Q_2 = \\frac{2A^2}{1+A}.

    Parameters
    ----------
    auc : float
        The AUC ``A``.
    n_pos, n_neg : int
        Rows of the two classes.

    Returns
    -------
    float
        The standard error (``nan`` when a class has no row).
    """
    if n_pos < 1 or n_neg < 1 or not np.isfinite(auc):
        return float("nan")
    q1, q2 = auc / (2.0 - auc), 2.0 * auc**2 / (1.0 + auc)
    variance = (auc * (1 - auc) + (n_pos - 1) * (q1 - auc**2)
                + (n_neg - 1) * (q2 - auc**2)) / (n_pos * n_neg)
    return float(np.sqrt(max(variance, 0.0)))


def auc_lower_bound(auc: float, y: np.ndarray) -> float:
    """One-sided 95% lower confidence bound of a single-feature AUC on labels ``y``:
    ``A − 1.645·SE`` with :func:`hanley_mcneil_se`; for several classes the standard error of
    Hand & Till's M is bounded by the mean of the pairs' (the standard error of a mean is at
    most the mean of the standard errors), which makes the bound conservative."""
    y = np.asarray(y, dtype=np.int64)
    counts = np.bincount(y) if y.size else np.zeros(0, dtype=np.int64)
    present = [int(c) for c in counts if c > 0]
    if len(present) < 2 or not np.isfinite(auc):
        return float("nan")
    errors = [hanley_mcneil_se(auc, b, a) for i, a in enumerate(present) for b in present[i + 1:]]
    return float(auc - LOWER_BOUND_Z * np.mean(errors))


def wilson_lower_bound(successes: int, trials: int, z: float = LOWER_BOUND_Z) -> float:
    """One-sided lower confidence bound of a proportion (Wilson's score interval, 95% for
    the default ``z``)."""
    if trials < 1:
        return 0.0
    share = successes / trials
    centre = share + z**2 / (2 * trials)
    spread = z * np.sqrt(share * (1 - share) / trials + z**2 / (4 * trials**2))
    return float((centre - spread) / (1 + z**2 / trials))


def one_class_presence(series: pd.Series, y: np.ndarray) -> tuple[float, int | None, bool]:
    """Whether a column is filled in (or missing) almost only in rows of one class.

    Among the rows where the column has a value, and separately among those where it is
    missing (each with at least :data:`PRESENCE_MIN_ROWS` rows), the largest share of one
    class whose overall share is at most :data:`PRESENCE_MAX_PRIOR`; the rows are *pure*
    when Wilson's one-sided 95% lower bound of that share is at least
    :data:`PRESENCE_PURITY` — the signature of a field recorded only once the outcome
    happened (COMPAS's ``vr_charge_degree``: filled in for violent reoffenders).

    Returns
    -------
    tuple
        ``(share, class, present)``: the share, its class (``None`` when no subset
        qualifies) and whether it is the filled-in rows (``True``) or the missing ones.
    """
    y = np.asarray(y, dtype=np.int64)
    missing = series.isna().to_numpy()
    best = (0.0, None, True)
    if not missing.any() or missing.all():
        return best
    priors = np.bincount(y) / y.size
    for present, rows in ((True, ~missing), (False, missing)):
        count = int(rows.sum())
        if count < PRESENCE_MIN_ROWS:
            continue
        counts = np.bincount(y[rows], minlength=priors.size)
        for k in np.flatnonzero(priors <= PRESENCE_MAX_PRIOR):
            if wilson_lower_bound(int(counts[k]), count) >= PRESENCE_PURITY \
                    and counts[k] / count > best[0]:
                best = (float(counts[k] / count), int(k), present)
    return best


def confined_share(series: pd.Series, y: np.ndarray) -> tuple[float, int | None]:
    """The smallest share of the other rows that fall where one class's rows all are.

    For each class with at least :data:`CONFINED_MIN_ROWS` rows, its *region* is the set of
    levels its rows take (a categorical column; missing is a level) or the interval from its
    smallest to its largest value, plus "missing" if any of its rows is (a numeric column).
    A text column with more than :data:`~core.data.table.MAX_LEVELS` levels counts only
    whether a value is present. The share is the fraction of the other classes' rows inside
    that region. Returns the
    smallest share and its class (``(1.0, None)`` when no class qualifies). A share near 0
    means the column is implied by the label: for COMPAS's ``is_recid`` against
    ``two_year_recid``, every reoffender has 1, and only those who reoffended later do too.
    """
    y = np.asarray(y, dtype=np.int64)
    best, which = 1.0, None
    categorical = is_categorical(series)
    if categorical and series.nunique() > MAX_LEVELS:
        # many small levels would confine anything (a name confines its one row): only
        # whether a value is present speaks
        series = pd.Series(np.where(series.isna().to_numpy(), MISSING_LEVEL, "present"))
    levels = _levels(series) if categorical else None
    values = None if categorical else _numbers(series)
    for k in np.unique(y):
        mine = y == k
        if mine.sum() < CONFINED_MIN_ROWS or mine.all():
            continue
        if categorical:
            inside = np.isin(levels, np.unique(levels[mine]))
        else:
            missing = np.isnan(values)
            present = values[mine & ~missing]
            inside = (missing & bool(missing[mine].any()))
            if present.size:
                inside = inside | (~missing & (values >= present.min()) & (values <= present.max()))
        share = float(inside[~mine].mean())
        if share < best:
            best, which = share, int(k)
    return best, which


# --------------------------------------------------------------------------- column kinds


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
