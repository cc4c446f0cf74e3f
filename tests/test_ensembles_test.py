"""credal_test (Algorithm 1) and its baselines: structure, reproducibility, bad input."""

from __future__ import annotations

import numpy as np
import pytest

from core.ensembles import SETTINGS, credal_test, simulate
from core.ensembles.test import CredalTestResult
from core.ensembles.weights import combine
from core.stattests.result import TestResult


@pytest.fixture(scope="module")
def binary_h0():
    return simulate("binary-h0-instance", n=300, seed=11)


def test_result_holds_what_was_tested(binary_h0) -> None:
    members, y, X, _ = binary_h0
    result = credal_test(members, y, X, n_resamples=30, seed=1)
    assert isinstance(result, CredalTestResult) and isinstance(result, TestResult)
    n_test = result.rows.size
    assert n_test == 60 and result.weights.shape == (n_test, 2)
    assert result.combined.shape == (n_test, 2)
    np.testing.assert_allclose(result.weights.sum(axis=1), 1.0)
    P = np.stack([1 - members, members], axis=2)
    np.testing.assert_allclose(result.combined, combine(result.weights, P[result.rows]))
    np.testing.assert_array_equal(result.labels, y[result.rows])
    # the p-value convention of core.stattests
    assert result.null.size == 30
    assert result.p_value == (1 + np.sum(result.null >= result.statistic)) / 31
    assert result.p_value_paper == np.sum(result.null > result.statistic) / 30
    assert result.parameters["estimator"] == "ce2" and result.method == "credal-learned"


def test_reproducible_with_the_seed(binary_h0) -> None:
    members, y, X, _ = binary_h0
    for weights in ("learned", "mean", "sampled"):
        a = credal_test(members, y, X, weights=weights, n_resamples=20, seed=5)
        b = credal_test(members, y, X, weights=weights, n_resamples=20, seed=5)
        assert a.statistic == b.statistic and a.p_value == b.p_value
        np.testing.assert_array_equal(a.null, b.null)
        np.testing.assert_array_equal(a.weights, b.weights)
    c = credal_test(members, y, X, weights="mean", n_resamples=20, seed=6)
    assert not np.array_equal(c.null, a.null)


def test_baselines_use_constant_weights_on_the_same_rows(binary_h0) -> None:
    members, y, X, _ = binary_h0
    mean = credal_test(members, y, X, weights="mean", n_resamples=20, seed=2)
    sampled = credal_test(members, y, X, weights="sampled", n_resamples=20, seed=2)
    learned = credal_test(members, y, X, n_resamples=20, seed=2)
    np.testing.assert_array_equal(mean.rows, learned.rows)
    np.testing.assert_array_equal(sampled.rows, learned.rows)
    np.testing.assert_allclose(mean.weights, 0.5)
    assert np.ptp(sampled.weights, axis=0).max() == 0
    # the sampled statistic is a minimum over constant weights, the mean among them
    assert sampled.statistic <= mean.statistic + 1e-12


@pytest.mark.parametrize("estimator", ["ce2", "cekl", "skce"])
def test_far_outside_the_credal_set_is_rejected(estimator: str) -> None:
    """Binary H1,3 (truth a GP path in [0.8, 1], members in [0.5, 0.8]) on 600 rows: the
    learned-weight test rejects at α = 0.05 with B = 50."""
    members, y, X, _ = simulate("binary-h1-3", n=600, seed=3)
    result = credal_test(members, y, X, estimator=estimator, n_resamples=50, seed=0)
    assert result.p_value <= 0.05


def test_multiclass_members(binary_h0) -> None:
    members, y, X, truth = simulate("multiclass-h0-constant", n=200, seed=4)
    result = credal_test(members, y, X, estimator="skce", n_resamples=10, seed=0,
                         split=(0.4, 0.2, 0.4))
    assert result.weights.shape == (80, 10) and result.combined.shape == (80, 5)
    assert 0 < result.p_value <= 1


def test_progress_is_reported(binary_h0) -> None:
    members, y, X, _ = binary_h0
    seen = []
    credal_test(members, y, X, n_resamples=20, progress=lambda f, m: seen.append((f, m)))
    fractions = [f for f, _ in seen]
    assert fractions == sorted(fractions) and fractions[-1] == 1.0
    assert any("Training" in m for _, m in seen) and any("Resampling" in m for _, m in seen)


@pytest.mark.parametrize(("change", "message"), [
    (lambda m, y, X: (m * 2, y, X), "members are not probabilities"),
    (lambda m, y, X: (m[:, :1], y, X), "at least 2 members"),
    (lambda m, y, X: (np.dstack([m, m]), y, X), "must sum to 1"),
    (lambda m, y, X: (m, y + 1, X), "Labels must be integers from 0 to 1"),
    (lambda m, y, X: (m, y, X[:-1]), "X has 299 rows"),
    (lambda m, y, X: (m[:60], y[:60], X[:60]), "Too few rows for the three splits"),
    (lambda m, y, X: (m, y, np.where(X > 2, np.nan, X)), "X has"),
])
def test_bad_input_names_the_argument(binary_h0, change, message) -> None:
    members, y, X, _ = binary_h0
    with pytest.raises(ValueError, match=message):
        credal_test(*change(members, y, X), n_resamples=5)


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"estimator": "ece"}, "Unknown estimator 'ece'"),
    ({"weights": "best"}, "Unknown weights 'best'"),
    ({"split": (0.5, 0.5)}, "three fractions"),
    ({"split": (0.6, 0.3, 0.3)}, "must sum to 1"),
    ({"n_resamples": 0}, "n_resamples must be a whole number"),
    ({"bandwidth": -1}, "bandwidth must be a positive"),
    ({"alpha": 2}, "alpha must lie strictly between 0 and 1"),
    ({"seed": -3}, "seed must be a whole number"),
])
def test_bad_settings_name_the_argument(binary_h0, kwargs, message) -> None:
    members, y, X, _ = binary_h0
    with pytest.raises(ValueError, match=message):
        credal_test(members, y, X, **kwargs)


def test_k_mismatch_between_members_and_labels() -> None:
    members, y, X, _ = simulate("multiclass-h1-2", n=150, seed=1)
    with pytest.raises(ValueError, match="Labels must be integers from 0 to 4"):
        credal_test(members, np.where(y == 0, 7, y), X, n_resamples=5)


def test_simulation_settings_are_registered() -> None:
    assert {s.task for s in SETTINGS.values()} == {"binary", "multiclass"}
    assert all(key == spec.key for key, spec in SETTINGS.items())


def test_consistency_null_keeps_every_row_once(binary_h0) -> None:
    from core.ensembles.calibration_errors import resample_counts

    members, y, X, _ = binary_h0
    F = np.random.default_rng(0).dirichlet(np.ones(3), size=40)
    counts = resample_counts(F, 7, np.random.default_rng(1), rows_fixed=True)
    assert (counts.sum(axis=2) == 1).all()
    result = credal_test(members, y, X, weights="mean", n_resamples=20, null="consistency")
    assert result.parameters["null"] == "consistency" and result.null.size == 20
    with pytest.raises(ValueError, match="Unknown null 'permutation'"):
        credal_test(members, y, X, null="permutation")


def test_refit_null_repeats_the_weight_fit_on_labels_redrawn_for_every_row() -> None:
    from core.ensembles.calibration_errors import ESTIMATORS
    from core.ensembles.test import refit_null

    rng = np.random.default_rng(3)
    n, M, test = 50, 3, np.arange(30, 50)
    members = rng.dirichlet(np.ones(2), size=(n, M))
    # one-hot combined rows: the redrawn labels are known, so what refit receives is checked
    truth = rng.integers(0, 2, size=n)
    combined = np.eye(2)[truth]
    seen, lam = [], rng.dirichlet(np.ones(M), size=test.size)

    def refit(labels: np.ndarray) -> np.ndarray:
        seen.append(labels.copy())
        return lam

    values = refit_null(combined, members[test], test, refit, "ce2", 0.1, 4,
                        np.random.default_rng(0))
    assert len(seen) == 4 and all(np.array_equal(s, truth) for s in seen)
    expected = ESTIMATORS["ce2"].value(combine(lam, members[test]), truth[test], 0.1)
    np.testing.assert_allclose(values, expected)


def test_refit_null_fits_the_network_again_in_every_resample(binary_h0) -> None:
    members, y, X, _ = binary_h0
    messages = []
    a = credal_test(members, y, X, n_resamples=6, seed=4, null="refit",
                    progress=lambda fraction, message: messages.append((fraction, message)))
    b = credal_test(members, y, X, n_resamples=6, seed=4, null="refit")
    fixed = credal_test(members, y, X, n_resamples=6, seed=4)
    assert a.parameters["null"] == "refit" and a.null.size == 6
    np.testing.assert_array_equal(a.null, b.null)              # reproducible with the seed
    assert a.statistic == fixed.statistic                      # the same learned combination
    assert not np.array_equal(a.null, fixed.null)
    refits = [f for f, m in messages if m.startswith("Refitting λ(x)")]
    assert len(refits) == 6 and refits == sorted(refits) and refits[-1] == pytest.approx(1.0)
    # the baselines fit no weights: their refit null keeps the rows, as "consistency" does
    mean_refit = credal_test(members, y, X, weights="mean", n_resamples=20, seed=4, null="refit")
    mean_kept = credal_test(members, y, X, weights="mean", n_resamples=20, seed=4,
                            null="consistency")
    np.testing.assert_array_equal(mean_refit.null, mean_kept.null)
