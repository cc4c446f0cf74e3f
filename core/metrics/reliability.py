"""The reliability table: one row per bin of the reliability diagram, with an interval for
each bin's frequency and a consistency band.

The notions and the bins are those of :mod:`core.metrics.binned` (right-closed bins, the tie
rule of equal-mass bins). The per-bin frequency gets a Wilson or Jeffreys interval
(:mod:`core.metrics.intervals`) and a consistency band (Bröcker & Smith 2007): the range of
the frequency if the model were calibrated.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from core.data.validation import check_choice, check_count, n_classes
from core.metrics.binning import bin_indices, binned_inputs, edges_of
from core.metrics.bootstrap import BLOCK_ELEMENTS
from core.metrics.intervals import INTERVALS, binomial_interval, check_level, cornish_fisher_band
from core.metrics.scores import confidence_outcome_of

#: A bin whose calibrated count has at least this variance Σ c(1 − c) (a few thousand rows)
#: gets its band from the count's Cornish–Fisher quantiles instead of redraws: accurate to a
#: small fraction of one count there, and no n × B draws at 10⁶ rows.
BAND_VARIANCE = 1000.0


def _consistency_band(
    conf: np.ndarray, ids: np.ndarray, n_bins: int, level: float, n_resamples: int,
    seed: int | None,
) -> tuple[np.ndarray, np.ndarray]:
    """Central ``level`` range of each bin's frequency if the model were calibrated.

    Consistency resampling (Bröcker & Smith 2007, "Increasing the reliability of reliability
    diagrams", with the confidences held fixed): the outcomes are redrawn as
    ``o*_i ~ Bernoulli(c_i)`` for all rows at once, ``n_resamples`` times, and the band is the
    ``(1 ∓ level)/2`` quantiles of ``ȳ*_b``. Rows are sorted by bin so a block of resamples
    yields all bin sums from one cumulative sum. A bin whose calibrated count has variance
    ``Σ c(1 − c) ≥`` :data:`BAND_VARIANCE` takes the Cornish–Fisher quantiles of that count
    (:func:`core.metrics.intervals.cornish_fisher_band`) instead — the law the redraws sample,
    to well under one count — so large data need no redraws (a streamed audit's band is the
    same formula).
    """
    low = np.full(n_bins, np.nan)
    high = np.full(n_bins, np.nan)
    if n_resamples == 0:
        return low, high
    spread = conf * (1.0 - conf)
    moments = [np.bincount(ids, weights=w, minlength=n_bins)
               for w in (None, conf, spread, spread * (1.0 - 2.0 * conf))]
    large = moments[2] >= BAND_VARIANCE
    if large.any():
        cf_low, cf_high = cornish_fisher_band(*moments, level)
        low[large], high[large] = cf_low[large], cf_high[large]
    drawn = ~large[ids]  # the rows of the bins that are redrawn
    if not drawn.any():
        return low, high
    ids, conf = ids[drawn], conf[drawn]
    order = np.argsort(ids, kind="stable")
    conf_sorted = conf[order]
    bounds = np.searchsorted(ids[order], np.arange(n_bins + 1), side="left")
    counts = np.diff(bounds)
    filled = counts > 0
    n = conf.shape[0]
    rng = np.random.default_rng(seed)
    freqs = np.empty((n_resamples, int(filled.sum())))
    block = max(1, BLOCK_ELEMENTS // n)
    for start in range(0, n_resamples, block):
        rows = min(block, n_resamples - start)
        hits = rng.random((rows, n)) < conf_sorted
        cum = np.zeros((rows, n + 1), dtype=np.int64)
        np.cumsum(hits, axis=1, out=cum[:, 1:])
        sums = cum[:, bounds[1:][filled]] - cum[:, bounds[:-1][filled]]
        freqs[start:start + rows] = sums / counts[filled]
    alpha = 1.0 - level
    low[filled], high[filled] = np.quantile(freqs, [alpha / 2.0, 1.0 - alpha / 2.0], axis=0)
    return low, high


def reliability_table(
    probs: ArrayLike,
    y: ArrayLike,
    n_bins: int = 15,
    strategy: str = "uniform",
    notion: str | None = None,
    interval: str = "wilson",
    level: float = 0.95,
    class_index: int | None = None,
    n_resamples: int = 1000,
    seed: int | None = 0,
) -> pd.DataFrame:
    """One row per bin of the reliability diagram.

    Columns:

    * ``bin_lower``, ``bin_upper`` — the bin ``(lower, upper]`` (the first includes 0);
    * ``count`` — rows in the bin, ``n_b``;
    * ``mean_confidence`` — ``p̄_b``; ``frequency`` — ``ȳ_b``; ``gap`` = ``ȳ_b − p̄_b``;
    * ``ci_low``, ``ci_high`` — Wilson or Jeffreys interval (``interval``) for the bin's true
      frequency from ``k_b = n_b ȳ_b`` successes in ``n_b`` trials (:mod:`core.metrics.intervals`);
    * ``band_low``, ``band_high`` — consistency band: the central ``level`` range of ``ȳ_b``
      if the model were calibrated, from ``n_resamples`` redraws ``o*_i ~ Bernoulli(c_i)``
      (seeded by ``seed``; ``n_resamples=0`` skips it and leaves NaN); a bin of several
      thousand rows takes the same law's Cornish–Fisher quantiles instead (:data:`BAND_VARIANCE`).

    Empty bins (possible with ``strategy="uniform"``) are kept as rows with ``count`` 0 and NaN
    in every other statistic, so a plot can skip them; quantile bins are never empty. The
    rows in the non-empty bins agree with ``sklearn.calibration.calibration_curve``
    (``frequency`` = ``prob_true``, ``mean_confidence`` = ``prob_pred``), for quantile bins
    where no tie or row on an edge meets the tie rule (:mod:`core.metrics.binned`). A diagram
    shows one confidence per row, so ``notion="classwise"`` needs ``class_index``. The notion and
    settings are stored in ``DataFrame.attrs``.

    Parameters
    ----------
    probs : array_like
        ``(n,)`` P(y = 1) of a binary model, or ``(n, m)`` class probabilities.
    y : array_like
        ``(n,)`` integer labels ``0..m-1``.
    n_bins : int, default 15
        Number of bins.
    strategy : {"uniform", "quantile"}
        Equal-width or equal-mass (quantile) bins.
    notion : {"positive", "top-label", "classwise"}, optional
        The calibration notion compared (:func:`confidence_outcome`); ``None``: binary
        problems ``"positive"``, multiclass ``"top-label"`` (:func:`default_notion`).
    interval : {"wilson", "jeffreys"}
        The binomial interval of each bin's frequency.
    level : float, default 0.95
        Coverage of the intervals and of the consistency band.
    class_index : int, optional
        The class of a ``"classwise"`` diagram.
    n_resamples : int, default 1000
        Redraws of the consistency band; 0 skips it.
    seed : int or None, default 0
        Seed of the redraws.

    Returns
    -------
    pandas.DataFrame
        One row per bin, the columns above; the notion and settings in ``attrs``.
    """
    p, labels, n_bins, notion = binned_inputs(probs, y, n_bins, strategy, notion)
    level = check_level(level)
    check_choice(interval, INTERVALS, "interval", "choose 'wilson' or 'jeffreys'")
    n_resamples = check_count("n_resamples", n_resamples, 0)
    if notion == "classwise" and class_index is None:
        raise ValueError(
            "A reliability diagram shows one class at a time for the 'classwise' notion: "
            f"pass class_index (0 to {n_classes(p) - 1}) to choose the class."
        )
    conf, outcome = confidence_outcome_of(p, labels, notion, class_index)
    edges = edges_of(conf, n_bins, strategy)
    ids = bin_indices(conf, edges)
    k_bins = edges.shape[0] - 1
    counts = np.bincount(ids, minlength=k_bins)
    s_conf = np.bincount(ids, weights=conf, minlength=k_bins)
    s_out = np.bincount(ids, weights=outcome, minlength=k_bins)
    filled = counts > 0
    mean_conf = np.divide(s_conf, counts, out=np.full(k_bins, np.nan), where=filled)
    freq = np.divide(s_out, counts, out=np.full(k_bins, np.nan), where=filled)
    ci_low, ci_high = binomial_interval(s_out, counts, interval, level)
    band_low, band_high = _consistency_band(conf, ids, k_bins, level, n_resamples, seed)
    table = pd.DataFrame({
        "bin_lower": edges[:-1],
        "bin_upper": edges[1:],
        "count": counts.astype(np.int64),
        "mean_confidence": mean_conf,
        "frequency": freq,
        "ci_low": ci_low,
        "ci_high": ci_high,
        "band_low": band_low,
        "band_high": band_high,
        "gap": freq - mean_conf,
    })
    table.attrs.update(notion=notion, class_index=class_index, strategy=strategy,
                       interval=interval, level=level, n_resamples=n_resamples)
    return table
