"""core.estimators: the risk of eq. 20, the four estimation functions and the pipeline.

Each formula is checked against a literal implementation: the risk against a double loop over
pairs, binning against ``core.metrics.binned.ece`` (eq. 24), the density ratio against scipy's Beta
and Dirichlet densities, the ridge estimators against the Kronecker system of eq. 28 and the
matrix inverse of eq. 32.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from core import estimators
from core.data.validation import one_hot, softmax
from core.estimators.functions import KernelEigen, _rbf, pivoted_cholesky
from core.estimators.risk import feature_risk, notion_inputs
from core.metrics.binned import ece, ece_debiased


def multiclass(n: int, m: int = 3, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Overconfident softmax predictions with labels drawn from the calibrated truth."""
    rng = np.random.default_rng(seed)
    logits = rng.normal(size=(n, m))
    truth = softmax(logits)
    y = (truth.cumsum(axis=1) < rng.random(n)[:, None]).sum(axis=1)
    return softmax(2.0 * logits), np.minimum(y, m - 1)


def literal_risk(h, points: np.ndarray, D: np.ndarray) -> float:
    n = D.shape[0]
    total = 0.0
    for i in range(n):
        for j in range(n):
            if i != j:
                total += (D[i] @ D[j] - h(points[i:i + 1], points[j:j + 1])[0, 0]) ** 2
    return total / (n * (n - 1))


def temperature_h(theta: float):
    def h(P: np.ndarray, Q: np.ndarray) -> np.ndarray:
        return (P - softmax(theta * np.log(P))) @ (Q - softmax(theta * np.log(Q))).T

    return h


# --------------------------------------------------------------------------- risk


@pytest.mark.parametrize("notion", ["top-label", "canonical"])
def test_risk_matches_the_double_sum_and_does_not_depend_on_tiles(notion: str) -> None:
    probs, y = multiclass(37)
    points, D = notion_inputs(probs, y, notion)
    if notion == "canonical":
        h = temperature_h(0.7)
    else:
        def h(P, Q):
            return np.outer(0.1 * P, 0.2 * Q)
    expected = literal_risk(h, points, D)
    for tile in (1, 5, 36, 37, 1024):
        assert estimators.risk(h, probs, y, notion=notion, tile_size=tile) == pytest.approx(
            expected, rel=1e-12)


def test_risk_of_bilinear_equals_the_tiled_pair_sum() -> None:
    """The Gram-matrix identity of feature_risk reproduces the pair sum exactly."""
    probs, y = multiclass(60, m=4, seed=2)
    rng = np.random.default_rng(1)
    W = rng.normal(size=(4, 4))
    h = estimators.Bilinear(lambda P: P - 0.25, W @ W.T - np.eye(4))
    plain = lambda P, Q: h(P, Q)  # noqa: E731 — the same function, not a Bilinear
    tiled = estimators.risk(plain, probs, y, notion="canonical", tile_size=7)
    assert estimators.risk(h, probs, y, notion="canonical") == pytest.approx(tiled, rel=1e-10)
    identity = estimators.Bilinear(lambda P: P - 0.25)
    assert estimators.risk(identity, probs, y, notion="canonical") == pytest.approx(
        estimators.risk(lambda P, Q: identity(P, Q), probs, y, notion="canonical"), rel=1e-10)


def test_risk_targets() -> None:
    """h = T's own factor on a calibrated-looking sample: risk 0 for h ≡ T (pairs only)."""
    probs, y = multiclass(20)
    P = probs - one_hot(y, 3)
    lookup = {tuple(p): d for p, d in zip(probs, P, strict=True)}

    def perfect(A, B):
        return np.array([lookup[tuple(a)] for a in A]) @ np.array([lookup[tuple(b)]
                                                                    for b in B]).T

    assert estimators.risk(perfect, probs, y, notion="canonical") == pytest.approx(0, abs=1e-15)
    # top-label targets: (c − o)(c' − o')
    conf, D = notion_inputs(probs, y, "top-label")
    correct = (probs.argmax(axis=1) == y)
    np.testing.assert_allclose(D[:, 0], conf - correct)


def test_binary_inputs_are_two_class_rows() -> None:
    rng = np.random.default_rng(4)
    p = rng.uniform(size=50)
    y = (rng.random(50) < p).astype(int)
    h = temperature_h(1.3)
    matrix = np.column_stack([1 - p, p])
    assert estimators.risk(h, p, y, notion="canonical") == estimators.risk(
        h, matrix, y, notion="canonical")


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"notion": "classwise"}, "Unknown calibration notion 'classwise'"),
    ({"tile_size": 0}, "tile_size must be a whole number of at least 1"),
])
def test_risk_rejects_bad_settings(kwargs: dict, message: str) -> None:
    probs, y = multiclass(10)
    with pytest.raises(ValueError, match=message):
        estimators.risk(temperature_h(1.0), probs, y, **kwargs)


def test_risk_rejects_bad_functions_and_data() -> None:
    probs, y = multiclass(10)
    with pytest.raises(ValueError, match=r"shape \(len\(P\), len\(Q\)\) = \(10, 10\)"):
        estimators.risk(lambda P, Q: np.zeros(3), probs, y, notion="canonical")
    with pytest.raises(ValueError, match="missing or infinite"):
        estimators.risk(lambda P, Q: np.full((len(P), len(Q)), np.nan), probs, y)
    with pytest.raises(ValueError, match="h must be a function"):
        estimators.risk(3.0, probs, y)
    with pytest.raises(ValueError, match="at least 2 rows"):
        estimators.risk(temperature_h(1.0), probs[:1], y[:1])
    with pytest.raises(ValueError, match="row 0 has label 7"):
        estimators.risk(temperature_h(1.0), probs, np.full(10, 7))


# --------------------------------------------------------------------------- estimators


def test_binning_is_the_squared_plug_in_ece() -> None:
    """Eq. 24: the mean of h_bin(c, c) on its training rows is ECE₂² of core.metrics."""
    probs, y = multiclass(400, m=4, seed=3)
    conf, _ = notion_inputs(probs, y, "top-label")
    for n_bins in (5, 15, 40):
        h = estimators.make_estimator("bins", probs, y, n_bins)
        expected = ece(probs, y, n_bins=n_bins, norm="l2", notion="top-label") ** 2
        assert h.diagonal(conf).mean() == pytest.approx(expected, rel=1e-12)
    # a bin without training rows contributes 0
    h = estimators.make_estimator("bins", probs, y, 100)
    assert h(np.array([0.001]), np.array([0.001]))[0, 0] == 0.0


def test_kde_matches_scipy_beta_and_dirichlet_densities() -> None:
    probs, y = multiclass(40, seed=5)
    queries, _ = multiclass(6, seed=6)
    b = 0.1
    conf, D = notion_inputs(probs, y, "top-label")
    correct = conf - D[:, 0]
    q_conf, _ = notion_inputs(queries, np.zeros(6, int), "top-label")
    weights = np.array([[stats.beta.pdf(q, c / b + 1, (1 - c) / b + 1) for c in conf]
                        for q in q_conf])
    expected = q_conf - weights @ correct / weights.sum(axis=1)
    h = estimators.make_estimator("kde", probs, y, b, notion="top-label")
    np.testing.assert_allclose(h.features(q_conf)[:, 0], expected, rtol=1e-9)

    weights = np.array([[stats.dirichlet.pdf(q, p / b + 1) for p in probs] for q in queries])
    expected = queries - weights @ one_hot(y, 3) / weights.sum(axis=1, keepdims=True)
    h = estimators.make_estimator("kde", probs, y, b, notion="canonical")
    np.testing.assert_allclose(h.features(queries), expected, rtol=1e-9)
    np.testing.assert_allclose(h(queries, queries), expected @ expected.T, rtol=1e-9)


def test_kde_is_defined_at_the_simplex_corners() -> None:
    probs = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.5, 0.5, 0.0], [0.2, 0.3, 0.5]])
    h = estimators.make_estimator("kde", probs, np.array([0, 1, 1, 2]), 1e-5,
                                  notion="canonical")
    assert np.isfinite(h(probs, probs)).all()


@pytest.mark.parametrize("notion", ["top-label", "canonical"])
def test_kernel_ridge_matches_the_kronecker_system(notion: str) -> None:
    """Eq. 28 literally, (K ⊗ K + λn²I)⁻¹ on n² pairs, against the eigen form of eq. 29."""
    probs, y = multiclass(8, seed=7)
    queries, _ = multiclass(3, seed=8)
    points, D = notion_inputs(probs, y, notion)
    q_points, _ = notion_inputs(queries, np.zeros(3, int), notion)
    n, lam = 8, 1e-3
    K = _rbf(points, points)
    k = _rbf(points, q_points)  # (n, q)
    targets = (D @ D.T).reshape(-1)
    coef = np.linalg.solve(np.kron(K, K) + lam * n**2 * np.eye(n * n), targets)
    expected = np.array([[coef @ np.kron(k[:, a], k[:, b]) for b in range(3)]
                         for a in range(3)])
    h = estimators.make_estimator("kkr", probs, y, lam, notion=notion)
    np.testing.assert_allclose(h(q_points, q_points), expected, rtol=1e-6, atol=1e-12)

    inverse = np.linalg.inv(K + lam * n * np.eye(n))
    expected = k.T @ inverse @ D @ D.T @ inverse.T @ k
    h = estimators.make_estimator("ukkr", probs, y, lam, notion=notion)
    np.testing.assert_allclose(h(q_points, q_points), expected, rtol=1e-6, atol=1e-12)


def test_ukkr_equals_kkr_without_regularisation() -> None:
    """Stock et al. (2018), quoted after eq. 32: the two coincide at λ = 0."""
    probs, y = multiclass(30, seed=9)
    points, D = notion_inputs(probs, y, "canonical")
    eigen = KernelEigen.fit(points, D)
    kkr, ukkr = estimators.fit_kkr(eigen, 0.0), estimators.fit_ukkr(eigen, 0.0)
    np.testing.assert_allclose(kkr(points[:5], points), ukkr(points[:5], points), rtol=1e-8,
                               atol=1e-10)


def test_pivoted_cholesky_reproduces_the_kernel_and_its_spectrum() -> None:
    probs, _ = multiclass(300, m=5, seed=10)
    L = pivoted_cholesky(probs)
    K = _rbf(probs, probs)
    assert L.shape[1] < 300  # the RBF kernel on the simplex has low numerical rank
    assert np.abs(K - L @ L.T).max() < 1e-10
    eigen = KernelEigen.fit(probs, np.zeros((300, 1)))
    full = np.linalg.eigvalsh(K)[::-1][: eigen.values.size]
    np.testing.assert_allclose(eigen.values, full, rtol=1e-6, atol=1e-9 * full[0])


def test_grids_are_the_appendix_b_grids() -> None:
    grid = estimators.ESTIMATORS
    assert grid["bins"].grid(0, "top-label") == tuple(float(5 * i) for i in range(1, 21))
    kde = grid["kde"].grid(0, "canonical")
    assert len(kde) == 20 and min(kde) == pytest.approx(1e-5) and max(kde) == 1.0
    assert 0.1 in kde and pytest.approx(0.4) in kde
    n = 400
    np.testing.assert_allclose(grid["kkr"].grid(n, "top-label"),
                               sorted(20 * 10.0 ** (1 - 2 * i) for i in range(1, 10)))
    np.testing.assert_allclose(grid["ukkr"].grid(n, "top-label"),
                               sorted(20 * 10.0 ** -i for i in range(1, 10)))
    np.testing.assert_allclose(grid["kkr"].grid(n, "canonical"),
                               sorted(20 * 10.0 ** (9 - i) for i in range(1, 19)))
    np.testing.assert_allclose(grid["ukkr"].grid(n, "canonical"),
                               sorted(20 * 10.0 ** (4.5 - i / 2) for i in range(1, 19)))
    assert grid["bins"].notions == ("top-label",)


def test_make_estimator_rejects_bad_settings() -> None:
    probs, y = multiclass(20)
    with pytest.raises(ValueError, match="Unknown calibration estimator 'isotonic'"):
        estimators.make_estimator("isotonic", probs, y, 1.0)
    with pytest.raises(ValueError, match="does not estimate the 'canonical' notion"):
        estimators.make_estimator("bins", probs, y, 10, notion="canonical")
    with pytest.raises(ValueError, match="number of bins must be a whole number"):
        estimators.make_estimator("bins", probs, y, 2.5)
    with pytest.raises(ValueError, match="bandwidth must be a positive finite number"):
        estimators.make_estimator("kde", probs, y, -1.0)


# --------------------------------------------------------------------------- selection


def test_select_table_curves_and_reproducibility() -> None:
    probs, y = multiclass(300, seed=11)
    calls: list[tuple[float, str]] = []
    selection = estimators.select(probs, y, notion="top-label", folds=3, seed=4,
                                  progress=lambda f, m: calls.append((f, m)))
    table = selection.table
    assert list(table["estimator"]) == ["bins", "bins-15", "kde", "kkr", "ukkr"]
    assert table["selected"].sum() == 1 and selection.best != "bins-15"
    assert table.loc[table["selected"], "risk"].iloc[0] == table.loc[
        table["estimator"] != "bins-15", "risk"].min()
    np.testing.assert_allclose(table["ce"], np.sqrt(np.maximum(table["ce2"], 0)))
    assert len(calls) == 3 * 4 and calls[-1][0] == 1.0 and "Fold 3 of 3" in calls[-1][1]
    # each chosen value is the grid minimum of its curve
    for row in table[table["estimator"] != "bins-15"].itertuples():
        curve = selection.curves[selection.curves["estimator"] == row.estimator]
        assert row.value == curve.loc[curve["risk"].idxmin(), "value"]
    assert selection.n_test == 60 and selection.n_rows == 300
    again = estimators.select(probs, y, notion="top-label", folds=3, seed=4)
    assert again.table.equals(table)


def test_select_estimate_is_the_test_mean_of_the_fold_ensemble() -> None:
    """Eq. 21 by hand for binning: fold fits on the shuffled rows, averaged on the test part."""
    probs, y = multiclass(200, seed=12)
    selection = estimators.select(probs, y, estimators=["bins"], folds=2, seed=3)
    order = np.random.default_rng(3).permutation(200)
    test, parts = order[:40], np.array_split(order[40:], 2)
    conf, _ = notion_inputs(probs, y, "top-label")
    value = int(selection.table.iloc[0]["value"])
    fits = [estimators.make_estimator("bins", probs[parts[1 - f]], y[parts[1 - f]], value)
            for f in range(2)]
    expected = np.mean([h.diagonal(conf[test]).mean() for h in fits])
    assert selection.table.iloc[0]["ce2"] == pytest.approx(expected, rel=1e-12)


def test_select_subsamples_kernel_fits() -> None:
    probs, y = multiclass(400, seed=13)
    selection = estimators.select(probs, y, notion="canonical", folds=2, max_fit_rows=50)
    assert set(selection.table["rows_fitted"]) == {50}
    assert selection.subsampled
    assert list(selection.table["estimator"]) == ["kde", "kkr", "ukkr"]


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"folds": 1}, "folds must be a whole number of at least 2"),
    ({"test_size": 1.5}, "test_size must lie strictly between 0 and 1"),
    ({"seed": -1}, "seed must be a whole number"),
    ({"estimators": []}, "estimators is empty"),
    ({"estimators": ["bins"], "notion": "canonical"}, "does not estimate the 'canonical'"),
    ({"folds": 20}, "too few for 20 folds"),
    ({"progress": 3}, "progress must be a function"),
])
def test_select_rejects_bad_settings(kwargs: dict, message: str) -> None:
    probs, y = multiclass(100)
    with pytest.raises(ValueError, match=message):
        estimators.select(probs, y, **kwargs)


def test_estimates_table_sets_the_binned_numbers_beside_the_selection() -> None:
    probs, y = multiclass(200, seed=14)
    selection = estimators.select(probs, y, estimators=["bins", "ukkr"], folds=2)
    table = estimators.estimates_table(selection, probs, y)
    assert len(table) == 5
    binned = table.iloc[-2:]
    assert binned["ce2"].iloc[0] == pytest.approx(
        ece(probs, y, n_bins=15, norm="l2", notion="top-label") ** 2)
    assert binned["ce2"].iloc[1] == pytest.approx(
        ece_debiased(probs, y, n_bins=15, strategy="uniform", notion="top-label"))
    assert "Reliability page" in binned["estimate"].iloc[0]
    with pytest.raises(ValueError, match="computed on 200 rows"):
        estimators.estimates_table(selection, probs[:10], y[:10])


def test_feature_risk_is_never_negative_for_an_exact_fit() -> None:
    D = np.array([[0.3], [-0.2], [0.1]])
    assert feature_risk(D, None, D) == 0.0


def test_select_max_rows_and_paired_risk_gaps() -> None:
    probs, y = multiclass(400, seed=15)
    selection = estimators.select(probs, y, folds=2, max_rows=200, max_fit_rows=60)
    assert (selection.n_rows, selection.n_total, selection.n_test) == (200, 400, 40)
    table = selection.table
    assert table.loc[table["selected"], "risk_gap"].iloc[0] == 0.0
    # the selected estimator has the lowest mean risk, so the mean paired gap is ≥ 0
    candidates = table[table["estimator"] != "bins-15"]
    np.testing.assert_allclose(candidates["risk_gap"],
                               candidates["risk"] - candidates["risk"].min(), atol=1e-15)
    assert (table["risk_gap_se"] >= 0).all()
    assert len(estimators.estimates_table(selection, probs, y)) == len(table) + 2
    with pytest.raises(ValueError, match="max_rows must be a whole number of at least 21"):
        estimators.select(probs, y, folds=2, max_rows=5)
