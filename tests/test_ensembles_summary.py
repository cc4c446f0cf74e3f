"""The three credal-set tests side by side, and the figures drawn from them."""

from __future__ import annotations

import numpy as np

from core.ensembles import simulate
from core.ensembles.summary import CredalSettings, compare_weights
from core.figures.ensembles import (
    credal_p_values_figure,
    credal_weights_figure,
    credal_weights_map_figure,
)


def test_comparison_table_and_figures() -> None:
    members, y, X, _ = simulate("binary-h0-instance", n=300, seed=2)
    seen = []
    settings = CredalSettings(n_resamples=20, alpha=0.1)
    comparison = compare_weights(members, y, X, settings, lambda f, m: seen.append((f, m)))
    assert list(comparison.results) == ["learned", "mean", "sampled"]
    rows = [r.rows for r in comparison.results.values()]
    assert all(np.array_equal(rows[0], r) for r in rows)
    fractions = [f for f, _ in seen]
    assert fractions == sorted(fractions) and fractions[-1] == 1.0
    assert any(m.startswith("ensemble mean") for _, m in seen)

    table = comparison.table()
    assert list(table["weights"]) == ["learned", "mean", "sampled"]
    for key, row in zip(table["weights"], table.itertuples(), strict=True):
        result = comparison.results[key]
        assert row.p_value == result.p_value
        assert row.verdict == ("rejects" if result.p_value <= 0.1 else "does not reject")

    bars = credal_p_values_figure(table, alpha=0.1).data[0]
    expected = ["#c0392b" if p <= 0.1 else "#1f5f8b" for p in table["p_value"]]
    assert list(bars.marker.color) == expected

    learned = comparison.results["learned"]
    lines = credal_weights_figure(X[learned.rows, 0], learned.weights, ["f1", "f2"], "x")
    assert [t.name for t in lines.data] == ["f1", "f2"]
    np.testing.assert_allclose(np.add(lines.data[0].y, lines.data[1].y), 1.0)
    coords = np.column_stack([X[learned.rows, 0], np.zeros(learned.rows.size)])
    points = credal_weights_map_figure(coords, learned.weights, ["f1", "f2"])
    assert sum(len(t.x) for t in points.data) == learned.rows.size
