"""The statistics of the leakage screen (:mod:`core.data.leakage`): how well one column
separates the label by itself, and how confidently.

* :func:`single_feature_auc` — the column's AUC (binary) or Hand & Till's M (multiclass), a
  categorical column by its cross-fitted level shares;
* :func:`hanley_mcneil_se`, :func:`auc_lower_bound` — Hanley & McNeil's standard error of an
  AUC and its one-sided 95% lower bound; :func:`wilson_lower_bound` — Wilson's for a share;
* :func:`one_class_presence` — a value present (or missing) almost only in one class;
* :func:`confined_share` — a class confined to values few other rows take.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from core.data.distributions import average_ranks
from core.data.table import MAX_LEVELS, MISSING_LEVEL, is_categorical

#: Fewest training rows a class needs before its confinement counts: if the share of the
#: class's rows inside such a region were below 90%, all 30 falling inside would happen with
#: probability at most 0.9³⁰ ≈ 0.04.
CONFINED_MIN_ROWS = 30
#: Folds of the cross-fitted level shares of a categorical column (in-sample shares of many
#: small levels would separate any label).
FOLDS = 5
#: One-sided normal quantile of that lower bound.
LOWER_BOUND_Z = 1.6448536269514722
#: Share of one class among the rows where a column is filled in (or missing) that makes it
#: a likely leak, when Wilson's 95% lower bound of that share reaches it ...
PRESENCE_PURITY = 0.80
#: ... on at least this many rows, and when the class makes up at most this share of all rows
#: (a class of 80% of the rows is that pure anywhere).
PRESENCE_MIN_ROWS = 30
PRESENCE_MAX_PRIOR = 0.60


def rank_auc(score: np.ndarray, positive: np.ndarray) -> float:
    """Mann–Whitney AUC of ``score`` for ``positive`` against the rest (ties count ½)."""
    n_pos = int(positive.sum())
    n_neg = positive.size - n_pos
    if n_pos == 0 or n_neg == 0:
        return float("nan")
    ranks = average_ranks(score)
    return float((ranks[positive].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


def level_codes(series: pd.Series) -> np.ndarray:
    """A categorical column's values as text, missing values as their own level."""
    text = series.astype(object).where(series.notna(), MISSING_LEVEL)
    return np.array([str(v) for v in text], dtype=object)


def number_values(series: pd.Series) -> np.ndarray:
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
        return rank_auc(score, positive)
    values = number_values(series)[rows]
    missing = np.isnan(values)
    placements = [values] if not missing.any() else [
        np.where(missing, np.nanmin(values) - 1 if (~missing).any() else 0.0, values),
        np.where(missing, np.nanmax(values) + 1 if (~missing).any() else 0.0, values)]
    best = 0.5
    for score in placements:
        a = rank_auc(score, positive)
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
    shares = _fold_shares(level_codes(series), y, m, seed) if is_categorical(series) else None
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
    levels = level_codes(series) if categorical else None
    values = None if categorical else number_values(series)
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
