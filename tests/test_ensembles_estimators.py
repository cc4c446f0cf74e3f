"""CE₂, CE_KL and SKCE of a combined prediction: literal formulas, null behaviour, gradients."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from core.ensembles import calibration_errors
from core.ensembles.calibration_errors import ESTIMATORS, ce2, cekl, kde_ratio, skce
from core.metrics.skce_estimate import skce as core_skce


def calibrated(n: int, K: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    F = rng.dirichlet(np.ones(K), size=n)
    y = np.array([rng.choice(K, p=f) for f in F])
    return F, y


def literal_ratio(F: np.ndarray, y: np.ndarray, h: float) -> np.ndarray:
    """r̂_j with scipy's Dirichlet density Dir(f_j; f_i/h + 1), a double loop."""
    n, K = F.shape
    out = np.zeros((n, K))
    for j in range(n):
        weights = np.array([0.0 if i == j else stats.dirichlet.pdf(F[j], F[i] / h + 1.0)
                            for i in range(n)])
        out[j] = weights @ np.eye(K)[y] / weights.sum()
    return out


def test_kde_ratio_matches_the_literal_dirichlet_kernel() -> None:
    rng = np.random.default_rng(0)
    F, y = calibrated(14, 3, rng)
    np.testing.assert_allclose(kde_ratio(F, y, 0.3), literal_ratio(F, y, 0.3), rtol=1e-9)


def test_estimators_match_their_formulas() -> None:
    rng = np.random.default_rng(1)
    F, y = calibrated(14, 3, rng)
    R = literal_ratio(F, y, 0.2)
    assert ce2(F, y, 0.2) == pytest.approx(np.mean(((R - F) ** 2).sum(axis=1)), rel=1e-9)
    assert cekl(F, y, 0.2) == pytest.approx(
        np.mean((R * np.log(np.where(R > 0, R, 1.0) / F)).sum(axis=1)), rel=1e-9)


def test_binary_ce2_is_twice_the_beta_kernel_estimate() -> None:
    """K = 2: the Dirichlet kernel is the Beta kernel Beta(p; p_i/h + 1, (1 − p_i)/h + 1) and
    ‖·‖² counts both coordinates (the reference code's factor 2)."""
    rng = np.random.default_rng(2)
    p = rng.uniform(0.05, 0.95, 30)
    y = (rng.random(30) < p).astype(int)
    h = 0.1
    kern = stats.beta.pdf(p[:, None], p[None, :] / h + 1, (1 - p[None, :]) / h + 1)
    np.fill_diagonal(kern, 0.0)
    ratio = kern @ y / kern.sum(axis=1)
    F = np.column_stack([1 - p, p])
    assert ce2(F, y, h) == pytest.approx(2 * np.mean((ratio - p) ** 2), rel=1e-9)


def test_tiles_give_the_same_answer(monkeypatch) -> None:
    rng = np.random.default_rng(3)
    F, y = calibrated(50, 4, rng)
    whole = ce2(F, y), cekl(F, y)
    monkeypatch.setattr(calibration_errors, "TILE", 7)
    assert (ce2(F, y), cekl(F, y)) == pytest.approx(whole, rel=1e-12)


def test_skce_value_goes_through_core_skce() -> None:
    rng = np.random.default_rng(4)
    F, y = calibrated(60, 3, rng)
    assert skce(F, y, 0.4) == core_skce(F, y, bandwidth=0.4)
    value, _ = ESTIMATORS["skce"].value_and_gradient(F, y, 0.4)
    assert value == pytest.approx(core_skce(F, y, bandwidth=0.4), rel=1e-10)


def test_null_behaviour_as_in_the_papers_figure_5() -> None:
    """Calibrated data (p ~ Dir(1,1,1), y ~ p), n = 100, 200 repetitions: CE₂ and CE_KL are
    positive with a small positive mean (asymptotically unbiased only); the unbiased SKCE is
    centred at 0 — its mean lies within 3 standard errors (sd/√200) of 0 and both signs occur.
    A miscalibrated model (predictions sharpened: F² renormalised) scores higher on CE₂."""
    rng = np.random.default_rng(5)
    values = {"ce2": [], "cekl": [], "skce": [], "ce2-miscalibrated": []}
    for _ in range(200):
        F, y = calibrated(100, 3, rng)
        values["ce2"].append(ce2(F, y))
        values["cekl"].append(cekl(F, y))
        values["skce"].append(skce(F, y))
        sharp = F**2 / (F**2).sum(axis=1, keepdims=True)
        values["ce2-miscalibrated"].append(ce2(sharp, y))
    v = {k: np.array(a) for k, a in values.items()}
    assert (v["ce2"] > 0).all() and (v["cekl"] > 0).all()
    # the miscalibrated model's mean exceeds the calibrated one's by > 5 standard errors of
    # the difference of the two means (paired repetitions)
    diff = v["ce2-miscalibrated"] - v["ce2"]
    assert diff.mean() > 5 * diff.std(ddof=1) / np.sqrt(diff.size)
    se = v["skce"].std(ddof=1) / np.sqrt(v["skce"].size)
    assert abs(v["skce"].mean()) < 3 * se
    assert (v["skce"] < 0).any() and (v["skce"] > 0).any()


@pytest.mark.parametrize("key", ["ce2", "cekl", "skce"])
def test_gradients_match_finite_differences(key: str) -> None:
    rng = np.random.default_rng(6)
    F = rng.dirichlet(np.full(3, 2.0), size=12)
    y = rng.integers(0, 3, 12)
    spec = ESTIMATORS[key]
    h = 0.3 if key != "skce" else 0.5
    _, grad = spec.value_and_gradient(F, y, h)
    step = 1e-6
    numeric = np.zeros_like(F)
    for index in np.ndindex(F.shape):
        up, down = F.copy(), F.copy()
        up[index] += step
        down[index] -= step
        numeric[index] = (spec.value_and_gradient(up, y, h, False)[0]
                          - spec.value_and_gradient(down, y, h, False)[0]) / (2 * step)
    np.testing.assert_allclose(grad, numeric, rtol=1e-5, atol=1e-8)


@pytest.mark.parametrize("key", ["ce2", "cekl", "skce"])
@pytest.mark.parametrize("K", [2, 4])
def test_resampled_values_equal_the_estimator_on_the_drawn_rows(key: str, K: int) -> None:
    """The one-pass statistics of B resamples equal ĝ recomputed on each resample's rows
    (with duplicates) and labels — the literal definition of the bootstrap null."""
    rng = np.random.default_rng(7)
    F = rng.dirichlet(np.full(K, 2.0), size=25)
    counts = calibration_errors.resample_counts(F, 6, rng)
    assert (counts.sum(axis=(0, 2)) == 25).all()
    h = 0.3 if key != "skce" else 0.6
    fast = calibration_errors.resampled_values(key, F, counts, h)
    for b in range(6):
        rows, labels = np.nonzero(counts[:, b, :])
        reps = counts[rows, b, labels]
        rows, labels = np.repeat(rows, reps), np.repeat(labels, reps)
        assert fast[b] == pytest.approx(ESTIMATORS[key].value(F[rows], labels, h), rel=1e-9)


def test_resample_counts_follow_the_predictions() -> None:
    """Each drawn copy's label is marginally Cat(mean of F) and the 400·50 draws are
    independent, so the label shares match the mean prediction within 4 binomial standard
    errors √(p̄(1 − p̄)/(400·50))."""
    rng = np.random.default_rng(8)
    F = rng.dirichlet(np.ones(3), size=50)
    counts = calibration_errors.resample_counts(F, 400, rng)
    shares = counts.sum(axis=(0, 1)) / counts.sum()
    expected = F.mean(axis=0)
    se = np.sqrt(expected * (1 - expected) / (400 * 50))
    assert (np.abs(shares - expected) < 4 * se).all()


def test_resampled_values_stay_finite_with_isolated_rows() -> None:
    """K = 5, a narrow kernel (h = 0.02): most rows are far from every other row relative
    to their own kernel peak; the counts form must neither overflow nor cancel, and still
    equal the recomputation (the case that once overflowed on the multiclass simulation)."""
    rng = np.random.default_rng(9)
    F = rng.dirichlet(np.full(5, 0.5), size=40)
    counts = calibration_errors.resample_counts(F, 5, rng)
    for key in ("ce2", "cekl"):
        fast = calibration_errors.resampled_values(key, F, counts, 0.02)
        assert np.isfinite(fast).all()
        for b in range(5):
            rows, labels = np.nonzero(counts[:, b, :])
            reps = counts[rows, b, labels]
            rows, labels = np.repeat(rows, reps), np.repeat(labels, reps)
            assert fast[b] == pytest.approx(ESTIMATORS[key].value(F[rows], labels, 0.02),
                                            rel=1e-7)
