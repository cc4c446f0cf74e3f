"""LCE / MLCE (Luo et al., eqs. 4–5): hand example, dense reference, limits, binned grid."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core import metrics
from core.local.lce_estimate import lce, lce_result, mlce, mlce_curve
from core.local.lce_grid import binned_error_bound
from core.local.lce_inputs import confidence_bins
from core.local.lce_plan import AUTO_GRIDS, AUTO_MAX_ERROR, choose_method, plan_method
from core.local.lce_summary import bin_lce_cdf, bin_summary, lce_cdf
from core.local.lce_sweep import sweep_sums_bin


def dense_signed_lce(conf: np.ndarray, correct: np.ndarray, X: np.ndarray, gamma: float,
                     n_bins: int = 15) -> np.ndarray:
    """Eq. 4 written out with the full kernel matrix, masked to same-bin pairs."""
    X = np.asarray(X, dtype=np.float64)
    bins = metrics.bin_indices(conf, np.linspace(0, 1, n_bins + 1))
    dist = np.abs(X[:, None, :] - X[None, :, :]).sum(axis=2)
    K = np.exp(-dist / (X.shape[1] * gamma)) * (bins[:, None] == bins[None, :])
    return K @ (conf - correct) / K.sum(axis=1)


def multiclass(n: int, m: int = 5, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Over-confident m-class predictions and labels drawn from softened probabilities."""
    rng = np.random.default_rng(seed)
    probs = rng.dirichlet(np.full(m, 0.3), size=n)
    truth = probs**0.5 / (probs**0.5).sum(axis=1, keepdims=True)
    y = (rng.random((n, 1)) > np.cumsum(truth, axis=1)).sum(axis=1).clip(max=m - 1)
    return probs, y


def spatial_problem(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Unit-box 2-D features; over-confident on the left, under-confident on the right."""
    rng = np.random.default_rng(seed)
    X = rng.random((n, 2))
    conf = rng.uniform(0.3, 1.0, n)
    correct = (rng.random(n) < np.clip(conf + 0.3 * (X[:, 0] - 0.5), 0, 1)).astype(float)
    return conf, correct, X


# --------------------------------------------------------------------------- eq. 4 itself


def test_hand_computed_four_points() -> None:
    """Two bins of two points; γ = 1/ln 2 makes k = 2^(−‖Δ‖₁/2) in 2-D.

    Bin (0.5, 1]: A (0.9, right, (0,0)) v = −0.1, B (0.8, wrong, (1,1)) v = 0.8, k = 1/2:
    LCE_A = (−0.1 + 0.4)/1.5 = 0.2, LCE_B = (−0.05 + 0.8)/1.5 = 0.5.
    Bin [0, 0.5]: C (0.4, right, (0,0)) v = −0.6, D (0.3, wrong, (2,2)) v = 0.3, k = 1/4:
    LCE_C = (−0.6 + 0.075)/1.25 = −0.42, LCE_D = (−0.15 + 0.3)/1.25 = 0.12.
    A and C share a location but not a bin, so they never see each other.
    """
    conf = [0.9, 0.8, 0.4, 0.3]
    correct = [1, 0, 1, 0]
    X = [[0, 0], [1, 1], [0, 0], [2, 2]]
    gamma = 1 / np.log(2)
    signed = lce(conf, correct, X, gamma, n_bins=2, signed=True)
    np.testing.assert_allclose(signed, [0.2, 0.5, -0.42, 0.12], atol=1e-12)
    np.testing.assert_allclose(lce(conf, correct, X, gamma, n_bins=2), [0.2, 0.5, 0.42, 0.12],
                               atol=1e-12)
    assert mlce(conf, correct, X, gamma, n_bins=2) == pytest.approx(0.5, abs=1e-12)


@pytest.mark.parametrize(("d", "tile", "n_jobs"), [(1, 7, 1), (3, 64, 2), (3, 1000, None),
                                                  (5, 33, 2)])
def test_exact_matches_dense_reference(d: int, tile: int, n_jobs: int | None) -> None:
    rng = np.random.default_rng(d)
    conf = rng.uniform(0.2, 1.0, 300)
    correct = (rng.random(300) < conf).astype(float)
    X = rng.normal(size=(300, d))
    got = lce(conf, correct, X, 0.3, signed=True, method="exact", tile_size=tile, n_jobs=n_jobs)
    np.testing.assert_allclose(got, dense_signed_lce(conf, correct, X, 0.3), atol=1e-12)


def test_signed_is_confidence_minus_accuracy() -> None:
    """A bin whose predictions are all wrong is over-confident: signed LCE = +conf."""
    conf = np.array([0.95, 0.97, 0.99])
    got = lce(conf, [0, 0, 0], [[0.0], [1.0], [2.0]], 0.5, signed=True)
    assert np.all(got > 0)
    assert np.all(lce(conf, [1, 1, 1], [[0.0], [1.0], [2.0]], 0.5, signed=True) < 0)


@settings(max_examples=40, deadline=None)
@given(
    n=st.integers(1, 25),
    d=st.integers(1, 3),
    log_gamma=st.floats(-4, 4),
    seed=st.integers(0, 2**16),
)
def test_lce_between_zero_and_one(n: int, d: int, log_gamma: float, seed: int) -> None:
    rng = np.random.default_rng(seed)
    edges = rng.choice([0.0, 1 / 15, 0.5, 14 / 15, 1.0], n)  # bin edges and the extremes
    conf = np.where(rng.random(n) < 0.5, edges, rng.random(n))
    correct = rng.integers(0, 2, n)
    X = rng.normal(size=(n, d)) * 10 ** rng.uniform(-3, 3)
    methods = ("exact", "binned") if d == 2 else ("exact",)
    for method in methods:
        signed = lce(conf, correct, X, 10**log_gamma, signed=True, method=method, grid_size=9)
        unsigned = lce(conf, correct, X, 10**log_gamma, method=method, grid_size=9)
        assert np.all((unsigned >= 0) & (unsigned <= 1))
        assert np.all((signed >= -1) & (signed <= 1))
        np.testing.assert_array_equal(unsigned, np.abs(signed))


# --------------------------------------------------------------------------- VALIDATION.md


@pytest.mark.parametrize("gamma", [1e9, np.inf])
@pytest.mark.parametrize("method", ["exact", "binned"])
def test_large_gamma_gives_bin_gaps_and_mce(gamma: float, method: str) -> None:
    """γ → ∞ (Lemma 1): LCE = the bin's |gap| for every point, MLCE = top-label MCE."""
    probs, y = multiclass(1500)
    conf, correct = metrics.confidence_outcome(probs, y, "top-label")
    X = np.random.default_rng(1).normal(size=(1500, 2))
    values = lce(conf, correct, X, gamma, method=method)
    table = metrics.reliability_table(probs, y, 15, "uniform", notion="top-label",
                                      n_resamples=0)
    expected = np.abs(table["gap"].to_numpy())[confidence_bins(conf)]
    np.testing.assert_allclose(values, expected, atol=1e-7)
    assert mlce(conf, correct, X, gamma, method=method) == pytest.approx(
        metrics.mce(probs, y, 15, "uniform", notion="top-label"), abs=1e-7)


def test_tiny_gamma_gives_each_points_own_error() -> None:
    """γ → 0: only the point itself keeps weight, LCE(x_j) = |c_j − o_j|."""
    conf, correct, X = spatial_problem(800, seed=3)
    signed = lce(conf, correct, X, 1e-7, signed=True)
    np.testing.assert_allclose(signed, conf - correct, atol=1e-12)
    assert mlce(conf, correct, X, 1e-7) == pytest.approx(np.max(np.abs(conf - correct)))


def test_disagreeing_neighbours_with_the_point_included() -> None:
    """What "MLCE → 1 whenever some bin holds disagreeing neighbours" means under eq. 4.

    Two predictions at confidence 0.97 in one bin, one right and one wrong. Apart in feature
    space, γ → 0 leaves each with its own error: LCE = (0.03, 0.97), so the MLCE tends to the
    confidence of the confident mistake — 1 only when that confidence is 1. At the same
    location they stay averaged whatever γ: (0.97 − 0.03)/2 = 0.47.
    """
    conf, correct = [0.97, 0.97], [1, 0]
    apart = lce(conf, correct, [[0.0, 0.0], [1.0, 1.0]], 1e-6)
    np.testing.assert_allclose(apart, [0.03, 0.97], atol=1e-12)
    together = lce(conf, correct, [[0.5, 0.5], [0.5, 0.5]], 1e-6)
    np.testing.assert_allclose(together, [0.47, 0.47], atol=1e-12)
    assert mlce([1.0, 0.97], [0, 1], [[0.0, 0.0], [1.0, 1.0]], 1e-6) == 1.0


def test_mlce_curve_goes_from_about_one_to_mce() -> None:
    """Fig. 1: MLCE ≈ 1 at small γ (confident mistakes exist), the MCE at large γ."""
    probs, y = multiclass(3000, seed=5)
    conf, correct = metrics.confidence_outcome(probs, y, "top-label")
    assert conf[correct == 0].max() > 0.99  # the classifier makes confident mistakes
    X = np.random.default_rng(2).normal(size=(3000, 3))
    curve = mlce_curve(conf, correct, X, [1e-6, 0.05, 1.0, 1e9])
    assert list(curve.columns) == ["gamma", "mlce", "mean_lce", "method", "error_bound"]
    assert curve["mlce"].iloc[0] == pytest.approx(conf[correct == 0].max())
    assert curve["mlce"].iloc[0] > 0.99
    mce = metrics.mce(probs, y, notion="top-label")
    assert curve["mlce"].iloc[-1] == pytest.approx(mce, abs=1e-7)
    assert curve["mlce"].iloc[-1] < 0.5
    assert curve["mlce"].iloc[0] > curve["mlce"].iloc[1] > curve["mlce"].iloc[-1]
    for g, row_mlce, row_mean in curve[["gamma", "mlce", "mean_lce"]].itertuples(index=False):
        values = lce(conf, correct, X, g)
        assert row_mlce == pytest.approx(values.max())
        assert row_mean == pytest.approx(values.mean())


def test_confidence_one_is_in_the_last_bin() -> None:
    conf = np.array([0.0, 1 / 15, 0.5, 0.94, 1.0])
    np.testing.assert_array_equal(confidence_bins(conf), [0, 0, 7, 14, 14])
    edges = metrics.bin_edges(conf, 15)
    np.testing.assert_array_equal(confidence_bins(conf), metrics.bin_indices(conf, edges))
    # γ = ∞: the 1.0 prediction shares the last bin's gap with 0.94 ((0.94 + 1)/2 − 1/2).
    got = lce(conf, [1, 1, 1, 1, 0], np.arange(5.0)[:, None], np.inf, signed=True)
    assert got[3] == got[4] == pytest.approx(0.47)


def test_confidence_on_an_inner_edge_is_in_the_lower_bin() -> None:
    """Right-closed bins: with 2 bins, 0.5 is grouped with 0.3, not with 0.7."""
    got = lce([0.3, 0.5, 0.7], [1, 0, 1], [[0.0], [0.0], [0.0]], np.inf, n_bins=2,
              signed=True)
    np.testing.assert_allclose(got, [-0.1, -0.1, -0.3])


def test_top_label_from_binary_probabilities() -> None:
    """Binary P(y=1) input: confidence max(p, 1 − p), correct = 1[argmax = y]."""
    p = np.array([0.1, 0.8, 0.6, 0.3])
    y = np.array([0, 1, 0, 1])
    conf, correct = metrics.confidence_outcome(p, y, "top-label")
    np.testing.assert_allclose(conf, [0.9, 0.8, 0.6, 0.7])
    np.testing.assert_array_equal(correct, [1, 1, 0, 0])
    assert mlce(conf, correct, np.zeros((4, 1)), np.inf) == pytest.approx(
        metrics.mce(p, y, notion="top-label"))


# --------------------------------------------------------------------------- binned method


@pytest.mark.parametrize("gamma", [0.4, 3.0, np.inf])
def test_binned_is_exact_on_grid_nodes(gamma: float) -> None:
    """Points on the grid nodes deposit and interpolate exactly, so the grid convolution must
    reproduce the kernel sums exactly — including far-apart pairs (no wrap-around)."""
    rng = np.random.default_rng(4)
    size = 12
    X = rng.integers(0, size, (400, 2)).astype(float) * [0.5, 2.0]
    X[0], X[1] = [0.0, 0.0], [(size - 1) * 0.5, (size - 1) * 2.0]
    conf = rng.uniform(0.2, 1, 400)
    correct = (rng.random(400) < conf).astype(float)
    exact = lce(conf, correct, X, gamma, signed=True, method="exact")
    binned = lce(conf, correct, X, gamma, signed=True, method="binned", grid_size=size)
    np.testing.assert_allclose(binned, exact, atol=1e-12)


def test_binned_error_against_exact_20k() -> None:
    """n = 20,000 random 2-D points: |binned − exact| within the worst-case bound.

    The bound (``binned_error_bound``) follows from the grid spacing relative to d·γ: each
    grid node carrying a point's weight is within one spacing h per axis, so the grid
    kernel of a pair differs from the true one by a factor e^{±τ}, τ = 2(h_x + h_y)/(dγ), and
    the ratio of eq. 4 by at most (1 + 1/n_bins)(e^{2τ} − 1)/2 ≈ τ. The observed error is far
    below it (the kernel is smooth away from the cusp, where bilinear interpolation is
    second order), and shrinks in proportion to the spacing: the cusp of the kernel at
    zero distance makes the method first order, so a 4× finer grid gives ≈ 4× smaller
    errors (measured at γ = 0.05: max 2.8e-3 → 9.5e-4, mean 3.4e-4 → 8.3e-5, against
    bounds 0.47 → 0.09).
    """
    conf, correct, X = spatial_problem(20_000, seed=11)
    for gamma in (0.05, 0.2):
        exact = lce(conf, correct, X, gamma, method="exact")
        mean_error = {}
        for grid in (128, 512):
            err = np.abs(lce(conf, correct, X, gamma, method="binned", grid_size=grid) - exact)
            bound = binned_error_bound(X, gamma, grid)
            assert err.max() <= bound, (gamma, grid, err.max(), bound)
            mean_error[grid] = err.mean()
        assert mean_error[512] <= mean_error[128] / 3, mean_error
    assert binned_error_bound(X, 0.2, 256) == pytest.approx(
        (1 + 1 / 15) * np.expm1(2 * float(np.ptp(X, axis=0).sum()) / 255 / 0.2) / 2)


def test_auto_method_choice() -> None:
    """Small data keeps the exact pair sums; large 2-D data takes a grid only where its
    worst-case bound is within AUTO_MAX_ERROR (and it is cheaper), else an exact sweep; the
    plan states its bound and the exact cost."""
    rng = np.random.default_rng(0)
    big = rng.random((200_000, 2))
    sizes = [100_000, 100_000]
    assert plan_method(big[:2000], 1.0).name == "pairs"
    wide = plan_method(big, 1.0, bin_sizes=sizes)
    assert wide.name == "binned" and wide.grid_size in AUTO_GRIDS
    assert wide.error_bound <= AUTO_MAX_ERROR
    assert wide.error_bound == binned_error_bound(big, 1.0, wide.grid_size)
    assert wide.exact_seconds > wide.seconds
    assert "|error| ≤" in wide.describe()
    narrow = plan_method(big, 0.01, bin_sizes=sizes)  # no grid is fine enough: exact
    assert narrow.name == "sweep" and narrow.error_bound == 0.0 and narrow.exact
    assert plan_method(big[:, :1], 0.01, bin_sizes=sizes).name == "sweep"  # 1-D profile
    assert plan_method(rng.random((200_000, 3)), 1.0).name == "pairs"  # no fast path in 3-D
    assert choose_method(big[:10], 1.0, method="binned") == "binned"
    assert plan_method(big[:10], 1.0, method="exact").name == "pairs"
    with pytest.raises(ValueError, match="1-D or 2-D"):
        plan_method(rng.random((10, 3)), 1.0, method="sweep")


def test_plan_is_the_same_whatever_the_machine_speed(monkeypatch) -> None:
    """The plan is a function of the data and settings alone: with every clock of the process
    running at random speeds, each γ of an MLCE curve (2-D, where the grid and the sweep cost
    about the same near γ = 0.2) gets the same method, bound, cost and reason."""
    import time

    rng = np.random.default_rng(3)
    points = rng.normal(size=(100_000, 2))
    sizes = np.bincount(rng.integers(0, 8, 100_000))
    gammas = [0.001, 0.05, 0.1778, 0.2, 0.4217, 1.0, 30.0]
    planned = [plan_method(points, g, bin_sizes=sizes) for g in gammas]
    assert {plan.name for plan in planned} == {"sweep", "binned"}
    for name in ("perf_counter", "monotonic", "process_time", "time"):
        fast = getattr(time, name)
        monkeypatch.setattr(time, name, lambda fast=fast: fast() * rng.uniform(0.01, 100))
    assert [plan_method(points, g, bin_sizes=sizes) for g in gammas] == planned


@pytest.mark.parametrize("d", [1, 2])
@pytest.mark.parametrize("gamma", [1e-4, 0.003, 0.05, 1.0, 40.0, np.inf])
def test_sweep_equals_the_dense_sums(d: int, gamma: float) -> None:
    """The sweep is exact: it matches eq. 4 written out with the full kernel matrix, with
    ties in x and y (rounded coordinates) and duplicate points, at every γ (the small ones
    take the logarithmic path, the large ones scaled prefix sums)."""
    conf, correct, X = spatial_problem(1200, seed=21)
    X = X[:, :d].copy()
    X[:400] = np.round(X[:400], 1)  # ties and duplicates
    got = lce(conf, correct, X, gamma, signed=True, method="sweep")
    np.testing.assert_allclose(got, dense_signed_lce(conf, correct, X, gamma), atol=1e-10)


def test_sweep_shares_its_layout_across_gammas() -> None:
    conf, correct, X = spatial_problem(3000, seed=5)
    gammas = [0.001, 0.02, 0.3]
    curve = mlce_curve(conf, correct, X, gammas, method="sweep")
    assert list(curve["method"]) == ["sweep"] * 3
    for g, row in zip(gammas, curve.itertuples(), strict=True):
        exact = lce(conf, correct, X, g, method="pairs")
        assert row.mlce == pytest.approx(exact.max(), abs=1e-10)
        assert row.mean_lce == pytest.approx(exact.mean(), abs=1e-10)


@pytest.mark.parametrize("d", [1, 2])
@pytest.mark.parametrize("m", [1, 2, 3, 5, 64, 700])
def test_sweep_sums_equal_the_pair_sums(d: int, m: int) -> None:
    """``sweep_sums_bin`` against ``Σ_i w[c, i] exp(−‖x_j − x_i‖₁ / (d·γ))`` summed pair by
    pair, several γ in one call: 1e-4 on the logarithmic path at every level, 0.01 on it at
    some levels only (at m = 700 the blocks' spreads run from 9 to 26, the switch is at
    600·2γ = 12), the larger γ on scaled prefix sums; sizes that are not powers of two
    (padded blocks), ties, duplicates and zero weights. The log path is exact to the rounding
    of ``w/a`` (~1e-12 relative where |w/a| ~ 10⁴); the sums that underflow to subnormals lose
    their relative precision, hence the absolute 1e-300."""
    rng = np.random.default_rng(m + d)
    X = rng.normal(scale=2.0, size=(m, d))
    X[: m // 3] = np.round(X[: m // 3], 1)  # ties and duplicates
    W = rng.random((2, m))
    W[0, ::7] = 0.0
    gammas = [1e-4, 0.01, 0.05, 1.0, 40.0, np.inf]
    got = sweep_sums_bin(X, W, gammas)
    dist = np.abs(X[:, None, :] - X[None, :, :]).sum(axis=2)
    for g, gamma in enumerate(gammas):
        np.testing.assert_allclose(got[g], W @ np.exp(-dist / (d * gamma)), rtol=1e-10,
                                   atol=1e-300)


def test_binned_curve_within_its_stated_bound() -> None:
    """The curve's error_bound column bounds |MLCE_binned − MLCE_exact| and the mean LCE's
    error (each value is within the bound, so are their max and mean)."""
    conf, correct, X = spatial_problem(8000, seed=9)
    gammas = [0.1, 0.5, 2.0]
    binned = mlce_curve(conf, correct, X, gammas, method="binned", grid_size=128)
    exact = mlce_curve(conf, correct, X, gammas, method="exact")
    assert (exact["error_bound"] == 0).all()
    gap = (binned[["mlce", "mean_lce"]] - exact[["mlce", "mean_lce"]]).abs()
    assert (gap.max(axis=1) <= binned["error_bound"]).all()
    result = lce_result(conf, correct, X, 0.5, method="binned", grid_size=128)
    assert result.method.error_bound == binned["error_bound"].iloc[1]


def test_curve_equals_each_gamma_alone() -> None:
    """The curve's γ share work (the sweep's layout, a grid's deposits, one plan of the
    features) and give every γ the numbers lce gives it alone, to the bit."""
    conf, correct, X = spatial_problem(6000, seed=4)
    gammas = [0.01, 0.1, 0.5, 2.0, 8.0]
    for method, grid_size in (("binned", 64), ("binned", None), ("sweep", None)):
        curve = mlce_curve(conf, correct, X, gammas, method=method, grid_size=grid_size)
        for k, gamma in enumerate(gammas):
            alone = lce(conf, correct, X, gamma, method=method, grid_size=grid_size)
            assert curve["mlce"].iloc[k] == alone.max()
            assert curve["mean_lce"].iloc[k] == alone.mean()


# --------------------------------------------------------------------------- per-bin views


def test_bin_summary_agrees_with_reliability_table() -> None:
    probs, y = multiclass(2000, seed=8)
    conf, correct = metrics.confidence_outcome(probs, y, "top-label")
    X = np.random.default_rng(3).normal(size=(2000, 2))
    values = lce(conf, correct, X, 0.3)
    summary = bin_summary(conf, correct, values)
    table = metrics.reliability_table(probs, y, 15, notion="top-label", n_resamples=0)
    assert len(summary) == 15
    np.testing.assert_array_equal(summary["count"], table["count"])
    np.testing.assert_allclose(summary["mean_confidence"], table["mean_confidence"])
    np.testing.assert_allclose(summary["accuracy"], table["frequency"])
    np.testing.assert_allclose(summary["gap"], -table["gap"])
    np.testing.assert_allclose(summary["calibration_error"], table["gap"].abs())
    bins = confidence_bins(conf)
    for b in np.flatnonzero(summary["count"].to_numpy()):
        assert summary["mean_lce"][b] == pytest.approx(values[bins == b].mean())
        assert summary["max_lce"][b] == values[bins == b].max()
    empty = summary["count"] == 0
    assert empty.any() and summary.loc[empty, ["accuracy", "mean_lce", "max_lce"]].isna().all(
        axis=None)
    limit = bin_summary(conf, correct, lce(conf, correct, X, np.inf))
    pd.testing.assert_series_equal(limit["mean_lce"], limit["calibration_error"],
                                   check_names=False, atol=1e-12)


def test_lce_cdf_and_bin_cdf() -> None:
    values, fraction = lce_cdf([0.3, 0.1, 0.2, 0.1])
    np.testing.assert_allclose(values, [0.1, 0.1, 0.2, 0.3])
    np.testing.assert_allclose(fraction, [0.25, 0.5, 0.75, 1.0])
    empty_values, empty_fraction = lce_cdf([])
    assert empty_values.size == empty_fraction.size == 0

    conf = [0.95, 0.96, 0.97, 0.2]
    correct = [1, 0, 1, 0]
    lce_values = [0.05, 0.5, 0.4, 0.2]
    cdf = bin_lce_cdf(conf, correct, lce_values, 14)
    np.testing.assert_allclose(cdf.values, [0.05, 0.4, 0.5])
    np.testing.assert_allclose(cdf.fraction, [1 / 3, 2 / 3, 1.0])
    assert cdf.calibration_error == pytest.approx(0.96 - 2 / 3)
    assert cdf.mean_lce == pytest.approx(0.95 / 3)
    assert cdf.share_above == pytest.approx(2 / 3)
    assert np.isnan(bin_lce_cdf(conf, correct, lce_values, 7).calibration_error)


# --------------------------------------------------------------------------- input checks


GOOD = {"conf": [0.9, 0.6], "correct": [1, 0], "features": [[0.0, 1.0], [1.0, 0.0]],
        "gamma": 0.5}


@pytest.mark.parametrize(("change", "message"), [
    ({"conf": [0.9]}, "conf has 1 values but correct has 2"),
    ({"conf": [0.9, 1.2]}, "between 0 and 1"),
    ({"conf": [0.9, np.nan]}, "between 0 and 1"),
    ({"conf": [], "correct": [], "features": np.zeros((0, 2))}, "empty"),
    ({"correct": [1, 0.5]}, "1 \\(prediction right\\) or 0"),
    ({"features": [0.0, 1.0]}, "features must be a 2-D array"),
    ({"features": [[0.0, 1.0]]}, "features has 1 rows but there are 2 predictions"),
    ({"features": [[0.0, np.inf], [1.0, 0.0]]}, "missing or infinite"),
    ({"gamma": 0.0}, "gamma .* must be a positive number"),
    ({"gamma": -1.0}, "gamma .* must be a positive number"),
    ({"gamma": float("nan")}, "gamma .* must be a positive number"),
    ({"gamma": "wide"}, "gamma must be a positive number"),
    ({"gamma": 1e-320}, "too small"),
    ({"n_bins": 0}, "n_bins must be a whole number"),
    ({"method": "fast"}, "Unknown method"),
    ({"method": "binned", "features": [[0.0, 1.0, 2.0], [1.0, 0.0, 2.0]]}, "2-D embeddings"),
    ({"grid_size": 1}, "grid_size must be a whole number"),
    ({"tile_size": 0}, "tile_size must be a whole number"),
    ({"n_jobs": 0}, "n_jobs must be a whole number"),
])
def test_input_errors(change: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        lce(**{**GOOD, **change})


def test_other_input_errors() -> None:
    with pytest.raises(ValueError, match="gammas must be a non-empty"):
        mlce_curve(**{k: v for k, v in GOOD.items() if k != "gamma"}, gammas=[])
    with pytest.raises(ValueError, match="one LCE per prediction"):
        bin_summary([0.9, 0.6], [1, 0], [0.1])
    with pytest.raises(ValueError, match="between −1 and 1"):
        bin_summary([0.9, 0.6], [1, 0], [0.1, 2.0])
    with pytest.raises(ValueError, match="bin_index must be a bin number from 0 to 14"):
        bin_lce_cdf([0.9, 0.6], [1, 0], [0.1, 0.2], 15)
    with pytest.raises(ValueError, match="2-D embeddings"):
        binned_error_bound(np.zeros((4, 3)), 1.0)
