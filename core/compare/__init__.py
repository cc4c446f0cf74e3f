"""Model comparison: a challenger against a champion on the same rows, with paired inference.

This is the public face (``from core.compare import compare_models``); one concept per module:

* :mod:`core.compare.paired` — the Diebold–Mariano test of per-row scores (Brier, log loss);
* :mod:`core.compare.squared_errors` — differences of the debiased ECE², smooth ECE² and
  KLCE² (U-statistics) with a studentised wild bootstrap;
* :mod:`core.compare.slices` — per-group and per-slice differences with max-``|T|`` simultaneous
  inference;
* :mod:`core.compare.comparison` — :func:`compare_models`, :func:`compare_audit`, the
  :class:`ComparisonResult` and its verdict;
* :mod:`core.compare.decision` — :func:`decide`: promote, do not promote or inconclusive,
  with the reasons.
"""

from core.compare.comparison import (
    CRITERIA,
    CRITERION_NAMES,
    CompareSettings,
    ComparisonResult,
    compare_audit,
    compare_models,
)
from core.compare.decision import DECISION_RULE, Decision, decide
from core.compare.paired import PairedDifference, diebold_mariano

__all__ = [
    "CRITERIA",
    "CRITERION_NAMES",
    "CompareSettings",
    "ComparisonResult",
    "DECISION_RULE",
    "Decision",
    "PairedDifference",
    "compare_audit",
    "compare_models",
    "decide",
    "diebold_mariano",
]
