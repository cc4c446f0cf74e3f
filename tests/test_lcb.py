"""Local calibration bias (eq. 7), its bandwidth choice, trends and subgroup ranking."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.special import expit

from core.kernels import gaussian_block, standardize_features
from core.lcb import biased_subgroups, lcb, lcb_trends, select_bandwidths


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


def test_subgroup_ranking_puts_the_planted_cell_first() -> None:
    p, y, X, _ = planted(4000, 4)
    groups = pd.DataFrame({"side": np.where(X[:, 1] > 0, "upper", "lower")})
    values = lcb(p, y, X, prob_bandwidth=0.1, feature_bandwidth=0.5)
    table = biased_subgroups(values, y - p, p, groups, X[:, 0], "x1", n_ranges=3)
    assert table.iloc[0]["side"] == "upper"
    assert table.iloc[0]["z"] > 4 and table.iloc[0]["mean_lcb"] > 0.1
    assert set(table.columns) >= {"rows", "mean_lcb", "mean_abs_lcb",
                                  "observed_minus_predicted", "z"}
    assert (table["rows"] >= 30).all()
