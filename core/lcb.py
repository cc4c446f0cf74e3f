"""Local calibration bias (LCB): where the model is biased, and by how much.

I-trustworthy eq. 7 (Vashistha & Farahi, §3.3): the kernel-weighted mean residual around a
query point (p', x'),

    LCB(p', x') = Σ_i e_i k(p_i, p') l(x_i, x') / Σ_i k(p_i, p') l(x_i, x'),   e_i = y_i − p_i,

over a labelled reference set (the calibration split in the paper's COMPAS audit; without a
separate query set the same rows are used leaving each row out of its own sum). A query
point whose total kernel weight is below ``MIN_WEIGHT`` has no neighbours and gets NaN. Positive
LCB: more events than predicted — the model underestimates the risk there. Kernels and
bandwidths are those of KLCE² (:mod:`core.klce`); query features are standardised with the
reference set's means and standard deviations.

Around the point estimates: polynomial trends of LCB against one feature per group with
bootstrap bands (Fig. 6 of the paper) and a ranking of subgroups (group × feature range) by
mean |LCB|, each with its raw residual evidence.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np
import pandas as pd

from core._validation import check_probs, check_probs_labels
from core.kernels import kernel_matmul
from core.local_kernel import (
    KernelSpec,
    inputs_for,
    query_points,
    resolve,
    spec_from,
)

MIN_SUBGROUP = 30
#: Total kernel weight below which a query point has no reference neighbours (LCB is NaN).
MIN_WEIGHT = 1e-12


def lcb(
    probs: np.ndarray,
    y: np.ndarray,
    X: np.ndarray | None,
    query_probs: np.ndarray | None = None,
    query_X: np.ndarray | None = None,
    prob_bandwidth: float | None = None,
    feature_bandwidth: float | None = None,
    standardize: bool = True,
    class_index: int | None = None,
    *,
    spec: KernelSpec | None = None,
) -> np.ndarray:
    """LCB at every query row (eq. 7); no query given = the reference rows, leave-one-out.

    Kernel settings as keyword arguments or one :class:`~core.local_kernel.KernelSpec`; query
    rows are standardised with the reference rows' centre and scale.
    """
    p, labels = check_probs_labels(probs, y)
    inputs = inputs_for(p, labels, X, spec_from(spec, prob_bandwidth, feature_bandwidth,
                                                standardize, class_index))
    same = query_probs is None
    query = inputs.points if same else query_points(inputs, check_probs(query_probs), query_X)
    weights = np.column_stack([inputs.residuals, np.ones(inputs.p.shape[0])])
    sums = kernel_matmul(query, inputs.points, weights, 1.0, exclude_self=same)
    return np.divide(sums[:, 0], sums[:, 1], out=np.full(sums.shape[0], np.nan),
                     where=sums[:, 1] > MIN_WEIGHT)


def select_bandwidths(
    probs: np.ndarray,
    y: np.ndarray,
    X: np.ndarray | None,
    factors: Sequence[float] = (0.0625, 0.125, 0.25, 0.5, 1.0, 2.0),
    standardize: bool = True,
    class_index: int | None = None,
    max_rows: int = 1500,
    seed: int = 0,
) -> tuple[float, float, pd.DataFrame]:
    """Bandwidths for LCB by leave-one-out cross-validation of the residual smoother.

    LCB is a Nadaraya–Watson regression of the residuals e on (p, x); its bandwidths trade
    bias for noise, and the median heuristic — a sensible scale for a test statistic — is
    often far too wide for a map of the bias (one-hot group columns dominate the median
    distance, so every group borrows from every other). The score of a bandwidth pair is
    ``CV(σ_p, σ_x) = (1/n) Σ_i (e_i − LCB_{−i}(p_i, x_i))²`` on at most ``max_rows`` rows
    (a seeded subsample), over the median heuristic × ``factors`` for each kernel; the
    minimiser is returned with the table of scores. When the residuals carry no local
    structure the widest pair wins and LCB stays flat near zero.
    """
    p, labels = check_probs_labels(probs, y)
    full = inputs_for(p, labels, X, KernelSpec(np.inf, np.inf, standardize, class_index))
    n = full.p.shape[0]
    rows = np.arange(n)
    if n > max_rows:
        rows = np.sort(np.random.default_rng(seed).choice(n, max_rows, replace=False))
    sample = replace(full, p=full.p[rows], residuals=full.residuals[rows],
                     features=full.features[rows], points=full.points[rows])
    base = resolve(KernelSpec(standardize=standardize, class_index=class_index), sample.p,
                   sample.features)
    base_p, base_x = base.prob_bandwidth, base.feature_bandwidth
    e = sample.residuals
    weights = np.column_stack([e, np.ones(e.size)])
    scores = []
    for fp in factors:
        for fx in factors if np.isfinite(base_x) else (1.0,):
            points = sample.at(base_p * fp, base_x * fx).points
            sums = kernel_matmul(points, points, weights, 1.0, exclude_self=True)
            # a row with no neighbour at this bandwidth is predicted to have no bias
            fitted = np.divide(sums[:, 0], sums[:, 1], out=np.zeros(e.size),
                               where=sums[:, 1] > MIN_WEIGHT)
            scores.append((base_p * fp, base_x * fx, float(np.mean((e - fitted) ** 2))))
    table = pd.DataFrame(scores, columns=["prob_bandwidth", "feature_bandwidth", "cv_error"])
    best = table.loc[table["cv_error"].idxmin()]
    return float(best["prob_bandwidth"]), float(best["feature_bandwidth"]), table


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
    Returns columns ``group, x, fit, low, high, rows``.
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
        if x.size <= degree + 1 or np.ptp(x) == 0:
            continue
        grid = np.linspace(x.min(), x.max(), grid_points)
        fit = np.polynomial.Polynomial.fit(x, v, degree)(grid)
        rows = rng.integers(0, x.size, size=(n_resamples, x.size))
        curves = np.array([_refit(x[r], v[r], degree, grid) for r in rows])
        low, high = np.nanquantile(curves, [alpha / 2, 1 - alpha / 2], axis=0)
        frames.append(pd.DataFrame({"group": str(group), "x": grid, "fit": fit, "low": low,
                                    "high": high, "rows": int(mask.sum())}))
    columns = ["group", "x", "fit", "low", "high", "rows"]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=columns)


def _refit(x: np.ndarray, v: np.ndarray, degree: int, grid: np.ndarray) -> np.ndarray:
    if np.ptp(x) == 0:
        return np.full(grid.shape, np.nan)
    return np.polynomial.Polynomial.fit(x, v, degree)(grid)


def biased_subgroups(
    values: np.ndarray,
    residuals: np.ndarray,
    p: np.ndarray,
    groups: pd.DataFrame,
    feature: np.ndarray | None = None,
    feature_name: str = "feature",
    n_ranges: int = 4,
    min_rows: int = MIN_SUBGROUP,
) -> pd.DataFrame:
    """Subgroups (every combination of the group columns × a quantile range of ``feature``)
    ranked by mean |LCB|, largest first.

    Each row: the subgroup's size, mean LCB (signed: positive = risk underestimated) and mean
    |LCB|, and the raw evidence that does not depend on kernels — the observed rate minus
    the mean prediction, ``Σ(y − p)/n``, and its z-score ``Σ(y − p)/√Σp(1 − p)`` (the
    binomial standard error if the model were calibrated there). Subgroups smaller than
    ``min_rows`` are left out.
    """
    frame = groups.reset_index(drop=True).astype(str).copy()
    keys = list(frame.columns)
    if feature is not None:
        feature = np.asarray(feature, dtype=np.float64)
        edges = np.unique(np.quantile(feature, np.linspace(0, 1, n_ranges + 1)))
        index = np.clip(np.searchsorted(edges, feature, side="right") - 1, 0, edges.size - 2)
        labels = [f"{edges[k]:.4g}–{edges[k + 1]:.4g}" for k in range(edges.size - 1)]
        frame[feature_name] = pd.Categorical(np.asarray(labels, dtype=object)[index],
                                             categories=labels, ordered=True)
        keys.append(feature_name)
    frame = frame.assign(lcb=values, abs_lcb=np.abs(values), residual=residuals,
                         variance=p * (1 - p))
    if not keys:
        keys = ["all"]
        frame["all"] = "all rows"
    summary = frame.groupby(keys, observed=True).agg(
        rows=("lcb", "size"), mean_lcb=("lcb", "mean"), mean_abs_lcb=("abs_lcb", "mean"),
        residual_sum=("residual", "sum"), variance_sum=("variance", "sum"),
    ).reset_index()
    summary = summary[summary["rows"] >= min_rows]
    summary["observed_minus_predicted"] = summary["residual_sum"] / summary["rows"]
    summary["z"] = summary["residual_sum"] / np.sqrt(summary["variance_sum"].clip(lower=1e-12))
    summary = summary.drop(columns=["residual_sum", "variance_sum"])
    return summary.sort_values("mean_abs_lcb", ascending=False, ignore_index=True)
