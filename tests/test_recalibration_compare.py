"""The comparison workflow (core.recalibration.ranking) on small tables."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest

from core.data.audit_data import AuditData
from core.data.validation import sigmoid
from core.recalibration import compare
from core.recalibration.before_after import lcb_before_after, mlce_curves, reliability_tables
from core.recalibration.ranking import METRICS, UNCALIBRATED

METHODS = ["temperature", "isotonic", "vector", "lore", "group-histogram", "multicalibration"]


def table(n: int = 400, seed: int = 0, split: bool = True) -> pd.DataFrame:
    """An overconfident model whose error also depends on age within group 'b'."""
    rng = np.random.default_rng(seed)
    age = rng.integers(18, 80, n)
    group = rng.choice(["a", "b"], n)
    z = rng.standard_normal(n)
    truth = sigmoid(z + (group == "b") * (age - 50) / 15)
    frame = pd.DataFrame({"y": (rng.random(n) < truth).astype(int), "p": sigmoid(2.5 * z),
                          "age": age, "group": group})
    if split:
        frame["split"] = np.where(np.arange(n) % 2 == 0, "calibration", "test")
    return frame


def audit_of(frame: pd.DataFrame) -> AuditData:
    return AuditData.from_frame(frame, label="y", prob="p", features=["age", "group"],
                                groups=["group"],
                                split="split" if "split" in frame else None)


def run(audit: AuditData, **kwargs):
    return compare(audit, METHODS, features=("age", "group"), groups=("group",),
                   n_resamples=20, **kwargs)


def test_table_has_one_row_per_method_and_skips_with_reasons() -> None:
    result = run(audit_of(table()))
    assert list(result.table["method"]) == [UNCALIBRATED, "temperature", "isotonic", "lore",
                                           "group-histogram", "multicalibration"]
    assert list(result.table.columns) == ["method", *METRICS]
    assert "not defined for binary" in result.skipped["vector"]
    assert "calibration split" in result.notes[0]
    rows = result.table.set_index("method")
    # an overconfident model: temperature scaling lowers the NLL on the test rows
    assert rows.loc["temperature", "nll"] < rows.loc[UNCALIBRATED, "nll"]
    assert ((rows["klce_p"] > 0) & (rows["klce_p"] <= 1)).all()
    assert rows.loc[UNCALIBRATED, "fit_seconds"] == 0
    assert set(result.probs) == set(rows.index)
    assert all(p.shape == (200, 2) for p in result.probs.values())


def test_poisoned_test_labels_change_no_fitted_output() -> None:
    frame = table()
    poisoned = frame.copy()
    test_rows = poisoned["split"] == "test"
    poisoned.loc[test_rows, "y"] = 1 - poisoned.loc[test_rows, "y"]
    clean, dirty = run(audit_of(frame)), run(audit_of(poisoned))
    for name, probs in clean.probs.items():
        np.testing.assert_array_equal(probs, dirty.probs[name])
    assert not np.allclose(clean.table["brier"], dirty.table["brier"])  # the scores do use y


def test_repeated_splits_report_mean_and_sd() -> None:
    result = compare(audit_of(table(300)), ["temperature"], n_splits=3, seed=4,
                     n_resamples=20)
    assert {"ece_sd", "brier_sd", "klce_p_sd"} <= set(result.table.columns)
    assert (result.table["brier_sd"] > 0).all()
    assert "3 random calibration/test splits" in result.notes[0] and "seeds 4–6" in result.notes[0]
    assert np.isnan(result.table["mlce"]).all()  # no features chosen: no MLCE
    assert result.skipped == {}


def test_without_a_split_a_stratified_split_is_made_and_said() -> None:
    audit = audit_of(table(300, split=False))
    result = compare(audit, ["histogram"], n_resamples=20)
    assert "no calibration/test split" in result.notes[0]
    counts = np.bincount(result.test.y)
    assert abs(counts[1] / counts.sum() - audit.y.mean()) < 0.01  # stratified by label


def test_methods_needing_what_is_not_chosen_are_skipped() -> None:
    result = compare(audit_of(table(300)), ["lore", "group-temperature", "platt"],
                     n_resamples=20)
    assert "needs audit features" in result.skipped["lore"]
    assert "needs group attributes" in result.skipped["group-temperature"]
    assert list(result.table["method"]) == [UNCALIBRATED, "platt"]


def test_bad_arguments_raise_sentences() -> None:
    audit = audit_of(table(100))
    with pytest.raises(ValueError, match="Unknown recalibration method 'nope'"):
        compare(audit, ["nope"])
    with pytest.raises(ValueError, match="Unknown audit feature 'income'"):
        compare(audit, ["platt"], features=("income",))
    with pytest.raises(ValueError, match="n_splits must be a whole number"):
        compare(audit, ["platt"], n_splits=0)
    with pytest.raises(ValueError, match="'n_bins' must lie between"):
        compare(audit, {"histogram": {"n_bins": 0}})


def test_views_of_a_comparison() -> None:
    result = run(audit_of(table()))
    tables = reliability_tables(result, n_bins=5)
    assert tables[UNCALIBRATED]["count"].sum() == 200
    curves = mlce_curves(result, [0.1, 1.0])
    assert set(curves) == set(result.probs) and all(len(c) == 2 for c in curves.values())
    trends = lcb_before_after(result, "temperature", "age", n_resamples=20)
    assert set(trends["group"]) == {"before", "after: temperature"}
    with pytest.raises(ValueError, match="Unknown feature 'group'|not numeric"):
        lcb_before_after(result, "temperature", "group")


def test_multiclass_comparison_runs_vector_scaling() -> None:
    rng = np.random.default_rng(3)
    n = 300
    logits = rng.standard_normal((n, 3)) * 2
    p = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    y = np.array([rng.choice(3, p=row) for row in np.exp(logits / 2) /
                  np.exp(logits / 2).sum(axis=1, keepdims=True)])
    frame = pd.DataFrame({"y": y, "p0": p[:, 0], "p1": p[:, 1], "p2": p[:, 2],
                          "x": rng.standard_normal(n)})
    audit = AuditData.from_frame(frame, label="y", probs=["p0", "p1", "p2"], features=["x"])
    result = compare(audit, ["vector", "temperature", "isotonic"], features=("x",),
                     n_resamples=20)
    assert result.skipped == {}
    rows = result.table.set_index("method")
    assert rows.loc["temperature", "nll"] < rows.loc[UNCALIBRATED, "nll"]
    assert result.probs["vector"].shape == (result.test.n, 3) and 145 <= result.test.n <= 150
    assert dataclasses.is_dataclass(result)
