"""Clinical calibration measures: ICI/E50/E90/Emax, calibration slope and intercept, the Cox
and Spiegelhalter tests, and the Murphy / log-loss decompositions."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats
from sklearn.isotonic import IsotonicRegression
from sklearn.linear_model import LogisticRegression

from core import metrics
from core.data.validation import logit, sigmoid
from core.metrics import clinical, decomposition
from core.stattests import clinical as clinical_tests


def literal_lowess(x: np.ndarray, y: np.ndarray, span: float, at: np.ndarray) -> np.ndarray:
    """Cleveland's lowess, one fit point at a time, every row separately: h = distance to the
    ⌊span·n⌋-th nearest row, tricube weights, weighted least-squares line (weighted mean when
    the weighted spread of x is under 0.001 of its range)."""
    n = x.size
    q = int(min(max(np.floor(span * n + 1e-7), 2), n))
    out = []
    for x0 in at:
        d = np.abs(x - x0)
        h = np.sort(d)[q - 1]
        w = np.where(d < h, (1 - (d / h) ** 3) ** 3, 0.0) if h > 0 else (d == 0) * 1.0
        w = w / w.sum()
        a = np.sum(w * x)
        c = np.sum(w * (x - a) ** 2)
        fit = np.sum(w * y)
        if np.sqrt(c) > 0.001 * (x.max() - x.min()):
            fit += (x0 - a) * np.sum(w * (x - a) * y) / c
        out.append(fit)
    return np.array(out)


def logistic_sample(n: int, seed: int, slope: float = 1.0, shift: float = 0.0):
    """Predictions p = sigmoid(L), L ~ N(−0.5, 1.5²); outcomes from sigmoid(shift + slope·L)."""
    rng = np.random.default_rng(seed)
    L = rng.normal(-0.5, 1.5, n)
    y = (rng.random(n) < sigmoid(shift + slope * L)).astype(np.int64)
    return sigmoid(L), y


# --------------------------------------------------------------------------- ICI


def test_ici_hand_computed_three_points() -> None:
    # x = (0, ½, 1), y = (0, 1, 1), span 1 → q = 3. At 0: h = 1, weights (1, (1−⅛)³, 0), a
    # line through two points → fit 0. At ½: h = ½, only the point itself → 1. At 1: fit 1.
    # Errors |ĉ − p| = (0, ½, 0): ICI = 1/6, E50 = 0, E90 = 0.4 (type 7: 0.8 of the way from
    # 0 to ½), Emax = ½.
    result = clinical.ici([0.0, 0.5, 1.0], [0, 1, 1], span=1.0)
    assert result == pytest.approx({"ici": 1 / 6, "e50": 0.0, "e90": 0.4, "emax": 0.5})


def test_ici_hand_computed_four_points() -> None:
    # x = (0.1, 0.2, 0.4, 0.8), y = (0, 0, 1, 1), span 0.75 → q = 3.
    x = np.array([0.1, 0.2, 0.4, 0.8])
    y = np.array([0.0, 0.0, 1.0, 1.0])
    fits = []
    for x0, h in zip(x, [0.3, 0.2, 0.3, 0.6], strict=True):  # 3rd-nearest distances
        u = np.abs(x - x0) / h
        w = np.where(u < 1, (1 - u**3) ** 3, 0.0)
        fits.append(np.polyval(np.polyfit(x, y, 1, w=np.sqrt(w)), x0))
    errors = np.abs(np.array(fits) - x)
    result = clinical.ici(x, y.astype(int), span=0.75)
    assert result["ici"] == pytest.approx(errors.mean(), rel=1e-12)
    assert result["emax"] == pytest.approx(errors.max(), rel=1e-12)


def test_lowess_matches_the_literal_definition() -> None:
    p, y = logistic_sample(400, 0, slope=0.7)
    at, fitted = clinical.lowess_curve(p, y.astype(float), 2 / 3)
    np.testing.assert_allclose(fitted, literal_lowess(p, y.astype(float), 2 / 3, at),
                               rtol=1e-10, atol=1e-12)


def test_ties_pool_exactly() -> None:
    rng = np.random.default_rng(1)
    p = rng.choice([0.1, 0.3, 0.35, 0.6, 0.9], 300)
    y = (rng.random(300) < p).astype(int)
    at, fitted = clinical.lowess_curve(p, y.astype(float), 0.5)
    np.testing.assert_allclose(fitted, literal_lowess(p, y.astype(float), 0.5, at), atol=1e-12)


def test_pooled_cells_agree_with_the_exact_curve() -> None:
    # Above 4096 rows the rows are pooled into cells of width 2⁻¹²; the documented error is
    # a relative O((2⁻¹²/h)²) on the weights: the curve moves by far less than 1e-4.
    p, y = logistic_sample(20_000, 2, slope=0.8)
    at, fitted = clinical.lowess_curve(p, y.astype(float), 2 / 3)
    exact = literal_lowess(p, y.astype(float), 2 / 3, at[::10])
    np.testing.assert_allclose(fitted[::10], exact, atol=1e-4)


def test_ici_of_a_calibrated_logistic_model_tends_to_zero() -> None:
    # The true calibration curve is the identity, which a local linear fit reproduces without
    # bias, so ICI is pure noise of order n^(-1/2): a hundredfold more rows cut it about
    # tenfold; we ask for fivefold and an absolute level.
    small = np.mean([clinical.ici(*logistic_sample(1_000, s))["ici"] for s in range(3)])
    large = np.mean([clinical.ici(*logistic_sample(100_000, s))["ici"] for s in range(3)])
    assert large < small / 5
    assert large < 0.005


def test_ici_detects_miscalibration_and_orders_its_quantiles() -> None:
    p, y = logistic_sample(20_000, 3, slope=0.6)
    result = clinical.ici(p, y)
    assert 0.0 <= result["e50"] <= result["e90"] <= result["emax"]
    assert result["ici"] > 0.03


# --------------------------------------------------------------------------- slope, intercept


def test_slope_and_intercepts_match_scikit_learn() -> None:
    # Unpenalised logistic regression of y on logit(p), the convention of rms::val.prob.
    p, y = logistic_sample(3_000, 4, slope=0.6, shift=0.3)
    result = clinical.calibration_slope(p, y)
    model = LogisticRegression(C=np.inf, tol=1e-12, max_iter=1000).fit(logit(p)[:, None], y)
    assert result["slope"] == pytest.approx(model.coef_[0, 0], rel=1e-6)
    assert result["joint_intercept"] == pytest.approx(model.intercept_[0], rel=1e-6, abs=1e-8)
    # the offset model: the intercept solves Σ y = Σ sigmoid(a + logit p)
    a = result["intercept"]
    assert np.sum(sigmoid(a + logit(p))) == pytest.approx(y.sum(), rel=1e-9)


def test_wald_interval_covers_a_known_slope_at_its_rate() -> None:
    # Data made with slope 0.6 on the logit. 300 replications at n = 500: the 95% Wald
    # interval's coverage must lie within 0.95 ± 3·sqrt(0.95·0.05/300) = ±0.038.
    reps = 300
    covered = 0
    for seed in range(reps):
        p, y = logistic_sample(500, 100 + seed, slope=0.6)
        result = clinical.calibration_slope(p, y)
        covered += result["slope_low"] <= 0.6 <= result["slope_high"]
    rate = covered / reps
    assert abs(rate - 0.95) <= 3 * np.sqrt(0.95 * 0.05 / reps)


def test_calibrated_model_has_slope_one_and_intercept_zero() -> None:
    p, y = logistic_sample(200_000, 5)
    result = clinical.calibration_slope(p, y)
    assert abs(result["slope"] - 1.0) < 4 * result["slope_se"]
    assert abs(result["intercept"]) < 4 * result["intercept_se"]


# --------------------------------------------------------------------------- tests


@pytest.mark.parametrize("test", [clinical_tests.spiegelhalter_test, clinical_tests.cox_test])
def test_level_on_calibrated_data(test) -> None:
    # 400 calibrated data sets of 300 rows: the rejection rate at α = 0.05 must lie within
    # 0.05 ± 3·sqrt(0.05·0.95/400) = ±0.033 (both tests are asymptotic).
    reps = 400
    rejections = sum(test(*logistic_sample(300, 1000 + s)).p_value <= 0.05 for s in range(reps))
    assert abs(rejections / reps - 0.05) <= 3 * np.sqrt(0.05 * 0.95 / reps)


@pytest.mark.parametrize("test", [clinical_tests.spiegelhalter_test, clinical_tests.cox_test])
def test_power_against_overconfidence(test) -> None:
    # slope 0.5 on the logit: predictions far too extreme; n = 2,000 → always rejected here
    rejections = [test(*logistic_sample(2_000, 2000 + s, slope=0.5)).p_value < 0.01
                  for s in range(20)]
    assert all(rejections)


def test_spiegelhalter_formula() -> None:
    p = np.array([0.1, 0.4, 0.7, 0.9, 0.2])
    y = np.array([0, 1, 1, 0, 0])
    z = np.sum((y - p) * (1 - 2 * p)) / np.sqrt(np.sum((1 - 2 * p) ** 2 * p * (1 - p)))
    result = clinical_tests.spiegelhalter_test(p, y)
    assert result.statistic == pytest.approx(z)
    assert result.p_value == pytest.approx(2 * stats.norm.sf(abs(z)))
    assert result.method == "spiegelhalter" and result.n_resamples == 0


def test_cox_statistic_is_the_likelihood_ratio() -> None:
    p, y = logistic_sample(1_000, 6, slope=0.8, shift=0.2)
    result = clinical_tests.cox_test(p, y)
    a, b = result.parameters["intercept"], result.parameters["slope"]
    z = logit(p)

    def loglik(eta: np.ndarray) -> float:
        return float(np.sum(y * eta - np.log1p(np.exp(eta))))

    assert result.statistic == pytest.approx(2 * (loglik(a + b * z) - loglik(z)), rel=1e-9)
    assert result.p_value == pytest.approx(stats.chi2.sf(result.statistic, 2))
    assert result.parameters["unreliability"] == pytest.approx((result.statistic - 2) / 1000)


# --------------------------------------------------------------------------- decompositions


def test_murphy_decomposition_with_few_forecast_values() -> None:
    # Forecasts on 3 values with increasing frequencies: CORP is Murphy's 1973 partition.
    p = np.array([0.2] * 4 + [0.5] * 4 + [0.8] * 4)
    y = np.array([0, 0, 0, 1, 0, 1, 1, 0, 1, 1, 1, 0])
    freq = {0.2: 0.25, 0.5: 0.5, 0.8: 0.75}
    ybar = y.mean()
    rel = np.mean([(v - freq[v]) ** 2 for v in p])
    res = np.mean([(freq[v] - ybar) ** 2 for v in p])
    result = decomposition.brier_decomposition(p, y)
    assert result.reliability == pytest.approx(rel)
    assert result.resolution == pytest.approx(res)
    assert result.uncertainty == pytest.approx(ybar * (1 - ybar))
    assert result.score == pytest.approx(metrics.brier(p, y))
    assert result.score == pytest.approx(rel - res + ybar * (1 - ybar))


def test_decompositions_add_up_and_are_non_negative() -> None:
    p, y = logistic_sample(5_000, 7, slope=0.7)
    for result, score in ((decomposition.brier_decomposition(p, y), metrics.brier(p, y)),
                          (decomposition.log_loss_decomposition(p, y), metrics.nll(p, y))):
        assert result.score == pytest.approx(score)
        assert result.reliability >= 0 and result.resolution >= 0
        assert result.score == pytest.approx(
            result.reliability - result.resolution + result.uncertainty)
        assert result.refinement == pytest.approx(result.score - result.reliability)


def test_log_loss_refinement_is_the_loss_after_isotonic_recalibration() -> None:
    p, y = logistic_sample(2_000, 8, slope=0.5)
    recal = decomposition.isotonic_recalibration(p, y.astype(float))
    reference = IsotonicRegression(y_min=0, y_max=1).fit(p, y).predict(p)
    np.testing.assert_allclose(recal, reference, atol=1e-12)
    result = decomposition.log_loss_decomposition(p, y)
    safe = np.clip(recal, 1e-300, 1)
    expected = -np.mean(np.where(y == 1, np.log(safe), np.log(np.clip(1 - recal, 1e-300, 1))))
    assert result.refinement == pytest.approx(expected)
    assert result.reliability > 0.01  # overconfident predictions lose real log loss


# --------------------------------------------------------------------------- bad input


@pytest.mark.parametrize("call, message", [
    (lambda: clinical.ici([0.2, 0.6, 0.4], [0, 1, 1], span=0), "span"),
    (lambda: clinical.ici([0.2, 0.6, 0.4], [0, 1, 1], span="wide"), "span"),
    (lambda: clinical.calibration_slope([0.2, 0.6, 0.4], [1, 1, 1]), "both outcomes"),
    (lambda: clinical.calibration_slope([0.2, 0.6], [0, 1], level=2), "confidence level"),
    (lambda: clinical.calibration_slope([0.1, 0.2, 0.8, 0.9], [0, 0, 1, 1]), "separate"),
    (lambda: clinical_tests.spiegelhalter_test([0.5, 0.5, 1.0], [0, 1, 1]), "variance is 0"),
    (lambda: clinical.ici(np.full((3, 3), 1 / 3), [0, 1, 2], notion="classwise"),
     "class_index"),
    (lambda: decomposition.brier_decomposition([0.2, 0.6], [0, 3]), "Labels must be"),
])
def test_bad_input_is_explained(call, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        call()


def test_contract_names_are_re_exported() -> None:
    from core import stattests

    p, y = logistic_sample(500, 9)
    assert isinstance(metrics.smooth_ece(p, y), float)
    assert set(metrics.ici(p, y)) == {"ici", "e50", "e90", "emax"}
    assert {"slope", "slope_low", "slope_high", "intercept", "intercept_low",
            "intercept_high"} <= set(metrics.calibration_slope(p, y))
    for result in (stattests.spiegelhalter_test(p, y), stattests.cox_test(p, y),
                   stattests.cumulative_test(p, y, statistic="kuiper"),
                   stattests.cumulative_test(p, y, statistic="ks")):
        assert isinstance(result, stattests.TestResult)
        assert 0.0 <= result.p_value <= 1.0
