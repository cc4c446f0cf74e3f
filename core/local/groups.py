"""Calibration per group: the same binned diagnostics computed within each level of a group
attribute (sex, race, site, …), for small multiples and a per-group table.

Group-wise calibration is the coarsest form of local calibration: a model can be calibrated
overall and miscalibrated in every group (Luo et al., Table 1 report the maximum group-wise
MCE for this reason).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from core import metrics
from core.data.groups import MIN_GROUP_ROWS, iter_groups
from core.stattests.goodness_of_fit import hosmer_lemeshow


def group_calibration_table(
    probs: np.ndarray,
    y: np.ndarray,
    labels: np.ndarray,
    notion: str | None = None,
    n_bins: int = 15,
    strategy: str = "uniform",
    class_index: int | None = None,
    min_rows: int = MIN_GROUP_ROWS,
) -> pd.DataFrame:
    """One row per group level: size, mean confidence, observed frequency, ECE, MCE, Brier and
    the Hosmer–Lemeshow p-value of the notion's (confidence, outcome) pairs in that group.

    ``class_index`` selects one class for the classwise notion (as in the diagram); without it
    classwise ECE/MCE average/maximise over classes. Groups below ``min_rows`` rows get NaN.

    Parameters
    ----------
    probs : array_like
        ``(n,)`` P(y = 1) of a binary model, or ``(n, m)`` class probabilities.
    y : array_like
        ``(n,)`` integer labels ``0..m-1``.
    labels : array_like
        ``(n,)`` group level of every row.
    notion : str, optional
        The calibration notion.
    n_bins : int, default 15
        Bins.
    strategy : {"uniform", "quantile"}
        Bins' kind.
    class_index : int, optional
        The class of the classwise notion.
    min_rows : int, default 30
        Smallest group with statistics.

    Returns
    -------
    pandas.DataFrame
    """
    rows = []
    for level, mask in iter_groups(labels):
        row = {"group": level, "rows": int(mask.sum()), "share": float(mask.mean())}
        if mask.sum() >= min_rows:
            row.update(_group_metrics(probs[mask], y[mask], notion, n_bins, strategy,
                                      class_index))
        rows.append(row)
    columns = ["group", "rows", "share", "mean_confidence", "observed_frequency", "ece", "mce",
               "brier", "hosmer_lemeshow_p"]
    return pd.DataFrame(rows).reindex(columns=columns)


def _group_metrics(
    probs: np.ndarray, y: np.ndarray, notion: str | None, n_bins: int, strategy: str,
    class_index: int | None,
) -> dict[str, float]:
    conf, outcome = metrics.confidence_outcome(probs, y, notion, class_index)
    if class_index is None:
        ece = metrics.ece(probs, y, n_bins, strategy, "l1", notion)
        mce = metrics.mce(probs, y, n_bins, strategy, notion)
    else:  # one class of the classwise notion: a binary series of its own
        ece = metrics.ece(conf, outcome.astype(int), n_bins, strategy, "l1", "positive")
        mce = metrics.mce(conf, outcome.astype(int), n_bins, strategy, "positive")
    single = np.ndim(conf) == 1  # classwise without a class: one series per class
    return {
        "mean_confidence": float(np.mean(conf)) if single else np.nan,
        "observed_frequency": float(np.mean(outcome)) if single else np.nan,
        "ece": ece,
        "mce": mce,
        "brier": metrics.brier(probs, y),
        "hosmer_lemeshow_p": hosmer_lemeshow(conf, outcome).p_value if single else np.nan,
    }


def group_reliability_tables(
    probs: np.ndarray,
    y: np.ndarray,
    labels: np.ndarray,
    notion: str | None = None,
    n_bins: int = 10,
    strategy: str = "uniform",
    class_index: int | None = None,
    min_rows: int = MIN_GROUP_ROWS,
    n_resamples: int = 500,
    seed: int = 0,
) -> dict[str, pd.DataFrame]:
    """Reliability table of every group level with at least ``min_rows`` rows.

    Parameters
    ----------
    probs : array_like
        ``(n,)`` P(y = 1) of a binary model, or ``(n, m)`` class probabilities.
    y : array_like
        ``(n,)`` integer labels ``0..m-1``.
    labels : array_like
        ``(n,)`` group level of every row.
    notion, n_bins, strategy, class_index
        As :func:`core.metrics.reliability_table`.
    min_rows : int, default 30
        Smallest group with a table.
    n_resamples : int, default 500
        Redraws of the consistency band.
    seed : int, default 0
        Their seed.

    Returns
    -------
    dict of str to pandas.DataFrame
    """
    return {level: metrics.reliability_table(
                probs[mask], y[mask], n_bins=n_bins, strategy=strategy, notion=notion,
                class_index=class_index, n_resamples=n_resamples, seed=seed)
            for level, mask in iter_groups(labels, min_rows)}

