"""Issue 31, item 4: quantile ranges of the prediction are a slicing dimension by default, so
Findings sees an over-confident model (whose feature slices all have mean gap ≈ 0).

Power and level with the new dimension are measured by ``benchmarks/slices_study.py``
(parts ``overconfident`` and ``level``; docs/studies/findings-prediction-ranges.md). Here:
the dimension is there, named, crossed with the features, optional, and a seeded
over-confident data set of the study's shape is flagged on it.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from core.data.slice_simulations import simulate_slices
from core.local import discover_slices
from core.local.slice_discovery import (
    PREDICTION_COLUMN,
    prediction_column_name,
    prediction_values,
    with_prediction,
)


def overconfident(seed: int):
    audit = simulate_slices("issue", np.random.default_rng(seed))
    logit = np.log(audit.probs) - np.log1p(-audit.probs)
    return audit, 1.0 / (1.0 + np.exp(-2.0 * logit))


def test_overconfident_model_is_flagged_on_a_prediction_range() -> None:
    audit, probs = overconfident(7)
    result = discover_slices(probs, audit.y, audit.features, n_resamples=200, seed=0)
    flagged = result.table[result.table["significant"]]
    on_prediction = flagged[flagged["slice"].str.contains(PREDICTION_COLUMN, regex=False)]
    assert len(on_prediction)
    # logits × 2 at a base rate near 0.25 pull the low predictions further down: the
    # lowest flagged range's gap (observed − predicted) is positive
    bottom = on_prediction.sort_values("predicted").iloc[0]
    assert bottom["gap"] > 0


def test_the_prediction_is_crossed_with_every_feature_and_can_be_left_out() -> None:
    audit, probs = overconfident(3)
    result = discover_slices(probs, audit.y, audit.features, n_resamples=20, seed=0)
    names = result.family.names
    alone = [n for n in names if n.startswith(PREDICTION_COLUMN) and "∧" not in n]
    assert len(alone) == 4  # four quantile ranges by default
    for feature in audit.features.columns:
        assert any(PREDICTION_COLUMN in n and feature in n and "∧" in n for n in names), feature
    without = discover_slices(probs, audit.y, audit.features, n_resamples=20, seed=0,
                              prediction_ranges=False)
    assert not any(PREDICTION_COLUMN in n for n in without.family.names)
    assert without.n_tested < result.n_tested


def test_prediction_values_and_name() -> None:
    P = np.array([[0.2, 0.5, 0.3], [0.7, 0.1, 0.2]])
    np.testing.assert_array_equal(prediction_values(P), [0.5, 0.7])
    np.testing.assert_array_equal(prediction_values(np.array([[0.9, 0.1]])), [0.1])
    np.testing.assert_array_equal(prediction_values(np.array([0.3])), [0.3])
    assert prediction_column_name(["age"]) == PREDICTION_COLUMN
    assert prediction_column_name([PREDICTION_COLUMN]) == f"{PREDICTION_COLUMN} (model)"
    frame = with_prediction(pd.DataFrame({PREDICTION_COLUMN: ["a", "b"]}), np.array([0.1, 0.9]))
    assert list(frame.columns) == [PREDICTION_COLUMN, f"{PREDICTION_COLUMN} (model)"]


def test_an_empty_result_says_what_was_and_was_not_tested() -> None:
    rng = np.random.default_rng(0)
    n = 2000
    p = rng.uniform(0.1, 0.9, n)
    y = (rng.random(n) < p).astype(int)
    features = pd.DataFrame({"site": rng.choice(["a", "b"], n)})
    result = discover_slices(p, y, features, n_resamples=50, seed=0)
    if result.rejects():
        pytest.skip("a false flag (probability ≤ 0.05 by the test's level)")
    text = result.coverage()
    assert text.startswith(f"Tested: {result.n_tested:,} slices of site")
    assert f"quantile ranges of the {PREDICTION_COLUMN}" in text
    assert "Trust test" in text and "Not tested" in text
