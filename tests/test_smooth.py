"""Smooth ECE and the smooth reliability diagram (Błasiok & Nakkiran 2023)."""

from __future__ import annotations

import numpy as np
import pytest

from core import metrics
from core.metrics import smooth


def gaussian(d: np.ndarray, sigma: float) -> np.ndarray:
    return np.exp(-0.5 * (d / sigma) ** 2) / (np.sqrt(2 * np.pi) * sigma)


def literal_smooth_ece(f: np.ndarray, y: np.ndarray, sigma: float,
                       points: int = 5_001) -> tuple[float, np.ndarray, np.ndarray]:
    """The definition term by term: the reflected Gaussian kernel as a sum over images
    (t − f − 2k and t + f − 2k, |k| ≤ 3), every row against every t, trapezoid rule."""
    t = np.linspace(0.0, 1.0, points)
    K = np.zeros((points, f.size))
    for k in range(-3, 4):
        for image in (f + 2 * k, 2 * k - f):
            K += gaussian(t[:, None] - image[None, :], sigma)
    residual = K @ (y - f) / f.size
    density = K.mean(axis=1)
    return float(np.trapezoid(np.abs(residual), t)), residual, density


def bisection_bandwidth(f: np.ndarray, y: np.ndarray, steps: int = 10) -> float:
    """relplot's rule: bisect [0, 1] ``steps`` times for smECE_σ = σ (the upper end)."""
    low, high = 0.0, 1.0
    for _ in range(steps):
        mid = (low + high) / 2
        if mid < literal_smooth_ece(f, y, mid, 2001)[0]:
            low = mid
        else:
            high = mid
    return high


def sample(n: int, seed: int, truth=lambda f: f) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    f = rng.beta(2.0, 3.0, n)
    return f, (rng.random(n) < truth(f)).astype(np.int64)


@pytest.mark.parametrize("sigma", [0.01, 0.03, 0.1, 0.4])
def test_agrees_with_the_literal_definition(sigma: float) -> None:
    f, y = sample(200, 0, truth=lambda f: np.sqrt(f))
    expected, _, _ = literal_smooth_ece(f, y.astype(float), sigma)
    # the grid (h = 1/8192) moves the value by O((h/σ)²) and the trapezoid by O(h²): 1e-4
    assert smooth.smooth_ece(f, y, bandwidth=sigma) == pytest.approx(expected, rel=1e-4)


def test_fixed_point_bandwidth_matches_bisection_and_is_a_fixed_point() -> None:
    f, y = sample(150, 1, truth=lambda f: f**2)
    sigma = smooth.select_bandwidth(f, y)
    assert smooth.smooth_ece(f, y, bandwidth=sigma) == pytest.approx(sigma, abs=1e-5)
    assert smooth.smooth_ece(f, y) == pytest.approx(sigma, abs=1e-5)
    # relplot's ten bisection steps land within 2⁻¹⁰ above the fixed point
    reference = bisection_bandwidth(f, y.astype(float))
    assert 0.0 <= reference - sigma <= 2.0**-10 + 1e-4


def test_density_integrates_to_one_and_curve_encodes_the_smece() -> None:
    f, y = sample(2000, 2, truth=lambda f: 0.1 + 0.8 * f)
    diagram = smooth.smooth_reliability(f, y, n_resamples=0, n_points=4001)
    t = diagram.grid
    assert np.trapezoid(diagram.density, t) == pytest.approx(1.0, abs=1e-6)
    # smECE = ∫ |μ̂(t) − t| δ̂(t) dt: the diagram's distance from the diagonal, by density
    encoded = np.trapezoid(np.abs(diagram.curve - t) * diagram.density, t)
    assert encoded == pytest.approx(diagram.smece, rel=1e-3)
    assert np.isnan(diagram.band_low).all() and np.isnan(diagram.smece_low)


def test_symmetric_in_which_class_is_positive() -> None:
    f, y = sample(1000, 3, truth=lambda f: f**1.3)
    assert smooth.smooth_ece(1.0 - f, 1 - y) == pytest.approx(smooth.smooth_ece(f, y),
                                                              rel=1e-9)


def test_calibrated_data_tends_to_zero() -> None:
    # Three seeds per size; the smECE of calibrated data shrinks like a power of n (about
    # n^(-1/3) at the fixed point): a hundredfold more rows must cut it at least threefold.
    means = [np.mean([smooth.smooth_ece(*sample(n, seed)) for seed in range(3)])
             for n in (1_000, 10_000, 100_000)]
    assert means[0] > means[1] > means[2]
    assert means[2] < means[0] / 3
    assert means[2] < 0.01


def test_constant_shift_is_measured_exactly() -> None:
    # E[y | f] = f + 0.1 everywhere: r̂_σ(t) = 0.1 in the population for every σ, so
    # smECE = 0.1. Sampling error: smECE ≥ |mean(y − f)|, whose standard error is
    # sqrt(mean f(1−f))/sqrt(n) ≤ 0.5/sqrt(n) = 0.0016 at n = 100,000; 4 SE.
    rng = np.random.default_rng(4)
    n = 100_000
    f = rng.uniform(0.0, 0.9, n)
    y = (rng.random(n) < f + 0.1).astype(int)
    assert smooth.smooth_ece(f, y) == pytest.approx(0.1, abs=4 * 0.5 / np.sqrt(n))


def test_bounded_by_the_binned_ece_on_step_miscalibration() -> None:
    # Steps: E[y|f] = f + 0.1 on [0.2, 0.5), f − 0.1 on [0.5, 0.8), f elsewhere. The true ECE
    # is 0.1·0.3 + 0.1·0.3 = 0.06, and ten equal-width bins (aligned with the steps) estimate
    # it consistently. Smoothing never adds error (smECE_σ ≤ ECE, module docstring), and at
    # the fixed point smECE stays within a constant factor of the distance to calibration
    # (Błasiok & Nakkiran 2023, Thm. 9), here at least half the ECE. Slack: 4 standard errors
    # of a binned mean, 4·0.5/sqrt(n).
    rng = np.random.default_rng(5)
    n = 200_000
    f = rng.random(n)
    shift = np.where((f >= 0.2) & (f < 0.5), 0.1, 0.0) - np.where((f >= 0.5) & (f < 0.8),
                                                                  0.1, 0.0)
    y = (rng.random(n) < f + shift).astype(int)
    binned = metrics.ece(f, y, n_bins=10)
    slack = 4 * 0.5 / np.sqrt(n)
    assert binned == pytest.approx(0.06, abs=slack)
    value = smooth.smooth_ece(f, y)
    assert 0.03 < value <= binned + slack


def test_bootstrap_band_and_interval_are_seeded() -> None:
    f, y = sample(3000, 6, truth=lambda f: f**1.5)
    calls = []
    one = smooth.smooth_reliability(f, y, n_resamples=40, seed=3,
                                    progress=lambda x, m: calls.append(x))
    two = smooth.smooth_reliability(f, y, n_resamples=40, seed=3)
    np.testing.assert_array_equal(one.band_low, two.band_low)
    assert (one.smece_low, one.smece_high) == (two.smece_low, two.smece_high)
    assert calls[-1] == 1.0
    inside = (one.band_low <= one.curve) & (one.curve <= one.band_high)
    assert inside[~np.isnan(one.curve)].mean() > 0.9
    assert 0.0 <= one.smece_low <= one.smece_high <= 1.0
    assert one.bandwidth == pytest.approx(one.smece, abs=1e-5)


def test_notions_and_classwise_mean() -> None:
    rng = np.random.default_rng(7)
    P = rng.dirichlet([1, 1, 1], 500)
    y = np.array([rng.choice(3, p=row) for row in P])
    per_class = [smooth.smooth_ece(P, y, notion="classwise", class_index=k) for k in range(3)]
    assert smooth.smooth_ece(P, y, notion="classwise") == pytest.approx(np.mean(per_class))
    conf, correct = metrics.confidence_outcome(P, y, "top-label")
    assert smooth.smooth_ece(P, y) == pytest.approx(smooth.smooth_ece(conf, correct.astype(int)))


@pytest.mark.parametrize("kwargs, message", [
    ({"bandwidth": 0.0}, "bandwidth must be a positive"),
    ({"bandwidth": 2.0}, "at most 1"),
    ({"n_resamples": -1}, "n_resamples"),
    ({"n_points": 1}, "n_points"),
    ({"level": 1.5}, "confidence level"),
    ({"seed": -2}, "seed"),
    ({"notion": "classwise"}, "class_index"),
    ({"notion": "sideways"}, "Unknown calibration notion"),
])
def test_bad_arguments_are_explained(kwargs: dict, message: str) -> None:
    f, y = sample(50, 8)
    with pytest.raises(ValueError, match=message):
        smooth.smooth_reliability(f, y, **kwargs)


def test_bad_data_is_explained() -> None:
    with pytest.raises(ValueError, match="between 0 and 1"):
        smooth.smooth_ece([0.2, 1.4], [0, 1])
    with pytest.raises(ValueError, match="one label per row"):
        smooth.smooth_ece([0.2, 0.4], [0, 1, 1])


def test_figure_draws_ribbon_band_and_value() -> None:
    from core.figures.reliability import smooth_reliability_figure

    f, y = sample(2000, 9, truth=lambda f: f**1.4)
    diagram = smooth.smooth_reliability(f, y, n_resamples=20)
    figure = smooth_reliability_figure(diagram, class_name=None)
    names = [trace.name for trace in figure.data]
    assert "smoothed curve (width ∝ density)" in names and "95% bootstrap band" in names
    ribbon = figure.data[names.index("smoothed curve (width ∝ density)")]
    finite = np.isfinite(diagram.curve)
    widths = np.asarray(ribbon.y[: finite.sum()]) - np.asarray(ribbon.y[finite.sum():])[::-1]
    # the ribbon is widest where the predictions are densest
    assert np.argmax(widths) == np.argmax(diagram.density[finite])
    assert f"smECE {diagram.smece:.4f}" in figure.layout.annotations[0].text
