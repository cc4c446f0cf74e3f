"""Model comparison: a challenger against a champion on the same rows, with paired inference.

This is the public face (``from core.compare import compare_models``); one concept per module:

* :mod:`core.compare.paired` — the Diebold–Mariano test of per-row scores (Brier, log loss);
* :mod:`core.compare.squared_errors` — differences of the debiased ECE², smooth ECE² and
  KLCE² (U-statistics) with a studentised wild bootstrap;
* :mod:`core.compare.slices` — per-group and per-slice differences with max-``|T|`` simultaneous
  inference;
* :mod:`core.compare.comparison` — :func:`compare_models`, :func:`compare_audit`, the
  :class:`ComparisonResult` and its verdict.
"""

from core.compare.comparison import (
    CRITERIA,
    CRITERION_NAMES,
    CompareSettings,
    ComparisonResult,
    compare_audit,
    compare_models,
)
from core.compare.paired import PairedDifference, diebold_mariano

__all__ = [
    "CRITERIA",
    "CRITERION_NAMES",
    "CompareSettings",
    "ComparisonResult",
    "PairedDifference",
    "compare_audit",
    "compare_models",
    "diebold_mariano",
]
