"""Per-group calibration tables."""

from __future__ import annotations

import numpy as np

from core.data.groups import group_levels, iter_groups, level_codes
from core.local.groups import group_calibration_table, group_reliability_tables
from core.metrics.binned import ece


def test_group_table_matches_metrics_on_each_group() -> None:
    rng = np.random.default_rng(0)
    n = 3000
    labels = rng.choice(["a", "b", "c"], n, p=[0.6, 0.395, 0.005])
    p = rng.uniform(0.05, 0.95, n)
    shift = np.where(labels == "b", 0.2, 0.0)  # group b is under-predicted by 0.2
    y = (rng.random(n) < np.clip(p + shift, 0, 1)).astype(int)
    table = group_calibration_table(p, y, labels, notion="positive").set_index("group")
    assert list(table.index) == ["a", "b", "c"]  # largest first
    assert table.loc["a", "rows"] + table.loc["b", "rows"] + table.loc["c", "rows"] == n
    assert np.isnan(table.loc["c", "ece"])  # below the 30-row minimum
    mask = labels == "a"
    assert table.loc["a", "ece"] == ece(p[mask], y[mask], 15, "uniform", "l1", "positive")
    assert table.loc["b", "observed_frequency"] - table.loc["b", "mean_confidence"] > 0.15
    assert table.loc["b", "hosmer_lemeshow_p"] < 1e-6 < table.loc["a", "hosmer_lemeshow_p"]
    tables = group_reliability_tables(p, y, labels, notion="positive", n_bins=5)
    assert set(tables) == {"a", "b"} and tables["a"]["count"].sum() == mask.sum()


def test_classwise_one_class_and_levels_order() -> None:
    rng = np.random.default_rng(1)
    probs = rng.dirichlet(np.ones(3), 600)
    y = rng.integers(0, 3, 600)
    labels = np.repeat(["x", "y"], 300)
    table = group_calibration_table(probs, y, labels, notion="classwise", class_index=2)
    np.testing.assert_allclose(table["mean_confidence"], [probs[:300, 2].mean(),
                                                          probs[300:, 2].mean()])
    all_classes = group_calibration_table(probs, y, labels, notion="classwise")
    assert all_classes["mean_confidence"].isna().all() and all_classes["ece"].notna().all()
    assert group_levels(np.array(["b", "a", "b"])) == ["b", "a"]


def test_levels_are_the_labels_as_text() -> None:
    # a level is a label as text, found by hashing the distinct labels (level_codes): labels
    # pandas takes as one value but whose texts differ (1, 1.0 and True; 0.0 and −0.0; None
    # and NaN) stay apart, exactly as comparing every row's text
    rng = np.random.default_rng(2)
    cases = [np.array(["b", "a", "b", "c", "a", "b"]),
             np.array([1, "1", 1.0, True, None, np.nan, "x", "x"], dtype=object),
             rng.integers(0, 4, 500), rng.choice([0.0, -0.0, 1.5], 300),
             np.array([True, False, True]), np.array(["é", "e", "É", "e"]),
             rng.choice(["north", "south", "east"], 2000).astype(object),
             np.array([], dtype=object)]
    for labels in cases:
        text = np.asarray(labels, dtype=str)
        values, counts = np.unique(text, return_counts=True)
        expected = [str(values[i]) for i in sorted(range(values.size),
                                                   key=lambda i: (-counts[i], values[i]))]
        levels, codes = level_codes(labels)
        assert levels == expected == group_levels(labels)
        for k, level in enumerate(levels):
            np.testing.assert_array_equal(codes == k, text == level)
        assert [level for level, _ in iter_groups(labels, 2)] == \
            [level for level in expected if (text == level).sum() >= 2]
