"""Tests of core.local.embedding: feature preparation, PCA / t-SNE / UMAP maps, placement, cache
keys.

t-SNE and UMAP are fitted on a few hundred rows only. The first UMAP call compiles
umap-learn's numba code (15–20 s), so UMAP runs three times in all, always on fewer than
4,096 rows (the exact-neighbour code path, compiled once).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from core.data.demo import load_demo
from core.local.embedding import (
    DEFAULT_PARAMS,
    METHODS,
    SETTINGS_VERSION,
    Embedding,
    embed,
    embedding_cache_key,
    prepare_features,
)
from core.local.embedding.inputs import choose_fit_rows
from core.local.embedding.method_tsne import tsne_settings, tsne_transform_settings
from core.local.embedding.method_umap import umap_settings

N_PER_CLUSTER = 300
MAX_FIT = 400


def two_clusters(n_per_cluster: int = N_PER_CLUSTER, d: int = 10, seed: int = 0):
    """Two unit-variance Gaussian clusters in d dimensions whose means are 3 apart per axis."""
    rng = np.random.default_rng(seed)
    X = np.vstack([
        rng.standard_normal((n_per_cluster, d)),
        rng.standard_normal((n_per_cluster, d)) + 3.0,
    ])
    labels = np.repeat([0, 1], n_per_cluster)
    order = rng.permutation(X.shape[0])
    return X[order], labels[order]


def loo_1nn_accuracy(coords: np.ndarray, labels: np.ndarray) -> float:
    """Leave-one-out accuracy of the 1-nearest-neighbour classifier in ``coords``."""
    sq = (coords**2).sum(axis=1)
    distances = sq[:, None] + sq[None, :] - 2.0 * coords @ coords.T
    np.fill_diagonal(distances, np.inf)
    return float(np.mean(labels[np.argmin(distances, axis=1)] == labels))


def nearest_fitted_label(embedding: Embedding, labels: np.ndarray) -> np.ndarray:
    """For each placed row, the cluster label of its nearest fitted row in the map."""
    fitted = embedding.coords[embedding.fit_rows]
    placed = embedding.coords[embedding.placed_rows]
    distances = ((placed[:, None, :] - fitted[None, :, :]) ** 2).sum(axis=2)
    return labels[embedding.fit_rows][np.argmin(distances, axis=1)]


@pytest.fixture(scope="module")
def clusters():
    X, labels = two_clusters()
    return prepare_features(X, [f"x{j}" for j in range(X.shape[1])]), labels


@pytest.fixture(scope="module")
def cluster_maps(clusters):
    """One 2-D map per method, fitted on 400 of the 600 rows, the other 200 placed."""
    X, _ = clusters
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ImportWarning)  # umap-learn: "Tensorflow not installed"
        return {method: embed(X, method, max_fit=MAX_FIT, seed=0) for method in METHODS}


# --------------------------------------------------------------------------- prepare_features


def test_prepare_features_zscores_with_population_sd():
    rng = np.random.default_rng(1)
    X = rng.normal([5.0, -200.0, 0.01], [2.0, 50.0, 0.001], size=(500, 3))
    original = X.copy()
    Z = prepare_features(X, ["a", "b", "c"])
    np.testing.assert_allclose(Z.mean(axis=0), 0.0, atol=1e-12)
    np.testing.assert_allclose(Z.std(axis=0, ddof=0), 1.0, rtol=1e-12)
    np.testing.assert_allclose(Z, (X - X.mean(axis=0)) / X.std(axis=0), rtol=1e-12)
    assert Z.dtype == np.float64
    np.testing.assert_array_equal(X, original)


def test_prepare_features_constant_columns_become_exact_zeros():
    X = np.column_stack([np.full(7, 0.1), np.arange(7.0), np.full(7, 1e300)])
    Z = prepare_features(X, ["constant", "ramp", "huge constant"])
    assert np.all(Z[:, 0] == 0.0) and np.all(Z[:, 2] == 0.0)
    np.testing.assert_allclose(Z[:, 1].std(), 1.0)


def test_prepare_features_on_the_census_audit_features():
    audit = load_demo("census")
    Z = prepare_features(audit.X, audit.feature_names)
    assert Z.shape == audit.X.shape
    np.testing.assert_allclose(Z.std(axis=0), 1.0, rtol=1e-10)


@settings(max_examples=40, deadline=None)
@given(
    X=arrays(np.float64, st.tuples(st.integers(2, 30), st.integers(1, 4)),
             elements=st.integers(-1_000, 1_000).map(float)),
    scale=st.floats(0.01, 100.0),
    shift=st.floats(-1e3, 1e3),
)
def test_prepare_features_ignores_units_and_origin(X, scale, shift):
    """z-scores do not change when a column is rescaled (a > 0) and shifted."""
    names = [f"f{j}" for j in range(X.shape[1])]
    Z = prepare_features(X, names)
    moved = X.copy()
    moved[:, 0] = X[:, 0] * scale + shift
    np.testing.assert_allclose(prepare_features(moved, names), Z, atol=1e-6)
    spread = Z.std(axis=0)
    assert np.all((np.abs(spread - 1.0) < 1e-9) | (spread == 0.0))


@pytest.mark.parametrize(("X", "names", "message"), [
    (np.ones(5), ["a"], "table"),
    (np.ones((5, 0)), [], "at least one feature"),
    (np.ones((5, 2)), ["a"], "one name per column"),
    (np.array([[1.0, np.nan], [2.0, 3.0]]), ["age", "income"], "'income'"),
])
def test_prepare_features_rejects_bad_input(X, names, message):
    with pytest.raises(ValueError, match=message):
        prepare_features(X, names)


# --------------------------------------------------------------------------- validation


@pytest.mark.parametrize(("X", "kwargs", "message"), [
    (np.ones((4, 3)), {}, "at least 5 rows"),
    (np.ones(10), {}, "table"),
    (np.ones((10, 3)), {}, "same feature values"),
    (np.where(np.eye(6, 3) == 1, np.nan, 1.0) + np.arange(6)[:, None], {}, "3 rows"),
    (np.arange(30.0).reshape(10, 3), {"method": "mds"}, "Unknown embedding method"),
    (np.arange(30.0).reshape(10, 3), {"n_components": 4}, "between 1 and 3"),
    (np.arange(30.0).reshape(10, 3), {"n_components": 0}, "between 1 and 3"),
    (np.arange(30.0).reshape(10, 3), {"method": "tsne", "n_components": 4}, "1, 2 or 3"),
    (np.arange(30.0).reshape(10, 3), {"method": "umap", "n_components": 0}, "1, 2 or 3"),
    (np.arange(30.0).reshape(10, 3), {"n_components": 2.0}, "whole number"),
    (np.arange(30.0).reshape(10, 3), {"max_fit": 3}, "max_fit"),
    (np.arange(30.0).reshape(10, 3), {"seed": 0.5}, "seed"),
    (np.arange(30.0).reshape(10, 3), {"method": "tsne", "perplexity": 0.0}, "perplexity"),
    (np.arange(30.0).reshape(10, 3), {"method": "umap", "n_neighbors": 1}, "neighbourhood"),
])
def test_embed_rejects_unusable_input_with_a_readable_message(X, kwargs, message):
    with pytest.raises(ValueError, match=message):
        embed(X, **kwargs)


def test_pca_components_are_limited_by_the_fitted_rows():
    X = np.random.default_rng(2).standard_normal((40, 12))
    with pytest.raises(ValueError, match="fitted rows, 8"):
        embed(X, "pca", n_components=10, max_fit=8)
    assert embed(X, "pca", n_components=12).coords.shape == (40, 12)


# --------------------------------------------------------------------------- PCA


def test_pca_equals_the_svd_projection():
    X = prepare_features(np.random.default_rng(3).standard_normal((200, 6)) * [1, 2, 3, 4, 5, 6],
                         list("abcdef"))
    result = embed(X, "pca", n_components=3)
    _, s, vt = np.linalg.svd(X - X.mean(axis=0), full_matrices=False)
    expected = (X - X.mean(axis=0)) @ vt[:3].T
    signs = np.sign(np.sum(result.coords * expected, axis=0))
    np.testing.assert_allclose(result.coords, expected * signs, atol=1e-10)
    np.testing.assert_allclose(result.explained_variance_ratio, (s**2 / np.sum(s**2))[:3])
    assert result.n_fit == 200 and result.placed_rows.size == 0
    np.testing.assert_array_equal(result.fit_rows, np.arange(200))


def test_pca_places_the_other_rows_with_the_map_fitted_on_the_subsample(clusters):
    X, _ = clusters
    result = embed(X, "pca", max_fit=100, seed=5)
    fitted = X[result.fit_rows]
    _, _, vt = np.linalg.svd(fitted - fitted.mean(axis=0), full_matrices=False)
    expected = (X - fitted.mean(axis=0)) @ vt[:2].T
    signs = np.sign(np.sum(result.coords * expected, axis=0))
    np.testing.assert_allclose(result.coords, expected * signs, atol=1e-10)
    np.testing.assert_array_equal(result.fit_rows, choose_fit_rows(X.shape[0], 100, 5))


# --------------------------------------------------------------------------- all methods


@pytest.mark.parametrize("method", METHODS)
def test_embedding_fields(cluster_maps, clusters, method):
    X, _ = clusters
    result = cluster_maps[method]
    assert result.method == method
    assert result.coords.shape == (X.shape[0], 2) and result.coords.dtype == np.float64
    assert np.isfinite(result.coords).all()
    assert result.n_fit == MAX_FIT == result.fit_rows.size
    assert np.all(np.diff(result.fit_rows) > 0)
    np.testing.assert_array_equal(
        np.sort(np.concatenate([result.fit_rows, result.placed_rows])), np.arange(X.shape[0])
    )
    assert result.params["seed"] == 0 and result.params["max_fit"] == MAX_FIT
    if method == "pca":
        ratio = result.explained_variance_ratio
        assert ratio.shape == (2,) and ratio[0] >= ratio[1] > 0 and ratio.sum() <= 1
    else:
        assert result.explained_variance_ratio is None


@pytest.mark.parametrize("method", METHODS)
def test_every_method_separates_two_clusters(cluster_maps, clusters, method):
    _, labels = clusters
    assert loo_1nn_accuracy(cluster_maps[method].coords, labels) >= 0.95


@pytest.mark.parametrize("method", METHODS)
def test_placed_rows_land_in_their_own_cluster(cluster_maps, clusters, method):
    _, labels = clusters
    result = cluster_maps[method]
    placed_labels = labels[result.placed_rows]
    assert placed_labels.size == 2 * N_PER_CLUSTER - MAX_FIT
    assert np.mean(nearest_fitted_label(result, labels) == placed_labels) >= 0.95
    fitted = result.coords[result.fit_rows]
    centres = np.stack([fitted[labels[result.fit_rows] == k].mean(axis=0) for k in (0, 1)])
    placed = result.coords[result.placed_rows]
    nearest_centre = np.argmin(((placed[:, None, :] - centres[None]) ** 2).sum(axis=2), axis=1)
    assert np.mean(nearest_centre == placed_labels) >= 0.95


@pytest.mark.parametrize("method", METHODS)
def test_same_seed_gives_identical_coordinates_and_progress_is_reported(
    cluster_maps, clusters, method
):
    """A second call (with a progress callback this time) reproduces the map exactly."""
    X, _ = clusters
    reports: list[tuple[float, str]] = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ImportWarning)
        again = embed(X, method, max_fit=MAX_FIT, seed=0,
                      progress=lambda fraction, message: reports.append((fraction, message)))
    np.testing.assert_array_equal(again.coords, cluster_maps[method].coords)
    np.testing.assert_array_equal(again.fit_rows, cluster_maps[method].fit_rows)
    assert again.params == cluster_maps[method].params
    fractions = [fraction for fraction, _ in reports]
    assert len(reports) >= 3 and fractions[-1] == 1.0
    assert all(0.0 <= f <= 1.0 for f in fractions) and fractions == sorted(fractions)
    assert all(isinstance(message, str) and message for _, message in reports)


def test_tsne_with_another_seed_gives_another_map(clusters):
    X, _ = clusters
    a = embed(X[:150], "tsne", seed=1)
    b = embed(X[:150], "tsne", seed=2)
    assert not np.array_equal(a.coords, b.coords)


# --------------------------------------------------------------------------- small inputs


@pytest.mark.parametrize("n_components", [1, 2, 3])
def test_tsne_on_a_handful_of_rows_clamps_the_perplexity(n_components):
    X = np.random.default_rng(4).standard_normal((9, 3))
    result = embed(X, "tsne", n_components=n_components, max_fit=6, perplexity=30.0)
    assert result.coords.shape == (9, n_components) and np.isfinite(result.coords).all()
    assert result.params["perplexity"] == pytest.approx(5 / 3)
    assert result.params["perplexity"] < result.n_fit / 3
    assert result.params["perplexity_requested"] == 30.0
    assert result.params["transform_perplexity"] < result.n_fit / 3
    assert result.params["negative_gradient_method"] == "bh"


def test_tsne_and_umap_settings_follow_the_data_size():
    small = tsne_settings(n_fit=500, d=16, n_components=2, perplexity=30.0, seed=0)
    assert small["neighbors"] == "exact" and small["negative_gradient_method"] == "bh"
    large = tsne_settings(n_fit=20_000, d=16, n_components=2, perplexity=30.0, seed=0)
    assert large["neighbors"] == "annoy" and large["negative_gradient_method"] == "fft"
    assert large["n_jobs"] == 2 and large["random_state"] == 0
    assert tsne_settings(20_000, 16, 3, 30.0, 0)["negative_gradient_method"] == "bh"
    assert tsne_settings(50, 1, 2, 30.0, 0)["initialization"] == "random"
    assert tsne_transform_settings(7) == {"perplexity": 2.0, "k": 6}
    tiny = umap_settings(n_fit=6, d=3, n_components=2, n_neighbors=15, seed=9)
    assert tiny["n_neighbors"] == 5 and tiny["n_jobs"] == 1
    assert tiny["random_state"] == 9 == tiny["transform_seed"]


def test_choose_fit_rows():
    np.testing.assert_array_equal(choose_fit_rows(10, 20, seed=0), np.arange(10))
    rows = choose_fit_rows(1_000, 100, seed=0)
    assert rows.size == 100 and np.unique(rows).size == 100 and np.all(np.diff(rows) > 0)
    np.testing.assert_array_equal(rows, choose_fit_rows(1_000, 100, seed=0))
    assert not np.array_equal(rows, choose_fit_rows(1_000, 100, seed=1))


# --------------------------------------------------------------------------- census demo


@pytest.fixture(scope="module")
def census_features():
    audit = load_demo("census")
    return prepare_features(audit.X, audit.feature_names)


def test_census_pca_on_all_rows(census_features):
    result = embed(census_features, "pca")
    assert result.coords.shape == (census_features.shape[0], 2)
    assert np.isfinite(result.coords).all() and result.n_fit == census_features.shape[0]


def assert_repeated_rows_share_coordinates(X: np.ndarray, result: Embedding) -> None:
    """Rows with equal features have equal coordinates, and each distinct row is fitted once."""
    distinct, inverse = np.unique(X, axis=0, return_inverse=True)
    inverse = inverse.reshape(-1)
    first = np.unique(inverse, return_index=True)[1]  # first row holding each distinct vector
    np.testing.assert_array_equal(result.coords, result.coords[first][inverse])
    assert result.params["n_distinct"] == distinct.shape[0]
    assert np.unique(inverse[result.fit_rows]).size == result.n_fit


def test_census_tsne_on_distinct_rows_with_placement(census_features):
    """The demo's audit features (age, sex, race) repeat; 400 distinct vectors are fitted."""
    result = embed(census_features, "tsne", max_fit=400, seed=0)
    assert result.coords.shape == (census_features.shape[0], 2)
    assert np.isfinite(result.coords).all() and result.n_fit == 400
    assert result.params["n_distinct"] > 400
    assert_repeated_rows_share_coordinates(census_features, result)


def test_census_umap_on_a_slice(census_features):
    X = census_features[:800]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ImportWarning)
        result = embed(X, "umap", max_fit=200, seed=0)
    assert result.coords.shape == (800, 2) and np.isfinite(result.coords).all()
    assert result.n_fit == 200 and result.params["init"] == "pca"
    assert_repeated_rows_share_coordinates(X, result)


def test_tsne_needs_five_distinct_rows_but_pca_does_not():
    X = np.repeat(np.eye(4), 10, axis=0)
    with pytest.raises(ValueError, match="only 4 distinct values"):
        embed(X, "tsne")
    assert embed(X, "pca").coords.shape == (40, 2)


# --------------------------------------------------------------------------- cache keys


def test_cache_key_is_a_readable_stable_string():
    key = embedding_cache_key("abc123", "tsne", 2, 0, perplexity=50)
    assert key == (f"embedding-v{SETTINGS_VERSION}|abc123|tsne|k=2|seed=0|"
                   "max_fit=20000|perplexity=50.0")
    assert key == embedding_cache_key("abc123", "tsne", np.int64(2), 0, perplexity=50.0)


def test_cache_key_fills_defaults_and_ignores_parameters_the_method_does_not_read():
    fp = "f00d"
    assert embedding_cache_key(fp, "tsne", 2, 0) == embedding_cache_key(
        fp, "tsne", 2, 0, perplexity=DEFAULT_PARAMS["perplexity"], max_fit=20_000
    )
    assert embedding_cache_key(fp, "umap", 2, 0, perplexity=5.0) == embedding_cache_key(
        fp, "umap", 2, 0, perplexity=50.0
    )
    assert embedding_cache_key(fp, "pca", 2, 0, n_neighbors=5) == embedding_cache_key(
        fp, "pca", 2, 0
    )


def test_cache_key_changes_with_every_input_that_changes_the_map():
    base = embedding_cache_key("f00d", "umap", 2, 0, n_neighbors=15)
    variants = [
        embedding_cache_key("beef", "umap", 2, 0, n_neighbors=15),
        embedding_cache_key("f00d", "tsne", 2, 0),
        embedding_cache_key("f00d", "umap", 3, 0, n_neighbors=15),
        embedding_cache_key("f00d", "umap", 2, 1, n_neighbors=15),
        embedding_cache_key("f00d", "umap", 2, 0, n_neighbors=30),
        embedding_cache_key("f00d", "umap", 2, 0, max_fit=5_000),
        embedding_cache_key("f00d", "umap", 2, 0, features=("age", "income")),
    ]
    assert len({base, *variants}) == len(variants) + 1
    assert "features=('age','income')" in variants[-1]


def test_cache_key_rejects_bad_input():
    with pytest.raises(ValueError, match="fingerprint"):
        embedding_cache_key("", "pca", 2, 0)
    with pytest.raises(ValueError, match="Unknown embedding method"):
        embedding_cache_key("f00d", "lda", 2, 0)
    with pytest.raises(TypeError, match="cache key"):
        embedding_cache_key("f00d", "pca", 2, 0, data=object())


@pytest.mark.parametrize("shape", [(50, 1), (300, 3), (2_000, 5), (40, 7)])
def test_pca_map_is_scikit_learns(shape: tuple[int, int]) -> None:
    # the full SVD, its sign convention, the projection and the variance shares of
    # sklearn.decomposition.PCA(svd_solver="full"), to the bit
    from sklearn.decomposition import PCA

    from core.local.embedding.method_pca import fit_pca

    rng = np.random.default_rng(shape[0])
    X = rng.normal(size=shape) @ rng.normal(size=(shape[1], shape[1])) + 3.0
    fit_rows = np.sort(rng.choice(shape[0], size=shape[0] // 2, replace=False))
    k = min(2, shape[1])
    ours = fit_pca(X, fit_rows, k)
    theirs = PCA(n_components=k, svd_solver="full").fit(X[fit_rows])
    np.testing.assert_array_equal(ours.components_, theirs.components_)
    np.testing.assert_array_equal(ours.explained_variance_ratio_,
                                  theirs.explained_variance_ratio_)
    np.testing.assert_array_equal(ours.transform(X), theirs.transform(X))
    with pytest.raises(ValueError, match="missing or infinite"):
        ours.transform(np.full((1, shape[1]), np.nan))
