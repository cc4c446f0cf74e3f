"""Which columns of a raw table a reference model may learn from: label leakage, identifiers,
dates.

A raw table often holds the outcome in another form. ProPublica's COMPAS file has
``two_year_recid`` and beside it ``event`` (the same outcome for the survival analysis),
``is_recid`` (any reoffence, so 1 whenever ``two_year_recid`` is) and a dozen ``r_*`` columns
that are filled in only for people who reoffended. A model that learns from them reaches a
test AUC of 0.999 and audits nothing (issue 20). :func:`screen_features` proposes the default
model features of :func:`core.data.reference_model.train_reference_model` and says, one
sentence per column, why each other column is left out:

* **separates the label almost perfectly** — by itself, on the training rows:

  - its single-feature AUC (:func:`single_feature_auc`) is at least :data:`LEAK_AUC` = 0.98;
  - or one class never leaves values that at most :data:`CONFINED_SHARE` = 10% of the other
    rows take (:func:`confined_share`): every reoffender has ``is_recid = 1``, and only the 8%
    of the others who reoffended after two years do. Such a column is implied by the label —
    a superset or subset of the outcome, or recorded only after it — though its AUC,
    ``1 − share/2``, stays below 0.98;

* **an identifier** — every present value differs (names, case numbers, a row number);
* **dates or times as text** — one-hot encoding a date memorises the training days;
* another model's **probability column**, **numbers with missing values** (training refuses
  them), **more than 50 levels**, **empty** or **constant** columns.

Choosing such a column anyway still trains; :func:`leakage_warnings` gives the sentence that
names it and its AUC, which the reference-model result carries. How often the two leakage
rules flag a legitimate column, and miss a leak, is measured by ``python -m
benchmarks.leakage_study``.
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
#: Why a column is left out of the default model features, most serious first.
REASONS = ("leak", "identifier", "date", "probability", "missing", "levels", "empty",
           "constant")


@dataclass(frozen=True)
class LeftOut:
    """One column that is not proposed as a model feature, and why.

    ``reason`` is one of :data:`REASONS`; ``evidence`` says what was found, ``sentence``
    adds what it means for the default; ``auc`` is the column's single-feature AUC on the
    training rows where it was computed.

    Attributes
    ----------
    column : str
        The column left out.
    reason : str
        One of :data:`REASONS`.
    evidence : str
        What was found.
    auc : float or None
        Its single-feature AUC on the training rows, where computed.
    """

    column: str
    reason: str
    evidence: str
    auc: float | None = None

    @property
    def sentence(self) -> str:
        if self.reason == "leak":
            return (f"{self.evidence} Left out of the model features; add it back only if it "
                    "is known when the prediction is made.")
        return self.evidence

    @property
    def warning(self) -> str:
        """The sentence when the column is chosen anyway."""
        if self.reason == "leak":
            return (f"Model feature {self.evidence} The model was trained on it anyway: its "
                    "predictions may rest on the outcome itself, and so would the audit.")
        return f"Model feature {self.evidence} It was used anyway."


@dataclass(frozen=True)
class FeatureScreen:
    """The default model features of a raw table and the columns left out.

    Attributes
    ----------
    label
        the label column.
    kept
        the proposed model features, in table order.
    left_out
        the other columns (the label excepted), most serious reason first.
    auc
        single-feature AUC on the training rows of every column it was computed for.
    train_rows
        how many rows the AUCs were computed on.
    """

    label: str
    kept: tuple[str, ...]
    left_out: tuple[LeftOut, ...]
    auc: dict[str, float] = field(default_factory=dict)
    train_rows: int = 0

    def leaks(self) -> tuple[LeftOut, ...]:
        """The columns left out because they separate the label."""
        return tuple(item for item in self.left_out if item.reason == "leak")


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


def confined_share(series: pd.Series, y: np.ndarray) -> tuple[float, int | None]:
    """The smallest share of the other rows that fall where one class's rows all are.

    For each class with at least :data:`CONFINED_MIN_ROWS` rows, its *region* is the set of
    levels its rows take (a categorical column; missing is a level) or the interval from its
    smallest to its largest value, plus "missing" if any of its rows is (a numeric column).
    The share is the fraction of the other classes' rows inside that region. Returns the
    smallest share and its class (``(1.0, None)`` when no class qualifies). A share near 0
    means the column is implied by the label: for COMPAS's ``is_recid`` against
    ``two_year_recid``, every reoffender has 1, and only those who reoffended later do too.
    """
    y = np.asarray(y, dtype=np.int64)
    best, which = 1.0, None
    categorical = is_categorical(series)
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
    """Every present value differs and there are more than :data:`MAX_LEVELS` of them, for a
    text column (names, case numbers) or a whole-number column that counts rows (its values
    are a run of consecutive integers: an ``id``)."""
    present = series.dropna()
    if present.size <= MAX_LEVELS or present.nunique() != present.size:
        return False
    if is_categorical(series):
        return True
    values = present.to_numpy(dtype=float)
    whole = np.all(np.isfinite(values)) and np.all(values == np.round(values))
    return bool(whole and values.max() - values.min() + 1 == values.size)


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


def _kind(series: pd.Series, name: str) -> tuple[str, str] | None:
    """``(reason, sentence)`` when the column's contents rule it out, else ``None``."""
    present = series.dropna()
    if present.empty:
        return "empty", f"'{name}' is empty in every row."
    if looks_like_identifier(series):
        return "identifier", (f"'{name}' differs in every row: an identifier, from which a "
                              "model learns nothing that carries over to new rows.")
    if looks_like_dates(series):
        return "date", (f"'{name}' holds dates or times as text: as categories they would be "
                        "memorised, not generalised; derive a number from them (days between "
                        "two dates, say) to use them.")
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
    df
        the raw table, its repeated names already made unique
        (:func:`~core.data.table.deduplicate_columns`).
    label
        the label column (never a feature).
    y
        integer labels ``0..m-1`` of every row; ``None`` skips the leakage rules (a label
        that could not be read).
    train
        which rows the leakage statistics use (the training part); ``None``: all.
    columns
        the columns to screen (default: every column but the label).
    classes
        class names, for the sentences.
    seed
        seeds the cross-fitting folds.

    Returns
    -------
        FeatureScreen: a column is left out for the first of :data:`REASONS` it meets.
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
        if kind is not None:
            left_out.append(LeftOut(name, *kind, aucs.get(name)))
            continue
        kept.append(name)
    left_out.sort(key=lambda item: REASONS.index(item.reason))
    return FeatureScreen(label, tuple(kept), tuple(left_out), aucs, int(rows.sum()))


def leakage_warnings(screen: FeatureScreen, chosen: Sequence[str]) -> tuple[str, ...]:
    """Sentences for the chosen model features the screen left out as leaks, identifiers or
    dates: the model is trained anyway, and the audit should say so."""
    chosen = set(chosen)
    return tuple(item.warning for item in screen.left_out
                 if item.column in chosen and item.reason in ("leak", "identifier", "date"))
