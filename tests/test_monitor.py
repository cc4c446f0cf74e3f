"""Monitoring over time (core.monitor, core.data.time_column): the e-processes against literal
formulas, their false-alarm rates and detection on simulated streams (bounded repetitions,
binomial tolerances written out), confidence sequences, the time role and the per-period table.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.special import expit, zeta

from core import metrics, monitor
from core.data.audit_data import AuditData
from core.data.census_demo import census_stream_simulation
from core.data.demo import demo_mapping
from core.data.problems import DataError
from core.data.time_column import parse_times, period_labels
from core.monitor.betting import bet_grid, stitching_boundary

ALPHA = 0.05


def binomial_ceiling(rate: float, reps: int, k: float = 3.0) -> float:
    """rate + k standard errors of a proportion over ``reps`` independent repetitions."""
    return rate + k * np.sqrt(rate * (1 - rate) / reps)


# --------------------------------------------------------------------------- formulas


def test_mean_gap_eprocess_is_the_literal_mixture_of_constant_bets():
    rng = np.random.default_rng(0)
    p = rng.uniform(0.05, 0.95, 60)
    y = (rng.random(60) < p).astype(int)
    result = monitor.calibration_eprocess(p, y, method="mean-gap")
    bets = bet_grid()
    for t in (0, 10, 59):
        literal = np.mean([np.prod([1 + lam * (y[s] - p[s]) for s in range(t + 1)])
                           for lam in bets])
        assert result.e_values[t] == pytest.approx(literal, rel=1e-10)
    assert result.p_values[-1] == pytest.approx(min(1.0, 1.0 / result.e_values.max()))


def test_binned_eprocess_is_the_product_over_bins_of_half_held_mixtures():
    rng = np.random.default_rng(1)
    p = rng.uniform(0, 1, 40)
    y = (rng.random(40) < p).astype(int)
    result = monitor.calibration_eprocess(p, y, method="binned", n_bins=3)
    bins = np.minimum((p * 3).astype(int), 2)
    bets = bet_grid()
    literal = 1.0
    for b in range(3):
        rows = [s for s in range(40) if bins[s] == b]
        arms = [np.prod([1 + lam * (y[s] - p[s]) for s in rows]) for lam in bets]
        literal *= 0.5 + 0.5 * np.mean(arms)
    assert result.e_values[-1] == pytest.approx(literal, rel=1e-10)
    combined = monitor.calibration_eprocess(p, y, n_bins=3)
    others = [monitor.calibration_eprocess(p, y, method=m).e_values[-1]
              for m in ("mean-gap", "dispersion")]
    assert combined.e_values[-1] == pytest.approx((literal + sum(others)) / 3)


def test_dispersion_eprocess_bets_on_the_scaled_logit_known_before_the_outcome():
    """``D_t = mean_j ∏ (1 + λ_j (y_s − p_s) h_s)``, ``h_s = clip(logit p_s / (2 σ_{s−1}),
    −1, 1)``, ``σ²_{s−1} = (1 + Σ_{i<s} logit² p_i) / s`` (rows counted from 1)."""
    rng = np.random.default_rng(2)
    p = rng.uniform(0.02, 0.98, 50)
    y = (rng.random(50) < p).astype(int)
    result = monitor.calibration_eprocess(p, y, method="dispersion")
    z = np.log(p / (1 - p))
    h = [np.clip(z[s] / (2 * np.sqrt((1 + np.sum(z[:s] ** 2)) / (s + 1))), -1, 1)
         for s in range(50)]
    for t in (0, 20, 49):
        literal = np.mean([np.prod([1 + lam * (y[s] - p[s]) * h[s] for s in range(t + 1)])
                           for lam in bet_grid()])
        assert result.e_values[t] == pytest.approx(literal, rel=1e-10)
    assert set(monitor.calibration_eprocess(p, y).components) == {"mean-gap", "binned",
                                                                  "dispersion"}


def test_alarm_is_the_first_row_at_one_over_alpha():
    p = np.full(400, 0.2)
    y = np.ones(400, dtype=int)  # every outcome 1 against a forecast of 0.2
    result = monitor.calibration_eprocess(p, y, alpha=0.01)
    assert result.alarm is not None
    assert result.e_values[result.alarm] >= 100 > result.e_values[result.alarm - 1]
    assert result.threshold == 100


def test_stitching_boundary_formula():
    v, alpha, c = 5_000.0, 0.025, 2.0
    eta, s = 2.0, 1.4
    ell = s * np.log(np.log(eta * v / 10.0)) + np.log(zeta(s) / (alpha * np.log(eta) ** s))
    k1 = (eta ** 0.25 + eta ** -0.25) / np.sqrt(2)
    k2 = (np.sqrt(eta) + 1) / 2
    literal = np.sqrt(k1 ** 2 * v * ell + (k2 * c * ell) ** 2) + k2 * c * ell
    assert stitching_boundary(np.array([v]), alpha, c)[0] == pytest.approx(literal)


# --------------------------------------------------------------------------- error rates


def test_false_alarm_rate_on_calibrated_streams_monitored_after_every_row():
    """200 calibrated streams of 2,000 rows, read after every row: the alarm rate is at most
    α + 3 SE (SE = √(α(1−α)/200) = 0.0154)."""
    reps = 200
    alarms = [monitor.calibration_eprocess(*monitor.drifting_stream(2_000, seed)[:2]).alarm
              is not None for seed in range(reps)]
    assert np.mean(alarms) <= binomial_ceiling(ALPHA, reps)


def test_logit_shift_is_detected_within_4000_rows():
    """A logit shift of 0.5 from row 6,000: the study's criterion is ≥ 80 % of streams alarmed
    within 4,000 rows; over 20 streams the test asks ≥ 80 % − 2 SE (SE = √(0.8·0.2/20) = 0.089),
    i.e. at least 13 of 20."""
    reps, onset = 20, 6_000
    delays = []
    for seed in range(reps):
        p, y, _ = monitor.drifting_stream(onset + 4_000, 100 + seed, onset=onset, shift=0.5)
        alarm = monitor.calibration_eprocess(p, y).alarm
        delays.append(np.inf if alarm is None else alarm - onset)
    delays = np.array(delays)
    assert np.mean((delays >= 0) & (delays <= 4_000)) >= 0.8 - 2 * np.sqrt(0.8 * 0.2 / reps)


def test_group_alarms_are_family_wise_at_alpha():
    """Three calibrated groups, 150 streams: P(any group alarms) ≤ α + 3 SE (0.0178)."""
    reps, shares = 150, (0.5, 0.3, 0.2)
    alarms = []
    for seed in range(reps):
        p, y, g = monitor.drifting_stream(1_500, 5_000 + seed, group_shares=shares)
        family = monitor.group_eprocesses(p, y, g)
        assert family.threshold == pytest.approx(3 / ALPHA)
        alarms.append(family.first_alarm is not None)
    assert np.mean(alarms) <= binomial_ceiling(ALPHA, reps)


def test_group_alarm_names_the_drifting_group():
    p, y, g = monitor.drifting_stream(12_000, 3, onset=4_000, shift=1.0,
                                      group_shares=(0.6, 0.4), drift_group=1)
    family = monitor.group_eprocesses(p, y, g)
    assert family.first_alarm is not None and family.first_alarm[0] == "1"
    assert family.processes["1"].alarm >= 4_000


def test_gap_confidence_sequence_covers_zero_on_calibrated_streams():
    """100 calibrated streams: the chance the sequence ever excludes 0 is ≤ α + 3 SE."""
    reps = 100
    misses = [monitor.gap_confidence_sequence(*monitor.drifting_stream(2_000, 9_000 + s)[:2])
              .excludes_zero().any() for s in range(reps)]
    assert np.mean(misses) <= binomial_ceiling(ALPHA, reps)


def test_gap_confidence_sequence_finds_a_constant_gap():
    p, y, _ = monitor.drifting_stream(20_000, 4, onset=0, shift=0.5)
    cs = monitor.gap_confidence_sequence(p, y)
    truth = np.mean(expit(np.log(p / (1 - p)) + 0.5) - p)
    assert cs.lower[-1] > 0 and cs.lower[-1] <= truth <= cs.upper[-1]
    assert np.all(cs.upper - cs.lower >= 0)


def test_brier_comparison_of_a_model_with_itself_and_with_a_noisier_one():
    p, y, _ = monitor.drifting_stream(8_000, 11)
    same = monitor.brier_comparison(p, p, y)
    assert np.all(same.e_values == 1.0) and same.alarm is None
    assert same.sequence.lower[-1] <= 0 <= same.sequence.upper[-1]
    noisy = expit(np.log(p / (1 - p)) + np.random.default_rng(0).normal(0, 1.0, p.size))
    better = monitor.brier_comparison(noisy, p, y)  # champion noisy, challenger calibrated
    assert better.alarm is not None and better.sequence.lower[-1] > 0
    worse = monitor.brier_comparison(p, noisy, y)
    assert worse.alarm is None and worse.sequence.upper[-1] < 0


# --------------------------------------------------------------------------- inputs


@pytest.mark.parametrize(("probs", "y", "words"), [
    ([0.2, 0.5], [0, 2], "Labels must be integers from 0 to 1"),
    ([0.2, 1.5], [0, 1], "between 0 and 1"),
    (np.full((2, 3), 1 / 3), [0, 1], "binary forecasts"),
    ([0.2, 0.5, 0.3], [0, 1], "one label per row"),
])
def test_bad_inputs_get_a_sentence(probs, y, words):
    with pytest.raises(ValueError, match=words):
        monitor.calibration_eprocess(probs, y)


def test_bad_level_and_method_get_a_sentence():
    with pytest.raises(ValueError, match="alpha"):
        monitor.calibration_eprocess([0.5, 0.5], [0, 1], alpha=1.5)
    with pytest.raises(ValueError, match="Unknown monitoring method"):
        monitor.calibration_eprocess([0.5, 0.5], [0, 1], method="cusum")


# --------------------------------------------------------------------------- the time role


def test_time_column_reads_dates_weeks_quarters_numbers_and_labels():
    assert parse_times(pd.Series(["2026-10-05", "2026-10-12"]), "t").is_dates
    weeks = parse_times(pd.Series(["2026-W41", "2026-W40"]), "t")
    assert weeks.is_dates and list(weeks.order()) == [1, 0]
    assert list(period_labels(weeks, "week")) == ["2026-W41", "2026-W40"]
    quarters = parse_times(pd.Series(["2026-Q3", "2026Q1"]), "t")
    assert list(period_labels(quarters, "month")) == ["2026-07", "2026-01"]
    numbers = parse_times(pd.Series([3, 1, 2]), "t")
    assert not numbers.is_dates and list(numbers.order()) == [1, 2, 0]
    labels = parse_times(pd.Series(["p02", "p01"]), "t")
    assert list(period_labels(labels, "label")) == ["p02", "p01"]
    assert list(period_labels(labels, 1)) == ["rows 1–1", "rows 2–2"]


def test_time_column_problems_are_sentences():
    with pytest.raises(DataError, match=r"Time column 'when' is empty in 1 row \(row 2\)"):
        parse_times(pd.Series(["2026-01-01", None, "2026-01-03"]), "when")
    with pytest.raises(DataError, match="are not dates .*'soon'"):
        parse_times(pd.Series(["2026-01-01", "2026-01-02", "soon"]), "when")
    with pytest.raises(DataError, match="holds labels, not dates"):
        period_labels(parse_times(pd.Series(["a", "b"]), "when"), "month")
    with pytest.raises(DataError, match="true/false"):
        parse_times(pd.Series([True, False]), "when")
    with pytest.raises(DataError, match=r"1 row \(row 2\) name no week of their year"):
        parse_times(pd.Series(["2026-W41", "2026-W54"]), "when")


def test_time_role_in_a_table_is_checked_and_kept_by_subset():
    frame = pd.DataFrame({"y": [0, 1] * 20, "p": 0.5,
                          "t": pd.date_range("2026-01-01", periods=40).astype(str)})
    audit = AuditData.from_frame(frame, label="y", prob="p", time="t")
    assert audit.times.n == 40 and audit.subset(np.arange(5)).times.n == 5
    with pytest.raises(DataError, match="mapped both as the label and as the time column"):
        AuditData.from_frame(frame, label="y", prob="p", time="y")


# --------------------------------------------------------------------------- periods


def test_period_table_reuses_the_metrics_and_the_wald_gap_interval():
    p, y, _ = monitor.drifting_stream(600, 2)
    periods = np.repeat(["a", "b", "c"], 200)
    table = monitor.period_table(p, y, periods, n_resamples=20)
    assert list(table["period"]) == ["a", "b", "c"]
    first = slice(0, 200)
    assert table["ece"].iloc[0] == pytest.approx(metrics.ece(p[first], y[first], 15))
    assert table["brier"].iloc[0] == pytest.approx(metrics.brier(p[first], y[first]))
    gap = y[first] - p[first]
    half = 1.959963985 * gap.std(ddof=1) / np.sqrt(200)
    assert table["gap_low"].iloc[0] == pytest.approx(gap.mean() - half)
    assert table["ece_low"].iloc[0] <= table["ece_high"].iloc[0]


def test_monitor_audit_on_the_drifting_and_the_calibrated_demo():
    mapping = demo_mapping("census-stream")
    drifting = AuditData.from_mapping(census_stream_simulation(), mapping)
    result = monitor.monitor_audit(drifting, monitor.MonitorSettings(
        n_resamples=0, challenger="p_challenger"))
    assert result.first_alarm[0] == "race = Black"
    assert result.verdict.startswith("No alarm through 2026-05; alarm raised in month 2026-06 "
                                     "for race = Black")
    assert result.periods[result.first_alarm[1]] >= "2026-03"  # the planted date
    assert result.comparison.sequence.upper[-1] < 0  # the main-effects challenger is worse
    calibrated = AuditData.from_mapping(census_stream_simulation(shift=0.0), mapping)
    quiet = monitor.monitor_audit(calibrated, monitor.MonitorSettings(n_resamples=0))
    assert quiet.first_alarm is None and quiet.verdict.startswith("No alarm through 2026-12")
    assert set(quiet.table["group"]) >= {"all", "race = Black", "sex = Female"}


def test_period_table_runs_the_skce_test_per_period_on_request():
    from core.stattests.skce import skce_test

    p, y, g = monitor.drifting_stream(800, 6, group_shares=(0.5, 0.5))
    periods = np.repeat(["a", "b"], 400)
    groups = pd.DataFrame({"segment": g.astype(str)})
    table = monitor.period_table(p, y, periods, groups, n_resamples=0, skce_resamples=50)
    overall = table[table["group"] == "all"]
    direct = skce_test(np.column_stack([1 - p[:400], p[:400]]), y[:400], n_resamples=50,
                       seed=0).p_value
    assert overall["skce_p"].iloc[0] == pytest.approx(direct)
    assert table[table["group"] != "all"]["skce_p"].isna().all()
    assert monitor.period_table(p, y, periods, n_resamples=0)["skce_p"].isna().all()
