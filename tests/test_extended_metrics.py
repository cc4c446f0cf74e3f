"""The extended rows of the metrics table: values equal the family functions, intervals."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.data.validation import sigmoid
from core.metrics import clinical, cumulative, decomposition, smooth
from core.metrics.extended import ROWS, extended_metrics_table


def sample(n: int = 1_500, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    L = rng.normal(-0.4, 1.4, n)
    return sigmoid(L), (rng.random(n) < sigmoid(0.7 * L)).astype(np.int64)


def test_rows_equal_the_family_functions() -> None:
    p, y = sample()
    table = extended_metrics_table(p, y, n_resamples=0).set_index("metric")["value"]
    expected = {
        "Smooth ECE": smooth.smooth_ece(p, y),
        "ICI": clinical.ici(p, y)["ici"], "Emax": clinical.ici(p, y)["emax"],
        "Calibration slope": clinical.calibration_slope(p, y)["slope"],
        "Calibration intercept": clinical.calibration_slope(p, y)["intercept"],
        "Brier reliability (REL)": decomposition.brier_decomposition(p, y).reliability,
        "Log-loss refinement": decomposition.log_loss_decomposition(p, y).refinement,
        "Cumulative Kuiper (H)": cumulative.cumulative_metric(p, y),
        "Cumulative KS (G)": cumulative.cumulative_metric(p, y, "ks"),
    }
    for name, value in expected.items():
        assert table[name] == pytest.approx(value, rel=1e-12), name
    assert list(table.index) == [row[0] for row in ROWS.values()]


def test_intervals_are_seeded_and_hold_the_wald_ones() -> None:
    p, y = sample(800, 1)
    calls = []
    one = extended_metrics_table(p, y, n_resamples=30, seed=4,
                                 progress=lambda x, m: calls.append(x))
    two = extended_metrics_table(p, y, n_resamples=30, seed=4)
    np.testing.assert_array_equal(one["ci_low"], two["ci_low"])
    assert calls[-1] == 1.0
    assert one[["ci_low", "ci_high"]].notna().all().all()
    assert (one["ci_low"] <= one["ci_high"]).all()
    slope = clinical.calibration_slope(p, y)
    row = one.set_index("metric").loc["Calibration slope"]
    assert (row["ci_low"], row["ci_high"]) == pytest.approx((slope["slope_low"],
                                                             slope["slope_high"]))
    assert "σ = " in one["description"].iloc[0]


def test_classwise_needs_a_class_and_labels_it() -> None:
    rng = np.random.default_rng(2)
    P = rng.dirichlet([1, 1, 1], 600)
    y = (P.cumsum(axis=1) < rng.random((600, 1))).sum(axis=1)
    with pytest.raises(ValueError, match="class_index"):
        extended_metrics_table(P, y, notion="classwise", n_resamples=0)
    table = extended_metrics_table(P, y, notion="classwise", class_index=2, n_resamples=0)
    assert set(table["notion"]) == {"classwise: class 2"}
    top = extended_metrics_table(P, y, n_resamples=0)
    assert set(top["notion"]) == {"top-label"}


def test_single_outcome_leaves_the_slope_empty_not_an_error() -> None:
    table = extended_metrics_table([0.2, 0.4, 0.7, 0.9], [1, 1, 1, 1], n_resamples=0)
    assert np.isnan(table.set_index("metric").loc["Calibration slope", "value"])


def test_the_fast_paths_give_the_general_results() -> None:
    """Sorted input skips the sorts; the log loss takes one logarithm a row; the climate
    scores are closed forms — each equal to the general computation."""
    from scipy.special import xlog1py, xlogy

    rng = np.random.default_rng(11)
    conf = np.round(rng.uniform(0, 1, 5_000), 3)  # ties, as a bootstrap resample has
    outcome = (rng.random(5_000) < conf).astype(np.int64)
    order = np.argsort(conf, kind="stable")
    for c in (conf, conf[order]):  # unsorted, then sorted (the fast path)
        got = decomposition.distinct_values(c)
        for a, b in zip(got, np.unique(c, return_inverse=True, return_counts=True),
                        strict=True):
            np.testing.assert_array_equal(a, b)
    sorted_path = cumulative.cumulative_differences(conf[order], outcome[order], "positive")
    general = cumulative.cumulative_differences(conf, outcome, "positive")
    np.testing.assert_allclose(sorted_path.cumulative, general.cumulative, atol=1e-15)
    assert sorted_path.kuiper == pytest.approx(general.kuiper, abs=1e-15)
    recalibrated = decomposition.isotonic_recalibration(conf, outcome)
    for rule, score in (("log", lambda x: -np.mean(xlogy(outcome, x)
                                                    + xlog1py(1 - outcome, -x))),
                        ("brier", lambda x: np.mean((x - outcome) ** 2))):
        parts = decomposition.decompose_of(conf, outcome, rule, "positive", recalibrated)
        clipped = np.clip(conf, decomposition.EPS, 1 - decomposition.EPS)
        assert parts.score == pytest.approx(score(clipped if rule == "log" else conf),
                                            rel=1e-13)
        assert parts.refinement == pytest.approx(score(recalibrated), rel=1e-13)
        assert parts.uncertainty == pytest.approx(score(np.full(5_000, outcome.mean())),
                                                  rel=1e-13)


def _repeated_and_counted(conf: np.ndarray, outcome: np.ndarray, seed: int
                          ) -> tuple[dict[str, float], dict[str, float]]:
    """One bootstrap resample's rows, evaluated on the rows repeated by their counts and on
    the counts over the sorted rows (the bootstrap's form)."""
    from core.metrics.extended import _ResampledRows, _values

    order = np.argsort(conf, kind="stable")
    conf, outcome = conf[order], outcome[order]
    n = conf.shape[0]
    counts = np.bincount(np.random.default_rng(seed).integers(0, n, n), minlength=n)
    repeated = _values(np.repeat(conf, counts), np.repeat(outcome, counts), "positive")
    return repeated, _ResampledRows(conf, outcome, "positive")(counts.astype(np.uint8))


@settings(max_examples=40, deadline=None)
@given(st.integers(2, 400), st.sampled_from([1, 2, 15]), st.integers(0, 2**32 - 1))
def test_a_resample_from_its_counts_equals_its_repeated_rows(n: int, decimals: int,
                                                             seed: int) -> None:
    # ties (1 or 2 decimals) and none; a resample leaving out whole tied runs; n ≤ CELLS
    rng = np.random.default_rng(seed)
    conf = np.round(rng.uniform(0.0, 1.0, n), decimals)
    outcome = (rng.random(n) < conf ** 1.2).astype(np.float64)
    repeated, counted = _repeated_and_counted(conf, outcome, seed)
    for key, value in repeated.items():  # the same sums in another order: rounding only
        assert counted[key] == pytest.approx(value, rel=1e-11, abs=1e-14), key


@pytest.mark.parametrize("decimals", [3, 15])
def test_a_large_resample_from_its_counts_equals_its_repeated_rows(decimals: int) -> None:
    # above clinical.CELLS rows the ICI pools rows into cells; the smooth grid's nodes hold
    # many rows each
    rng = np.random.default_rng(decimals)
    conf = np.round(rng.beta(0.7, 0.9, 20_000), decimals)
    outcome = (rng.random(20_000) < conf ** 1.3).astype(np.float64)
    repeated, counted = _repeated_and_counted(conf, outcome, 5)
    for key, value in repeated.items():
        assert counted[key] == pytest.approx(value, rel=1e-11, abs=1e-14), key
