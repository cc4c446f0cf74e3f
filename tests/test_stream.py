"""Streamed audits: partition by partition, the sums over rows equal the in-memory path's."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from core.audit import AuditSettings, run_audit
from core.data import AuditData, DataError
from core.data.mapping import ColumnMapping
from core.data.simulations import scale_table
from core.data.stream_sources import Partition, TableSource, open_source
from core.metrics.order_statistics import OrderStatistics, merge_parts
from core.stream import run_stream_audit

FEATURES = ("age", "income", "tenure", "region")
BINARY = ColumnMapping(label="label", probs=("prob",), features=FEATURES, groups=("region",))
#: Sums added in another order: the streamed numbers equal the in-memory ones to this.
TOLERANCE = 1e-10
TABLE_COLUMNS = ["bin_lower", "bin_upper", "count", "mean_confidence", "frequency", "ci_low",
                 "ci_high", "gap"]
STREAMED_TESTS = ("hosmer-lemeshow", "spiegelhalter", "consistency", "bound")
BINNED_METRICS = ("Accuracy", "Brier score", "NLL", "ECE (L1)", "ECE (L2)", "MCE",
                  "ACE (classwise)", "ACE (top-label)", "Debiased squared ECE (L2²)")


def cut(frame: pd.DataFrame, sizes: list[int]) -> TableSource:
    """A pandas source cut into partitions of the given sizes."""
    source = open_source(frame)
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    parts = tuple(Partition(k, int(s), int(r))
                  for k, (s, r) in enumerate(zip(starts, sizes, strict=True)))
    return TableSource("table", source.columns, parts, source.frame, "pandas")


def both(frame: pd.DataFrame, mapping: ColumnMapping, settings: AuditSettings, sizes,
         batch_rows: int | None = None):
    streamed = run_stream_audit(cut(frame, sizes), mapping, settings, sample_rows=1000,
                                batch_rows=batch_rows)
    data = AuditData.from_mapping(frame, mapping)
    return streamed, run_audit(data, settings)


def assert_sums_equal(streamed, memory) -> None:
    R, M = streamed.result.reliability, memory.reliability
    np.testing.assert_allclose(R.table[TABLE_COLUMNS].to_numpy(float),
                               M.table[TABLE_COLUMNS].to_numpy(float), rtol=0,
                               atol=TOLERANCE)
    mine = R.metrics.set_index("metric")["value"]
    theirs = M.metrics.set_index("metric")["value"]
    for name in BINNED_METRICS:
        assert mine[name] == pytest.approx(theirs[name], abs=TOLERANCE), name
    for key in STREAMED_TESTS:
        assert R.tests[key].statistic == pytest.approx(M.tests[key].statistic, rel=1e-9,
                                                       abs=TOLERANCE), key
    assert_slices_equal(streamed.result.slices, memory.slices)
    for group, (summary, tables) in M.groups.items():
        mine_summary = R.groups[group][0]
        pd.testing.assert_frame_equal(mine_summary, summary, rtol=1e-9, atol=TOLERANCE)
        for level, table in tables.items():
            np.testing.assert_allclose(R.groups[group][1][level][TABLE_COLUMNS].to_numpy(float),
                                       table[TABLE_COLUMNS].to_numpy(float), rtol=0,
                                       atol=TOLERANCE)


def assert_slices_equal(mine, theirs) -> None:
    """The same slices (names, parents, sizes, what was left out) and every slice's sums —
    rows, Σy, Σp — and its statistic T = Σ(y − p)/√Σp(1 − p), to 1e-10."""
    assert mine.family.describe() == theirs.family.describe()
    assert mine.family.names == theirs.family.names
    assert mine.family.parents == theirs.family.parents
    key = ["slice", "class"]
    a = mine.table.sort_values(key).reset_index(drop=True)
    b = theirs.table.sort_values(key).reset_index(drop=True)
    assert list(a["slice"]) == list(b["slice"]) and list(a["class"]) == list(b["class"])
    assert list(a["rows"]) == list(b["rows"])
    for column in ("observed", "predicted", "gap"):
        np.testing.assert_allclose(a[column], b[column], rtol=0, atol=TOLERANCE)
    np.testing.assert_allclose(a["statistic"], b["statistic"], rtol=1e-9, atol=TOLERANCE)
    assert "Streamed:" in mine.statement() and mine.n_tested == theirs.n_tested


@pytest.mark.parametrize("strategy", ["uniform", "quantile"])
def test_streamed_sums_equal_the_in_memory_audit(strategy: str) -> None:
    frame = scale_table(3000, seed=1)
    settings = AuditSettings(part="all", strategy=strategy, n_bootstrap=20, grid_resamples=30,
                             test_resamples=30, computation="rff")  # in memory, too
    streamed, memory = both(frame, BINARY, settings, [1000, 1, 1499, 500], batch_rows=701)
    assert_sums_equal(streamed, memory)
    # the random-feature tests draw every row's labels at its number among the audited rows:
    # the same statistics (float32 products in other chunks: to 1e-6 of the values)
    grid, mine = memory.klce_grid, streamed.result.klce_grid
    np.testing.assert_allclose(mine.statistics, grid.statistics, rtol=1e-5)
    assert mine.aggregated.p_value == grid.aggregated.p_value
    info = streamed.result.stream
    assert info.rows == 3000 and info.partitions == 5 and info.sample_rows == 1000
    assert info.batch_rows == 701 and "batches of 701 rows" in streamed.result.notes[0]
    assert "seeded sample of 1,000" in streamed.result.notes[0]


@pytest.mark.parametrize("notion", [
    {"strategy": "quantile"},  # top-label, the default for three classes
    {"strategy": "uniform", "notion": "classwise", "class_index": 1},  # every class's ECE
])
def test_ties_and_a_split_and_several_classes(notion: dict) -> None:
    # Rounded probabilities (long tied runs at the equal-mass cuts and Hosmer–Lemeshow's
    # boundaries), a split whose test part is audited, and three classes (top-label notion,
    # or classwise: the metrics average every class, the diagram shows one; the slices test
    # each class one vs rest). The slices' numeric column has ties at its
    # quantile edges and values below zero; another has four values (taken level by level).
    rng = np.random.default_rng(4)
    n = 2400
    logits = rng.normal(size=(n, 3)) * 1.5
    P = np.round(np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True), 2)
    P[:, 2] = 1.0 - P[:, 0] - P[:, 1]
    P = np.clip(P, 0, 1)
    P /= P.sum(axis=1, keepdims=True)
    y = np.array([rng.choice(3, p=row) for row in P])
    frame = pd.DataFrame({"label": np.array(["cat", "dog", "owl"])[y], "p_cat": P[:, 0],
                          "p_dog": P[:, 1], "p_owl": P[:, 2], "x": np.round(rng.normal(size=n), 1),
                          "visits": rng.integers(0, 4, n),
                          "site": rng.choice(["a", "b"], n),
                          "split": rng.choice(["calibration", "test"], n)})
    mapping = ColumnMapping(label="label", probs=("p_cat", "p_dog", "p_owl"),
                            features=("x", "visits"), groups=("site",), split="split")
    settings = AuditSettings(n_bootstrap=10, grid_resamples=20, test_resamples=20,
                             computation="rff", **notion)
    streamed, memory = both(frame, mapping, settings, [700, 900, 800], batch_rows=650)
    assert streamed.result.rows == memory.rows and streamed.result.part == "test"
    assert_sums_equal(streamed, memory)


def test_a_bad_row_in_a_later_partition_is_named_by_its_row_in_the_table() -> None:
    frame = scale_table(3000, seed=2)
    frame.loc[2345, "prob"] = 1.7
    with pytest.raises(DataError, match=r"row 2346\)"):
        run_stream_audit(cut(frame, [1000, 1000, 1000]), BINARY, AuditSettings(part="all"))
    frame = scale_table(3000, seed=2)
    frame.loc[1500, "label"] = None
    with pytest.raises(DataError, match=r"Label column 'label' is empty in 1 row \(row 1501\)"):
        run_stream_audit(cut(frame, [1000, 1000, 1000]), BINARY, AuditSettings(part="all"))


def test_what_a_streamed_audit_cannot_do_is_said_in_a_sentence() -> None:
    source = cut(scale_table(500), [500])
    with pytest.raises(ValueError, match="cannot compute exact kernel sums"):
        run_stream_audit(source, BINARY, AuditSettings(computation="exact"))
    with pytest.raises(ValueError, match="offers the consistency nulls"):
        run_stream_audit(source, BINARY, AuditSettings(null="permutation"))
    with pytest.raises(DataError, match="no column 'missing'"):
        run_stream_audit(source, ColumnMapping(label="missing", probs=("prob",)))


def test_exact_order_statistics_with_ties_spikes_and_few_values() -> None:
    from core.metrics import order_statistics

    rng = np.random.default_rng(0)
    vectors = {"uniform": rng.random(5000), "ties": np.round(rng.random(5000), 2),
               "spike": np.concatenate([np.full(3000, 0.25), rng.random(2000)]),
               "zeros": np.zeros(40), "ones": np.ones(3)}
    limit = order_statistics.COLLECT
    order_statistics.COLLECT = 300  # force histogram rounds before collecting
    try:
        sizes = {k: v.size for k, v in vectors.items()}
        wanted = {k: [0, v.size // 3, v.size // 2, v.size - 1] for k, v in vectors.items()}
        stats = OrderStatistics.start(sizes, wanted)
        while stats.pending():
            request = stats.request()
            stats.update(merge_parts([
                {k: OrderStatistics.part(request, k, v[s:s + 613]) for k, v in vectors.items()}
                for s in range(0, 5000, 613)]))
    finally:
        order_statistics.COLLECT = limit
    for key, values in vectors.items():
        ordered = np.sort(values)
        for position in wanted[key]:
            found = stats.at(key, position)
            assert found.value == ordered[position]
            assert found.below == np.sum(values < ordered[position])
            assert found.equal == np.sum(values == ordered[position])


def test_a_parquet_folder_streams_row_group_by_row_group(tmp_path) -> None:
    for k in range(3):
        scale_table(400, seed=k).to_parquet(tmp_path / f"part-{k}.parquet", index=False,
                                            row_group_size=150)
    source = open_source(tmp_path)
    assert source.n == 1200 and len(source.partitions) == 9
    assert [p.start for p in source.partitions][:4] == [0, 150, 300, 400]
    frame = pd.concat([scale_table(400, seed=k) for k in range(3)], ignore_index=True)
    settings = AuditSettings(part="all", n_bootstrap=5, grid_resamples=10, test_resamples=10,
                             computation="rff")
    streamed = run_stream_audit(source, BINARY, settings, sample_rows=1000)
    memory = run_audit(AuditData.from_mapping(frame, BINARY), settings)
    assert_sums_equal(streamed, memory)
    (tmp_path / "other.parquet").write_bytes(
        pd.DataFrame({"a": [1.0]}).to_parquet(index=False))
    with pytest.raises(DataError, match="do not share their columns"):
        open_source(tmp_path)


def test_a_dask_cluster_gives_the_threads_result() -> None:
    from dask.distributed import Client, LocalCluster

    from core.kernels import engine

    frame = scale_table(1500, seed=3)
    settings = AuditSettings(part="all", n_bootstrap=5, grid_resamples=10, test_resamples=10)
    here = run_stream_audit(cut(frame, [500, 500, 500]), BINARY, settings, sample_rows=1000)
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                      dashboard_address=None) as cluster, \
            Client(cluster, set_as_default=False) as client, \
            engine.use("dask", client=client):
        there = run_stream_audit(cut(frame, [500, 500, 500]), BINARY, settings,
                                 sample_rows=1000)
    assert there.result.fingerprint == here.result.fingerprint
    assert there.result.stream.engine.startswith("dask")
    pd.testing.assert_frame_equal(there.result.reliability.metrics,
                                  here.result.reliability.metrics)
    # the same resampled labels everywhere; the chunk products are float32, whose rounding
    # depends on the BLAS kernel a worker runs: equal to ~1e-7 of the values
    np.testing.assert_allclose(there.result.klce_grid.statistics,
                               here.result.klce_grid.statistics, rtol=1e-5)
    assert there.result.klce_grid.aggregated.p_value == \
        here.result.klce_grid.aggregated.p_value


def test_the_poisson_bootstrap_interval_covers_the_value_it_resamples() -> None:
    frame = scale_table(4000, seed=5)
    streamed = run_stream_audit(cut(frame, [2000, 2000]), BINARY,
                                AuditSettings(part="all", n_bootstrap=50, grid_resamples=10,
                                              test_resamples=10), sample_rows=1000)
    metrics = streamed.result.reliability.metrics.set_index("metric")
    for name in ("Accuracy", "Brier score", "NLL"):  # means: the basic interval holds them
        row = metrics.loc[name]
        assert row["ci_low"] < row["value"] < row["ci_high"], name
        assert row["ci_high"] - row["ci_low"] < 0.1, name


def test_streamed_quantile_edges_are_numpys_linear_quantiles() -> None:
    from core.local.slice_streamed import linear_quantiles, quantile_positions

    rng = np.random.default_rng(2)
    for n in (1, 2, 3, 7, 100, 1001, 40_000):
        for values in (rng.normal(size=n), np.round(rng.normal(size=n), 1),
                       rng.integers(18, 90, n).astype(float)):
            for ranges in (2, 4, 7):
                ordered = np.sort(values)
                previous, following, gamma = quantile_positions(n, ranges)
                np.testing.assert_array_equal(
                    linear_quantiles(ordered[previous], ordered[following], gamma),
                    np.quantile(values, np.linspace(0.0, 1.0, ranges + 1)))


def test_edgeworth_p_values_follow_the_exact_poisson_binomial_tail() -> None:
    """The streamed per-slice p-value (Edgeworth expansion of four cumulants) against the
    exact Poisson-binomial distribution (convolution) of a skewed slice of 2,000 rows (the
    smallest slice at 200,000 rows): within 5 % of it wherever it lies in [1e-6, 0.5]."""
    from core.local.slice_streamed import edgeworth_p_values

    rng = np.random.default_rng(3)
    p = rng.beta(0.5, 6.0, 2000)
    pmf = np.array([1.0])
    for q in p:
        pmf = np.convolve(pmf, [1 - q, q])
    mean, variance = p.sum(), (p * (1 - p)).sum()
    kappa3 = (p * (1 - p) * (1 - 2 * p)).sum()
    kappa4 = (p * (1 - p) * (1 - 6 * p * (1 - p))).sum()
    counts = np.arange(0, 2001, dtype=float)
    exact = np.array([pmf[np.abs(counts - mean) >= abs(c - mean) - 1e-9].sum() for c in counts])
    mine = edgeworth_p_values(np.full(counts.size, 2000.0), counts, np.full(counts.size, mean),
                              np.full(counts.size, variance), np.full(counts.size, kappa3),
                              np.full(counts.size, kappa4))
    shown = (exact >= 1e-6) & (exact <= 0.5)
    np.testing.assert_allclose(mine[shown], exact[shown], rtol=0.05)


def test_a_table_with_several_models_streams_the_audited_models_columns() -> None:
    """Issue 23's prediction sets: the streamed audit of model 'b' reads b's column only and
    equals the in-memory audit of ``with_model('b')``."""
    frame = scale_table(1500, seed=5)
    rng = np.random.default_rng(5)
    frame["prob_b"] = np.clip(frame["prob"] + rng.normal(0, 0.05, len(frame)), 0.01, 0.99)
    mapping = ColumnMapping(label="label", probs=("prob",), features=("age", "region"),
                            groups=("region",), models=(("b", ("prob_b",)),))
    settings = AuditSettings(part="all", n_bootstrap=10, grid_resamples=20, test_resamples=20,
                             slice_resamples=50, computation="rff")
    streamed = run_stream_audit(cut(frame, [700, 800]), mapping, settings, sample_rows=1000,
                                model="b")
    memory = run_audit(AuditData.from_mapping(frame, mapping).with_model("b"), settings)
    assert_sums_equal(streamed, memory)
    assert streamed.result.notes[0].startswith("Audited model: 'b' (columns 'prob_b')")
    with pytest.raises(ValueError, match="Unknown model 'c'; this table has 'prob', 'b'"):
        run_stream_audit(cut(frame, [1500]), mapping, settings, model="c")
