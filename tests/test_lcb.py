"""Local calibration bias (eq. 7), its bandwidth choice and its trends."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy.special import expit

from core.kernels.tiles import gaussian_block, standardize_features
from core.local.lcb_estimate import lcb, select_bandwidths
from core.local.lcb_trends import MIN_TREND_ROWS, lcb_trends, trend_note


def planted(n: int, seed: int):
    """Model sigmoid(x1); truth adds +1.5 on the logit where x2 > 0 (risk underestimated)."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 2))
    p = expit(X[:, 0])
    truth = expit(X[:, 0] + 1.5 * (X[:, 1] > 0))
    return p, (rng.random(n) < truth).astype(int), X, truth


def test_matches_eq_7_leave_one_out_and_with_queries() -> None:
    p, y, X, _ = planted(60, 0)
    e = y - p
    Xs = standardize_features(X)
    K = gaussian_block(p, p, 0.3) * gaussian_block(Xs, Xs, 0.8)
    np.fill_diagonal(K, 0.0)  # leave-one-out
    np.testing.assert_allclose(lcb(p, y, X, prob_bandwidth=0.3, feature_bandwidth=0.8),
                               (K @ e) / K.sum(axis=1), rtol=1e-10)
    qp, qX = p[:5], X[:5] + 0.1
    mean, sd = X.mean(axis=0), X.std(axis=0)
    Kq = gaussian_block(qp, p, 0.3) * gaussian_block((qX - mean) / sd, Xs, 0.8)
    np.testing.assert_allclose(lcb(p, y, X, qp, qX, 0.3, 0.8), (Kq @ e) / Kq.sum(axis=1),
                               rtol=1e-10)


def test_recovers_the_planted_bias_with_cross_validated_bandwidths() -> None:
    p, y, X, truth = planted(3000, 1)
    sigma_p, sigma_x, table = select_bandwidths(p, y, X)
    assert len(table) == 36 and table["cv_error"].idxmin() is not None
    values = lcb(p[:1500], y[:1500], X[:1500], p[1500:], X[1500:], sigma_p, sigma_x)
    bias = truth[1500:] - p[1500:]
    # LCB tracks the true bias: strongly correlated, right sign on each side of x2 = 0
    assert np.corrcoef(values, bias)[0, 1] > 0.6
    upper = X[1500:, 1] > 0.5
    lower = X[1500:, 1] < -0.5
    assert values[upper].mean() > 0.15 and abs(values[lower].mean()) < 0.05


def test_calibrated_model_gets_wide_bandwidths_and_a_flat_lcb() -> None:
    rng = np.random.default_rng(2)
    X = rng.standard_normal((2000, 2))
    p = expit(X[:, 0])
    y = (rng.random(2000) < p).astype(int)
    sigma_p, sigma_x, table = select_bandwidths(p, y, X)
    assert sigma_x >= table["feature_bandwidth"].median()
    values = lcb(p, y, X, prob_bandwidth=sigma_p, feature_bandwidth=sigma_x)
    # binomial noise of a mean over the effective neighbourhood is far below 0.1
    assert np.abs(values).max() < 0.1


def test_trends_and_bands() -> None:
    rng = np.random.default_rng(3)
    x = rng.uniform(20, 80, 400)
    groups = np.where(rng.random(400) < 0.5, "a", "b")
    values = np.where(groups == "a", 0.002 * (x - 50), -0.1) + rng.normal(0, 0.02, 400)
    trends = lcb_trends(x, values, groups, degree=1, n_resamples=100)
    a = trends[trends["group"] == "a"]
    assert a["fit"].iloc[0] == pytest.approx(0.002 * (a["x"].iloc[0] - 50), abs=0.01)
    assert (trends["low"] <= trends["fit"] + 1e-12).all()
    assert (trends["fit"] <= trends["high"] + 1e-12).all()
    with pytest.raises(ValueError, match="between 1 and 5"):
        lcb_trends(x, values, degree=7)


def test_tiny_groups_get_no_trend_and_a_sentence_instead_of_a_rank_warning() -> None:
    """Issue 20: a polynomial fitted to a group of a few rows (or few distinct ages) made
    numpy warn that the fit is rank-deficient; such groups now get no line, and a sentence."""
    rng = np.random.default_rng(3)
    x = np.concatenate([rng.uniform(20, 80, 200), [30.0, 30.0, 41.0, 41.0, 41.0],
                        np.repeat([25.0, 35.0, 45.0], 10)])
    groups = np.array(["large"] * 200 + ["tiny"] * 5 + ["three ages"] * 30)
    values = rng.normal(0, 0.05, x.size)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # RankWarning (or any other) fails the test
        trends = lcb_trends(x, values, groups, degree=3, n_resamples=50)
    assert set(trends["group"]) == {"large"}
    note = trend_note(x, groups, degree=3)
    assert "tiny (5 rows)" in note and "three ages (30 rows)" in note and "large" not in note
    assert f"at least {MIN_TREND_ROWS} rows" in note
    assert trend_note(x[:200], None, degree=3) is None


# --------------------------------------------------------------------------- LCB at scale


def test_plan_keeps_small_data_exact_and_samples_disjoint_rows() -> None:
    from core.local.lcb_estimate import SAMPLE_QUERY, SAMPLE_REFERENCE, plan_lcb

    assert plan_lcb(2000, 2000, True, 3).computation == "exact"
    big = plan_lcb(1_000_000, 1_000_000, True, 10)
    assert big.computation == "sampled" and big.exact_seconds > 100 * big.seconds
    assert big.reference_rows.size == SAMPLE_REFERENCE and big.query_rows.size == SAMPLE_QUERY
    # leave-one-out: no evaluated row is in the reference sample
    assert not np.intersect1d(big.reference_rows, big.query_rows).size
    again = plan_lcb(1_000_000, 1_000_000, True, 10)
    np.testing.assert_array_equal(again.query_rows, big.query_rows)  # seeded
    other = plan_lcb(1_000_000, 1_000_000, True, 10, seed=1)
    assert not np.array_equal(other.query_rows, big.query_rows)
    split = plan_lcb(500_000, 300_000, False, 10, computation="sampled")
    assert split.reference_rows.max() < 500_000 and split.query_rows.max() < 300_000
    assert plan_lcb(10**6, 10**6, True, 10, computation="exact").computation == "exact"
    with pytest.raises(ValueError, match="computation"):
        plan_lcb(10, 10, True, 3, computation="rff")


def test_plan_is_the_same_whatever_the_machine_speed(monkeypatch) -> None:
    """Exact or sampled follows from the sizes alone, not from a speed measured in the
    process: with the clocks running at random speeds, the plans near the boundary
    (about 10 s of exact pairs) are unchanged, reasons included."""
    import time

    from core.local.lcb_estimate import plan_lcb

    sizes = [(20_000, 20_000), (35_000, 35_000), (40_000, 40_000), (100_000, 100_000)]
    planned = [plan_lcb(n, q, True, 6) for n, q in sizes]
    assert [plan.computation for plan in planned] == ["exact", "exact", "sampled", "sampled"]
    rng = np.random.default_rng(0)
    for name in ("perf_counter", "monotonic", "process_time", "time"):
        fast = getattr(time, name)
        monkeypatch.setattr(time, name, lambda fast=fast: fast() * rng.uniform(0.01, 100))
    again = [plan_lcb(n, q, True, 6) for n, q in sizes]
    for one, two in zip(planned, again, strict=True):
        assert (one.computation, one.seconds, one.exact_seconds, one.reason) == \
            (two.computation, two.seconds, two.exact_seconds, two.reason)


def test_sampled_lcb_is_eq_7_on_the_sampled_rows() -> None:
    """The sampled LCB is the same smoother with the sampled reference rows, at the sampled
    query rows (no standardisation, so the literal sum is easy to write)."""
    from core.kernels.spec import KernelSpec
    from core.local.lcb_estimate import lcb_estimate

    p, y, X, _ = planted(3000, 2)
    spec = KernelSpec(0.2, 0.7, standardize=False)
    est = lcb_estimate(p, y, X, spec=spec, computation="sampled", reference_size=800,
                       query_size=500)
    ref, rows = est.plan.reference_rows, est.rows
    K = gaussian_block(p[rows], p[ref], 0.2) * gaussian_block(X[rows], X[ref], 0.7)
    np.testing.assert_allclose(est.values, K @ (y - p)[ref] / K.sum(axis=1), rtol=1e-10)
    assert est.rows.size == 500 and "500 of 3,000 rows" in est.describe()
    assert "seed 0" in est.describe()


def test_sampled_lcb_is_within_its_stated_noise_of_the_exact_one() -> None:
    """n = 20,000, leave-one-out: sampled (2,000 reference rows) against exact. The stated
    noise sd(e)/√n_eff is the sampling sd of one value; 95% of the differences must lie
    within 3 of it, and their RMS within 1.5 of it (a wrong n_eff, or a biased sample,
    fails this)."""
    from core.kernels.spec import KernelSpec
    from core.local.lcb_estimate import lcb_estimate

    p, y, X, _ = planted(20_000, 3)
    spec = KernelSpec(0.3, 0.5)
    exact = lcb(p, y, X, spec=spec)
    est = lcb_estimate(p, y, X, spec=spec, computation="sampled", reference_size=2000,
                       query_size=3000)
    diff = est.values - exact[est.rows]
    assert np.quantile(np.abs(diff), 0.95) <= 3 * est.noise
    assert np.sqrt(np.mean(diff**2)) <= 1.5 * est.noise
    assert 20 < est.neighbours < 2000


@pytest.mark.parametrize(("n", "degree", "distinct"), [(15, 3, 5), (40, 5, 40), (3000, 3, 70),
                                                        (2000, 1, 2000)])
def test_band_refits_are_each_resamples_own_fit(n: int, degree: int, distinct: int) -> None:
    """The band's resample fits (weighted normal equations on one design per group) are
    the least-squares polynomial numpy fits to each resample alone, to 1e-10 of the curves'
    scale; a resample with at most ``degree`` distinct values is NaN, as before."""
    from core.local.lcb_trends import _refits

    rng = np.random.default_rng(n)
    x = rng.choice(np.linspace(18.0, 90.0, distinct), n)
    v = 0.02 * np.sin(x / 9.0) + 0.01 * rng.standard_normal(n)
    grid = np.linspace(x.min(), x.max(), 40)
    rows = rng.integers(0, n, size=(60, n))
    curves = _refits(x, v, degree, grid, rows)
    for r, curve in zip(rows, curves, strict=True):
        if np.unique(x[r]).size <= degree:
            assert np.isnan(curve).all()
            continue
        alone = np.polynomial.Polynomial.fit(x[r], v[r], degree)(grid)
        assert np.max(np.abs(curve - alone)) <= 1e-10 * np.max(np.abs(alone))
