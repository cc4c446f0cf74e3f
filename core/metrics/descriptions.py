"""The rows of :func:`core.metrics.metrics_table` as one table: display name, natural range,
which notion a row measures and its plain-language description (private to
:mod:`core.metrics`).

``notion`` is ``"n/a"`` for scores that do not bin, ``"classwise"`` for a metric that is
always classwise, and ``None`` for "the notion the table was asked for". Descriptions may use
``{bins}`` ("15 equal-width bins") and ``{n_bins}``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class MetricDescription:
    """One row of the metrics table."""

    name: str
    bounds: tuple[float, float]
    notion: str | None
    description: str
    #: A biased plug-in error (or a debiased one whose basic interval is centred on its
    #: plug-in): the table reports the bootstrap's bias-corrected point with its interval
    #: (:func:`core.metrics.intervals.bootstrap_estimate`); the means report themselves.
    biased: bool = True


METRIC_DESCRIPTIONS = {
    "accuracy": MetricDescription(
        "Accuracy", (0.0, 1.0), "n/a",
        "Share of rows whose most probable class is the true class.", biased=False),
    "brier": MetricDescription(
        "Brier score", (0.0, 2.0), "n/a",
        "Mean squared distance between predicted probabilities and the outcome "
        "(lower is better).", biased=False),
    "nll": MetricDescription(
        "NLL", (0.0, np.inf), "n/a",
        "Mean negative log-probability of the true class (lower is better).", biased=False),
    "ece_l1": MetricDescription(
        "ECE (L1)", (0.0, 1.0), None,
        "Row-weighted mean |observed frequency − mean confidence| over {bins}."),
    "ece_l2": MetricDescription(
        "ECE (L2)", (0.0, 1.0), None,
        "Root of the row-weighted mean squared gap over {bins} (classwise: root of the mean "
        "over classes of the squared per-class values, as Kumar et al. 2019)."),
    "mce": MetricDescription(
        "MCE", (0.0, 1.0), None,
        "Largest |observed frequency − mean confidence| of any of the {bins}."),
    "ace": MetricDescription(
        "ACE (classwise)", (0.0, 1.0), "classwise",
        "Mean |gap| over {n_bins} equal-mass bins per class, all classes and bins weighted "
        "equally (Nixon et al. 2019)."),
    "ace_top_label": MetricDescription(
        "ACE (top-label)", (0.0, 1.0), "top-label",
        "Mean |gap| over {n_bins} equal-mass bins of the top-label confidence, every bin "
        "weighted equally — the adaptive ECE other libraries report as 'ACE'."),
    "ece_debiased": MetricDescription(
        "Debiased squared ECE (L2²)", (0.0, 1.0), None,
        "Squared L2 calibration error over {n_bins} equal-mass bins with the sampling-noise "
        "bias removed (Kumar et al. 2019); can be below 0."),
}
#: The metric keys in table order.
METRIC_KEYS = tuple(METRIC_DESCRIPTIONS)


def describe(key: str, n_bins: int, strategy: str) -> str:
    """The description of metric ``key`` with its bins filled in."""
    bins = f"{n_bins} {'equal-width' if strategy == 'uniform' else 'equal-mass'} bins"
    return METRIC_DESCRIPTIONS[key].description.format(bins=bins, n_bins=n_bins)
