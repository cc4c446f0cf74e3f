"""SKCE estimators and calibration tests: every case of VALIDATION.md's SKCE section."""

from __future__ import annotations

import numpy as np
import pytest

from core.metrics.skce_estimate import skce
from core.stattests.goodness_of_fit import hosmer_lemeshow
from core.stattests.result import resampling_p_value
from core.stattests.skce import skce_test

E = np.e
TWO_POINTS = np.array([[1.0, 0.0], [0.0, 1.0]])
TABLE = {  # labels → (unbiased, biased), kernel exp(-‖p − q‖²/2), white kernel on labels
    (0, 1): (0.0, 0.0),
    (0, 0): (0.0, 0.5),
    (1, 0): (-2 / E, 1 - 1 / E),
    (1, 1): (0.0, 0.5),
}


@pytest.mark.parametrize("labels", TABLE)
def test_two_sample_table(labels: tuple[int, int]) -> None:
    unbiased, biased = TABLE[labels]
    y = np.array(labels)
    assert skce(TWO_POINTS, y, bandwidth=1.0) == pytest.approx(unbiased, abs=1e-12)
    assert skce(TWO_POINTS, y, bandwidth=1.0, estimator="biased") == pytest.approx(biased,
                                                                                   abs=1e-12)
    # The same predictions embedded in three classes take the general (non-binary) path.
    padded = np.column_stack([TWO_POINTS, np.zeros(2)])
    assert skce(padded, y, bandwidth=1.0) == pytest.approx(unbiased, abs=1e-12)
    assert skce(padded, y, bandwidth=1.0, estimator="biased") == pytest.approx(biased,
                                                                               abs=1e-12)


def test_binary_form_with_scalar_probabilities() -> None:
    # h = 2·k(p, p')(y − p)(y' − p') with k = exp(-(p − p')²): p = [1, 0], y = [0, 1] → −2/e.
    # On the prediction vectors that kernel is exp(-‖·‖²/2), i.e. bandwidth σ = 1.
    assert skce(np.array([1.0, 0.0]), np.array([0, 1]), bandwidth=1.0) == pytest.approx(-2 / E)


@pytest.mark.parametrize("labels", TABLE)
def test_block_estimator(labels: tuple[int, int]) -> None:
    unbiased, _ = TABLE[labels]
    probs = np.tile(TWO_POINTS, (10, 1))
    y = np.tile(np.array(labels), 10)
    assert skce(probs, y, 1.0, estimator="block", block_size=2) == pytest.approx(unbiased)


def test_block_size_n_equals_unbiased() -> None:
    rng = np.random.default_rng(0)
    probs = rng.dirichlet(np.ones(4), 30)
    y = rng.integers(0, 4, 30)
    assert skce(probs, y, 0.7, estimator="block", block_size=30) == pytest.approx(
        skce(probs, y, 0.7), rel=1e-12)
    # large blocks take the tile-engine path; they must agree with the dense one
    probs = rng.dirichlet(np.ones(3), 400)
    y = rng.integers(0, 3, 400)
    assert skce(probs, y, 0.5, estimator="block", block_size=200) == pytest.approx(
        np.mean([skce(probs[:200], y[:200], 0.5), skce(probs[200:], y[200:], 0.5)]))


def draw_calibrated(rng: np.random.Generator, n: int, m: int) -> tuple[np.ndarray, np.ndarray]:
    probs = rng.dirichlet(np.ones(m), n)
    y = (rng.random((n, 1)) > np.cumsum(probs, axis=1)).sum(axis=1)
    return probs, np.minimum(y, m - 1)


def test_unbiased_on_calibrated_data_and_biased_positive() -> None:
    rng = np.random.default_rng(1)
    unbiased, biased = [], []
    for _ in range(1000):
        probs, y = draw_calibrated(rng, 20, 3)
        unbiased.append(skce(probs, y, 1.0))
        biased.append(skce(probs, y, 1.0, estimator="biased"))
    unbiased = np.array(unbiased)
    # E[SKCE_u] = 0 under calibration; the mean of 1000 draws has SE = sd/√1000.
    se = unbiased.std(ddof=1) / np.sqrt(unbiased.size)
    assert abs(unbiased.mean()) < 3 * se
    assert (unbiased > 0).any() and (unbiased < 0).any()
    assert min(biased) > 0


ALPHAS = np.arange(0.05, 1.0, 0.1)


@pytest.mark.parametrize("m", [2, 10])
def test_consistency_test_p_values_are_uniform_under_calibration(m: int) -> None:
    rng = np.random.default_rng(100 + m)
    p_values = np.array([
        skce_test(*draw_calibrated(rng, 100, m), n_resamples=500, seed=rep).p_value
        for rep in range(100)
    ])
    ecdf = np.array([(p_values <= a).mean() for a in ALPHAS])
    # VALIDATION.md tolerance 0.15: three binomial SEs of an ECDF value near 0.5 with 100
    # repetitions (√(0.25/100) = 0.05).
    assert np.max(np.abs(ecdf - ALPHAS)) <= 0.15, ecdf


@pytest.mark.parametrize("m", [2, 10])
def test_consistency_test_detects_one_class_labels(m: int) -> None:
    rng = np.random.default_rng(7)
    probs = rng.dirichlet(np.ones(m), 100)
    y = np.zeros(100, dtype=int)
    result = skce_test(probs, y, n_resamples=500, seed=1)
    assert result.p_value < 0.01
    assert result.null.shape == (500,) and result.method == "consistency"


def test_block_and_bound_tests() -> None:
    rng = np.random.default_rng(3)
    rejections = 0
    reps = 200
    for rep in range(reps):
        probs, y = draw_calibrated(rng, 200, 3)
        rejections += skce_test(probs, y, method="block", seed=rep).p_value <= 0.05
    # Asymptotic level 0.05; tolerance 3 binomial SEs: 3·√(0.05·0.95/200) ≈ 0.046.
    assert abs(rejections / reps - 0.05) <= 3 * np.sqrt(0.05 * 0.95 / reps)
    probs = rng.dirichlet(np.ones(3), 2000)
    y = np.zeros(2000, dtype=int)
    assert skce_test(probs, y, method="block").p_value < 1e-6
    bound = skce_test(probs, y, method="bound")
    assert bound.p_value < 0.05 and bound.method == "bound"
    calibrated = skce_test(*draw_calibrated(rng, 2000, 3), method="bound")
    assert calibrated.p_value > 0.5  # conservative: a calibrated model is never flagged


def test_p_value_convention() -> None:
    null = np.array([0.1, 0.2, 0.3, 0.4])
    assert resampling_p_value(0.25, null) == pytest.approx(3 / 5)
    assert resampling_p_value(1.0, null) == pytest.approx(1 / 5)  # never 0
    assert resampling_p_value(0.3, null) == pytest.approx(3 / 5)  # ties count against H1


def test_hosmer_lemeshow() -> None:
    rng = np.random.default_rng(5)
    reps, rejections = 300, 0
    for _ in range(reps):
        p = rng.uniform(0.05, 0.95, 500)
        rejections += hosmer_lemeshow(p, rng.random(500) < p).p_value <= 0.05
    # Level 0.05 with df = G on held-out data; 3 binomial SEs: 3·√(0.05·0.95/300) ≈ 0.038.
    assert abs(rejections / reps - 0.05) <= 3 * np.sqrt(0.05 * 0.95 / reps)
    p = rng.uniform(0.05, 0.95, 2000)
    y = rng.random(2000) < np.clip(p + 0.1, 0, 1)
    result = hosmer_lemeshow(p, y)
    assert result.p_value < 1e-6 and result.parameters["degrees_of_freedom"] == 10
    # hand-computed: two groups
    small = hosmer_lemeshow(np.array([0.2, 0.2, 0.8, 0.8]), np.array([0, 1, 1, 1]), n_groups=2)
    # group 1: O=1, E=0.4, var=0.4·0.8=0.32; group 2: O=2, E=1.6, var=1.6·0.2=0.32
    assert small.statistic == pytest.approx(0.36 / 0.32 + 0.16 / 0.32)


def test_bootstrap_interval_matches_explicit_resamples() -> None:
    from core.metrics.skce_estimate import skce_bootstrap

    rng = np.random.default_rng(11)
    probs = rng.dirichlet(np.ones(3), 150)
    y = np.zeros(150, dtype=int)
    y[:50] = 1
    low, high = skce_bootstrap(probs, y, bandwidth=0.5, n_resamples=300, seed=4,
                               method="percentile")
    # The same multinomial resamples, evaluated one by one on the resampled rows:
    draw = np.random.default_rng(4).multinomial(150, np.full(150, 1 / 150), size=300)
    explicit = [skce(probs[np.repeat(np.arange(150), w)], y[np.repeat(np.arange(150), w)], 0.5)
                for w in draw]
    np.testing.assert_allclose([low, high], np.quantile(explicit, [0.025, 0.975]), rtol=1e-9)
    assert low < skce(probs, y, 0.5) < high


# --------------------------------------------------------------------------- at scale


def _miscalibrated(n: int, m: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    if m == 2:
        p = rng.uniform(size=n)
        return p, (rng.random(n) < p ** 1.5).astype(np.int64)
    P = rng.dirichlet(np.ones(m), n)
    return P, np.array([rng.choice(m, p=row ** 2 / (row ** 2).sum()) for row in P])


def test_rff_skce_is_unbiased_for_the_exact_value_and_its_spread_falls_like_one_over_root_d(
) -> None:
    # Off the diagonal E_W[φ_iᵀφ_j] = k_ij exactly (Bochner), and the U-statistic has no
    # diagonal, so over independent Fourier maps the RFF SKCE is unbiased for the exact one:
    # the mean of 16 maps lies within 4 standard errors of it. Its spread is O(1/√D): the
    # standard deviation at D = 256 is √16 = 4 times that at D = 4,096 (16 maps estimate each
    # sd within about ±18%, so the ratio lies in [2.5, 6.5]).
    from core.metrics.skce_estimate import skce_fourier_draws, skce_inputs

    p, y = _miscalibrated(2000, 2, 0)
    Z, R, sigma = skce_inputs(p, y, None)
    exact = skce(p, y, sigma)
    spread = {}
    for D in (256, 4096):
        values = np.array([skce_fourier_draws(Z, R, sigma, 0, seed, D)[0][0]
                           for seed in range(16)])
        spread[D] = values.std(ddof=1)
        assert abs(values.mean() - exact) <= 4 * spread[D] / np.sqrt(16), D
    assert 2.5 <= spread[256] / spread[4096] <= 6.5
    assert spread[4096] < 0.05 * exact  # at D = 4,096 a few per cent of the value here


@pytest.mark.parametrize("m", [2, 3])
def test_rff_bootstrap_equals_the_literal_weighted_u_statistic(m: int) -> None:
    # Each Poisson resample: the U-statistic over pairs of distinct draws a ≠ b of the
    # expanded resample (N_b = Σ w draws) with the kernel k̃ = φᵀφ, summed literally; chunks
    # of 16 rows, whose weights are drawn at the rows' global numbers.
    from core.kernels.resampling import row_poisson_weights
    from core.kernels.rff import FourierMap
    from core.metrics.skce_estimate import skce_fourier_draws, skce_inputs

    n, B, seed, D = 40, 6, 3, 64
    probs, y = _miscalibrated(n, m, 1)
    Z, R, sigma = skce_inputs(probs, y, None)
    draws, plugin = skce_fourier_draws(Z, R, sigma, B, seed, D, chunk_rows=16)
    phi = FourierMap.draw(Z.shape[1], D, seed).features(Z / sigma).astype(np.float64)
    H = (phi @ phi.T) * (R @ R.T)
    assert draws[0] == pytest.approx((H.sum() - np.trace(H)) / (n * (n - 1)), rel=1e-5)
    assert plugin == pytest.approx(H.sum() / n**2, rel=1e-5)
    W = row_poisson_weights(0, n, B, seed)
    for b in range(B):
        rows = np.repeat(np.arange(n), W[:, b].astype(int))
        Hb = H[np.ix_(rows, rows)]
        literal = (Hb.sum() - np.trace(Hb)) / (rows.size * (rows.size - 1))
        assert draws[b + 1] == pytest.approx(literal, rel=1e-5, abs=1e-9)


def test_poisson_weights_have_mean_and_variance_one_and_ignore_the_chunking() -> None:
    # Poisson(1): mean 1, variance 1. Over 2,000 resamples × 500 rows the mean is within
    # 4 standard errors (√(1/10⁶) = 0.001) of 1 and the variance within 4·√(2/10⁶)·(≈1.4).
    from core.kernels.resampling import row_poisson_weights

    n, B = 500, 2000
    W = row_poisson_weights(0, n, B, 7)
    assert abs(W.mean() - 1) < 4 * np.sqrt(1 / W.size)
    assert abs(W.var() - 1) < 4 * np.sqrt(3 / W.size)
    pieces = np.vstack([row_poisson_weights(a, b, B, 7) for a, b in ((0, 123), (123, 500))])
    np.testing.assert_array_equal(pieces, W)


def test_poisson_weights_by_cells_equal_the_binary_search_of_the_cdf() -> None:
    # row_poisson_weights looks counts up by cells of [0, 1); they must equal
    # searchsorted(F, u, side="right") for every uniform, the cells' edges and F's own values
    # included (where a uniform equal to F_k counts k + 1).
    from core.kernels import resampling

    cdf, bits = resampling._POISSON_CDF, resampling._POISSON_BITS
    edges = np.arange(1 << bits) / (1 << bits)
    u = np.concatenate([cdf, np.nextafter(cdf, 0.0), np.nextafter(cdf, 1.0), edges,
                        np.nextafter(edges + 1.0 / (1 << bits), 0.0),
                        resampling.row_uniforms(3, "poisson", 0, 2000, 50).ravel()])
    u = u[u < 1.0]
    np.testing.assert_array_equal(resampling._poisson_counts(u),
                                  np.searchsorted(cdf, u, side="right"))
    # row_poisson_weights reads each uniform's cell from the generator's 64-bit word; 10⁶
    # draws put about 120 uniforms in the cells a CDF value cuts, looked up one by one
    drawn = resampling.row_uniforms(3, "poisson", 10**6, 10**6 + 20_000, 50)
    assert resampling._POISSON_MIXED[(drawn * (1 << bits)).astype(np.int64)].sum() > 50
    W = resampling.row_poisson_weights(10**6, 10**6 + 20_000, 50, 3)
    np.testing.assert_array_equal(W, np.searchsorted(cdf, drawn, side="right"))
    assert W.dtype == np.float64


def test_skce_summary_exact_path_is_the_exact_estimator_and_bootstrap() -> None:
    from core.metrics.skce_estimate import skce_bootstrap, skce_summary

    p, y = _miscalibrated(300, 2, 2)
    result = skce_summary(p, y, n_resamples=40, seed=5, computation="exact")
    assert result.computation == "exact"
    assert result.value == skce(p, y)
    assert (result.ci_low, result.ci_high) == skce_bootstrap(p, y, n_resamples=40, seed=5)
    approx = skce_summary(p, y, n_resamples=40, seed=5, computation="rff")
    assert approx.computation == "rff(1024)" and approx.reason == "as asked"
    assert approx.ci_low < approx.value < approx.ci_high
    block = skce_summary(p, y, n_resamples=40, computation="block")
    assert block.computation == "block(2)" and block.ci_low < block.value < block.ci_high
