"""Monitoring a table read batch by batch (core.monitor.monitor_stream): the same result as in
memory whatever the batches (Hypothesis over batch sizes), the series kept at the rows a
report shows on a longer table, every form of time column, rows out of time order, and the
carried states of the e-processes."""

from __future__ import annotations

import functools

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from core import monitor
from core.data.audit_data import AuditData
from core.data.mapping import ColumnMapping
from core.data.problems import DataError
from core.data.stream_sources import open_source
from core.monitor.eprocesses import CalibrationState, GroupState
from core.monitor.series import FULL_SERIES_ROWS
from core.report.monitoring import monitor_document, series_frame

MAPPING = ColumnMapping(label="y", probs=("p",), groups=("segment",), time="when",
                        models=(("p_new", ("p_new",)),))
TOLERANCE = 1e-10


def stream_table(n: int, seed: int, freq: str = "2h") -> pd.DataFrame:
    """A drifting stream in time order: a segment drifts from the middle row, a challenger
    that is the forecast moved a little."""
    p, y, g = monitor.drifting_stream(n, seed, onset=n // 2, shift=1.0,
                                      group_shares=(0.6, 0.4), drift_group=1)
    return pd.DataFrame({"when": pd.date_range("2026-01-01", periods=n, freq=freq), "p": p,
                         "y": y, "segment": np.array(["north", "south"])[g],
                         "p_new": np.clip(p + 0.03, 0, 1)})


def assert_same(memory: monitor.MonitorResult, streamed: monitor.MonitorResult) -> None:
    """Every number of the streamed result equals the in-memory one at the rows it keeps, to
    ``TOLERANCE``; the verdict, alarms, periods and the report's documents equal."""
    rows = np.arange(streamed.n) if streamed.rows is None else streamed.rows
    assert streamed.n == memory.n

    def close(a, b) -> None:
        np.testing.assert_allclose(np.asarray(a, float), np.asarray(b, float),
                                   rtol=TOLERANCE, atol=TOLERANCE)

    pairs = [(memory.eprocess, streamed.eprocess)] + [
        (family.processes[level], streamed.groups[attribute].processes[level])
        for attribute, family in memory.groups.items() for level in family.processes]
    for a, b in pairs:
        assert a.alarm == b.alarm and a.threshold == b.threshold
        close(a.e_values[rows], b.e_values)
        close(a.p_values[rows], b.p_values)
        for name in a.components:
            close(a.components[name][rows], b.components[name])
    for a, b in ((memory.gap_sequence, streamed.gap_sequence),) + (
            ((memory.comparison.sequence, streamed.comparison.sequence),)
            if memory.comparison else ()):
        for field in ("estimate", "lower", "upper"):
            close(getattr(a, field)[rows], getattr(b, field))
    if memory.comparison is not None:
        close(memory.comparison.e_values[rows], streamed.comparison.e_values)
        assert memory.comparison.alarm == streamed.comparison.alarm
        close(memory.comparison.p_value, streamed.comparison.p_value)
    assert list(memory.periods[rows]) == list(streamed.periods)
    assert list(memory.time_labels[rows]) == list(streamed.time_labels)
    a, b = memory.table, streamed.table
    assert list(a.columns) == list(b.columns)
    assert a[["period", "group"]].equals(b[["period", "group"]])
    for column in a.columns[2:]:
        if a[column].dtype.kind in "fi":
            close(a[column], b[column])
        else:
            assert a[column].fillna("").equals(b[column].fillna("")), column
    assert memory.verdict == streamed.verdict
    frames = series_frame(memory), series_frame(streamed)
    assert list(frames[0]["row"]) == list(frames[1]["row"])
    for key in ("verdict", "alarm", "groups", "eprocess"):
        assert str(monitor_document(memory, "t")[key]) == str(monitor_document(streamed, "t")[key])


@functools.cache
def small() -> tuple[pd.DataFrame, monitor.MonitorResult]:
    frame = stream_table(900, 3)
    memory = monitor.monitor_audit(AuditData.from_mapping(frame, MAPPING), SETTINGS)
    return frame, memory


SETTINGS = monitor.MonitorSettings(period="week", n_resamples=8, challenger="p_new",
                                   skce_resamples=10)


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow],
          phases=[Phase.explicit, Phase.generate])  # no shrinking: each example is a run
@given(batch_rows=st.integers(min_value=5, max_value=1000))
def test_batch_boundaries_never_change_a_result(batch_rows: int) -> None:
    frame, memory = small()
    assert memory.first_alarm is not None  # the south segment drifts
    streamed = monitor.monitor_stream(open_source(frame), MAPPING, SETTINGS,
                                      batch_rows=batch_rows)
    assert streamed.notes[0].startswith("Read DataFrame")
    assert_same(memory, streamed)


def test_a_longer_table_keeps_its_series_at_the_rows_a_report_shows():
    """Past FULL_SERIES_ROWS the streamed series hold only the shown rows, the alarm rows and
    each period's last row — their values those of the in-memory run."""
    n = FULL_SERIES_ROWS + 20_000
    frame = stream_table(n, 5, freq="5min")
    settings_ = monitor.MonitorSettings(period=7_000, n_resamples=0, challenger="p_new")
    memory = monitor.monitor_audit(AuditData.from_mapping(frame, MAPPING), settings_)
    streamed = monitor.monitor_stream(open_source(frame), MAPPING, settings_,
                                      batch_rows=9_999)
    assert streamed.rows is not None and 3_000 <= streamed.rows.size < 3_200
    alarms = [streamed.eprocess.alarm, streamed.comparison.alarm] + [
        p.alarm for family in streamed.groups.values() for p in family.processes.values()]
    assert set(a for a in alarms if a is not None) <= set(streamed.rows)
    assert {6_999, 13_999, n - 1} <= set(streamed.rows)  # periods' last rows
    assert_same(memory, streamed)


@pytest.mark.parametrize("form", ["text dates", "numbers", "fractions", "labels", "weeks",
                                  "weeks, then labels"])
def test_every_form_of_time_column_reads_as_in_memory(form: str):
    frame = stream_table(700, 8)
    days = np.arange(700) // 40
    frame["when"] = {"text dates": frame["when"].dt.strftime("%Y-%m-%d %H:%M"),
                     "numbers": pd.Series(days),
                     "fractions": pd.Series(np.where(days < 15, days, days + 0.5)),
                     "labels": pd.Series([f"p{d:02d}" for d in days]),
                     "weeks": pd.Series([f"2026-W{1 + d:02d}" for d in days]),
                     "weeks, then labels": pd.Series([f"2026-{'W' if d < 9 else 'X'}{d + 1:02d}"
                                                      for d in days])}[form]
    period = "week" if form in ("text dates", "weeks") else "label"
    settings_ = monitor.MonitorSettings(period=period, n_resamples=4)
    memory = monitor.monitor_audit(AuditData.from_mapping(frame, MAPPING), settings_)
    for batch_rows in (53, 400):
        assert_same(memory, monitor.monitor_stream(open_source(frame), MAPPING, settings_,
                                                   batch_rows=batch_rows))
    if form == "fractions":  # whole in the first batches, not in the table: '3.0', not '3'
        assert memory.table["period"].iloc[0] == "0.0"
    if form == "weeks, then labels":  # weeks in the first batches only: labels, as in memory
        assert memory.table["period"].iloc[0] == "2026-W01"


def test_kernel_tests_over_features_hold_a_period_and_match(tmp_path):
    frame = stream_table(1_200, 9)
    frame["age"] = np.random.default_rng(0).normal(40, 10, len(frame))
    mapping = ColumnMapping(label="y", probs=("p",), groups=("segment",), time="when",
                            features=("age",))
    settings_ = monitor.MonitorSettings(period=400, n_resamples=0, klce_resamples=20,
                                        skce_resamples=20)
    memory = monitor.monitor_audit(AuditData.from_mapping(frame, mapping), settings_)
    frame.to_parquet(tmp_path / "t.parquet", index=False, row_group_size=500)
    streamed = monitor.monitor_stream(open_source(tmp_path / "t.parquet"), mapping, settings_,
                                      batch_rows=130)
    assert_same(memory, streamed)
    overall = streamed.table[streamed.table["group"] == "all"]
    assert overall["klce_p"].between(0, 1).all() and (overall["klce_computation"] == "exact").all()


def test_rows_out_of_time_order_are_sorted_in_memory_or_refused(tmp_path, monkeypatch):
    frame = stream_table(600, 4)
    shuffled = frame.sample(frac=1.0, random_state=0).reset_index(drop=True)
    shuffled.to_parquet(tmp_path / "t.parquet", index=False)
    settings_ = monitor.MonitorSettings(period="week", n_resamples=0)
    result = monitor.monitor_stream(open_source(tmp_path / "t.parquet"), MAPPING, settings_)
    assert "not in time order" in result.notes[0] and result.sorted_rows
    assert result.verdict == monitor.monitor_audit(
        AuditData.from_mapping(frame, MAPPING), settings_).verdict
    monkeypatch.setattr("core.monitor.streamed.fits_in_memory", lambda rows, budget: False)
    with pytest.raises(DataError, match=r"not in time order \(row 2 is earlier than row 1.*"
                                        r"sort_values\('when', kind='stable'\)"):
        monitor.monitor_stream(open_source(tmp_path / "t.parquet"), MAPPING, settings_)


def test_bad_rows_are_named_by_their_row_in_the_table():
    frame = stream_table(500, 2)
    frame.loc[321, "p"] = 1.7
    with pytest.raises(DataError, match=r"row 322\b"):
        monitor.monitor_stream(open_source(frame), MAPPING, SETTINGS, batch_rows=100)
    frame = stream_table(500, 2)
    frame["when"] = frame["when"].astype(str)
    frame.loc[[10, 410], "when"] = "soon"
    with pytest.raises(DataError, match=r"holds dates, but 2 rows \(rows 11, 411\) are not "
                                        r"dates \(for example 'soon'\)"):
        monitor.monitor_stream(open_source(frame), MAPPING, SETTINGS, batch_rows=100)


def test_carried_states_give_the_one_pass_numbers_bit_for_bit():
    p, y, g = monitor.drifting_stream(3_000, 7, onset=1_000, scale=1.5,
                                      group_shares=(0.5, 0.5))
    cuts = [0, 1, 2, 500, 1_777, 3_000]
    whole = CalibrationState("combined", 10).update(p, y)
    state = CalibrationState("combined", 10)
    parts = [state.update(p[a:b], y[a:b]) for a, b in zip(cuts[:-1], cuts[1:], strict=True)]
    for name, values in whole.items():
        assert np.array_equal(values, np.concatenate([part[name] for part in parts]))
    whole = GroupState([0, 1], "combined", 10).update(p, y, g)
    state = GroupState([0, 1], "combined", 10)
    parts = [state.update(p[a:b], y[a:b], g[a:b]) for a, b in zip(cuts[:-1], cuts[1:],
                                                                  strict=True)]
    for k, components in whole.items():
        for name, values in components.items():
            assert np.array_equal(values, np.concatenate([part[k][name] for part in parts]))
