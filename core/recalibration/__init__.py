"""Recalibration: every established method, local and group repairs, and their comparison.

``make_recalibrator(name, **params)`` builds a method from the registry ``RECALIBRATORS``;
``compare(audit, methods, ...)`` fits each on the calibration split and scores it on the test
split (see :mod:`core.recalibration.compare`).
"""

from core.recalibration.base import RECALIBRATORS, Recalibrator, make_recalibrator
from core.recalibration.compare import (
    BETTER,
    METRICS,
    RECOMMENDATION_RULE,
    UNCALIBRATED,
    CompareSettings,
    Comparison,
    Recommendation,
    compare,
    lcb_before_after,
    mlce_curves,
    recommend,
    reliability_tables,
)

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
