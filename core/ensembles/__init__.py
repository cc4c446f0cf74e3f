"""Ensembles and credal sets: is some convex combination of the members calibrated?

The calibration test for sets of probabilistic predictors with instance-dependent convex
weights of Jürgens, Mortier, Hüllermeier, Bengs & Waegeman
(``papers/credal-set-calibration-test.txt``), one concept per module:

* :mod:`~core.ensembles.calibration_errors` — CE₂, CE_KL and SKCE of a combined prediction,
  with gradients;
* :mod:`~core.ensembles.weights` — the weight network λ(x) and its training (eq. 16);
* :mod:`~core.ensembles.test` — Algorithm 1 and the paper's two baselines;
* :mod:`~core.ensembles.simulate` — the paper's simulated settings;
* :mod:`~core.ensembles.summary` — the three tests side by side, for the app.
"""

from core.ensembles.calibration_errors import ESTIMATORS, ce2, cekl, kde_ratio, skce
from core.ensembles.simulate import SETTINGS, simulate
from core.ensembles.summary import (
    ENSEMBLE_ROWS,
    CredalComparison,
    CredalSettings,
    compare_ensemble,
    compare_weights,
    tested_rows,
)
from core.ensembles.test import (
    NULL_LABELS,
    NULLS,
    WEIGHT_LABELS,
    WEIGHTS,
    CredalTestResult,
    credal_test,
    null_description,
)
from core.ensembles.weights import WeightNetwork, WeightSettings, combine

__all__ = [
    "ENSEMBLE_ROWS",
    "ESTIMATORS",
    "NULLS",
    "NULL_LABELS",
    "SETTINGS",
    "WEIGHTS",
    "WEIGHT_LABELS",
    "CredalComparison",
    "CredalSettings",
    "CredalTestResult",
    "WeightNetwork",
    "WeightSettings",
    "ce2",
    "cekl",
    "combine",
    "compare_ensemble",
    "compare_weights",
    "credal_test",
    "kde_ratio",
    "null_description",
    "simulate",
    "skce",
    "tested_rows",
]
