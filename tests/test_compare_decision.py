"""Issue 31, item 5: Compare models opens with promote / do not promote / inconclusive."""

from __future__ import annotations

import numpy as np
import pandas as pd

from core.compare import DECISION_RULE, ComparisonResult, compare_models, decide
from core.compare.decision import DO_NOT_PROMOTE, INCONCLUSIVE, PROMOTE

SLICE_COLUMNS = ["slice", "kind", "rows", "criterion", "difference", "p_adjusted",
                 "direction"]


def result(differences: list[tuple[str, float, float]],
           slices: list[tuple[str, float, float, str]] = ()) -> ComparisonResult:
    table = pd.DataFrame([{
        "criterion": name.lower(), "name": name, "value_a": 0.2, "value_b": 0.2 + d,
        "difference": d, "ci_low": d - 0.01, "ci_high": d + 0.01, "p_value": p,
        "std_error": 0.005, "variance": 0.0, "method": "test"} for name, d, p in differences])
    frame = pd.DataFrame([{"slice": s, "kind": "group", "rows": 300, "criterion": "brier",
                           "difference": d, "p_adjusted": p, "direction": direction}
                          for s, d, p, direction in slices], columns=SLICE_COLUMNS)
    return ComparisonResult("champion", "challenger", 5000, 0.05, table, pd.DataFrame(),
                            frame, 2.5, {})


def test_better_on_average_worse_for_a_group_is_do_not_promote() -> None:
    decision = decide(result([("Brier score", -0.004, 0.001), ("Log loss", -0.01, 0.002)],
                             [("race = Asian", 0.03, 0.004, "worse"),
                              ("age 18–25", -0.01, 0.5, "same")]))
    assert decision.decision == DO_NOT_PROMOTE
    assert decision.headline == "Do not promote: better on average, worse for race = Asian"
    assert any(r.startswith("Better on Brier score") for r in decision.reasons)
    assert any(r.startswith("Worse in race = Asian (300 rows)") for r in decision.reasons)
    assert decision.rule == DECISION_RULE


def test_worse_on_a_criterion_is_do_not_promote() -> None:
    decision = decide(result([("Brier score", 0.004, 0.01), ("ECE²", -0.001, 0.4)]))
    assert decision.decision == DO_NOT_PROMOTE
    assert decision.headline == "Do not promote: worse on Brier score"
    assert any("No difference shown on ECE²" in r for r in decision.reasons)


def test_better_and_worse_nowhere_is_promote() -> None:
    decision = decide(result([("Brier score", -0.004, 0.001), ("ECE²", 0.0001, 0.6)],
                             [("sex = F", 0.01, 0.3, "same")]))
    assert decision.decision == PROMOTE
    assert decision.headline.startswith("Promote: better on Brier score")


def test_nothing_established_is_inconclusive() -> None:
    decision = decide(result([("Brier score", -0.001, 0.3), ("Log loss", 0.002, 0.2)]))
    assert decision.decision == INCONCLUSIVE
    assert decision.headline == "Inconclusive: no criterion shows a difference at α = 0.05"


def test_decision_on_a_real_comparison() -> None:
    """A challenger that adds noise to a calibrated champion is worse on the Brier score."""
    rng = np.random.default_rng(0)
    n = 4000
    truth = rng.uniform(0.05, 0.95, n)
    y = (rng.random(n) < truth).astype(int)
    noisy = np.clip(truth + rng.normal(0, 0.2, n), 0.01, 0.99)
    compared = compare_models(y, {"champion": truth, "challenger": noisy},
                              criteria=("brier", "log_loss"), n_resamples=50)
    decision = decide(compared)
    assert decision.decision == DO_NOT_PROMOTE
    assert "worse on" in decision.headline
