"""Cumulative differences, their KS and Kuiper metrics and tests (Arrieta-Ibarra et al. 2022)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import integrate

from core.data.validation import sigmoid
from core.metrics import cumulative
from core.stattests.cumulative import cumulative_test, ks_survival, kuiper_survival


def calibrated(n: int, seed: int, power: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """Scores p = sigmoid(N(−0.3, 1.2²)); outcomes ~ Bernoulli(p**power) (calibrated at 1)."""
    rng = np.random.default_rng(seed)
    p = sigmoid(rng.normal(-0.3, 1.2, n))
    return p, (rng.random(n) < p**power).astype(np.int64)


def test_path_and_metrics_match_a_literal_loop() -> None:
    p, y = calibrated(200, 0, power=1.4)
    order = sorted(range(200), key=lambda i: p[i])
    c, path = 0.0, [0.0]
    for i in order:
        c += (y[i] - p[i]) / 200
        path.append(c)
    path = np.array(path)
    result = cumulative.cumulative_differences(p, y)
    np.testing.assert_allclose(result.cumulative, path, atol=1e-14)
    np.testing.assert_allclose(result.fraction, np.arange(201) / 200)
    assert result.ks == pytest.approx(np.abs(path).max())
    assert result.kuiper == pytest.approx(path.max() - path.min())
    assert result.sigma == pytest.approx(np.sqrt(np.sum(p * (1 - p))) / 200)
    assert cumulative.cumulative_metric(p, y) == result.kuiper
    assert cumulative.cumulative_metric(p, y, "ks") == result.ks


def test_tied_scores_do_not_depend_on_row_order() -> None:
    rng = np.random.default_rng(1)
    p = rng.choice([0.1, 0.25, 0.5, 0.8], 500)
    y = (rng.random(500) < p).astype(int)
    one = cumulative.cumulative_differences(p, y)
    perm = rng.permutation(500)
    two = cumulative.cumulative_differences(p[perm], y[perm])
    np.testing.assert_allclose(one.cumulative, two.cumulative, atol=1e-14)
    assert one.fraction.size == 5  # C_0 and the end of each of the four tied runs


def test_kuiper_does_not_depend_on_which_class_is_positive() -> None:
    # Flipping the classes reverses and negates the path; its range stays the same.
    p, y = calibrated(1_000, 2, power=0.7)
    assert cumulative.cumulative_metric(1 - p, 1 - y) == pytest.approx(
        cumulative.cumulative_metric(p, y), rel=1e-12)


def test_survival_functions_have_the_brownian_means() -> None:
    # E sup|B| = √(π/2) and E(max B − min B) = 2√(2/π) on [0, 1] (Feller 1951): the integrals
    # of the survival functions must reproduce them.
    ks_mean = integrate.quad(ks_survival, 0, 12, limit=200)[0]
    ku_mean = integrate.quad(kuiper_survival, 0, 12, limit=200)[0]
    assert ks_mean == pytest.approx(np.sqrt(np.pi / 2), rel=1e-8)
    assert ku_mean == pytest.approx(2 * np.sqrt(2 / np.pi), rel=1e-8)
    # the two series of ks_survival meet at x = 1
    assert ks_survival(1 - 1e-12) == pytest.approx(ks_survival(1.0))
    assert ks_survival(0.0) == 1.0 and kuiper_survival(50.0) == 0.0


def test_survival_agrees_with_simulated_brownian_paths() -> None:
    # 4,000 random walks of 2,000 steps; binomial tolerance 4·sqrt(q(1−q)/4000) plus the
    # discretisation bias of the walk's maximum (about 0.583/√2000 ≈ 0.013 in x, Siegmund):
    # compared at x where the survival changes slowly, the total slack is 0.03.
    rng = np.random.default_rng(3)
    walks = np.cumsum(rng.normal(size=(4_000, 2_000)) / np.sqrt(2_000), axis=1)
    sup = np.abs(walks).max(axis=1)
    span = np.maximum(walks.max(axis=1), 0) - np.minimum(walks.min(axis=1), 0)
    for x in (1.0, 1.5, 2.2):
        assert np.mean(sup >= x) == pytest.approx(ks_survival(x), abs=0.03)
    for x in (1.2, 2.0, 2.8):
        assert np.mean(span >= x) == pytest.approx(kuiper_survival(x), abs=0.03)


@pytest.mark.parametrize("statistic", ["ks", "kuiper"])
def test_level_on_calibrated_data(statistic: str) -> None:
    # 400 calibrated data sets of 500 rows: the tests are conservative, so the rejection rate
    # at α = 0.05 must not exceed 0.05 + 3·sqrt(0.05·0.95/400) = 0.083.
    reps = 400
    rejections = sum(cumulative_test(*calibrated(500, 100 + s), statistic).rejects()
                     for s in range(reps))
    assert rejections / reps <= 0.05 + 3 * np.sqrt(0.05 * 0.95 / reps)


@pytest.mark.parametrize("statistic", ["ks", "kuiper"])
def test_rejects_a_known_miscalibration(statistic: str) -> None:
    # outcomes ~ Bernoulli(p^1.5): predictions too high in the middle; n = 3,000
    for seed in range(10):
        result = cumulative_test(*calibrated(3_000, 200 + seed, 1.5), statistic)
        assert result.p_value < 0.01
        assert result.parameters["metric"] == pytest.approx(result.statistic
                                                            * result.parameters["sigma"])


def test_thinned_path_keeps_the_extremes() -> None:
    p, y = calibrated(50_000, 4, power=1.2)
    path = cumulative.cumulative_differences(p, y)
    small = path.thinned(1_000)
    assert small.fraction.size <= 1_100
    assert small.cumulative.max() == path.cumulative.max()
    assert small.cumulative.min() == path.cumulative.min()
    assert small.fraction[0] == 0 and small.fraction[-1] == 1


@pytest.mark.parametrize("call, message", [
    (lambda: cumulative_test([0.2, 0.5], [0, 1], statistic="ad"), "Unknown"),
    (lambda: cumulative_test([0.0, 1.0], [0, 1]), "strictly between 0 and 1"),
    (lambda: cumulative.cumulative_differences(np.full((2, 3), 1 / 3), [0, 1],
                                               notion="classwise"), "class_index"),
    (lambda: cumulative.cumulative_metric([0.2, np.nan], [0, 1]), "missing"),
])
def test_bad_input_is_explained(call, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        call()


def test_figure_draws_the_path_and_the_calibrated_range() -> None:
    from core.figures.reliability import cumulative_figure

    p, y = calibrated(20_000, 5, power=1.3)
    path = cumulative.cumulative_differences(p, y)
    figure = cumulative_figure(path, max_points=2_000)
    line = figure.data[1]
    assert len(line.x) <= 2_200
    assert min(line.y) == path.cumulative.min() and max(line.y) == path.cumulative.max()
    assert f"Kuiper H {path.kuiper:.4f}" in figure.layout.annotations[0].text
