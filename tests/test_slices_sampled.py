"""Slice findings of a large in-memory audit by the streamed audit's method: sums over all
rows, the max-|T| null on the streamed audit's seeded sample — the same findings."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from core.audit import AuditSettings, slice_names, slice_section
from core.audit import findings as findings_module
from core.data import AuditData
from core.data.mapping import ColumnMapping
from core.data.simulations import scale_table
from core.data.stream_sources import open_source
from core.local import discover_slices
from core.local.slice_sampled import sampled_discovery
from core.stream import run_stream_audit

FEATURES = ("age", "income", "tenure", "region")
BINARY = ColumnMapping(label="label", probs=("prob",), features=FEATURES, groups=("region",))
SAME = ["slice", "class", "rows", "significant", "finding", "listed_under"]
CLOSE = ["observed", "predicted", "gap", "ci_low", "ci_high", "statistic", "p_value",
         "p_adjusted"]


def assert_same_findings(mine, theirs) -> None:
    """The same table row for row (flags, findings and their parents exactly; the sums, added
    in another order, to 1e-9), the same null and critical value."""
    pd.testing.assert_frame_equal(mine.table[SAME], theirs.table[SAME])
    np.testing.assert_allclose(mine.table[CLOSE].to_numpy(float),
                               theirs.table[CLOSE].to_numpy(float), rtol=1e-9, atol=1e-12)
    np.testing.assert_array_equal(mine.null_maxima, theirs.null_maxima)
    assert mine.critical_value == theirs.critical_value
    assert mine.family.names == theirs.family.names and mine.n_tested == theirs.n_tested


def in_memory_and_streamed(frame, mapping, settings, monkeypatch):
    monkeypatch.setattr(findings_module, "SAMPLE_ROWS", 1000)
    data = AuditData.from_mapping(frame, mapping)
    features = tuple(data.feature_frame.columns)
    memory = slice_section(data, settings.findings(slice_names(data, features)))
    streamed = run_stream_audit(open_source(frame, partition_rows=700), mapping, settings,
                                sample_rows=1000).result.slices
    return memory, streamed


@pytest.mark.parametrize("error_rate", ["fwer", "fdr"])
def test_a_large_in_memory_audit_reports_the_streamed_findings(monkeypatch, error_rate) -> None:
    frame = scale_table(3000, seed=1)  # locally biased: some slices are flagged
    settings = AuditSettings(part="all", slice_resamples=200, error_rate=error_rate, seed=3,
                             n_bootstrap=10, grid_resamples=10, test_resamples=10,
                             computation="rff")
    memory, streamed = in_memory_and_streamed(frame, BINARY, settings, monkeypatch)
    assert memory.table["finding"].any()
    assert_same_findings(memory, streamed)
    assert "seeded sample of 1,000 of them" in memory.statement()
    assert "all 3,000 audited rows" in memory.statement()
    assert memory.statement().replace("In memory, as a streamed audit computes them",
                                      "Streamed") == streamed.statement()
    assert memory.family.n == 3000  # the page's closer look masks every row


def test_several_classes_one_vs_rest(monkeypatch) -> None:
    rng = np.random.default_rng(5)
    n = 2500
    logits = rng.normal(size=(n, 3)) * 1.5
    P = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    y = np.array([rng.choice(3, p=row) for row in P])
    x = rng.normal(size=n)
    P[x > 1] = 0.8 * P[x > 1] + 0.2 * np.array([1.0, 0.0, 0.0])  # cat too likely there
    frame = pd.DataFrame({"label": np.array(["cat", "dog", "owl"])[y], "p_cat": P[:, 0],
                          "p_dog": P[:, 1], "p_owl": P[:, 2], "x": x,
                          "visits": rng.integers(0, 4, n), "site": rng.choice(["a", "b"], n)})
    mapping = ColumnMapping(label="label", probs=("p_cat", "p_dog", "p_owl"),
                            features=("x", "visits"), groups=("site",))
    settings = AuditSettings(part="all", slice_resamples=100, n_bootstrap=10,
                             grid_resamples=10, test_resamples=10, computation="rff")
    memory, streamed = in_memory_and_streamed(frame, mapping, settings, monkeypatch)
    assert set(memory.classes) == {"cat", "dog", "owl"} and memory.table["finding"].any()
    assert_same_findings(memory, streamed)


def test_at_or_below_the_sample_size_nothing_changes(monkeypatch) -> None:
    frame = scale_table(1000, seed=2)
    data = AuditData.from_mapping(frame, BINARY)
    settings = AuditSettings(part="all", slice_resamples=100).findings(
        slice_names(data, FEATURES))
    monkeypatch.setattr(findings_module, "SAMPLE_ROWS", 1000)
    found = slice_section(data, settings)
    direct = discover_slices(data.probs, data.y, data.feature_frame, n_resamples=100)
    pd.testing.assert_frame_equal(found.table, direct.table)
    assert found.scope == ""


def test_the_whole_table_as_its_sample_gives_the_in_memory_null() -> None:
    # with every row in the sample, the null is discover_slices' own: the same draws, so the
    # same max-|T| adjusted p-values and flags (the per-slice p-values differ: Edgeworth)
    frame = scale_table(2000, seed=6)
    data = AuditData.from_mapping(frame, BINARY)
    direct = discover_slices(data.probs, data.y, data.feature_frame, n_resamples=150, seed=2)
    sampled = sampled_discovery(data.probs, data.y, data.feature_frame, np.arange(2000),
                                n_resamples=150, seed=2)
    np.testing.assert_array_equal(sampled.null_maxima, direct.null_maxima)
    pd.testing.assert_frame_equal(sampled.table[SAME], direct.table[SAME])
    np.testing.assert_allclose(sampled.table["p_adjusted"], direct.table["p_adjusted"])
    np.testing.assert_allclose(sampled.table["p_value"], direct.table["p_value"], rtol=0.1,
                               atol=1e-3)
