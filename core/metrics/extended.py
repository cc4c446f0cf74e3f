"""The rows the smooth, curve-based, clinical and cumulative families add to the metrics table,
with their intervals and conventions (the binned rows are
:func:`core.metrics.global_metrics.metrics_table`).

Every row measures the (confidence, outcome) pair of one calibration notion
(:func:`core.metrics.binned.confidence_outcome`); its description states the convention (bandwidth,
smoothing span, recalibration) so that a number can be matched with the peer tool that reports
it. Intervals: Wald for the calibration slope and intercept (:func:`core.clinical.
calibration_slope`); for every other row the bootstrap over rows (basic by default, or
percentile; :func:`core.metrics.intervals.bootstrap_interval`), each resample recomputing the whole
estimator — the smooth ECE re-chooses its bandwidth, the lowess curve is refitted.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from core.data.validation import check_count, check_seed
from core.kernels.engine import in_threads
from core.metrics.clinical import ResampledIci, calibration_slope, ici_of
from core.metrics.cumulative import ResampledExtremes, cumulative_extremes
from core.metrics.decomposition import (
    Decomposition,
    ResampledDecompositions,
    decompose_of,
    isotonic_recalibration,
)
from core.metrics.intervals import check_level, reported_estimate
from core.metrics.orders import sort_order
from core.metrics.scores import one_confidence_per_row
from core.metrics.smooth import ResampledSmoothEce, smooth_ece_of

#: Row key → (display name, natural range, description with ``{placeholders}``).
ROWS = {
    "smooth_ece": ("Smooth ECE", (0.0, 1.0),
                   "Kernel-smoothed ECE of Błasiok & Nakkiran (2023): reflected Gaussian "
                   "kernel, bandwidth σ = {sigma:.4f} at the fixed point smECE = σ; no bins."),
    "ici": ("ICI", (0.0, 1.0),
            "Integrated calibration index (Austin & Steyerberg 2019): mean |lowess curve − "
            "prediction| over the rows; lowess span 2/3, local linear, as rms::val.prob's Eavg."),
    "e50": ("E50", (0.0, 1.0), "Median of |lowess curve − prediction| (same curve as ICI)."),
    "e90": ("E90", (0.0, 1.0), "90th percentile of |lowess curve − prediction|."),
    "emax": ("Emax", (0.0, 1.0), "Largest |lowess curve − prediction| at any row."),
    "slope": ("Calibration slope", (-np.inf, np.inf),
              "b in logit P(y=1) = a + b·logit(p) (Cox 1958); 1 when calibrated, < 1 when "
              "predictions are too extreme. Wald interval."),
    "intercept": ("Calibration intercept", (-np.inf, np.inf),
                  "Calibration-in-the-large: a in logit P(y=1) = a + logit(p) (slope fixed at "
                  "1); 0 when calibrated, < 0 when predictions are too high. Wald interval."),
    "brier_rel": ("Brier reliability (REL)", (0.0, 1.0),
                  "Murphy decomposition, miscalibration part: Brier(p) − Brier(p̂), p̂ the "
                  "isotonic (PAV) recalibration (CORP, Dimitriadis et al. 2021)."),
    "brier_res": ("Brier resolution (RES)", (0.0, 1.0),
                  "Murphy decomposition, discrimination part: ȳ(1 − ȳ) − Brier(p̂) (CORP)."),
    "brier_unc": ("Brier uncertainty (UNC)", (0.0, 0.25),
                  "ȳ(1 − ȳ); Brier = REL − RES + UNC."),
    "log_cal": ("Log-loss calibration", (0.0, np.inf),
                "Log loss removed by the optimal monotone (PAV) recalibration: LL(p) − LL(p̂)."),
    "log_ref": ("Log-loss refinement", (0.0, np.inf),
                "Log loss left after the optimal monotone recalibration, LL(p̂)."),
    "cum_ks": ("Cumulative KS (G)", (0.0, 1.0),
               "max |C_k| of the cumulative differences C_k = (1/n)Σ_{{j≤k}}(y_j − p_j), rows "
               "sorted by prediction (Arrieta-Ibarra et al. 2022); no bins."),
    "cum_kuiper": ("Cumulative Kuiper (H)", (0.0, 1.0),
                   "max C_k − min C_k of the cumulative differences: the largest miscalibration "
                   "accumulated over any range of predictions, as a share of all rows."),
}
#: The row keys in table order.
ROW_KEYS = tuple(ROWS)
#: Rows that report their own value with the interval: the Wald rows and the Brier
#: uncertainty ȳ(1 − ȳ) (a smooth function of a mean); every other row is a plug-in
#: error reported as its bias-corrected point (:func:`core.metrics.intervals.reported_estimate`).
UNBIASED_ROWS = ("slope", "intercept", "brier_unc")


def _values(conf: np.ndarray, outcome: np.ndarray, notion: str,
            smooth: float | None = None) -> dict[str, float]:
    """Every bootstrapped row on one (confidence, outcome) pair (no input checks); ``smooth``:
    its smooth ECE when already computed."""
    if smooth is None:
        smooth, _ = smooth_ece_of(conf, outcome)
    recalibrated = isotonic_recalibration(conf, outcome)  # one PAV serves both scores
    brier = decompose_of(conf, outcome, "brier", notion, recalibrated)
    log = decompose_of(conf, outcome, "log", notion, recalibrated)
    return _row_values(smooth, ici_of(conf, outcome), brier, log,
                       cumulative_extremes(conf, outcome))


def _row_values(smooth: float, ici: dict[str, float], brier: Decomposition,
                log: Decomposition, extremes: tuple[float, float]) -> dict[str, float]:
    """The bootstrapped rows' values by key, from each estimator's result."""
    return {"smooth_ece": smooth, **ici,
            "brier_rel": brier.reliability, "brier_res": brier.resolution,
            "brier_unc": brier.uncertainty, "log_cal": log.reliability,
            "log_ref": log.refinement, "cum_ks": extremes[0], "cum_kuiper": extremes[1]}


class _ResampledRows:
    """:func:`_values` of bootstrap resamples of rows sorted by confidence, each resample
    given by its rows' counts (the estimators' ``Resampled…`` forms)."""

    def __init__(self, conf: np.ndarray, outcome: np.ndarray, notion: str) -> None:
        self._smooth = ResampledSmoothEce(conf, outcome)
        self._ici = ResampledIci(conf, outcome)
        self._decompositions = ResampledDecompositions(conf, outcome, notion)
        self._extremes = ResampledExtremes(conf, outcome)

    def __call__(self, counts: np.ndarray) -> dict[str, float]:
        return _row_values(self._smooth(counts), self._ici(counts),
                           *self._decompositions(counts), self._extremes(counts))


def extended_metrics_table(
    probs: ArrayLike,
    y: ArrayLike,
    notion: str | None = None,
    class_index: int | None = None,
    n_resamples: int = 200,
    level: float = 0.95,
    seed: int | None = 0,
    method: str = "basic",
    progress: Callable[[float, str], None] | None = None,
) -> pd.DataFrame:
    """Smooth ECE, ICI/E50/E90/Emax, calibration slope and intercept, the Brier and log-loss
    decompositions and the cumulative KS/Kuiper metrics, with intervals.

    Parameters
    ----------
    probs, y
        Predictions and labels (DESIGN.md conventions).
    notion, class_index
        The (confidence, outcome) pair; classwise needs ``class_index``.
    n_resamples, level, seed, method
        Bootstrap of the rows (``n_resamples=0``: no intervals except the Wald ones).
    progress
        Optional ``progress(fraction, message)`` during the bootstrap.

    Returns
    -------
    pandas.DataFrame
        Columns ``metric, value, estimate, ci_low, ci_high, notion, description`` as
        :func:`core.metrics.global_metrics.metrics_table`, one row per :data:`ROWS` entry:
        ``estimate`` is the point reported with the interval — for every row but
        :data:`UNBIASED_ROWS` the bootstrap's bias-corrected ``T + T − median(T*)`` (basic) or
        ``median(T*)`` (percentile), which the interval contains
        (:func:`core.metrics.intervals.reported_estimate`).
    """
    n_resamples = check_count("n_resamples", n_resamples, 0)
    level = check_level(level)
    seed = check_seed(seed)
    conf, outcome, notion = one_confidence_per_row(probs, y, notion, class_index,
                                                   "The extended metrics table")
    smooth, sigma = smooth_ece_of(conf, outcome)
    values = _values(conf, outcome, notion, smooth)
    low = dict.fromkeys(ROW_KEYS, np.nan)
    high = dict.fromkeys(ROW_KEYS, np.nan)
    try:
        slope = calibration_slope(conf, outcome.astype(np.int64), level)
    except ValueError:  # one outcome only, or separation: no finite slope; the rows say NaN
        slope = dict.fromkeys(("slope", "intercept", "slope_low", "intercept_low",
                               "slope_high", "intercept_high"), np.nan)
    values.update(slope=slope["slope"], intercept=slope["intercept"])
    estimate = dict(values)
    low.update(slope=slope["slope_low"], intercept=slope["intercept_low"])
    high.update(slope=slope["slope_high"], intercept=slope["intercept_high"])
    if n_resamples:
        rng = np.random.default_rng(seed)
        n = conf.shape[0]
        # A resample is the rows with the counts rng.integers draws (resample r from a
        # generator of its own, seeded by the seed and r, so none is held in advance); every
        # estimator here depends on the rows only through that multiset, so each is computed
        # from the counts over the rows sorted once by confidence (_ResampledRows) instead
        # of over the n rows the resample repeats. The resamples run on this machine's
        # threads.
        order = sort_order(conf, "stable")
        resampled_rows = _ResampledRows(conf[order], outcome[order], notion)
        seeds = rng.integers(0, 2**63, n_resamples)
        done = [0]

        def evaluate(r_seed: int) -> dict[str, float]:
            rows = np.random.default_rng(r_seed).integers(0, n, n)
            counts = np.bincount(rows, minlength=n)
            if counts.max() < 256:
                counts = counts.astype(np.uint8)
            values = resampled_rows(counts[order])
            done[0] += 1
            return values

        def tick() -> None:
            if progress is not None:
                progress(done[0] / n_resamples, "Bootstrapping the curve-based metrics…")

        resampled = in_threads(evaluate, list(seeds), tick=tick)
        for key in ROW_KEYS:
            if key in ("slope", "intercept"):
                continue
            estimate[key], low[key], high[key] = reported_estimate(
                [v[key] for v in resampled], values[key], level, method, ROWS[key][1],
                biased=key not in UNBIASED_ROWS)
    label = notion if class_index is None else f"{notion}: class {class_index}"
    return pd.DataFrame({
        "metric": [ROWS[key][0] for key in ROW_KEYS],
        "value": [values[key] for key in ROW_KEYS],
        "estimate": [estimate[key] for key in ROW_KEYS],
        "ci_low": [low[key] for key in ROW_KEYS],
        "ci_high": [high[key] for key in ROW_KEYS],
        "notion": [label] * len(ROW_KEYS),
        "description": [ROWS[key][2].format(sigma=sigma) for key in ROW_KEYS],
    })
