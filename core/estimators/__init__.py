"""Choosing the calibration-error estimator: the MSE risk of Gruber & Bach (2025).

"Optimizing Estimators of Squared Calibration Errors in Classification" (Gruber & Bach,
``papers/squared-calibration-error-estimators.txt``) writes every estimator of a squared
calibration error as the diagonal mean of a function ``h(p, p')`` and scores ``h`` by the
empirical mean-squared-error risk of eq. 20, so estimators and their hyperparameters are
compared and tuned by train / validate / test (eq. 21).

* :func:`risk` — eq. 20, a tiled U-statistic over pairs (``risk.py``);
* :data:`ESTIMATORS`, :func:`make_estimator` — binning, kernel density ratio, Kronecker and
  two-step kernel ridge regression with the paper's grids (``functions.py``);
* :func:`select`, :class:`EstimatorSelection`, :func:`estimates_table` — the pipeline of
  §3.2.2 (``select.py``).
"""

from core.estimators.functions import (
    ESTIMATORS,
    EstimatorSpec,
    KernelEigen,
    dirichlet_ratio,
    fit_bins,
    fit_kde,
    fit_kkr,
    fit_ukkr,
    make_estimator,
)
from core.estimators.risk import NOTIONS, Bilinear, feature_risk, notion_inputs, pair_risk, risk
from core.estimators.select import (
    EstimatorSelection,
    SelectionSettings,
    estimates_table,
    select,
    summary_lines,
)

__all__ = [
    "ESTIMATORS",
    "NOTIONS",
    "Bilinear",
    "SelectionSettings",
    "EstimatorSelection",
    "EstimatorSpec",
    "KernelEigen",
    "dirichlet_ratio",
    "estimates_table",
    "feature_risk",
    "fit_bins",
    "fit_kde",
    "fit_kkr",
    "fit_ukkr",
    "make_estimator",
    "notion_inputs",
    "pair_risk",
    "risk",
    "select",
    "summary_lines",
]
