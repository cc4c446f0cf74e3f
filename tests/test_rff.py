"""Random Fourier features: the statistic's algebra, its level (exact for any D) and power."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import expit

from core.data.simulations import calibrated_two_features, type_two_paper
from core.kernels.rff import (
    FourierMap,
    accumulate,
    accumulate_maps,
    bernoulli_columns,
    drawn_ahead,
)
from core.stattests.klce import klce_test
from core.stattests.klce_grid import klce_grid_test
from core.stattests.skce import skce_test


def test_running_sums_equal_the_literal_statistics() -> None:
    rng = np.random.default_rng(0)
    n, d = 300, 3
    points = rng.standard_normal((n, d))
    p = expit(points[:, 0])
    e = (rng.random(n) < p) - p
    fourier = FourierMap.draw(d, 64, seed=1, dtype=np.float64)  # the algebra, unrounded
    sums = accumulate(points, bernoulli_columns(p, e, 5, seed=2), fourier, chunk_rows=70)
    # the resampled columns, drawn in one piece: row by row, the chunks drew the same
    E = bernoulli_columns(p, e, 5, seed=2)(slice(0, n))
    phi = fourier.features(points)
    K = phi @ phi.T
    off = K - np.diag(np.diag(K))
    np.testing.assert_allclose(sums.plain(), np.einsum("ib,ij,jb->b", E, off, E), rtol=1e-10)
    A = E - E.mean(axis=0)
    np.testing.assert_allclose(sums.centred(), np.einsum("ib,ij,jb->b", A, off, A), rtol=1e-9)


def test_partitions_accumulated_apart_add_up_to_one_pass() -> None:
    # The draws of a row depend on its global number only, so any cutting of the rows into
    # partitions (each accumulated on its own, with its own chunking) gives one pass's sums:
    # to float64 rounding with a float64 map; in float32 too when the partitions
    # walk the same chunks (boundaries at multiples of the chunk size, as Parquet's default
    # row groups of 2²⁰ rows are for chunks of 8,192).
    from core.kernels.rff import FourierAccumulator

    rng = np.random.default_rng(5)
    n = 1000
    points = rng.standard_normal((n, 2))
    p = expit(points[:, 0])
    e = (rng.random(n) < p) - p
    bandwidths = np.array([[1.0, 1.0], [0.5, 2.0]])
    for dtype, cuts, chunk, rtol in ((np.float64, (0, 333, 334, 1000), 70, 1e-10),
                                     (np.float32, (0, 400, 500, 1000), 100, 1e-13)):
        fourier = FourierMap.draw(2, 32, seed=1, dtype=dtype)
        whole = accumulate_maps(points, bernoulli_columns(p, e, 9, seed=4), fourier,
                                bandwidths, chunk_rows=100)
        parts = []
        for start, stop in zip(cuts[:-1], cuts[1:], strict=True):
            accumulator = FourierAccumulator(fourier, bandwidths)
            local = bernoulli_columns(p[start:stop], e[start:stop], 9, seed=4, offset=start)
            for s in range(0, stop - start, chunk):
                rows = slice(s, min(s + chunk, stop - start))
                accumulator.add(points[start:stop][rows], local(rows))
            parts.append(accumulator.sums())
        for m in range(2):
            combined = parts[0][m] + parts[1][m] + parts[2][m]
            for statistic in ("plain", "centred"):
                np.testing.assert_allclose(getattr(combined, statistic)(),
                                           getattr(whole[m], statistic)(), rtol=rtol,
                                           atol=1e-9)


def test_many_features_approach_the_exact_statistic() -> None:
    from core.kernels.spec import KernelSpec, inputs_for
    from core.kernels.tiles import quadratic_forms

    p, y, X = calibrated_two_features(np.random.default_rng(3), n=400)
    exact = klce_test(p, y, X, n_resamples=200, computation="exact", null="consistency")
    approx = klce_test(p, y, X, n_resamples=200, computation="rff", n_features=8192,
                       null="consistency")
    assert approx.parameters["computation"] == "rff(8192)"
    assert exact.parameters["computation"] == "exact"
    # Each kernel entry errs by O(1/√D) ≈ 0.011 at D = 8192; measured: the statistic moves by
    # 0.004 null sd. Allowed: 0.05 sd.
    spread = np.std(exact.null)
    assert abs(approx.statistic - exact.statistic) < 0.05 * spread
    # The null, on the same 200 resampled label vectors: each resampled statistic moves by a
    # few per cent of the null's spread (measured: 0.096 sd at most over the 200), and the
    # spread by 1.1%. Allowed: 0.2 sd and 3% (independent resamples would differ by several
    # per cent: the sd of a heavy-tailed null over 200 draws varies that much by seed).
    inputs = inputs_for(np.column_stack([1 - p, p]), y, X, KernelSpec())
    columns = bernoulli_columns(inputs.p, inputs.residuals, 200, seed=0)
    E = columns(slice(0, inputs.p.shape[0]))
    literal = quadratic_forms(inputs.points, E, 1.0)  # Σ_{i≠j} K_ij e_i e_j per column
    fourier = FourierMap.draw(inputs.points.shape[1], 8192, seed=0)
    tilde = accumulate(inputs.points, columns, fourier).plain()
    spread = np.std(literal[1:])
    assert np.max(np.abs(tilde - literal)) < 0.2 * spread
    assert np.std(tilde[1:]) == pytest.approx(spread, rel=0.03)


def test_rff_level_holds_on_calibrated_data() -> None:
    """Consistency resampling calibrates the fixed approximate statistic exactly: 200
    repetitions at α = 0.05; binomial SE √(0.05·0.95/200) = 0.0154, allowed ± 3 SE."""
    rng = np.random.default_rng(11)
    reps, rejected = 200, 0
    for rep in range(reps):
        p, y, X = calibrated_two_features(rng, n=300)
        result = klce_test(p, y, X, n_resamples=99, seed=rep, computation="rff",
                           n_features=256)
        rejected += result.p_value <= 0.05
    assert abs(rejected / reps - 0.05) <= 3 * np.sqrt(0.05 * 0.95 / reps)


def test_rff_has_power_on_the_papers_blind_model() -> None:
    rejected = 0
    for rep in range(10):
        p, y, X = type_two_paper(np.random.default_rng(100 + rep), n=500, d=10)
        rejected += klce_test(p, y, X, n_resamples=199, seed=rep, computation="rff",
                              n_features=1024).p_value <= 0.05
    assert rejected >= 7  # the exact test's power here is 0.88 (README's null study)


def test_auto_block_and_unsupported_combinations() -> None:
    p, y, X = calibrated_two_features(np.random.default_rng(4), n=200)
    auto = klce_test(p, y, X, n_resamples=50)
    assert auto.parameters["computation"] == "exact"
    assert "takes about" in auto.parameters["computation_reason"]
    block = klce_test(p, y, X, computation="block", block_size=4)
    assert block.parameters["computation"] == "block(4)" and 0 <= block.p_value <= 1
    assert block.parameters["n_blocks"] == 50
    with pytest.raises(ValueError, match="needs the exact computation"):
        klce_test(p, y, X, null="permutation", computation="rff")
    with pytest.raises(ValueError, match="Unknown computation 'fast'"):
        klce_test(p, y, X, computation="fast")
    with pytest.raises(ValueError, match="n_features must be a whole number"):
        klce_test(p, y, X, computation="rff", n_features=0)


def test_skce_rff_level_and_agreement() -> None:
    """The SKCE consistency test under random Fourier features: near the exact statistic, and
    its level holds (150 calibrated 3-class datasets, α = 0.05, binomial SE 0.018, ± 3 SE)."""
    rng = np.random.default_rng(21)
    P = rng.dirichlet([1.0, 1.0, 1.0], 400)
    y = np.array([rng.choice(3, p=q) for q in P])
    exact = skce_test(P, y, n_resamples=200, computation="exact")
    approx = skce_test(P, y, n_resamples=200, computation="rff", n_features=4096)
    assert approx.parameters["computation"] == "rff(4096)"
    assert abs(approx.statistic - exact.statistic) < 0.1 * np.std(exact.null)
    reps, rejected = 150, 0
    for rep in range(reps):
        p = rng.uniform(0.05, 0.95, 300)
        labels = (rng.random(300) < p).astype(int)
        rejected += skce_test(p, labels, n_resamples=99, seed=rep, computation="rff",
                              n_features=256).p_value <= 0.05
    assert abs(rejected / reps - 0.05) <= 3 * np.sqrt(0.05 * 0.95 / reps)


def test_grid_test_under_rff_matches_the_exact_verdict() -> None:
    p, y, X = type_two_paper(np.random.default_rng(1), n=500, d=5)
    exact = klce_grid_test(p, y, X, n_resamples=100, computation="exact")
    approx = klce_grid_test(p, y, X, n_resamples=100, computation="rff", n_features=2048)
    assert approx.aggregated.parameters["computation"] == "rff(2048)"
    assert exact.aggregated.rejects() and approx.aggregated.rejects()
    with pytest.raises(ValueError, match="needs the exact computation"):
        klce_grid_test(p, y, X, null="permutation", computation="rff")
    with pytest.raises(ValueError, match="no grid version"):
        klce_grid_test(p, y, X, computation="block")
    # under "auto" a null without a chunked version stays exact, whatever the size
    permutation = klce_grid_test(p, y, X, null="permutation", n_resamples=20)
    assert permutation.aggregated.parameters["computation"] == "exact"


def test_single_precision_features_move_the_statistic_far_less_than_the_null_spread() -> None:
    """float32 φ (the default) against float64 φ on the same W, b and resamples: the rounding
    (≈ 1e-6 relative) must be negligible beside the null's spread and the O(1/√D) error."""
    p, y, X = type_two_paper(np.random.default_rng(3), n=2000, d=3)
    points = np.column_stack([p, X]) / 0.5
    e = y - p
    columns = bernoulli_columns(p, e, 50, seed=0)
    single, double = (accumulate(points, columns, FourierMap.draw(4, 512, 0, dtype))
                      for dtype in (np.float32, np.float64))
    spread = np.std(double.plain()[1:])
    np.testing.assert_allclose(single.plain(), double.plain(), rtol=0, atol=1e-4 * spread)
    np.testing.assert_allclose(single.centred(), double.centred(), rtol=0, atol=1e-4 * spread)


def test_one_pass_for_many_maps_equals_one_pass_each() -> None:
    rng = np.random.default_rng(4)
    points = rng.standard_normal((500, 3))
    p = expit(points[:, 0])
    columns = bernoulli_columns(p, (rng.random(500) < p) - p, 7, seed=6)
    fourier = FourierMap.draw(3, 64, seed=5)
    bandwidths = np.array([[1.0, 1.0, 1.0], [0.5, 2.0, 2.0], [0.3, np.inf, np.inf]])
    together = accumulate_maps(points, columns, fourier, bandwidths, chunk_rows=128)
    for sigma, sums in zip(bandwidths, together, strict=True):
        alone = accumulate(points / sigma, columns, fourier, chunk_rows=128)
        spread = np.std(alone.plain()[1:])
        np.testing.assert_allclose(sums.plain(), alone.plain(), rtol=0, atol=1e-4 * spread)
    # an infinite bandwidth drops its coordinates: the map equals one drawn without them
    dropped = FourierMap(fourier.weights[:1])
    reference = accumulate(points[:, :1] / 0.3, columns, dropped, chunk_rows=128)
    np.testing.assert_allclose(together[2].plain(), reference.plain(), rtol=0,
                               atol=1e-4 * np.std(reference.plain()[1:]))


def test_a_grid_cell_equals_the_single_test_at_its_bandwidths() -> None:
    p, y, X = type_two_paper(np.random.default_rng(2), n=600, d=3)
    grid = klce_grid_test(p, y, X, null="consistency", n_resamples=60, computation="rff",
                          n_features=256, seed=3)
    sigma_p, sigma_x = grid.prob_bandwidths[1], grid.feature_bandwidths[3]
    single = klce_test(p, y, X, sigma_p, sigma_x, null="consistency", n_resamples=60,
                       computation="rff", n_features=256, seed=3)
    assert grid.p_values[1, 3] == single.p_value
    assert grid.statistics[1, 3] == pytest.approx(single.statistic, rel=1e-12)


def test_results_carry_the_estimated_time_of_the_exact_computation() -> None:
    """Pages offer "run exact" with the estimate the result recorded when it chose."""
    from core.kernels.computation import exact_seconds

    p, y, X = type_two_paper(np.random.default_rng(6), n=400, d=3)
    single = klce_test(p, y, X, n_resamples=30, computation="rff", n_features=64)
    assert single.parameters["exact_seconds"] == exact_seconds(400, 31)
    grid = klce_grid_test(p, y, X, n_resamples=30, computation="rff", n_features=64)
    assert grid.aggregated.parameters["exact_seconds"] == exact_seconds(400, 31 * 25)


class _DeviceArray(np.ndarray):
    """An array "on the device" of the fake CuPy below: numpy underneath, ``get()`` copies
    it to the host as CuPy's does."""

    def get(self) -> np.ndarray:
        return np.asarray(self).copy()


def _fake_cupy(calls: list) -> object:
    """numpy standing in for CuPy (this machine has no GPU): arrays made by it are
    :class:`_DeviceArray`, and every transfer to the device is counted in ``calls``."""
    import types

    fake = types.ModuleType("cupy")

    def asarray(values, dtype=None):
        calls.append(np.shape(values))
        return np.asarray(values, dtype=dtype).view(_DeviceArray)

    fake.asarray = asarray
    fake.empty = lambda shape, dtype=None: np.empty(shape, dtype=dtype).view(_DeviceArray)
    fake.float32, fake.float64 = np.float32, np.float64
    fake.cos, fake.sin = np.cos, np.sin  # ufuncs: the results stay "on the device"
    return fake


def test_random_feature_sums_on_the_gpu_engine_equal_the_threads(monkeypatch) -> None:
    """The GPU branch of accumulate_maps (a bandwidth grid: two maps, one column dropped) with a
    fake CuPy: the same chunks and resampled columns, the features and products computed on
    the "device", the sums equal the threads' to the float32 products' rounding."""
    import sys

    from core.kernels import engine

    rng = np.random.default_rng(21)
    n = 3 * 8192 + 77
    p, y, X = type_two_paper(rng, n=n, d=2)
    points = np.column_stack([p, X])
    fourier = FourierMap.draw(3, 64, seed=4)
    bandwidths = np.array([[0.5, 1.0, 1.0], [2.0, np.inf, np.inf]])
    columns = bernoulli_columns(p, y - p, 20, seed=6)
    threaded = accumulate_maps(points, columns, fourier, bandwidths)
    calls: list = []
    monkeypatch.setitem(sys.modules, "cupy", _fake_cupy(calls))
    monkeypatch.setattr(engine, "gpu_available", lambda: True)
    with engine.use("gpu"):
        on_gpu = accumulate_maps(points, columns, fourier, bandwidths)
    assert len(calls) >= 4 * 2  # every chunk's points, columns and frequencies went over
    for mine, theirs in zip(on_gpu, threaded, strict=True):
        assert type(mine.S) is np.ndarray and mine.n == n  # the sums are on the host
        np.testing.assert_allclose(mine.S, theirs.S, rtol=1e-5, atol=1e-6 * np.abs(theirs.S).max())
        np.testing.assert_allclose(mine.plain(), theirs.plain(), rtol=1e-5)
        np.testing.assert_allclose(mine.centred(), theirs.centred(), rtol=1e-5)
        np.testing.assert_allclose(mine.e2_sum, theirs.e2_sum, rtol=1e-12)  # added in order


@pytest.mark.parametrize("workers", [1, 3])
def test_columns_drawn_ahead_come_in_chunk_order_in_the_callers_context(monkeypatch,
                                                                         workers) -> None:
    """The GPU pass's columns, drawn on threads ahead of the device, are the chunks' columns in
    order (more chunks than the window of two per thread), each drawn under the engine settings
    chosen by the caller, and no more than the window is drawn before the consumer asks."""
    from core.kernels import engine, rff

    monkeypatch.setattr(rff, "machine_workers", lambda: workers)
    p = np.linspace(0.05, 0.95, 1000)
    columns = bernoulli_columns(p, np.zeros_like(p), 5, seed=3)
    chunks = [slice(start, min(start + 64, 1000)) for start in range(0, 1000, 64)]
    seen: list = []

    def drawing(rows: slice) -> np.ndarray:
        seen.append((rows.start, engine.current().label))
        return columns(rows)

    with engine.use("threads", label="the caller's"):
        stream = drawn_ahead(drawing, chunks)
        first = next(stream)
        assert len(seen) <= max(1, 2 * workers)
        drawn = [first, *stream]
    assert len(drawn) == len(chunks)
    for rows, E in zip(chunks, drawn, strict=True):
        np.testing.assert_array_equal(E, columns(rows))
    assert sorted(seen) == [(rows.start, "the caller's") for rows in chunks]


def test_the_exact_or_random_feature_choice_does_not_depend_on_the_measured_speed(
        monkeypatch) -> None:
    """On the threads engine "auto" chooses exact or random features from the data alone
    (a fixed speed), so a slow moment of the machine never changes a reported p-value: the
    tile pass that measures the speed is never run, and the boundary between exact and random
    features follows from :data:`EXACT_PAIR_SECONDS`."""
    from core.kernels import computation, tiles

    def slow(*args, **kwargs):
        raise AssertionError("the threads engine's plan measured the tiles' speed")

    monkeypatch.setattr(tiles, "quadratic_forms", slow)
    computation.measured_seconds_per_pair_column.cache_clear()
    columns = 501
    boundary = int(np.sqrt(2 * computation.AUTO_SECONDS
                           / (computation.EXACT_PAIR_SECONDS * columns)))
    below = computation.plan("auto", boundary - 50, columns - 1, 1024)
    above = computation.plan("auto", boundary + 50, columns - 1, 1024)
    assert below.label == "exact" and above.label.startswith("rff")
    assert below.exact_seconds == pytest.approx(
        computation.EXACT_PAIR_SECONDS * (boundary - 50) ** 2 / 2 * columns)
