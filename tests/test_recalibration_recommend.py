"""Issue 31, item 5: the Recalibration page recommends one method by a stated rule."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from core.recalibration import RECOMMENDATION_RULE, compare, recommend
from core.recalibration.ranking import UNCALIBRATED, brier_worse_p_value


def table(rows: list[tuple[str, float, float, float]]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=["method", "ece", "klce_p", "brier_worse_p"])


def test_lowest_ece_among_methods_passing_both_checks() -> None:
    # COMPAS-like: BBQ has the lowest ECE but fails the local test; LCB is worse on Brier;
    # isotonic and temperature pass, isotonic with the lower ECE.
    choice = recommend(table([
        (UNCALIBRATED, 0.156, 0.005, 1.0),
        ("bbq", 0.020, 0.010, 0.60),
        ("isotonic", 0.031, 0.300, 0.40),
        ("temperature", 0.045, 0.200, 0.70),
        ("lcb", 0.025, 0.400, 0.001),
    ]))
    assert choice.method == "isotonic"
    assert "0.0310" in choice.reason and "uncalibrated 0.1560" in choice.reason
    assert choice.rule == RECOMMENDATION_RULE
    assert choice.checks.set_index("method").loc["bbq", "local_passes"] == np.False_
    assert choice.checks.set_index("method").loc["lcb", "brier_not_worse"] == np.False_


def test_none_passes_is_said_plainly() -> None:
    choice = recommend(table([
        (UNCALIBRATED, 0.1, 0.001, 1.0),
        ("temperature", 0.05, 0.01, 0.5),
        ("isotonic", 0.04, 0.3, 0.01),
    ]))
    assert choice.method is None
    assert choice.reason.startswith("None passes")
    assert "no method is recommended" in choice.reason


def test_the_rule_is_at_level_alpha() -> None:
    rows = [(UNCALIBRATED, 0.1, 0.001, 1.0), ("temperature", 0.05, 0.04, 0.5)]
    assert recommend(table(rows), alpha=0.05).method is None
    assert recommend(table(rows), alpha=0.01).method == "temperature"


def test_missing_columns_raise_a_sentence() -> None:
    with pytest.raises(ValueError, match="lacks the column"):
        recommend(pd.DataFrame({"method": ["a"], "ece": [0.1]}))


def test_brier_worse_p_value_is_one_sided() -> None:
    rng = np.random.default_rng(0)
    n = 4000
    truth = rng.uniform(0.05, 0.95, n)
    y = (rng.random(n) < truth).astype(int)
    good = np.column_stack([1 - truth, truth])
    noisy = np.clip(truth + rng.normal(0, 0.15, n), 0.01, 0.99)
    bad = np.column_stack([1 - noisy, noisy])
    assert brier_worse_p_value(bad, good, y) < 1e-6       # clearly worse
    assert brier_worse_p_value(good, bad, y) > 0.999      # clearly better
    assert brier_worse_p_value(good, good, y) == 1.0      # identical


def test_comparison_table_carries_the_check() -> None:
    from core.data.demo import load_demo
    audit = load_demo("census")
    small = audit.subset(np.arange(min(audit.n, 3000)))
    result = compare(small, ["temperature", "isotonic"], n_resamples=20)
    assert "brier_worse_p" in result.table
    assert result.table.set_index("method").loc[UNCALIBRATED, "brier_worse_p"] == 1.0
    choice = recommend(result.table)
    assert choice.method in (None, "temperature", "isotonic")
    assert len(choice.checks) == 2
