"""The weight network λ(x): analytic gradients, the simplex, training and reproducibility."""

from __future__ import annotations

import numpy as np
import pytest

from core.ensembles.simulate import simulate
from core.ensembles.test import check_members
from core.ensembles.weights import (
    Objective,
    WeightNetwork,
    WeightSettings,
    combine,
    forward,
    initial_parameters,
    layer_sizes,
    n_parameters,
)


def small_problem(K: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    n, M, d = 16, 3, 2
    members = rng.dirichlet(np.full(K, 2.0), size=(n, M))
    y = rng.integers(0, K, n)
    X = rng.standard_normal((n, d))
    return members, y, X


@pytest.mark.parametrize("estimator", ["ce2", "cekl", "skce"])
@pytest.mark.parametrize("K", [2, 3])
def test_objective_gradient_matches_finite_differences(estimator: str, K: int) -> None:
    """∂L/∂θ of eq. 16 (scoring rule + γ·ĝ, γ = 0.5 so the penalty matters) against central
    differences, at random (non-zero) output weights."""
    members, y, X = small_problem(K)
    sizes = layer_sizes(X.shape[1], (5, 4), members.shape[1])
    rng = np.random.default_rng(1)
    theta = rng.standard_normal(n_parameters(sizes)) * 0.5
    objective = Objective(X, members, y, np.arange(0, 16, 2), tuple(sizes), estimator,
                          0.4, 0.5)
    _, grad = objective(theta)
    step = 1e-6
    numeric = np.array([
        (objective(theta + step * e, False)[0] - objective(theta - step * e, False)[0])
        / (2 * step) for e in np.eye(theta.size)
    ])
    np.testing.assert_allclose(grad, numeric, rtol=1e-5, atol=1e-8)


def test_weights_lie_on_the_simplex_and_start_uniform() -> None:
    members, y, X = small_problem(3)
    sizes = layer_sizes(2, (16, 16, 16), 3)
    theta = initial_parameters(sizes, seed=0)
    weights, _ = forward(theta, sizes, X)
    np.testing.assert_allclose(weights, 1 / 3)
    theta = np.random.default_rng(2).standard_normal(theta.size) * 3
    weights, _ = forward(theta, sizes, X * 10)
    assert (weights >= 0).all()
    np.testing.assert_allclose(weights.sum(axis=1), 1.0)
    np.testing.assert_allclose(combine(weights, members).sum(axis=1), 1.0)


def test_training_learns_an_instance_dependent_combination() -> None:
    """Binary H0,2 (λ*(x) quadratic): the learned λ(x) tracks the truth better than the mean
    does — lower squared error to the true P(y = 1) on held-out rows — and is reproducible."""
    members, y, X, truth = simulate("binary-h0-instance", n=3000, seed=3)
    P = check_members(members)
    opt, val, test = np.split(np.arange(3000), [1800, 2400])
    fit = WeightNetwork("ce2", seed=4).fit(P[opt], y[opt], X[opt], P[val], y[val], X[val])
    learned = combine(fit.predict(X[test]), P[test])[:, 1]
    mean = P[test].mean(axis=1)[:, 1]
    assert np.mean((learned - truth[test]) ** 2) < 0.5 * np.mean((mean - truth[test]) ** 2)
    again = WeightNetwork("ce2", seed=4).fit(P[opt], y[opt], X[opt], P[val], y[val], X[val])
    np.testing.assert_array_equal(again.params_, fit.params_)
    losses = [v for _, _, v in fit.history_]
    assert min(losses) <= losses[0]
    assert fit.best_iteration_ >= 1


def test_settings_are_a_hashable_value() -> None:
    assert hash(WeightSettings()) == hash(WeightSettings())
    assert WeightSettings(gamma=0.1) != WeightSettings()
