"""Slice discovery: the slices, their resampled sums, the multiple-testing machinery, the
per-slice tails, the intervals and the redundancy rule; a bounded level study."""

from __future__ import annotations

import itertools
import math
import sys
import types

import numpy as np
import pandas as pd
import pytest
from scipy import sparse

from core.data.slice_simulations import simulate_slices
from core.kernels import engine
from core.local import discover_slices, enumerate_slices
from core.local.slice_discovery import gap_intervals, standardized
from core.local.slice_resampling import (
    RowScores,
    _chunk_sums,
    bernoulli_draw,
    categorical_draw,
    chunk_items,
    row_cells,
    slice_sums,
)
from core.stattests.multiple_testing import (
    benjamini_hochberg,
    max_t_critical,
    single_step_p_values,
    step_down_max_t,
)
from core.stattests.poisson_binomial import two_sided_p_values


def features_frame(n: int, rng: np.random.Generator) -> pd.DataFrame:
    return pd.DataFrame({
        "sex": rng.choice(["F", "M"], n),
        "race": rng.choice(list("ABCDE"), n, p=[0.5, 0.2, 0.15, 0.1, 0.05]),
        "age": rng.integers(18, 90, n),
    })


# --------------------------------------------------------------------------- multiple testing


def literal_step_down(observed: np.ndarray, null: np.ndarray) -> np.ndarray:
    """Westfall & Young's Algorithm 2.8 written as loops."""
    K, B = null.shape
    order = sorted(range(K), key=lambda k: -abs(observed[k]))
    adjusted = np.empty(K)
    running = 0.0
    for j, k in enumerate(order):
        rest = order[j:]
        exceed = sum(max(abs(null[r, b]) for r in rest) >= abs(observed[k]) for b in range(B))
        running = max(running, (1 + exceed) / (1 + B))
        adjusted[k] = running
    return adjusted


def test_step_down_equals_the_literal_algorithm_and_bounds() -> None:
    rng = np.random.default_rng(0)
    for K, B in ((1, 5), (6, 40), (15, 99)):
        null = rng.standard_normal((K, B))
        observed = rng.standard_normal(K) * 2.5
        adjusted = step_down_max_t(observed, null)
        np.testing.assert_allclose(adjusted, literal_step_down(observed, null))
        single = single_step_p_values(observed, null)
        assert np.all(adjusted <= single + 1e-15) and np.all(adjusted >= 1 / (1 + B))
        # the critical value reproduces the single-step decisions at every level
        for alpha in (0.05, 0.1, 0.3):
            c = max_t_critical(null, alpha)
            np.testing.assert_array_equal(np.abs(observed) > c, single <= alpha)
    assert max_t_critical(np.zeros((3, 10)), 0.05) == math.inf  # α(1 + B) < 1


def test_benjamini_hochberg_equals_its_definition() -> None:
    rng = np.random.default_rng(1)
    p = rng.random(40) ** 3
    q = benjamini_hochberg(p)
    order = np.argsort(p)
    for rank, k in enumerate(order, start=1):
        expected = min(1.0, min(p[order[j]] * p.size / (j + 1) for j in range(rank - 1, p.size)))
        assert q[k] == pytest.approx(expected)
    # rejecting q ≤ α is the step-up rule: the largest j with p_(j) ≤ jα/K
    alpha = 0.1
    passing = [j for j in range(1, p.size + 1) if np.sort(p)[j - 1] <= j * alpha / p.size]
    assert int((q <= alpha).sum()) == (max(passing) if passing else 0)


# --------------------------------------------------------------------------- tails


def poisson_binomial_pmf(p: np.ndarray) -> np.ndarray:
    pmf = np.zeros(p.size + 1)
    pmf[0] = 1.0
    for q in p:
        pmf[1:] = pmf[1:] * (1 - q) + pmf[:-1] * q
        pmf[0] *= 1 - q
    return pmf


def test_saddlepoint_tails_match_the_exact_poisson_binomial() -> None:
    """Relative error below 3% wherever the exact two-sided tail is between 1e-30 and 0.2,
    for small and skewed slices (rare events, 30–400 rows). Tails above REFINE_BELOW = 0.2
    keep the continuity-corrected normal approximation, whose error on the most skewed of
    these slices (30 rows, p ~ Beta(0.5, 8), mean 1.7 events) is 0.022 at a p-value of 0.7:
    within 0.03 absolute, far from any threshold a decision uses."""
    rng = np.random.default_rng(2)
    for n, a, b in ((30, 0.5, 8), (60, 0.2, 5), (400, 2.0, 3.0), (40, 0.05, 0.05)):
        p = rng.beta(a, b, n)
        pmf, mu = poisson_binomial_pmf(p), p.sum()
        support = np.arange(n + 1)
        counts = np.arange(0, n + 1, max(1, n // 25), dtype=float)
        approx = two_sided_p_values(sparse.csr_matrix(np.ones((n, counts.size))), p, counts)
        for s, value in zip(counts, approx, strict=True):
            d = abs(s - mu)
            exact = pmf[(support >= mu + d - 1e-7) | (support <= mu - d + 1e-7)].sum()
            if 1e-30 < exact < 0.2:
                assert value == pytest.approx(exact, rel=0.03), (n, s)
            elif exact >= 0.2:
                assert abs(value - exact) < 0.03, (n, s)


# --------------------------------------------------------------------------- the slices


def test_enumeration_counts_names_parents_and_masks() -> None:
    rng = np.random.default_rng(3)
    frame = features_frame(2000, rng)
    frame["twin"] = frame["sex"].map({"F": "x", "M": "y"})  # the same rows as sex
    frame.loc[:9, "age"] = np.nan  # ten missing ages: a level of their own, below min_rows
    family = enumerate_slices(frame, n_ranges=4, depth=2, min_rows=40)
    names = family.names
    assert names[0] == "all rows" and family.sizes[0] == 2000
    assert "sex = F" in names and "twin = x" not in names  # duplicates are left out
    assert "age 18–35" in names or any(n.startswith("age 18–") for n in names)
    assert "age missing" not in names and family.n_small >= 1 and family.n_duplicates >= 2
    incidence = family.incidence().toarray()
    for k, piece in enumerate(family.slices):
        mask = piece.mask(frame)
        np.testing.assert_array_equal(mask, family.mask(k))
        np.testing.assert_array_equal(mask, incidence[k] == 1)
        assert mask.sum() == family.sizes[k] >= 40
        for parent in family.parents[k]:  # a parent has one condition less and holds the rows
            assert family.slices[parent].depth == piece.depth - 1
            assert np.all(incidence[parent][mask] == 1)
    # every pair of different columns' conditions with enough rows is a slice (or a twin's)
    sex_race = [n for n in names if n.startswith("sex = ") and "∧ race = " in n]
    expected = sum(((frame["sex"] == s) & (frame["race"] == r)).sum() >= 40
                   for s, r in itertools.product("FM", "ABCDE"))
    assert len(sex_race) == expected
    assert "slices of 4 columns" in family.describe()


def test_enumeration_rejects_bad_settings_with_sentences() -> None:
    frame = features_frame(100, np.random.default_rng(0))
    with pytest.raises(ValueError, match="depth must be 1, 2 or 3"):
        enumerate_slices(frame, depth=4)
    with pytest.raises(ValueError, match="n_ranges must be a whole number of at least 2"):
        enumerate_slices(frame, n_ranges=1)
    with pytest.raises(ValueError, match="pandas DataFrame"):
        enumerate_slices(frame.to_numpy())


def table_draw(arrays, rng, n_resamples):
    """A deterministic 'draw' (the seam): the given per-row columns themselves."""
    return arrays[0].astype(np.float32)


def test_slice_sums_are_the_incidence_product_on_any_engine_setting() -> None:
    rng = np.random.default_rng(4)
    frame = features_frame(3000, rng)
    family = enumerate_slices(frame, min_rows=30)
    columns = rng.integers(0, 5, size=(3000, 7)).astype(np.float64)
    scores = RowScores((columns,), table_draw, 6, 7)
    expected = family.incidence() @ columns
    np.testing.assert_allclose(slice_sums(family, scores), expected)
    # consistency resamples: the same seed gives the same sums with one worker or several
    p = rng.uniform(0.1, 0.9, 3000)
    y = (rng.random(3000) < p).astype(float)
    bernoulli = RowScores((p, y), bernoulli_draw, 50, 51)
    one = slice_sums(family, bernoulli, seed=7)
    np.testing.assert_allclose(one[:, 0], family.incidence() @ y)
    with engine.use("threads"):
        np.testing.assert_array_equal(slice_sums(family, bernoulli, seed=7), one)
    assert not np.array_equal(slice_sums(family, bernoulli, seed=8), one)


def _bernoulli_by_rows(arrays, rng, n_resamples):
    return bernoulli_draw(arrays, rng, n_resamples)


def _categorical_by_rows(arrays, rng, n_resamples):
    return categorical_draw(arrays, rng, n_resamples)


def test_counts_summed_by_cell_first_equal_the_one_product() -> None:
    # 0/1 columns are summed within the rows' cells, then over the slices: the same counts
    # as the product of the rows' membership (a draw not known to count takes that path)
    rng = np.random.default_rng(21)
    frame = features_frame(3000, rng)
    frame.loc[rng.random(3000) < 0.1, "race"] = None  # a missing level: code −1 in no slice
    family = enumerate_slices(frame, depth=3, min_rows=5)
    p = rng.uniform(0.05, 0.95, 3000)
    y = (rng.random(3000) < p).astype(float)
    counted = slice_sums(family, RowScores((p, y), bernoulli_draw, 40, 41), seed=4)
    by_rows = slice_sums(family, RowScores((p, y), _bernoulli_by_rows, 40, 41), seed=4)
    np.testing.assert_array_equal(counted, by_rows)
    P = rng.dirichlet(np.ones(3), 3000)
    labels = rng.integers(0, 3, 3000)
    np.testing.assert_array_equal(
        slice_sums(family, RowScores((P, labels), categorical_draw, 10, 33), seed=4),
        slice_sums(family, RowScores((P, labels), _categorical_by_rows, 10, 33), seed=4))


def test_row_cells_group_rows_with_equal_codes_by_key_or_by_row() -> None:
    rng = np.random.default_rng(22)
    codes = rng.integers(-1, 3, (500, 4)).astype(np.int32)
    for levels in ((3, 3, 3, 3), (3, 3, 2**40, 2**40)):  # a key of 62 bits, then rows
        first, cell_of = row_cells(codes, levels)
        np.testing.assert_array_equal(codes[first][cell_of], codes)
        assert len({tuple(row) for row in codes[first]}) == first.size


def test_the_gpu_task_builds_device_arrays_and_matches_numpy(monkeypatch) -> None:
    """The task's CuPy branch, with numpy and scipy standing in for CuPy and cupyx (this
    machine has no GPU; ``benchmarks/slices.py --engine gpu`` runs the real one)."""
    fake_cupy = types.ModuleType("cupy")
    fake_cupy.asarray = np.asarray
    fake_sparse = types.ModuleType("cupyx.scipy.sparse")
    fake_sparse.csr_matrix = sparse.csr_matrix
    fake_scipy = types.ModuleType("cupyx.scipy")
    fake_scipy.sparse = fake_sparse
    fake_cupyx = types.ModuleType("cupyx")
    fake_cupyx.scipy = fake_scipy
    for name, module in (("cupy", fake_cupy), ("cupyx", fake_cupyx),
                         ("cupyx.scipy", fake_scipy), ("cupyx.scipy.sparse", fake_sparse)):
        monkeypatch.setitem(sys.modules, name, module)
    rng = np.random.default_rng(13)
    family = enumerate_slices(features_frame(1000, rng))
    p = rng.uniform(0.1, 0.9, 1000)
    scores = RowScores((p, (rng.random(1000) < p).astype(float)), bernoulli_draw, 20, 21)
    item = chunk_items(family, scores, seed=3)[0]
    np.testing.assert_array_equal(np.asarray(_chunk_sums("cupy", item)),
                                  _chunk_sums("numpy", item))


def test_slice_sums_on_a_dask_cluster_equal_the_threaded_ones() -> None:
    distributed = pytest.importorskip("dask.distributed")
    rng = np.random.default_rng(5)
    frame = features_frame(4000, rng)
    family = enumerate_slices(frame)
    p = rng.uniform(0.1, 0.9, 4000)
    scores = RowScores((p, (rng.random(4000) < p).astype(float)), bernoulli_draw, 30, 31)
    threaded = slice_sums(family, scores, seed=2)
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False,
                                  dashboard_address=":0") as cluster, \
            distributed.Client(cluster) as client, engine.use("dask", client=client):
        clustered = slice_sums(family, scores, seed=2)
    np.testing.assert_array_equal(clustered, threaded)


# --------------------------------------------------------------------------- discovery


def planted(n: int, rng: np.random.Generator, shift: float) -> tuple:
    frame = features_frame(n, rng)
    p = rng.beta(2, 5, n)
    top_quartile = frame["age"] >= np.quantile(frame["age"], 0.75)
    cell = (frame["race"] == "B").to_numpy() & top_quartile.to_numpy()
    truth = np.clip(p + shift * cell, 0, 1)
    return p, (rng.random(n) < truth).astype(int), frame, cell


def test_a_planted_slice_is_the_top_finding_with_a_covering_interval() -> None:
    rng = np.random.default_rng(6)
    p, y, frame, cell = planted(8000, rng, 0.25)
    result = discover_slices(p, y, frame, n_resamples=500, seed=1)
    top = result.findings.iloc[0]
    assert top["slice"].startswith("race = B ∧ age ") and top["slice"].endswith("–89")
    assert top["gap"] > 0.15 and top["p_adjusted"] < 0.01
    assert top["ci_low"] > 0 and top["ci_low"] <= top["gap"] <= top["ci_high"]
    assert result.n_tested == len(result.table) == result.n_slices
    assert list(result.table.columns)[:7] == ["slice", "depth", "class", "rows", "observed",
                                              "predicted", "gap"]
    assert "family-wise error rate controlled at α = 0.05" in result.statement()
    assert "not shown to be calibrated" in result.summary()
    # ranked most significant first
    keys = list(zip(result.table["p_adjusted"], -result.table["statistic"].abs(), strict=True))
    assert keys == sorted(keys)


def test_a_global_shift_is_one_finding_with_its_slices_listed_under_it() -> None:
    rng = np.random.default_rng(7)
    frame = features_frame(6000, rng)
    p = rng.beta(2, 5, 6000)
    y = (rng.random(6000) < np.clip(p + 0.06, 0, 1)).astype(int)
    result = discover_slices(p, y, frame, n_resamples=300)
    findings = result.findings
    assert findings.iloc[0]["slice"] == "all rows"
    listed = result.listed("all rows")
    assert len(listed) >= 3 and set(listed["slice"]) <= set(result.significant["slice"])
    # a listed slice's interval overlaps its parent's; a finding's does not overlap a
    # flagged parent's
    table = result.table.set_index("slice")
    for _, row in result.significant.iterrows():
        if row["listed_under"]:
            parent = table.loc[row["listed_under"]]
            assert row["ci_low"] <= parent["ci_high"] and parent["ci_low"] <= row["ci_high"]


def test_intervals_exclude_zero_exactly_when_the_single_step_test_rejects() -> None:
    """300 slices of 30–3,000 rows, predictions ~ Beta, outcomes drawn with a shift of up to
    ±0.15: every interval holds its gap, stays in [−p̄, 1 − p̄], and excludes 0 exactly when
    |T| > c (the intervals invert the test)."""
    rng = np.random.default_rng(8)
    rows, mean, variance, counts = [], [], [], []
    for _ in range(300):
        size = int(rng.integers(30, 3000))
        p = rng.beta(rng.uniform(0.5, 4), rng.uniform(0.5, 4), size)
        y = rng.random(size) < np.clip(p + rng.uniform(-0.15, 0.15), 0, 1)
        rows.append(size)
        mean.append(p.sum())
        variance.append((p * (1 - p)).sum())
        counts.append(y.sum())
    rows, mean, variance, counts = map(np.asarray, (rows, mean, variance, counts))
    gap = (counts - mean) / rows
    pbar = mean / rows
    c = 3.1
    low, high = gap_intervals(rows, mean, variance, gap, c)
    t = standardized(counts, mean, variance)
    np.testing.assert_array_equal((low > 0) | (high < 0), np.abs(t) > c)
    assert np.all(low <= gap + 1e-12) and np.all(gap <= high + 1e-12)
    assert np.all(low >= -pbar - 1e-12) and np.all(high <= 1 - pbar + 1e-12)
    # a rate at 1 with spread predictions: the Wilson fallback still gives an interval
    low, high = gap_intervals(np.array([50.0]), np.array([30.0]), np.array([5.0]),
                              np.array([0.4]), 3.0)
    assert low[0] < 0.4 <= high[0] + 1e-12


def test_multiclass_classwise_and_top_label() -> None:
    rng = np.random.default_rng(9)
    n = 3000
    frame = features_frame(n, rng)
    P = rng.dirichlet(np.ones(3), n)
    y = np.array([rng.choice(3, p=row) for row in P])
    y[(frame["race"] == "A").to_numpy() & (rng.random(n) < 0.3)] = 2  # class 2 too often in A
    result = discover_slices(P, y, frame, n_resamples=200, class_names=("a", "b", "c"))
    assert result.notion == "classwise" and result.classes == ("a", "b", "c")
    assert result.n_tested == 3 * result.n_slices
    top = result.findings.iloc[0]
    assert top["class"] == "c" and "race = A" in top["slice"] and top["gap"] > 0
    top_label = discover_slices(P, y, frame, n_resamples=200, notion="top-label")
    assert set(top_label.table["class"]) == {"top label"}
    assert top_label.n_tested == top_label.n_slices


def test_too_few_rows_for_any_slice_is_said_in_both_modes() -> None:
    rng = np.random.default_rng(14)
    frame = features_frame(20, rng)
    p = rng.uniform(0.1, 0.9, 20)
    y = (rng.random(20) < p).astype(int)
    for rate in ("fwer", "fdr"):
        result = discover_slices(p, y, frame, error_rate=rate)
        assert result.n_tested == 0 and not result.rejects()
        assert result.statement().startswith("No slice was tested: none of the columns'")
        assert "Nothing was tested" in result.summary()


def test_bad_arguments_get_sentences() -> None:
    rng = np.random.default_rng(10)
    p, y, frame, _ = planted(200, rng, 0.0)
    with pytest.raises(ValueError, match="Unknown error rate 'bonferroni'"):
        discover_slices(p, y, frame, error_rate="bonferroni")
    with pytest.raises(ValueError, match="alpha must lie strictly between 0 and 1"):
        discover_slices(p, y, frame, alpha=1.5)
    with pytest.raises(ValueError, match="features has 100 rows but there are 200"):
        discover_slices(p, y, frame.iloc[:100])
    with pytest.raises(ValueError, match="'positive' notion needs a binary model"):
        discover_slices(rng.dirichlet(np.ones(3), 200), y, frame, notion="positive")


@pytest.mark.slow
def test_bounded_level_study_fwer_holds_and_naive_testing_does_not() -> None:
    """The level study of ``benchmarks/slices_study.py``, bounded: the ``issue`` setting
    (calibrated; sex × race × 4 age ranges, ≈ 50 slices) at n = 2,000, R = 120 data sets,
    B = 100. The share of data sets with any flagged slice must be 0.05 ± 3·SE with
    SE = √(0.05·0.95/R) = 0.020, i.e. at most 0.110, in FWER mode and in FDR mode (under the
    complete null FDR = FWER); naive per-slice testing at α = 0.05 flags some slice in most
    data sets (0.6–0.8 in the benchmark), far above 0.05 + 3·SE."""
    rng = np.random.default_rng(11)
    R = 120
    se = math.sqrt(0.05 * 0.95 / R)
    fwer = fdr = naive = 0
    for r in range(R):
        audit = simulate_slices("issue", rng, n=2000)
        result = discover_slices(audit.probs, audit.y, audit.features, n_resamples=100, seed=r)
        fwer += result.rejects()
        fdr += discover_slices(audit.probs, audit.y, audit.features, error_rate="fdr",
                               n_resamples=1).rejects()
        naive += bool((result.table["p_value"] <= 0.05).any())
    assert fwer / R <= 0.05 + 3 * se and fdr / R <= 0.05 + 3 * se
    assert naive / R > 0.05 + 3 * se


@pytest.mark.slow
def test_bounded_power_and_false_discoveries_with_planted_slices() -> None:
    """The power and FDR studies, bounded (R = 30 data sets of 20,000 rows each, B = 200).
    Power: the 2 % slice with gap 0.1 is flagged in 0.85 ± 0.04 of the benchmark's data
    sets; here at least 0.85 − 3·√(0.85·0.15/30) = 0.65. FDR: the mean false discovery
    proportion of the mixture (three planted cells) must stay below 0.05 + 3·SE with
    SE = √(0.05·0.95/30) = 0.040 (the FDP is at most 1, so its SE is at most that of a
    Bernoulli(0.05) count when its mean is near 0.05)."""
    rng = np.random.default_rng(12)
    R = 30
    flagged = 0
    fdp = []
    for r in range(R):
        audit = simulate_slices("planted-2pct", rng)
        result = discover_slices(audit.probs, audit.y, audit.features, n_resamples=200, seed=r)
        family = result.family
        k = next(k for k in np.flatnonzero(family.sizes == audit.cells[0].sum())
                 if family.mask(k)[audit.cells[0]].all())
        flagged += bool(result.table.set_index("slice").loc[family.names[k], "significant"])
        mixture = simulate_slices("mixture", rng)
        fdr = discover_slices(mixture.probs, mixture.y, mixture.features, error_rate="fdr",
                              n_resamples=1)
        names = fdr.family.names
        false = sum(not mixture.affected[fdr.family.mask(names.index(name))].any()
                    for name in fdr.significant["slice"])
        fdp.append(false / max(1, len(fdr.significant)))
    assert flagged / R >= 0.85 - 3 * math.sqrt(0.85 * 0.15 / R)
    assert np.mean(fdp) <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / R)


def test_figures_escape_user_named_levels() -> None:
    """Plotly reads a few HTML tags in text: a level named like markup is shown as text."""
    from core.figures.findings import slice_forest_figure, slice_treemap_figure

    rng = np.random.default_rng(15)
    frame = pd.DataFrame({"g": rng.choice(["<b>x</b>", "y"], 600),
                          "h": rng.choice(["<a href='javascript:1'>h</a>", "k"], 600)})
    p = rng.uniform(0.2, 0.8, 600)
    result = discover_slices(p, (rng.random(600) < p).astype(int), frame, n_resamples=50)
    forest = slice_forest_figure(result.table)
    labels = [str(v) for trace in forest.data for v in trace.y]
    assert labels and not any("<b>" in v or "<a" in v for v in labels)
    assert any("&lt;b&gt;x&lt;/b&gt;" in v for v in labels)
    tree = slice_treemap_figure(result)
    assert not any("<a" in str(v) or "<b>" in str(v) for v in tree.data[0].labels)
