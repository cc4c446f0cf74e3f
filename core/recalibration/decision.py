"""The decision: one recalibration method chosen from a comparison's table by one stated rule
(:data:`RECOMMENDATION_RULE`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from core.recalibration.ranking import UNCALIBRATED
from core.recalibration.registry import RECALIBRATORS

#: The recommendation rule in one line (the page, the report and the CLI print it).
RECOMMENDATION_RULE = (
    "Among the methods whose KLCE test does not reject local calibration (klce_p > α) and "
    "whose Brier score is not worse than the uncalibrated model's by a one-sided paired "
    "test (brier_worse_p > α), the one with the lowest ECE.")


@dataclass(frozen=True)
class Recommendation:
    """The method :func:`recommend` chooses, and why.

    Attributes
    ----------
    method : str or None
        The chosen method's key, or ``None`` when no method passes both checks.
    reason : str
        One sentence: the choice and its numbers, or "none passes" and what failed.
    rule : str
        :data:`RECOMMENDATION_RULE`.
    checks : pandas.DataFrame
        One row per method (not the uncalibrated model): ``method``, ``ece``,
        ``local_passes``, ``brier_not_worse``, ``passes``.
    """

    method: str | None
    reason: str
    rule: str
    checks: pd.DataFrame


def recommend(table: pd.DataFrame, alpha: float = 0.05) -> Recommendation:
    """One recalibration method by :data:`RECOMMENDATION_RULE`.

    A method passes when its aggregated KLCE test does not reject (``klce_p > alpha``) and its
    Brier score is not shown worse than the uncalibrated model's (``brier_worse_p > alpha``);
    of those that pass, the lowest ``ece`` is chosen (ties: the first in the table). With
    several splits the table's columns are means over the splits, and so is the rule's input.

    Parameters
    ----------
    table : pandas.DataFrame
        ``Comparison.table`` (``method``, ``ece``, ``klce_p``, ``brier_worse_p``).
    alpha : float
        Level of both tests.

    Returns
    -------
    Recommendation
        The choice (``None``: none passes), its reason and the per-method checks.

    Raises
    ------
    ValueError
        When ``alpha`` is not in (0, 1) or a column is missing.
    """
    if not 0.0 < float(alpha) < 1.0:
        raise ValueError(f"alpha must be strictly between 0 and 1, not {alpha}.")
    missing = [c for c in ("method", "ece", "klce_p", "brier_worse_p") if c not in table]
    if missing:
        raise ValueError(f"The comparison table lacks the column(s) {', '.join(missing)}; "
                         "run core.recalibration.compare first.")
    methods = table[table["method"] != UNCALIBRATED]
    checks = pd.DataFrame({
        "method": methods["method"].to_numpy(),
        "ece": methods["ece"].to_numpy(dtype=float),
        "local_passes": (methods["klce_p"] > alpha).to_numpy(),
        "brier_not_worse": (methods["brier_worse_p"] > alpha).to_numpy(),
    })
    checks["passes"] = checks["local_passes"] & checks["brier_not_worse"] & \
        checks["ece"].notna()
    passing = checks[checks["passes"]]
    if checks.empty:
        return Recommendation(None, "No recalibration method was compared.",
                              RECOMMENDATION_RULE, checks)
    if passing.empty:
        local = int(checks["local_passes"].sum())
        brier = int(checks["brier_not_worse"].sum())
        reason = (f"None passes: of {len(checks)} method(s), {local} pass the local test "
                  f"(KLCE p > {alpha:g}) and {brier} keep the Brier score, but none does "
                  "both — no method is recommended; keep the model as it is or repair it "
                  "another way.")
        return Recommendation(None, reason, RECOMMENDATION_RULE, checks)
    best = passing.loc[passing["ece"].idxmin()]
    row = methods.set_index("method").loc[best["method"]]
    uncalibrated = table.set_index("method")["ece"].get(UNCALIBRATED, np.nan)
    before = f" (uncalibrated {uncalibrated:.4f})" if np.isfinite(uncalibrated) else ""
    reason = (f"{RECALIBRATORS[best['method']].name}: the lowest ECE, {best['ece']:.4f}"
              f"{before}, of the {len(passing)} method(s) of {len(checks)} that pass both "
              f"checks (KLCE p = {row['klce_p']:.3g}; Brier not worse, one-sided "
              f"p = {row['brier_worse_p']:.3g}).")
    return Recommendation(str(best["method"]), reason, RECOMMENDATION_RULE, checks)
