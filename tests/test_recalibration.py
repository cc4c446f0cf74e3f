"""Recalibration methods: each against a literal implementation, scikit-learn or the
paper's limiting case (core.recalibration)."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.isotonic import IsotonicRegression
from sklearn.linear_model import LogisticRegression

from core import metrics
from core.data.validation import logit, sigmoid, softmax
from core.local.embedding import embed, fit_embedding
from core.recalibration import RECALIBRATORS, make_recalibrator
from core.recalibration.base import replace_top_label
from core.recalibration.binning import BBQ, HistogramBinning, IsotonicCalibration, VennAbers
from core.recalibration.group import GroupWise, Multicalibration
from core.recalibration.local import LoRe
from core.recalibration.scaling import BetaCalibration, PlattScaling, TemperatureScaling


def binary_data(n: int, seed: int, power: float = 1.0):
    """p uniform on (0, 1) rounded to 3 decimals (ties), y ~ Bernoulli(p**power)."""
    rng = np.random.default_rng(seed)
    p = np.round(rng.uniform(0.001, 0.999, n), 3)
    return p, (rng.random(n) < p**power).astype(np.int64)


def multiclass_data(n: int, m: int, seed: int, sharpen: float = 1.0, d: int = 2):
    """True class probabilities softmax(Z W) from features Z; the model reports
    softmax(sharpen · Z W) (overconfident for sharpen > 1)."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    logits = X @ rng.standard_normal((d, m))
    truth = softmax(logits)
    y = (rng.random(n)[:, None] > np.cumsum(truth, axis=1)).sum(axis=1)
    return softmax(sharpen * logits), y, X


# --------------------------------------------------------------------------- registry


def test_registry_specs_are_complete_and_buildable() -> None:
    assert {"platt", "temperature", "vector", "matrix", "dirichlet", "beta", "histogram",
            "isotonic", "bbq", "scaling-binning", "venn-abers", "lore", "lcb",
            "group-temperature", "group-histogram", "multicalibration"} <= set(RECALIBRATORS)
    for key, spec in RECALIBRATORS.items():
        assert key == spec.key and key == key.lower() and " " not in key and "_" not in key
        assert spec.description.endswith(".") and spec.reference and spec.problems
        for parameter in spec.parameters:
            assert parameter.meaning
            assert parameter.check(parameter.default, key) == parameter.default
        assert hasattr(make_recalibrator(key), "fit")


def test_unknown_names_and_parameters_name_the_choices() -> None:
    with pytest.raises(ValueError, match=r"Unknown recalibration method 'tempreature'.*'platt'"):
        make_recalibrator("tempreature")
    with pytest.raises(ValueError, match=r"parameter for 'histogram'.*'n_bins'"):
        make_recalibrator("histogram", bins=10)
    with pytest.raises(ValueError, match="no parameters"):
        make_recalibrator("temperature", t=2.0)
    with pytest.raises(ValueError, match="n_bins' must lie between 2"):
        make_recalibrator("histogram", n_bins=1)
    with pytest.raises(ValueError, match="'strategy'"):
        make_recalibrator("histogram", strategy="kmeans")
    with pytest.raises(ValueError, match="not fitted yet"):
        make_recalibrator("platt").predict(np.array([0.2]))


def test_fit_checks_inputs_and_what_a_method_needs() -> None:
    p, y = binary_data(50, 0)
    with pytest.raises(ValueError, match="multiclass problems"):
        make_recalibrator("vector").fit(p, y)
    with pytest.raises(ValueError, match="needs audit features"):
        make_recalibrator("lore").fit(p, y)
    with pytest.raises(ValueError, match="needs group labels"):
        make_recalibrator("group-temperature").fit(p, y)
    with pytest.raises(ValueError, match="Labels must be integers from 0 to 1"):
        make_recalibrator("platt").fit(p, y + 1)
    model = make_recalibrator("platt").fit(p, y)
    with pytest.raises(ValueError, match="fitted on 2 classes"):
        model.predict(np.full((3, 3), 1 / 3))


# --------------------------------------------------------------------------- scaling


def test_platt_is_near_identity_on_calibrated_logistic_data() -> None:
    rng = np.random.default_rng(1)
    p = sigmoid(rng.normal(0.0, 2.0, 20_000))
    y = (rng.random(p.size) < p).astype(np.int64)
    model = PlattScaling(smoothing="off").fit(p, y)
    assert model.transform_ == "logit"  # a log-odds model: the logit fits better than p
    # 4 standard errors from the Fisher information of the logistic fit at (a, b)
    F = np.column_stack([logit(p), np.ones(p.size)])
    q = sigmoid(F @ [model.slope_, model.intercept_])
    se = np.sqrt(np.diag(np.linalg.inv((F * (q * (1 - q))[:, None]).T @ F)))
    assert abs(model.slope_ - 1.0) < 4 * se[0] and abs(model.intercept_) < 4 * se[1]
    # the same maximum-likelihood fit as scikit-learn's unpenalised logistic regression
    reference = LogisticRegression(C=1e12, tol=1e-10, max_iter=1000).fit(F[:, :1], y)
    assert model.slope_ == pytest.approx(reference.coef_[0, 0], abs=1e-4)
    assert model.intercept_ == pytest.approx(reference.intercept_[0], abs=1e-4)


def test_temperature_lowers_nll_and_matches_a_grid_minimum() -> None:
    P, y, _ = multiclass_data(2000, 4, 2, sharpen=3.0)
    model = TemperatureScaling().fit(P, y)
    assert metrics.nll(model.predict(P), y) < metrics.nll(P, y) - 0.05
    grid = np.exp(np.linspace(np.log(0.5), np.log(8.0), 801))  # steps of 0.35% in T
    logp = np.log(P)[None] / grid[:, None, None]
    logp -= np.log(np.exp(logp).sum(axis=2, keepdims=True))
    losses = -logp[:, np.arange(y.size), y].mean(axis=1)
    step = grid[1] / grid[0]
    assert grid[np.argmin(losses)] / step <= model.temperature_ <= grid[np.argmin(losses)] * step
    assert model.temperature_ > 2.0  # an overconfident model is softened
    assert np.array_equal(np.argmax(model.predict(P), axis=1), np.argmax(P, axis=1))


def test_temperature_binary_is_the_sigmoid_of_the_scaled_logit() -> None:
    p, y = binary_data(2000, 3, power=0.5)
    model = TemperatureScaling().fit(p, y)
    np.testing.assert_allclose(model.predict(p), sigmoid(logit(p) / model.temperature_),
                               atol=1e-12)


@pytest.mark.parametrize("name", ["vector", "matrix", "dirichlet"])
def test_linear_softmax_methods_lower_nll_of_an_overconfident_model(name: str) -> None:
    P, y, _ = multiclass_data(3000, 4, 4, sharpen=2.5)
    cal, test = slice(0, 1500), slice(1500, None)
    model = make_recalibrator(name).fit(P[cal], y[cal])
    assert metrics.nll(model.predict(P[test]), y[test]) < metrics.nll(P[test], y[test]) - 0.05


def test_beta_calibration_recovers_its_parameters() -> None:
    rng = np.random.default_rng(5)
    p = rng.uniform(0.01, 0.99, 40_000)
    a, b, c = 2.0, 0.5, -0.3
    truth = sigmoid(a * np.log(p) - b * np.log1p(-p) + c)
    y = (rng.random(p.size) < truth).astype(np.int64)
    model = BetaCalibration().fit(p, y)
    # about 5 standard errors at n = 40,000 (the Fisher information gives SE ≈ 0.03–0.05)
    np.testing.assert_allclose(model.coef_, [a, b, c], atol=0.2)
    assert np.abs(model.predict(p) - truth).max() < 0.05
    assert (BetaCalibration().fit(p, 1 - y).coef_[:2] >= 0).all()  # a, b ≥ 0 enforced


# --------------------------------------------------------------------------- binning


def test_isotonic_equals_scikit_learn() -> None:
    p, y = binary_data(3000, 6, power=2.0)
    new = np.concatenate([np.linspace(-0.0, 1.0, 501), p[:50]])
    ours = IsotonicCalibration().fit(p, y).predict(new)
    theirs = IsotonicRegression(out_of_bounds="clip").fit(p, y).predict(new)
    np.testing.assert_allclose(ours, theirs, atol=1e-12)


def test_histogram_binning_predicts_the_bins_frequencies() -> None:
    p, y = binary_data(2000, 7, power=2.0)
    model = HistogramBinning(n_bins=10).fit(p, y)
    table = metrics.reliability_table(p, y, n_bins=10, n_resamples=0)
    centres = (table["bin_lower"] + table["bin_upper"]).to_numpy() / 2
    np.testing.assert_allclose(model.predict(centres), table["frequency"], atol=1e-12)
    quantile = HistogramBinning(n_bins=8, strategy="quantile").fit(p, y)
    assert np.unique(quantile.predict(p)).size <= 8


def test_bbq_with_one_model_is_its_posterior_mean() -> None:
    rng = np.random.default_rng(8)
    p, y = rng.uniform(size=27), (rng.random(27) < 0.4).astype(np.int64)
    model = BBQ(scale=1.0).fit(p, y)  # N^(1/3) = 3: B from 3 to 3, one model
    assert model.n_models_ == 1
    edges, _ = model.models_[0]
    ids = np.searchsorted(edges[1:-1], p, side="left")
    mid = (edges[:-1] + edges[1:]) / 2
    strength = 2.0 / (edges.size - 1)
    expected = [(y[ids == b].sum() + strength * mid[b]) / ((ids == b).sum() + strength)
                for b in range(edges.size - 1)]
    np.testing.assert_allclose(model.predict(mid), expected, atol=1e-12)


def test_bbq_averages_models_by_their_score() -> None:
    p, y = binary_data(3000, 9, power=2.0)
    model = BBQ().fit(p, y)
    assert model.n_models_ > 10 and model.weights_.sum() == pytest.approx(1.0)
    before, after = metrics.ece(p, y), metrics.ece(model.predict(p), y)
    assert after < before / 2


def test_venn_abers_equals_two_isotonic_fits_per_point() -> None:
    p, y = binary_data(300, 10, power=1.5)
    model = VennAbers().fit(p, y)
    new = np.concatenate([np.random.default_rng(0).uniform(size=40), p[:20], [0.0, 1.0]])
    p0, p1 = model.predict_interval(new)
    for s, low, high in zip(new, p0, p1, strict=True):
        for label, value in ((0, low), (1, high)):
            fit = IsotonicRegression(out_of_bounds="clip").fit(np.append(p, s),
                                                               np.append(y, label))
            assert value == pytest.approx(fit.predict([s])[0], abs=1e-12)
    assert (p0 <= p1 + 1e-12).all()
    np.testing.assert_allclose(model.predict(new), p1 / (1 - p0 + p1))


def test_scaling_binning_outputs_at_most_n_bins_values() -> None:
    p, y = binary_data(2000, 11, power=2.0)
    q = make_recalibrator("scaling-binning", n_bins=10).fit(p, y).predict(p)
    assert np.unique(q).size <= 10
    assert metrics.ece(q, y) < metrics.ece(p, y)


def test_one_vs_rest_renormalises_multiclass() -> None:
    P, y, _ = multiclass_data(1500, 3, 12, sharpen=2.0)
    for name in ("isotonic", "histogram", "bbq", "venn-abers", "platt", "beta"):
        Q = make_recalibrator(name).fit(P, y).predict(P)
        assert Q.shape == P.shape
        np.testing.assert_allclose(Q.sum(axis=1), 1.0, atol=1e-12)


# --------------------------------------------------------------------------- local


def test_replace_top_label_keeps_the_predicted_class() -> None:
    P = np.array([[0.5, 0.3, 0.2], [0.1, 0.1, 0.8], [0.5, 0.5, 0.0], [0.0, 1.0, 0.0]])
    out = replace_top_label(P, np.array([0.1, 0.6, 0.2, 0.9]))
    np.testing.assert_allclose(out.sum(axis=1), 1.0)
    assert np.array_equal(np.argmax(out, axis=1), np.argmax(P, axis=1))
    np.testing.assert_allclose(out[1], [0.2, 0.2, 0.6])  # others keep their proportions
    np.testing.assert_allclose(out[3], [0.05, 0.9, 0.05])  # c = 1: the rest spread evenly


@pytest.mark.parametrize("gamma", [np.inf, 1e12])
def test_lore_at_infinite_bandwidth_is_histogram_binning(gamma: float) -> None:
    P, y, X = multiclass_data(2000, 3, 13, sharpen=2.0, d=3)
    lore = LoRe(gamma=gamma, n_components=3).fit(P[:1000], y[:1000], features=X[:1000])
    binning = HistogramBinning(notion="top-label").fit(P[:1000], y[:1000])
    np.testing.assert_allclose(lore.predict(P[1000:], features=X[1000:]),
                               binning.predict(P[1000:]), atol=1e-9)


def test_lore_is_local_and_keeps_the_predicted_class() -> None:
    # model blind to x: accurate where x > 0, a coin flip where x < 0, same confidence
    rng = np.random.default_rng(14)
    x = rng.standard_normal((4000, 1))
    correct = np.where(x[:, 0] > 0, rng.random(4000) < 0.95, rng.random(4000) < 0.55)
    P = np.tile([0.25, 0.75], (4000, 1))
    y = np.where(correct, 1, 0)
    model = LoRe(gamma=0.2, n_components=1).fit(P[:2000], y[:2000], features=x[:2000])
    q = model.predict(P[2000:], features=x[2000:])
    right = x[2000:, 0] > 0.5
    left = x[2000:, 0] < -0.5
    # binomial standard error of a kernel mean over ≥ 200 effective points is ≤ 0.035
    assert abs(q[right, 1].mean() - 0.95) < 0.05 and abs(q[left, 1].mean() - 0.55) < 0.05
    assert (np.argmax(q, axis=1) == 1).all()


def test_fit_embedding_places_new_rows_like_embed() -> None:
    rng = np.random.default_rng(15)
    X = rng.standard_normal((200, 4))
    fitted = fit_embedding(X, "pca", n_components=2)
    np.testing.assert_allclose(fitted.coords, embed(X, "pca", n_components=2).coords)
    np.testing.assert_allclose(fitted.transform(X[:10]), fitted.coords[:10])
    with pytest.raises(ValueError, match="4 feature columns"):
        fitted.transform(X[:, :3])


def test_fit_embedding_tsne_reuses_known_vectors() -> None:
    rng = np.random.default_rng(16)
    X = np.repeat(rng.standard_normal((30, 3)), 2, axis=0)
    fitted = fit_embedding(X, "tsne", n_components=2, seed=1)
    np.testing.assert_array_equal(fitted.transform(X[:6]), fitted.coords[:6])
    new = fitted.transform(rng.standard_normal((5, 3)))
    assert new.shape == (5, 2) and np.isfinite(new).all()
    np.testing.assert_array_equal(fitted.transform(np.tile(X[7], (5, 1))),
                                  np.tile(fitted.coords[7], (5, 1)))


def test_lcb_correction_removes_a_feature_bias() -> None:
    rng = np.random.default_rng(17)
    x = rng.standard_normal((2400, 2))
    p = sigmoid(x[:, 0])
    y = (rng.random(2400) < sigmoid(x[:, 0] + 1.5 * x[:, 1])).astype(np.int64)
    model = make_recalibrator("lcb").fit(p[:1200], y[:1200], features=x[:1200])
    q = model.predict(p[1200:], features=x[1200:])
    assert metrics.brier(q, y[1200:]) < metrics.brier(p[1200:], y[1200:]) - 0.01
    assert ((q > 0) & (q < 1)).all()


# --------------------------------------------------------------------------- group


def test_group_wise_fits_large_levels_and_falls_back_for_small_ones() -> None:
    rng = np.random.default_rng(18)
    n = 3000
    g = rng.choice(["a", "b", "tiny"], n, p=[0.6, 0.39, 0.01])
    p = rng.uniform(0.05, 0.95, n)
    power = np.where(g == "a", 2.0, 0.5)
    y = (rng.random(n) < p**power).astype(np.int64)
    model = GroupWise(TemperatureScaling(), min_rows=50).fit(p, y, groups=g)
    assert set(model.models_) == {"a", "b"}
    for level in ("a", "b"):
        alone = TemperatureScaling().fit(p[g == level], y[g == level])
        np.testing.assert_allclose(model.predict(p[:5], groups=[level] * 5), alone.predict(p[:5]))
    glob = TemperatureScaling().fit(p, y)
    np.testing.assert_allclose(model.predict(p[:5], groups=["tiny"] * 5), glob.predict(p[:5]))
    np.testing.assert_allclose(model.predict(p[:5], groups=["unseen"] * 5), glob.predict(p[:5]))


def test_multicalibration_leaves_every_large_cell_within_alpha() -> None:
    rng = np.random.default_rng(19)
    n = 6000
    groups = np.column_stack([rng.choice(["f", "m"], n), rng.choice(["u", "v", "w"], n)])
    shift = (groups[:, 0] == "f") * 0.8 - (groups[:, 1] == "w") * 1.0
    z = rng.standard_normal(n)
    p = sigmoid(z)
    y = (rng.random(n) < sigmoid(z + shift)).astype(np.int64)
    alpha, min_count = 0.03, 60
    model = Multicalibration(alpha=alpha, n_bins=10, min_count=min_count).fit(p, y,
                                                                              groups=groups)
    assert model.converged_ and len(model.patches_) > 0
    q = model.predict(p, groups=groups)
    bins = metrics.bin_indices(q, np.linspace(0, 1, 11))
    joined = np.char.add(np.char.add(groups[:, 0], " | "), groups[:, 1])
    sets = [np.ones(n, bool)] + [groups[:, c] == v for c in (0, 1) for v in set(groups[:, c])] \
        + [joined == v for v in set(joined)]
    worst_before = 0.0
    for members in sets:
        for b in range(10):
            cell = members & (bins == b)
            if cell.sum() >= min_count:
                assert abs(np.mean(y[cell] - q[cell])) <= alpha + 1e-12
            before = members & (metrics.bin_indices(p, np.linspace(0, 1, 11)) == b)
            if before.sum() >= min_count:
                worst_before = max(worst_before, abs(np.mean(y[before] - p[before])))
    assert worst_before > 0.1  # the planted bias was there to repair
