"""Over time page: is the deployed model still calibrated — overall, per group, against a
challenger — with alarms whose false-alarm rate holds however often the table is re-audited."""

from __future__ import annotations

import streamlit as st

from core.data import PERIODS
from core.figures import (
    PERIOD_METRICS,
    brier_sequence_figure,
    eprocess_figure,
    group_eprocess_figure,
    group_gap_figure,
    period_metric_figure,
)
from core.monitor import GUARANTEE, METHODS, MonitorSettings
from dashboard.cache.monitor import monitoring
from dashboard.components import chart
from dashboard.state import active_audit

PERIOD_CHOICES = (*PERIODS[:4], "label", "1000 rows")
TABLE_COLUMNS = ["period", "group", "rows", "mean_forecast", "observed_rate", "gap", "gap_low",
                 "gap_high", "ece", "ece_low", "ece_high", "brier", "skce_p", "klce_p",
                 "klce_computation", "e_value", "p_value"]

st.title("Over time")
st.caption("A model in production is not a snapshot. Outcomes arrive period after period; the "
           "e-process below raises an alarm whose false-alarm rate stays at most α however "
           "often you look (Arnold, Henzi & Ziegel 2023; Choe & Ramdas 2023).")
audit = active_audit()
if audit.times is None:
    st.info("This table has no time column. Choose the demo *Census-style loans over time* on "
            "the Data page, or upload a table and map its **Time column** (dates, timestamps, "
            "ISO weeks, quarters or ordered period labels).", icon=":material/info:")
    st.stop()
if not audit.is_binary:
    st.info(f"Monitoring over time is for binary models; this table has {audit.n_classes} "
            "classes.", icon=":material/info:")
    st.stop()

with st.form("over_time_form"):
    c1, c2, c3, c4 = st.columns(4)
    choices = PERIOD_CHOICES if audit.times.is_dates else ("label", "1000 rows")
    period = c1.selectbox("Period", choices, key="ot_period", index=choices.index("month")
                          if "month" in choices else 0)
    alpha = c2.select_slider("False-alarm rate α", (0.01, 0.05, 0.1), value=0.05, key="ot_alpha")
    method = c3.selectbox("E-process", METHODS, key="ot_method",
                          help="combined: the average of the mean-gap e-process, the binned one "
                               "(10 bins of the forecast) and the dispersion one (bets on the "
                               "calibration slope: a change of the logit's scale)")
    others = [name for name in audit.model_names if name != audit.model]
    challenger = c4.selectbox("Challenger", ["none", *others], key="ot_challenger",
                              index=1 if others else 0)
    d1, d2 = st.columns(2)
    draws = d1.select_slider("Poisson bootstrap draws of the per-period ECE and Brier intervals",
                             (0, 50, 100, 200), value=50, key="ot_draws",
                             help="0: no intervals (fastest); the e-processes need none")
    kernel = d2.select_slider(
        "Resamples of the per-period SKCE and KLCE tests", (0, 100, 200, 500), value=100,
        key="ot_kernel", help="0: not run. KLCE tests local calibration over the audit "
                              "features within each period (I-trustworthy eq. 4).")
    st.form_submit_button("Monitor", type="primary")

settings = MonitorSettings(period=1000 if period == "1000 rows" else period, alpha=float(alpha),
                           method=method, n_resamples=int(draws),
                           skce_resamples=int(kernel), klce_resamples=int(kernel),
                           challenger=None if challenger == "none" else challenger)
with st.spinner("Monitoring the table row by row…"):
    result = monitoring(audit, settings)

(st.error if result.first_alarm else st.success)(result.verdict)
with st.expander("What the alarm guarantees, and what it assumes"):
    st.write(GUARANTEE)
    if result.sorted_rows:
        st.write(f"The rows were put in order of '{result.time_column}' first.")

metric = st.radio("Metric per period", list(PERIOD_METRICS), horizontal=True, key="ot_metric",
                  format_func=lambda m: PERIOD_METRICS[m][1])
chart(period_metric_figure(result, metric), "ot_metric_chart", title="metric per period")
chart(eprocess_figure(result), "ot_eprocess", title="calibration e-process")
groups = group_eprocess_figure(result)
if groups is not None:
    st.subheader("Per group")
    chart(groups, "ot_group_eprocess", title="e-process per group")
    chart(group_gap_figure(result), "ot_group_gaps", title="mean gap per group")
comparison = brier_sequence_figure(result)
if comparison is not None:
    st.subheader("Champion and challenger")
    chart(comparison, "ot_brier", title="Brier difference")
st.subheader("Per period")
st.dataframe(result.table[TABLE_COLUMNS], hide_index=True, key="ot_table")
st.caption("skce_p, klce_p: each period's own SKCE and KLCE tests (global, and local over the "
           "audit features), valid for that period read once — reading them every month is "
           "not; the alarm above is the e-process, whose false-alarm rate holds however often "
           "you look. Empty: not run, or fewer rows than a test needs; klce_computation: exact, "
           "or random Fourier features where the period is large.")
