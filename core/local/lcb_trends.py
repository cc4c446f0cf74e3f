"""Around the LCB point estimates (:mod:`core.local.lcb_estimate`): polynomial trends of the
LCB against one feature per group with bootstrap bands (I-trustworthy Fig. 6). Which slices
of the data are miscalibrated, with a controlled error rate, is
:mod:`core.local.slice_discovery`.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

#: Fewest rows a group needs for a trend line (and its bootstrap band) of its own.
MIN_TREND_ROWS = 10


def lcb_trends(
    feature: np.ndarray,
    values: np.ndarray,
    groups: np.ndarray | None = None,
    degree: int = 3,
    n_resamples: int = 200,
    level: float = 0.90,
    grid_points: int = 80,
    seed: int = 0,
) -> pd.DataFrame:
    """Polynomial fit of LCB against a numeric feature, per group, with bootstrap bands.

    Least-squares polynomial of ``degree`` (1–5) on each group's (feature, LCB) pairs,
    evaluated on a grid over that group's feature range; the band is the pointwise central
    ``level`` range of the fits to ``n_resamples`` row resamples of the group. The rows'
    LCB values are themselves kernel smooths and not independent, so the band shows the
    spread of the fitted curve over the plotted points, not a full inferential interval.
    A group gets no trend unless it has :data:`MIN_TREND_ROWS` rows and more distinct feature
    values than ``degree`` + 1 (a polynomial through fewer points is not determined, and
    numpy would warn that the fit is rank-deficient); :func:`trend_note` says which groups
    and why. A resample with too few distinct values is left out of the band.
    Returns columns ``group, x, fit, low, high, rows``.

    Parameters
    ----------
    feature : array_like
        ``(n,)`` the feature's value per row.
    values : array_like
        ``(n,)`` LCB per row.
    groups : array_like, optional
        ``(n,)`` group labels.
    degree : int, default 3
        Polynomial degree (1–5).
    n_resamples : int, default 200
        Bootstrap resamples of the band.
    level : float, default 0.9
        The band's coverage.
    grid_points : int, default 80
        Points of each curve.
    seed : int, default 0
        Seed of the resamples.

    Returns
    -------
    pandas.DataFrame
        ``group, x, fit, low, high, rows`` per grid point.
    """
    if not 1 <= degree <= 5:
        raise ValueError("The polynomial degree must be between 1 and 5.")
    feature = np.asarray(feature, dtype=np.float64)
    values = np.asarray(values, dtype=np.float64)
    labels = np.full(feature.shape, "all", dtype=object) if groups is None \
        else np.asarray(groups, dtype=object)
    rng = np.random.default_rng(seed)
    alpha = 1.0 - level
    frames = []
    for group in pd.unique(labels):
        mask = labels == group
        x, v = feature[mask], values[mask]
        if not _trendable(x, degree):
            continue
        grid = np.linspace(x.min(), x.max(), grid_points)
        fit = np.polynomial.Polynomial.fit(x, v, degree)(grid)
        rows = rng.integers(0, x.size, size=(n_resamples, x.size))
        with threadpool_limits(limits=1, user_api="blas"):  # the same sums on any machine
            curves = _refits(x, v, degree, grid, rows)
        low, high = np.nanquantile(curves, [alpha / 2, 1 - alpha / 2], axis=0)
        frames.append(pd.DataFrame({"group": str(group), "x": grid, "fit": fit, "low": low,
                                    "high": high, "rows": int(mask.sum())}))
    columns = ["group", "x", "fit", "low", "high", "rows"]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=columns)


def _trendable(x: np.ndarray, degree: int) -> bool:
    """Enough rows and distinct values for a degree-``degree`` trend with a band."""
    return x.size >= MIN_TREND_ROWS and np.unique(x).size > degree + 1


#: Row counts (resamples × group rows) that :func:`_refits` holds at a time: 32 MiB a copy.
_REFIT_COUNTS = 2**22
#: Largest condition number of a resample's normal equations that :func:`_refits` solves;
#: a resample beyond (a few distinct values far apart) is fitted alone, as before.
_GRAM_CONDITION = 1e3


def _refits(x: np.ndarray, v: np.ndarray, degree: int, grid: np.ndarray,
            rows: np.ndarray) -> np.ndarray:
    """The least-squares polynomial of every resample (a row of ``rows``: row numbers of the
    group, drawn with replacement) evaluated on ``grid``: ``(len(rows), grid.size)``, NaN
    for a resample with at most ``degree`` distinct values of ``x`` (the polynomial is not
    determined).

    The fit of a resample in which row i appears ``c_i`` times is the weighted
    least-squares fit with weights ``c_i`` over the group's rows, so every resample shares
    one design: the Vandermonde matrix of ``x`` mapped to [−1, 1] by the group's range (as
    :meth:`numpy.polynomial.Polynomial.fit` maps a sample by its own; the fitted polynomial
    does not depend on the mapping), with orthonormal columns ``Q`` (``V = QR``). A
    resample's normal equations ``(Qᵀ C Q) β = Qᵀ C v`` are then about as well conditioned
    as ``Qᵀ Q = I``, and its curve is ``V_grid R⁻¹ β``. The same fits as one
    :meth:`~numpy.polynomial.Polynomial.fit` per resample to rounding (about 1e-14 of the
    curves' scale), without a sort and a least-squares solve per resample; a resample whose
    normal equations are worse conditioned than :data:`_GRAM_CONDITION` is fitted alone.
    """
    off, scale = np.polynomial.polyutils.mapparms((x.min(), x.max()), (-1.0, 1.0))
    Q, R = np.linalg.qr(np.polynomial.polynomial.polyvander(off + scale * x, degree))
    on_grid = np.linalg.solve(R.T, np.polynomial.polynomial.polyvander(
        off + scale * grid, degree).T).T  # V_grid R⁻¹
    terms = degree + 1
    products = (Q[:, :, None] * Q[:, None, :]).reshape(x.size, terms * terms)
    weighted = Q * v[:, None]
    values, inverse = np.unique(x, return_inverse=True)
    curves = np.full((rows.shape[0], grid.size), np.nan)
    at_once = max(1, _REFIT_COUNTS // x.size)
    for start in range(0, rows.shape[0], at_once):
        chunk = rows[start:start + at_once]
        offsets = np.arange(chunk.shape[0])[:, None]
        counts = np.bincount((chunk + offsets * x.size).ravel(),
                             minlength=chunk.shape[0] * x.size).reshape(chunk.shape[0], -1)
        distinct = np.bincount((inverse[chunk] + offsets * values.size).ravel(),
                               minlength=chunk.shape[0] * values.size)
        determined = np.count_nonzero(distinct.reshape(chunk.shape[0], -1), axis=1) > degree
        counts = counts[determined].astype(np.float64)
        gram = (counts @ products).reshape(-1, terms, terms)
        solved = np.linalg.cond(gram) <= _GRAM_CONDITION
        beta = np.linalg.solve(gram[solved], (counts[solved] @ weighted)[:, :, None])
        at = start + np.flatnonzero(determined)
        curves[at[solved]] = beta[:, :, 0] @ on_grid.T
        for k in at[~solved]:
            curves[k] = np.polynomial.Polynomial.fit(x[rows[k]], v[rows[k]], degree)(grid)
    return curves


def trend_note(feature: np.ndarray, groups: np.ndarray | None = None, degree: int = 3
               ) -> str | None:
    """A sentence naming the groups :func:`lcb_trends` draws no trend for, or ``None``.

    Groups with fewer than :data:`MIN_TREND_ROWS` rows, or with at most ``degree`` + 1
    distinct values of the feature, get their points but no fitted line: a polynomial of
    that degree through so few points says nothing (their rows are listed with the group).

    Parameters
    ----------
    feature : array_like
        ``(n,)`` the feature's value per row.
    groups : array_like, optional
        ``(n,)`` group labels.
    degree : int, default 3
        The trends' degree.

    Returns
    -------
    str or None
    """
    feature = np.asarray(feature, dtype=np.float64)
    labels = np.full(feature.shape, "all", dtype=object) if groups is None \
        else np.asarray(groups, dtype=object)
    skipped = [(str(group), int((labels == group).sum())) for group in pd.unique(labels)
               if not _trendable(feature[labels == group], degree)]
    if not skipped:
        return None
    listed = ", ".join(f"{name} ({rows} row{'s' if rows != 1 else ''})"
                       for name, rows in skipped[:8])
    more = f" and {len(skipped) - 8} more" if len(skipped) > 8 else ""
    return (f"No trend line for {listed}{more}: a degree-{degree} polynomial needs at least "
            f"{MIN_TREND_ROWS} rows and more than {degree + 1} distinct values of the feature; "
            "their points are drawn.")

