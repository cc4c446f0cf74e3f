"""Saturated scores (issue 20): tree models, k-NN and naive Bayes output exact 0s and 1s.

Every recalibrator that takes a logarithm of a probability clips at the bound the scores
resolve (core.data.validation.resolvable_bound), not at 1e-12, and Platt scaling may fit on
the score itself as scikit-learn does. Pinned on a generated random forest whose saturated
rows are wrong 15% of the time (labels are never certain there).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy.special import expit
from sklearn.calibration import CalibratedClassifierCV
from sklearn.ensemble import RandomForestClassifier
from sklearn.frozen import FrozenEstimator

from core import metrics
from core.data.validation import logit, resolvable_bound
from core.metrics.clinical import calibration_slope
from core.recalibration import make_recalibrator

#: Methods that take a logarithm of a probability (binary problems).
LOG_METHODS = ("platt-logit", "temperature", "beta", "dirichlet")


def build(name: str):
    if name == "platt-logit":
        return make_recalibrator("platt", transform="logit")
    return make_recalibrator(name)


# --------------------------------------------------------------------------- the bound


def test_the_bound_is_half_a_step_of_the_scores_resolution() -> None:
    votes = np.arange(101) / 100  # a forest of 100 trees, 0 and 1 included
    assert resolvable_bound(votes) == pytest.approx(0.01 / 2.02)  # (0 + ½)/(100 + 1)
    neighbours = np.arange(6) / 5  # 5-NN
    assert resolvable_bound(neighbours) == pytest.approx(0.5 / 6)
    assert resolvable_bound(np.array([0.0, 1.0, 1.0])) == pytest.approx(0.25)  # hard 0/1
    # the distance from 1 counts as much as the distance from 0
    assert resolvable_bound(np.array([0.0, 0.5, 0.98])) == pytest.approx(0.02 / 2.04)
    # rows on the simplex: their entries
    P = np.array([[1.0, 0.0, 0.0], [0.5, 0.25, 0.25]])
    assert resolvable_bound(P) == pytest.approx(0.25 / 2.5)
    # never closer to 1 than a double can hold
    assert resolvable_bound(np.array([1e-300, 0.5])) == np.finfo(np.float64).eps
    # a score strictly inside (0, 1) is never moved
    rng = np.random.default_rng(0)
    p = rng.uniform(0, 1, 500)
    assert resolvable_bound(p) < np.minimum(p, 1 - p).min()


def test_a_calibrated_model_without_saturated_scores_is_fitted_as_before() -> None:
    rng = np.random.default_rng(1)
    p = expit(rng.normal(0, 1.5, 3000))
    y = (rng.random(p.size) < p).astype(np.int64)
    model = make_recalibrator("temperature").fit(p, y)
    # the 1-D search on the unclipped logits (bounded Brent, xatol 1e-6 in log T)
    z = logit(p, 1e-300)
    grid = np.exp(np.linspace(np.log(0.5), np.log(2.0), 4001))
    losses = [np.mean(np.logaddexp(0, z / t) - y * z / t) for t in grid]
    assert model.temperature_ == pytest.approx(grid[np.argmin(losses)], rel=1e-3)


# --------------------------------------------------------------------------- a generated forest


def forest(seed: int = 0, n: int = 3000):
    """A default random forest (100 fully grown trees) on two features, trained on n rows;
    calibration and test parts of n rows each. The truth is π = 0.1 + 0.8·σ(1.5 x₁ + x₂ −
    0.5): no row is certain, so the forest's unanimous votes (exact 0s and 1s, about 3% of
    the rows) are wrong at least 10% of the time."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(3 * n, 2))
    truth = 0.1 + 0.8 * expit(1.5 * X[:, 0] + X[:, 1] - 0.5)
    y = (rng.random(3 * n) < truth).astype(np.int64)
    model = RandomForestClassifier(random_state=seed).fit(X[:n], y[:n])
    cal, test = slice(n, 2 * n), slice(2 * n, 3 * n)
    return model, X[cal], y[cal], X[test], y[test]


@pytest.fixture(scope="module")
def generated_forest():
    model, X_cal, y_cal, X_test, y_test = forest()
    p_cal, p_test = model.predict_proba(X_cal)[:, 1], model.predict_proba(X_test)[:, 1]
    assert 0.01 < np.mean((p_test == 0) | (p_test == 1)) < 0.1  # it saturates
    return model, X_cal, p_cal, y_cal, X_test, p_test, y_test


@pytest.mark.parametrize("name", LOG_METHODS)
def test_saturated_rows_keep_the_event_rate_the_calibration_rows_show(name, generated_forest
                                                                      ) -> None:
    """With 1e-12 the ~66 calibration rows at p = 0 entered at logit −27.6 and came out at
    q ≈ 0.0004 although 15% of them are events. Now q(0) must lie within 3 binomial
    standard errors √(f(1 − f)/n₀) of their event rate f (and likewise at p = 1)."""
    _, _, p_cal, y_cal, _, _, _ = generated_forest
    model = build(name).fit(p_cal, y_cal)
    eps = model.eps_
    assert eps == pytest.approx(resolvable_bound(p_cal))
    q0, q1, at_eps, at_top = model.predict(np.array([0.0, 1.0, eps, 1.0 - eps]))
    assert q0 == pytest.approx(at_eps, abs=1e-12) and q1 == pytest.approx(at_top, abs=1e-12)
    for value, rows in ((q0, p_cal == 0.0), (q1, p_cal == 1.0)):
        f, n_rows = y_cal[rows].mean(), int(rows.sum())
        se = np.sqrt(f * (1 - f) / n_rows)
        assert abs(value - f) <= 3 * se, (name, value, f, n_rows)


@pytest.mark.parametrize("name", LOG_METHODS)
def test_log_scale_methods_calibrate_the_forest_as_well_as_scikit_learn(name, generated_forest
                                                                       ) -> None:
    """Test ECE at most scikit-learn's sigmoid calibration's (same calibration rows) plus two
    standard errors of a binned ECE, 2·√(¼/n) = 0.018 at n = 3,000 test rows. Clipping at
    1e-12 gave 0.072 (Platt on the logit) and 0.075 (temperature) against 0.037."""
    model, X_cal, p_cal, y_cal, X_test, p_test, y_test = generated_forest
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sigmoid = CalibratedClassifierCV(FrozenEstimator(model), method="sigmoid")
        sigmoid.fit(X_cal, y_cal)
    reference = metrics.ece(sigmoid.predict_proba(X_test)[:, 1], y_test)
    ours = metrics.ece(build(name).fit(p_cal, y_cal).predict(p_test), y_test)
    tolerance = 2 * np.sqrt(0.25 / y_test.size)
    assert ours <= reference + tolerance, (name, ours, reference)
    assert ours < metrics.ece(p_test, y_test)


def test_platt_on_the_score_is_scikit_learns_sigmoid(generated_forest) -> None:
    """transform="identity" with Platt's smoothed targets (the default) is scikit-learn's
    sigmoid calibration of a model without a decision function, to the optimisers' tolerance;
    "auto" keeps whichever design comes out with the smaller ECE on the calibration rows."""
    model, X_cal, p_cal, y_cal, X_test, p_test, _ = generated_forest
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sigmoid = CalibratedClassifierCV(FrozenEstimator(model), method="sigmoid")
        sigmoid.fit(X_cal, y_cal)
    ours = make_recalibrator("platt", transform="identity").fit(p_cal, y_cal)
    np.testing.assert_allclose(ours.predict(p_test), sigmoid.predict_proba(X_test)[:, 1],
                               atol=1e-4)
    auto = make_recalibrator("platt").fit(p_cal, y_cal)
    errors = {t: metrics.ece(make_recalibrator("platt", transform=t).fit(p_cal, y_cal)
                             .predict(p_cal), y_cal)
              for t in ("logit", "identity")}
    assert auto.transform_ == min(errors, key=errors.get)
    fitted = make_recalibrator("platt", transform=auto.transform_).fit(p_cal, y_cal)
    np.testing.assert_array_equal(auto.predict(p_test), fitted.predict(p_test))


def test_the_calibration_slope_uses_the_same_bound(generated_forest) -> None:
    """The Reliability page's calibration slope is the same logistic recalibration on the
    logit: 3% of saturated rows no longer decide it."""
    _, _, p_cal, y_cal, _, _, _ = generated_forest
    slope = calibration_slope(p_cal, y_cal)["slope"]
    fitted = make_recalibrator("platt", transform="logit", smoothing="off").fit(p_cal, y_cal)
    assert slope == pytest.approx(fitted.slope_, rel=1e-4)
    unsaturated = (p_cal > 0) & (p_cal < 1)
    alone = calibration_slope(p_cal[unsaturated], y_cal[unsaturated])
    # the saturated 3% move the slope by less than its own 95% interval's half-width
    assert abs(slope - alone["slope"]) < alone["slope_high"] - alone["slope"]
