"""Recalibration: every established method, local and group repairs, and their comparison.

``make_recalibrator(name, **params)`` builds a method from the registry ``RECALIBRATORS``;
``compare(audit, methods, ...)`` fits each on the calibration split and scores it on the test
split; ``recommend(table)`` chooses one by :data:`RECOMMENDATION_RULE`. One concept per module:

* :mod:`core.recalibration.base` — the recalibrator protocol and base classes;
  :mod:`core.recalibration.registry` — every method's parameters and :func:`make_recalibrator`;
* :mod:`core.recalibration.scaling`, :mod:`core.recalibration.binning` — the global scaling
  and binning methods; :mod:`core.recalibration.local` — LoRe and the LCB correction;
  :mod:`core.recalibration.group` — group-wise methods and multicalibration;
* :mod:`core.recalibration.ranking` — the comparison workflow: fit on calibration rows, score
  every method on test rows;
* :mod:`core.recalibration.before_after` — a comparison's reliability tables, MLCE curves and
  local bias before and after a method;
* :mod:`core.recalibration.decision` — the recommendation rule.
"""

from core.recalibration.base import Recalibrator
from core.recalibration.before_after import lcb_before_after, mlce_curves, reliability_tables
from core.recalibration.decision import RECOMMENDATION_RULE, Recommendation, recommend
from core.recalibration.ranking import (
    BETTER,
    METRICS,
    UNCALIBRATED,
    CompareSettings,
    Comparison,
    compare,
)
from core.recalibration.registry import RECALIBRATORS, make_recalibrator

__all__ = [
    "BETTER",
    "METRICS",
    "RECALIBRATORS",
    "RECOMMENDATION_RULE",
    "UNCALIBRATED",
    "CompareSettings",
    "Comparison",
    "Recalibrator",
    "Recommendation",
    "compare",
    "lcb_before_after",
    "make_recalibrator",
    "mlce_curves",
    "recommend",
    "reliability_tables",
]
