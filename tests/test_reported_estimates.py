"""Issue 31, item 3: every displayed interval contains its displayed estimate, and p-values at
the resampling floor read ``≤ 1/(B+1)``.

The containment is a property of the construction (:func:`core.metrics.intervals.
bootstrap_estimate`: one monotone map sends the resamples' quantiles α/2, ½, 1 − α/2 to the
interval's ends and its point), so it is checked on random data of many shapes — tiny,
skewed, well and badly calibrated — with a deterministic tolerance of 1e-12.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core import metrics
from core.metrics.extended import UNBIASED_ROWS, extended_metrics_table
from core.metrics.intervals import (
    BELOW_NOISE,
    SIGNED_METRICS,
    bootstrap_estimate,
    format_estimate,
    format_interval,
    raw_bootstrap_estimate,
    shown_metrics,
)
from core.stattests.result import format_p_value, p_text, resampling_result

TOLERANCE = 1e-12


def displayed(estimate: float, metric: str) -> float:
    """The number a reader sees: a negative non-negative error reads "≈ 0"."""
    return estimate if metric in SIGNED_METRICS else max(estimate, 0.0)


def assert_contains(table) -> None:
    for row in table.itertuples():
        if not np.isfinite(row.ci_low):
            continue
        shown = displayed(row.estimate, row.metric)
        assert row.ci_low - TOLERANCE <= shown <= row.ci_high + TOLERANCE, (
            f"{row.metric}: estimate {row.estimate} outside [{row.ci_low}, {row.ci_high}]")


def binary_data(seed: int, n: int, scale: float, shift: float):
    """A binary table whose logits are scaled (over- or under-confident) and shifted."""
    rng = np.random.default_rng(seed)
    logit = rng.normal(0.0, 1.5, n)
    truth = 1.0 / (1.0 + np.exp(-logit))
    y = (rng.random(n) < truth).astype(int)
    p = 1.0 / (1.0 + np.exp(-(scale * logit + shift)))
    return np.clip(p, 1e-6, 1 - 1e-6), y


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), n=st.sampled_from([30, 120, 600]),
       scale=st.sampled_from([0.5, 1.0, 2.0]), shift=st.sampled_from([0.0, 0.4]),
       method=st.sampled_from(["basic", "percentile"]))
def test_binned_table_intervals_contain_their_estimate(seed, n, scale, shift, method):
    p, y = binary_data(seed, n, scale, shift)
    table = metrics.metrics_table(p, y, n_bins=10, n_resamples=60, seed=seed, method=method)
    assert_contains(table)


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), n=st.sampled_from([40, 300]),
       scale=st.sampled_from([1.0, 2.0]), method=st.sampled_from(["basic", "percentile"]))
def test_extended_table_intervals_contain_their_estimate(seed, n, scale, method):
    p, y = binary_data(seed, n, scale, 0.0)
    table = extended_metrics_table(p, y, n_resamples=30, seed=seed, method=method)
    assert_contains(table)


def test_multiclass_table_contains_and_means_report_themselves() -> None:
    rng = np.random.default_rng(3)
    probs = rng.dirichlet([1, 1, 1], 400)
    y = (probs.cumsum(axis=1) < rng.random((400, 1))).sum(axis=1)
    for notion in ("top-label", "classwise"):
        table = metrics.metrics_table(probs, y, notion=notion, n_resamples=80)
        assert_contains(table)
        means = table.set_index("metric").loc[["Accuracy", "Brier score", "NLL"]]
        np.testing.assert_array_equal(means["estimate"], means["value"])


def test_calibrated_binned_ece_is_bias_corrected_downwards() -> None:
    """On calibrated data the plug-in ECE is all bias: the reported point is below it (the
    issue's "ECE 0.0106 in [0.0000, 0.0087]" now reads a point inside that interval)."""
    p, y = binary_data(1, 2_000, 1.0, 0.0)
    table = metrics.metrics_table(p, y, n_resamples=200).set_index("metric")
    ece = table.loc["ECE (L1)"]
    assert ece["estimate"] < ece["value"]
    assert ece["ci_low"] <= max(ece["estimate"], 0.0) <= ece["ci_high"]


def test_bootstrap_estimate_is_the_mapped_median() -> None:
    draws = np.array([0.30, 0.10, 0.20, 0.50, 0.40])
    low, point, high = bootstrap_estimate(draws, 0.25, level=0.5, method="basic")
    assert point == pytest.approx(0.25 + 0.25 - 0.30)
    assert low <= point <= high
    assert bootstrap_estimate(draws, 0.25, 0.5, "percentile")[1] == pytest.approx(0.30)
    # Clipping keeps the order; the raw point stays available.
    low, point, high = bootstrap_estimate(draws, 0.05, 0.9, "basic", bounds=(0.0, 1.0))
    assert point == 0.0 and low == 0.0 and high >= 0.0
    assert raw_bootstrap_estimate(draws, 0.05) == pytest.approx(-0.2)


def test_negative_estimates_read_below_the_noise() -> None:
    assert format_estimate(-0.0012) == BELOW_NOISE
    assert format_estimate(-0.3, signed=True) == "-0.3000"
    assert format_estimate(0.0123) == "0.0123"
    assert format_estimate(float("nan")) == "—"
    assert format_interval(0.0, 0.0087) == "[0.0000, 0.0087]"
    assert format_interval(float("nan"), float("nan")) == "—"


def test_shown_metrics_keeps_the_raw_value() -> None:
    p, y = binary_data(5, 500, 1.0, 0.0)
    table = metrics.metrics_table(p, y, n_resamples=100)
    shown = shown_metrics(table)
    assert list(shown.columns) == ["metric", "estimate", "interval", "value", "notion"]
    np.testing.assert_array_equal(shown["value"], table["value"])
    negative = table["estimate"] < 0
    assert (shown.loc[negative, "estimate"] == BELOW_NOISE).all()


def test_unbiased_rows_are_declared() -> None:
    assert set(UNBIASED_ROWS) == {"slope", "intercept", "brier_unc"}


@pytest.mark.parametrize(("p_value", "b", "text"), [
    (1 / 200, 199, "≤ 0.005"),       # the floor at B = 199, not "0.0050"
    (1 / 501, 500, "≤ 0.002"),
    (2 / 200, 199, "0.0100"),         # one null draw above: a number
    (0.0, 0, "< 0.0001"),             # an asymptotic p-value, not "0.0000"
    (0.04321, 0, "0.0432"),
    (float("nan"), 100, "—"),
])
def test_p_value_floor_formatting(p_value, b, text) -> None:
    assert format_p_value(p_value, b) == text


def test_p_text_of_a_resampling_result_at_its_floor() -> None:
    result = resampling_result(5.0, np.zeros(199), "test")
    assert result.p_value == pytest.approx(1 / 200)
    assert p_text(result.p_value, result.n_resamples) == "p ≤ 0.005"
    assert p_text(0.25, 199) == "p = 0.2500"
