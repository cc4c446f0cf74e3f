"""The calibration-evaluation pipeline of Gruber & Bach §3.2.2: train, validate, test.

1. Shuffle the rows (``seed``) and hold out a test part (``test_size``).
2. Split the rest into ``folds`` folds. For each fold, fit every estimator at every value of
   its grid on the other folds and score it by the risk of eq. 20 on the fold.
3. Per estimator, choose the value with the lowest mean validation risk (its standard error
   is over the folds, as the paper's error bars).
4. The CE² estimate (eq. 21) is the mean over the test rows of ``h(p, p)``, with ``h`` the
   average of the chosen value's fold fits (the paper's ensemble of fold models).

The kernel estimators (kde, kkr, ukkr) cost O(n·n_q) kernel evaluations for n training rows
evaluated at n_q rows (plus O(n r²) for a ridge fit of kernel rank r): each fold fit uses at
most ``max_fit_rows`` training rows (a seeded subsample, the same size in every fold so the λ
grid is the same); binning uses all of them, and validation and test always use all rows.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike
from threadpoolctl import threadpool_limits

from core.data.validation import check_count, check_fraction, check_probs_labels, check_seed
from core.estimators.functions import ESTIMATORS, EstimatorSpec, check_estimator
from core.estimators.risk import Bilinear, check_notion, feature_risk, notion_inputs
from core.metrics.binned import ece, ece_debiased

DEFAULT_FIT_ROWS = 2000
#: Fewest rows a fold must hold (validation) or keep for training.
MIN_FOLD_ROWS = 10
#: The fixed binning estimator the paper compares against (TCE₂ with 15 bins, §5.2).
REFERENCE_BINS = 15

Progress = Callable[[float, str], None]


@dataclass(frozen=True)
class SelectionSettings:
    """The settings of one :func:`select` run, as one hashable value (a page's cache key).

    ``select(probs, y, **dataclasses.asdict(settings))`` runs it.

    Attributes
    ----------
    notion : {"top-label", "canonical"}
        Calibration notion.
    folds : int
        Cross-validation folds.
    test_size : float
        Fraction of rows held out for the estimate.
    seed : int or None
        Seed of the shuffle and subsamples.
    max_fit_rows : int
        Most training rows of a kernel estimator per fold.
    max_rows : int or None
        Rows of a seeded subsample for the whole pipeline.
    """

    notion: str = "top-label"
    folds: int = 5
    test_size: float = 0.2
    seed: int | None = 0
    max_fit_rows: int = DEFAULT_FIT_ROWS
    max_rows: int | None = None


@dataclass(frozen=True)
class EstimatorSelection:
    """Result of :func:`select`.

    Attributes
    ----------
    table : pandas.DataFrame
        One row per estimator: ``estimator``, ``label``, ``parameter``, ``value`` (the chosen
        hyperparameter), ``risk`` (mean validation risk over folds), ``risk_se``, ``ce2``
        (the CE² estimate on the test part, eq. 21), ``ce2_se`` (over the fold fits), ``ce``
        (``√max(ce2, 0)``), ``rows_fitted`` (training rows per fold fit) and ``selected``
        (lowest validation risk), ``risk_gap`` and ``risk_gap_se`` (risk above the selected
        estimator's, mean and standard error of the per-fold differences). For top-label
        with binning, a row ``bins-15`` gives the fixed 15-bin estimator through the same
        pipeline.
    curves : pandas.DataFrame
        Validation risk over each grid: ``estimator``, ``value``, ``risk``, ``risk_se``,
        ``ce2``.
    notion : str
    n_rows : int
        Rows used (train + validation + test).
    n_test : int
        Rows in the test part.
    folds : int
    seed : int or None
    max_fit_rows : int
        Cap on the kernel estimators' training rows per fold.
    n_total : int
        Rows given; more than ``n_rows`` when ``max_rows`` subsampled them.
    """

    table: pd.DataFrame = field(repr=False)
    curves: pd.DataFrame = field(repr=False)
    notion: str
    n_rows: int
    n_test: int
    folds: int
    seed: int | None
    max_fit_rows: int
    n_total: int

    @property
    def best(self) -> str:
        """Key of the estimator with the lowest validation risk."""
        return str(self.table.loc[self.table["selected"], "estimator"].iloc[0])

    @property
    def subsampled(self) -> bool:
        """Whether a kernel estimator was fitted on fewer rows than its folds held."""
        kernel = self.table[self.table["estimator"].isin(
            [k for k, s in ESTIMATORS.items() if s.kernel])]
        n_train = (self.n_rows - self.n_test) * (self.folds - 1) // self.folds
        return bool(len(kernel)) and bool((kernel["rows_fitted"] < n_train).any())


def _check_estimators(estimators: Sequence[str] | None, notion: str) -> list[EstimatorSpec]:
    if estimators is None:
        return [s for s in ESTIMATORS.values() if notion in s.notions]
    if isinstance(estimators, str):
        estimators = [estimators]
    keys = list(dict.fromkeys(estimators))
    if not keys:
        raise ValueError("estimators is empty; name at least one of "
                         + ", ".join(repr(k) for k in ESTIMATORS) + ".")
    return [check_estimator(key, notion) for key in keys]


def _split(n: int, folds: int, test_size: float, seed: int | None, max_rows: int | None
           ) -> tuple[np.ndarray, list[np.ndarray], np.random.Generator]:
    rng = np.random.default_rng(seed)
    order = rng.permutation(n)
    if max_rows is not None and n > max_rows:
        order, n = order[:max_rows], max_rows
    n_test = max(1, int(round(test_size * n)))
    rest = order[n_test:]
    if rest.shape[0] < folds * MIN_FOLD_ROWS:
        raise ValueError(
            f"{n} rows leave {rest.shape[0]} after the test part ({n_test} rows), too few for "
            f"{folds} folds of at least {MIN_FOLD_ROWS} rows; use fewer folds, a smaller "
            "test_size or more rows."
        )
    return order[:n_test], np.array_split(rest, folds), rng


class _FeatureMemo:
    """Features of one set of rows, computed once per feature map (kkr shares one map)."""

    def __init__(self, points: np.ndarray) -> None:
        self.points = points
        self.store: dict[int, tuple[object, np.ndarray]] = {}

    def __call__(self, h: Bilinear) -> np.ndarray:
        key = id(h.feature_map)
        if key not in self.store:
            self.store[key] = (h.feature_map, h.features(self.points))
        return self.store[key][1]


def _validation_risk(h: Bilinear, memo: _FeatureMemo, D: np.ndarray) -> float:
    return feature_risk(memo(h), h.weight, D)


def _test_estimate(h: Bilinear, memo: _FeatureMemo) -> float:
    F = memo(h)
    return float(np.einsum("ir,ir->", h.weighted(F), F) / F.shape[0])


def _fit_rows(train: np.ndarray, n_fit: int, rng: np.random.Generator) -> np.ndarray:
    return train if train.shape[0] <= n_fit else np.sort(rng.choice(train, n_fit,
                                                                     replace=False))


def select(
    probs: ArrayLike,
    y: ArrayLike,
    notion: str = "top-label",
    estimators: Sequence[str] | None = None,
    folds: int = 5,
    test_size: float = 0.2,
    seed: int | None = 0,
    progress: Progress | None = None,
    max_fit_rows: int = DEFAULT_FIT_ROWS,
    max_rows: int | None = None,
) -> EstimatorSelection:
    """Choose calibration estimators and their hyperparameters by validation risk (§3.2.2).

    For every estimator and every value of its grid, the risk of eq. 20 is computed on each
    validation fold for the function fitted on the other folds; the value with the lowest mean
    risk is kept, and the CE² estimate is eq. 21 on the held-out test part::

        CE²̂ = 1/n_te Σ_{x ∈ test} (1/F) Σ_f h_f(f(x), f(x))

    averaging the F fold fits of the chosen value. Risks compare estimators on the same
    validation rows; the test part is used only for the final estimate (§3.2.2, Remark).

    Parameters
    ----------
    probs : array_like
        ``(n,)`` P(y = 1) or ``(n, m)`` probabilities.
    y : array_like
        ``(n,)`` labels.
    notion : {"top-label", "canonical"}
        Calibration notion.
    estimators : sequence of str, optional
        Keys of :data:`ESTIMATORS`; default all that estimate ``notion``.
    folds : int
        Cross-validation folds (≥ 2).
    test_size : float
        Fraction of rows held out for the estimate, in (0, 1).
    seed : int or None
        Seed of the shuffle and of the kernel estimators' training subsamples.
    progress : callable, optional
        ``progress(fraction, message)`` after each estimator of each fold.
    max_fit_rows : int
        Most training rows a kernel estimator (kde, kkr, ukkr) is fitted on per fold.
    max_rows : int, optional
        Use a seeded subsample of at most this many rows for the whole pipeline (``None``:
        all rows).

    Returns
    -------
    EstimatorSelection
    """
    p, labels = check_probs_labels(probs, y)
    notion = check_notion(notion)
    specs = _check_estimators(estimators, notion)
    folds = check_count("folds", folds, 2)
    test_size = check_fraction("test_size", test_size)
    seed = check_seed(seed)
    max_fit_rows = check_count("max_fit_rows", max_fit_rows, MIN_FOLD_ROWS)
    if progress is not None and not callable(progress):
        raise ValueError("progress must be a function progress(fraction, message) or None.")
    if max_rows is not None:
        max_rows = check_count("max_rows", max_rows, folds * MIN_FOLD_ROWS + 1)
    points, D = notion_inputs(p, labels, notion)
    n_total = D.shape[0]
    test, parts, rng = _split(n_total, folds, test_size, seed, max_rows)
    n = test.shape[0] + sum(part.shape[0] for part in parts)
    n_fit = min(max_fit_rows, min(n - test.shape[0] - part.shape[0] for part in parts))
    grids = {s.key: s.grid(n_fit if s.kernel else 0, notion) for s in specs}
    # The products here are small (r ≤ a few hundred features): one BLAS thread avoids hand-off
    # costs that dominate them (2.9 s against 19 s for n = 1,000 on a busy two-core machine).
    with threadpool_limits(limits=1, user_api="blas"):
        risks, estimates, fitted_rows = _cross_validate(
            specs, grids, points, D, test, parts, n_fit, rng, progress)
    return _assemble(specs, grids, risks, estimates, fitted_rows, notion, (n, n_total),
                     int(test.shape[0]), folds, seed, max_fit_rows)


def _cross_validate(specs: list[EstimatorSpec], grids: dict, points: np.ndarray,
                    D: np.ndarray, test: np.ndarray, parts: list[np.ndarray], n_fit: int,
                    rng: np.random.Generator, progress: Progress | None
                    ) -> tuple[dict, dict, dict]:
    """Per fold, estimator and grid value: the validation risk and the test-part estimate."""
    folds = len(parts)
    risks: dict[str, np.ndarray] = {s.key: np.empty((folds, len(grids[s.key]))) for s in specs}
    estimates: dict[str, np.ndarray] = {k: np.empty_like(v) for k, v in risks.items()}
    fitted_rows: dict[str, int] = {}
    steps, done = folds * len(specs), 0
    test_points = points[test]
    for f, part in enumerate(parts):
        train = np.concatenate([q for g, q in enumerate(parts) if g != f])
        kernel_train = _fit_rows(train, n_fit, rng)
        val_memo, test_memo = _FeatureMemo(points[part]), _FeatureMemo(test_points)
        shared: dict = {}
        for spec in specs:
            rows = kernel_train if spec.kernel else train
            fitted_rows[spec.key] = int(rows.shape[0])
            for g, value in enumerate(grids[spec.key]):
                h = spec.fit(points[rows], D[rows], value, shared)
                risks[spec.key][f, g] = _validation_risk(h, val_memo, D[part])
                estimates[spec.key][f, g] = _test_estimate(h, test_memo)
            done += 1
            if progress is not None:
                progress(done / steps, f"Fold {f + 1} of {folds}: {spec.label}")
    return risks, estimates, fitted_rows


def _summaries(risk: np.ndarray, estimate: np.ndarray) -> tuple[np.ndarray, ...]:
    folds = risk.shape[0]
    return (risk.mean(axis=0), risk.std(axis=0, ddof=1) / np.sqrt(folds),
            estimate.mean(axis=0), estimate.std(axis=0, ddof=1) / np.sqrt(folds))


def _assemble(specs: list[EstimatorSpec], grids: dict, risks: dict, estimates: dict,
              fitted_rows: dict, notion: str, sizes: tuple[int, int], n_test: int, folds: int,
              seed: int | None, max_fit_rows: int) -> EstimatorSelection:
    rows, curves, fold_risks = [], [], []
    for spec in specs:
        mean, se, ce2, ce2_se = _summaries(risks[spec.key], estimates[spec.key])
        grid = np.asarray(grids[spec.key])
        curves.append(pd.DataFrame({"estimator": spec.key, "value": grid, "risk": mean,
                                    "risk_se": se, "ce2": ce2}))
        picks = [(spec.key, spec.label, int(np.argmin(mean)))]
        if spec.key == "bins":
            picks.append(("bins-15", "binning, fixed",
                          int(np.flatnonzero(grid == REFERENCE_BINS)[0])))
        for key, label, g in picks:
            fold_risks.append(risks[spec.key][:, g])
            rows.append({"estimator": key, "label": label, "parameter": spec.parameter,
                         "value": float(grid[g]), "risk": float(mean[g]),
                         "risk_se": float(se[g]), "ce2": float(ce2[g]),
                         "ce2_se": float(ce2_se[g]), "ce": float(np.sqrt(max(ce2[g], 0.0))),
                         "rows_fitted": fitted_rows[spec.key]})
    table = pd.DataFrame(rows)
    candidates = table["estimator"] != "bins-15"
    best = int(table.loc[candidates, "risk"].idxmin())
    table["selected"] = table.index == best
    # risk above the selected estimator's, paired by fold (the folds share their rows)
    gaps = np.array([r - fold_risks[best] for r in fold_risks])
    table["risk_gap"] = gaps.mean(axis=1)
    table["risk_gap_se"] = gaps.std(axis=1, ddof=1) / np.sqrt(folds)
    return EstimatorSelection(table, pd.concat(curves, ignore_index=True), notion, sizes[0],
                              n_test, folds, seed, max_fit_rows, sizes[1])


def summary_lines(selection: EstimatorSelection, z: float = 2.0) -> list[str]:
    """Plain-language reading of a selection, one markdown sentence per line.

    An estimator counts as worse than the selected one when its paired risk gap exceeds ``z``
    standard errors; otherwise the risk cannot tell them apart (Gruber & Bach §5.2 find this
    often) and the spread of their estimates is the honest uncertainty.

    Parameters
    ----------
    selection : EstimatorSelection
        What :func:`select` returned.
    z : float, default 2.0
        Standard errors a risk gap must exceed to count.

    Returns
    -------
    list of str
    """
    table = selection.table
    best = table[table["selected"]].iloc[0]
    lines = [
        f"Lowest validation risk: **{best['label']}** with {best['parameter']} = "
        f"{best['value']:.3g} (risk {best['risk']:.5f} ± {best['risk_se']:.5f}). Its CE² "
        f"estimate on the {selection.n_test:,} test rows is **{best['ce2']:.4f}** "
        f"(CE = {best['ce']:.3f})."
    ]
    for row in table[~table["selected"]].itertuples():
        worse = row.risk_gap > z * row.risk_gap_se
        verdict = (f"worse by more than {z:g} standard errors — its estimate "
                   f"({row.ce2:.4f}) is less trustworthy" if worse else
                   f"not distinguishable from the selected one; its estimate is {row.ce2:.4f}")
        lines.append(f"{row.label} ({row.parameter} = {row.value:.3g}): risk higher by "
                     f"{row.risk_gap:.2e} ± {row.risk_gap_se:.2e}, {verdict}.")
    return lines


def estimates_table(selection: EstimatorSelection, probs: ArrayLike, y: ArrayLike,
                    n_bins: int = REFERENCE_BINS, strategy: str = "uniform") -> pd.DataFrame:
    """The selected estimates beside the binned ECE² the Reliability page shows.

    Rows: each estimator of ``selection`` (its CE² on the test part, eq. 21), then the
    plug-in ``ECE₂²`` (``core.metrics.binned.ece(norm="l2")²``) and the debiased ``Ê²_DB``
    (``core.metrics.binned.ece_debiased``, Kumar et al. 2019) of the top-label confidence on all
    rows, with ``n_bins`` bins of ``strategy``. For the canonical notion the binned values
    measure the top-label notion (binning has no canonical form) and say so.

    Parameters
    ----------
    selection : EstimatorSelection
        Output of :func:`select` on the same rows.
    probs, y : array_like
        The rows ``selection`` was computed on.
    n_bins : int
        Bins of the binned estimates.
    strategy : {"uniform", "quantile"}
        Bin edges, as on the Reliability page.

    Returns
    -------
    pandas.DataFrame
        Columns ``estimate``, ``notion``, ``ce2``, ``ce2_se``, ``ce``, ``risk``, ``risk_se``,
        ``rows``, ``selected``.
    """
    p, labels = check_probs_labels(probs, y)
    if labels.shape[0] != selection.n_total:
        raise ValueError(f"selection was computed on {selection.n_total} rows but probs has "
                         f"{labels.shape[0]}; pass the same rows.")
    rows = [{"estimate": f"{r.label} ({r.parameter} = {r.value:.3g})",
             "notion": selection.notion, "ce2": r.ce2, "ce2_se": r.ce2_se, "ce": r.ce,
             "risk": r.risk, "risk_se": r.risk_se, "rows": f"test part, {selection.n_test:,}",
             "selected": bool(r.selected)} for r in selection.table.itertuples()]
    plug_in = ece(p, labels, n_bins=n_bins, strategy=strategy, norm="l2", notion="top-label")
    debiased = ece_debiased(p, labels, n_bins=n_bins, strategy=strategy, notion="top-label")
    for name, value in ((f"binned ECE₂² ({n_bins} {strategy} bins, Reliability page)",
                         plug_in**2),
                        (f"debiased binned ECE² ({n_bins} {strategy} bins)", debiased)):
        rows.append({"estimate": name, "notion": "top-label", "ce2": float(value),
                     "ce2_se": np.nan, "ce": float(np.sqrt(max(value, 0.0))), "risk": np.nan,
                     "risk_se": np.nan, "rows": f"all, {selection.n_total:,}",
                     "selected": False})
    return pd.DataFrame(rows)
