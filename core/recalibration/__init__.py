"""Recalibration: every established method, local and group repairs, and their comparison.

``make_recalibrator(name, **params)`` builds a method from the registry ``RECALIBRATORS``;
``compare(audit, methods, ...)`` fits each on the calibration split and scores it on the test
split (see :mod:`core.recalibration.compare`).
"""

from core.recalibration.base import RECALIBRATORS, Recalibrator, make_recalibrator
from core.recalibration.compare import (
    RECOMMENDATION_RULE,
    Comparison,
    Recommendation,
    compare,
    recommend,
)

__all__ = ["RECALIBRATORS", "RECOMMENDATION_RULE", "Comparison", "Recalibrator",
           "Recommendation", "compare", "make_recalibrator", "recommend"]
