"""Global calibration measures: the binned ECE family, smooth and clinical measures,
cumulative differences, decompositions of proper scores, the SKCE estimators, and their
intervals and bootstrap.

This is the public face (``from core import metrics``); one concept per module:

* :mod:`core.metrics.binned` — accuracy, Brier, NLL, ECE/MCE/ACE, debiased ECE (the
  calibration notions and the binning rule are documented there);
  :mod:`core.metrics.reliability` — the reliability table with its intervals and band;
  :mod:`core.metrics.global_metrics` — the metric table with bootstrap intervals;
* :mod:`core.metrics.scores` — notions and per-row scores; :mod:`core.metrics.binning` —
  bins and the binned formulas; :mod:`core.metrics.bootstrap` — the vectorised bootstrap;
  :mod:`core.metrics.descriptions` — what each metric row means;
* :mod:`core.metrics.intervals` — Wilson, Jeffreys and bootstrap intervals;
* :mod:`core.metrics.smooth` — smooth ECE and the smooth reliability diagram;
* :mod:`core.metrics.clinical` — ICI/E50/E90/Emax and the calibration slope;
* :mod:`core.metrics.cumulative` — cumulative differences (Kolmogorov–Smirnov, Kuiper);
* :mod:`core.metrics.decomposition` — Murphy's decomposition of Brier and log-loss;
* :mod:`core.metrics.extended` — the extended metric table of the Reliability page;
* :mod:`core.metrics.skce_estimate` — the SKCE estimators (unbiased, biased, block);
* :mod:`core.metrics.streamed` — the same tables and numbers from sums accumulated
  partition by partition (a streamed audit), with a Poisson bootstrap;
  :mod:`core.metrics.order_statistics` — exact quantiles of a streamed vector;
* :mod:`core.metrics.orders` — the order that sorts an array, kept for the same values (the
  sorts an audit repeats).

The hypothesis tests built on these measures are in :mod:`core.stattests`.
"""

from core.data.validation import is_binary
from core.metrics.binned import (
    accuracy,
    ace,
    ace_classwise,
    ace_top_label,
    brier,
    confidence_outcome,
    ece,
    ece_debiased,
    ece_debiased_l2,
    mce,
    nll,
)
from core.metrics.binning import NORMS, STRATEGIES, bin_edges, bin_indices
from core.metrics.clinical import calibration_slope, ici
from core.metrics.cumulative import cumulative_differences, cumulative_metric
from core.metrics.decomposition import brier_decomposition, log_loss_decomposition
from core.metrics.extended import extended_metrics_table
from core.metrics.global_metrics import METRIC_BOUNDS, METRIC_NAMES, bootstrap_ci, metrics_table
from core.metrics.intervals import (
    ESTIMATE_CAPTION,
    SIGNED_METRICS,
    binomial_interval,
    bootstrap_interval,
    shown_metrics,
)
from core.metrics.reliability import reliability_table
from core.metrics.scores import NOTIONS, default_notion
from core.metrics.skce_estimate import skce
from core.metrics.smooth import smooth_ece, smooth_reliability

__all__ = [
    "ESTIMATE_CAPTION",
    "METRIC_BOUNDS",
    "METRIC_NAMES",
    "NORMS",
    "NOTIONS",
    "SIGNED_METRICS",
    "STRATEGIES",
    "accuracy",
    "ace",
    "ace_classwise",
    "ace_top_label",
    "bin_edges",
    "bin_indices",
    "binomial_interval",
    "bootstrap_ci",
    "bootstrap_interval",
    "brier",
    "brier_decomposition",
    "calibration_slope",
    "confidence_outcome",
    "cumulative_differences",
    "cumulative_metric",
    "default_notion",
    "ece",
    "ece_debiased",
    "ece_debiased_l2",
    "extended_metrics_table",
    "ici",
    "is_binary",
    "log_loss_decomposition",
    "mce",
    "metrics_table",
    "nll",
    "reliability_table",
    "shown_metrics",
    "skce",
    "smooth_ece",
    "smooth_reliability",
]
