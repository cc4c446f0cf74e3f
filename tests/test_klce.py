"""KLCE², its test under every null, the bandwidth grid and VALIDATION.md's KLCE cases.

Monte-Carlo tolerances: a rejection rate r̂ over R repetitions has binomial standard error
√(r(1−r)/R); agreement with a reference rate r is checked with an exact two-sided binomial
test at level 0.001 (equivalently, about 3.3 SE for rates away from 0 and 1), so a failure
means the implementation disagrees, not bad luck.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import expit
from scipy.stats import binomtest

from core.data.simulations import calibrated_two_features, type_one_paper, type_two_paper
from core.kernels.tiles import gaussian_block, standardize_features
from core.stattests.klce import DEFAULT_NULL, NULLS, klce, klce_test
from core.stattests.klce_grid import klce_grid_test
from core.stattests.level_study import rejection_rates

PAPER_SIGMA = 5.0 / np.sqrt(2.0)  # kernel exp(-0.04‖·‖²) = exp(-‖·‖²/(2σ²))


def agrees(rate: float, reference: float, reps: int) -> bool:
    """Exact binomial test at 0.001 of the observed count against the reference rate."""
    reference = min(max(reference, 0.5 / reps), 1 - 0.5 / reps)
    return binomtest(round(rate * reps), reps, reference).pvalue > 0.001


def test_klce_is_the_u_statistic_of_eq_4() -> None:
    rng = np.random.default_rng(0)
    n = 40
    X = rng.normal(size=(n, 2))
    p = rng.uniform(0.1, 0.9, n)
    y = (rng.random(n) < p).astype(int)
    e = y - p
    Xs = standardize_features(X)
    k = gaussian_block(p, p, 0.2) * gaussian_block(Xs, Xs, 1.3)
    expected = sum(e[i] * k[i, j] * e[j] for i in range(n) for j in range(n) if i != j)
    assert klce(p, y, X, 0.2, 1.3) == pytest.approx(expected / (n * (n - 1)), rel=1e-10)
    # (n, 2) probabilities, one-vs-rest for class 1, and an infinite bandwidth = kernel ≡ 1
    probs = np.column_stack([1 - p, p])
    assert klce(probs, y, X, 0.2, 1.3) == pytest.approx(klce(p, y, X, 0.2, 1.3))
    only_p = gaussian_block(p, p, 0.2)
    expected_p = (e @ only_p @ e - e @ e) / (n * (n - 1))
    assert klce(p, y, X, 0.2, np.inf) == pytest.approx(expected_p, rel=1e-10)


def test_multiclass_needs_a_class() -> None:
    rng = np.random.default_rng(1)
    probs = rng.dirichlet(np.ones(3), 30)
    y = rng.integers(0, 3, 30)
    with pytest.raises(ValueError, match="class_index"):
        klce(probs, y, None)
    value = klce(probs, y, None, class_index=2)
    assert value == pytest.approx(klce(probs[:, 2], (y == 2).astype(int), None))


@pytest.mark.parametrize("null", NULLS)
def test_test_result_fields_and_reproducibility(null: str) -> None:
    p, y, X = calibrated_two_features(np.random.default_rng(2))
    first = klce_test(p, y, X, null=null, n_resamples=99, seed=5)
    again = klce_test(p, y, X, null=null, n_resamples=99, seed=5)
    assert first.statistic == again.statistic and np.array_equal(first.null, again.null)
    assert first.null.shape == (99,) and first.method == null and first.n_resamples == 99
    expected = (1 + np.sum(first.null >= first.statistic)) / 100
    assert first.p_value == pytest.approx(expected)
    assert first.parameters["klce"] == pytest.approx(klce(p, y, X))


# --------------------------------------------------------------------------- Type-I


TYPE_I_WIDTHS = np.linspace(0.01, 0.99, 11)
TYPE_I_REFERENCE = [0.04875, 0.05075, 0.04925, 0.05, 0.049, 0.04975, 0.05, 0.05, 0.0495,
                    0.0495, 0.04925]  # permutation null, 4000 repetitions (reference code)
TYPE_I_REPS = 300


@pytest.mark.slow
def test_type_one_every_null_holds_its_level() -> None:
    """N = 50, prediction kernel exp(−(p−p')²/w²) only (σ_p = w/√2), p ≤ 0.05 rejects."""
    rates = {width: rejection_rates(type_one_paper, TYPE_I_REPS, 200,
                                    (width / np.sqrt(2), np.inf), True, seed=10 + k,
                                    nulls=NULLS)
             for k, width in enumerate(TYPE_I_WIDTHS)}
    comparisons = len(TYPE_I_WIDTHS) * len(NULLS)
    for null in NULLS:
        # Holding the level: the rate pooled over the 11 widths (3,300 trials) is not
        # significantly above α; conservative nulls (the paper's bootstrap) may be below.
        pooled = np.mean([rates[w][null] for w in TYPE_I_WIDTHS])
        trials = TYPE_I_REPS * len(TYPE_I_WIDTHS)
        assert binomtest(round(pooled * trials), trials, 0.05,
                         alternative="greater").pvalue > 0.001, (null, pooled)
        for width in TYPE_I_WIDTHS:  # and no single width is, after Bonferroni over all
            count = round(rates[width][null] * TYPE_I_REPS)
            assert binomtest(count, TYPE_I_REPS, 0.05, alternative="greater").pvalue \
                > 0.001 / comparisons, (null, width, rates[width][null])
    for k, width in enumerate(TYPE_I_WIDTHS):
        # the exact default null and the reference code's permutation null sit at α itself
        assert agrees(rates[width][DEFAULT_NULL], 0.05, TYPE_I_REPS), (width, rates[width])
        assert agrees(rates[width]["permutation"], TYPE_I_REFERENCE[k], TYPE_I_REPS), width


# --------------------------------------------------------------------------- Type-II


TYPE_II = [  # (N, d, reference Type-II error of the permutation test, 1000 permutations)
    (500, 10, 0.006),
    (500, 30, 0.242),
    (1000, 30, 0.012),
    (100, 10, 0.595),
]
TYPE_II_REPS = 150


@pytest.mark.slow
@pytest.mark.parametrize(("n", "d", "reference"), TYPE_II)
def test_type_two_error_matches_the_paper(n: int, d: int, reference: float) -> None:
    def draw(rng):
        return type_two_paper(rng, n, d)

    rates = rejection_rates(draw, TYPE_II_REPS, 200, (PAPER_SIGMA, PAPER_SIGMA), False,
                            seed=n + d, nulls=("permutation", DEFAULT_NULL))
    assert agrees(1 - rates["permutation"], reference, TYPE_II_REPS), rates
    # The default null is at least as powerful as the paper's permutation test here
    # (one-sided: its Type-II error is not significantly above the reference).
    default_miss = round((1 - rates[DEFAULT_NULL]) * TYPE_II_REPS)
    assert binomtest(default_miss, TYPE_II_REPS, max(reference, 0.5 / TYPE_II_REPS),
                     alternative="greater").pvalue > 0.001, rates


# --------------------------------------------------------------------------- bandwidth grid


@pytest.mark.slow
def test_aggregated_grid_test_holds_its_level_and_has_power() -> None:
    reps, rejected = 150, 0
    rng = np.random.default_rng(3)
    for rep in range(reps):
        X = rng.standard_normal((120, 2))
        p = expit(X[:, 0] - 0.5 * X[:, 1])
        y = (rng.random(120) < p).astype(int)
        result = klce_grid_test(p, y, X, n_resamples=99, seed=rep,
                                prob_bandwidths=[0.05, 0.2], feature_bandwidths=[0.3, 1.0, 3.0])
        rejected += result.aggregated.p_value <= 0.05
    assert agrees(rejected / reps, 0.05, reps)
    p, y, X = type_two_paper(np.random.default_rng(4), 500, 5)
    result = klce_grid_test(p, y, X, n_resamples=199, seed=1)
    assert result.statistics.shape == result.p_values.shape == (5, 5)
    assert result.aggregated.p_value <= 0.05  # the blind model is caught
    # the grid's centre is the median-heuristic test with the same resamples
    single = klce_test(p, y, X, n_resamples=199, seed=1)
    assert single.p_value <= 0.05
    assert result.statistics[2, 2] == pytest.approx(single.statistic)
    assert result.p_values[2, 2] == pytest.approx(single.p_value)


def test_progress_callback_and_constant_feature_kernel() -> None:
    p, y, _ = type_one_paper(np.random.default_rng(6))
    seen = []
    result = klce_grid_test(p, y, None, n_resamples=19,
                            progress=lambda fraction, message: seen.append(fraction))
    assert result.feature_bandwidths.tolist() == [np.inf] and result.p_values.shape == (5, 1)
    assert seen[-1] == pytest.approx(1.0) and len(seen) == 5


def test_centred_statistic_from_row_sums_equals_direct_centring() -> None:
    from core.kernels.spec import kernel_inputs
    from core.stattests.klce import variant_statistics

    p, y, X = calibrated_two_features(np.random.default_rng(8))
    inputs = kernel_inputs(p, y, X)
    E = np.random.default_rng(9).normal(0.3, 1.0, size=(p.size, 7))
    values = variant_statistics(inputs.points, E, ("plain", "centred"))
    direct = variant_statistics(inputs.points, E - E.mean(axis=0), ("plain",))[0]
    np.testing.assert_allclose(values[1], direct, rtol=1e-9, atol=1e-15)
