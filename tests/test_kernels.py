"""The tile engine against dense reference computations."""

from __future__ import annotations

import numpy as np
import pytest

from core.kernels.tiles import (
    gaussian_block,
    kernel_matmul,
    laplacian_block,
    median_heuristic,
    quadratic_forms,
    scale_blocks,
)

RNG = np.random.default_rng(42)
Z = RNG.normal(size=(537, 3))
E = RNG.normal(size=(537, 7))


def dense_forms(K: np.ndarray, E: np.ndarray, exclude_diagonal: bool) -> np.ndarray:
    forms = np.einsum("ib,ij,jb->b", E, K, E)
    return forms - np.einsum("ib,i,ib->b", E, np.diag(K), E) if exclude_diagonal else forms


@pytest.mark.parametrize("tile", [64, 100, 537, 4096])
@pytest.mark.parametrize("exclude", [True, False])
def test_gaussian_quadratic_forms_match_dense(tile: int, exclude: bool) -> None:
    K = gaussian_block(Z, Z, 0.8)
    expected = dense_forms(K, E, exclude)
    got = quadratic_forms(Z, E, 0.8, exclude_diagonal=exclude, tile_size=tile)
    np.testing.assert_allclose(got, expected, rtol=1e-11, atol=1e-9)


def test_laplacian_quadratic_forms_match_dense() -> None:
    K = laplacian_block(Z, Z, 0.3)
    got = quadratic_forms(Z, E, 0.3, kind="laplacian", tile_size=100)
    np.testing.assert_allclose(got, dense_forms(K, E, True), rtol=1e-11, atol=1e-9)


def test_laplacian_is_exact_on_near_duplicates() -> None:
    a = np.array([[1e8, 1e8], [1e8 + 1e-6, 1e8]])
    K = laplacian_block(a, a, gamma=1e-6)
    # ‖a − b‖₁ = 1e-6 (up to the float spacing at 1e8, 1.5e-8), d·γ = 2e-6
    np.testing.assert_allclose(K[0, 1], np.exp(-0.5), rtol=2e-2)
    assert K[0, 0] == 1.0


def test_one_dimensional_inputs_and_vector_weights() -> None:
    x = RNG.random(300)
    e = RNG.normal(size=300)
    K = gaussian_block(x, x, 0.1)
    expected = e @ K @ e - e @ e
    assert quadratic_forms(x, e, 0.1, tile_size=128) == pytest.approx(expected, rel=1e-11)


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_threads_give_the_same_sums(n_jobs: int) -> None:
    reference = quadratic_forms(Z, E, 1.1, tile_size=128, n_jobs=1)
    np.testing.assert_allclose(quadratic_forms(Z, E, 1.1, tile_size=128, n_jobs=n_jobs),
                               reference, rtol=1e-12)


def test_kernel_matmul_matches_dense_and_leave_one_out() -> None:
    query = RNG.normal(size=(211, 3))
    K = gaussian_block(query, Z, 0.5)
    np.testing.assert_allclose(kernel_matmul(query, Z, E, 0.5, tile_size=64), K @ E,
                               rtol=1e-11, atol=1e-12)
    K_self = gaussian_block(Z, Z, 0.5)
    np.testing.assert_allclose(kernel_matmul(Z, Z, E, 0.5, exclude_self=True, tile_size=100),
                               K_self @ E - E, rtol=1e-10, atol=1e-11)
    np.testing.assert_allclose(kernel_matmul(Z, Z, E[:, 0], 0.2, kind="laplacian"),
                               laplacian_block(Z, Z, 0.2) @ E[:, 0], rtol=1e-11)


def test_median_heuristic() -> None:
    points = np.array([[0.0], [1.0], [3.0]])  # distances 1, 2, 3
    assert median_heuristic(points) == 2.0
    assert median_heuristic(np.zeros((5, 2))) == 1.0
    big = RNG.normal(size=(5000, 2))
    # subsampled median of ‖a − b‖ for 2-D standard normals: √2 · √(2 ln 2) ≈ 1.665
    assert median_heuristic(big) == pytest.approx(2 * np.sqrt(np.log(2)), rel=0.03)


def test_product_of_gaussians_is_one_gaussian_on_scaled_blocks() -> None:
    p, x = RNG.random((50, 1)), RNG.normal(size=(50, 2))
    product = gaussian_block(p, p, 0.2) * gaussian_block(x, x, 1.5)
    np.testing.assert_allclose(gaussian_block(scale_blocks([p, x], [0.2, 1.5]),
                                              scale_blocks([p, x], [0.2, 1.5]), 1.0),
                               product, rtol=1e-12)


def test_unknown_kernel() -> None:
    with pytest.raises(ValueError, match="Unknown kernel"):
        quadratic_forms(Z, E, 1.0, kind="cosine")
