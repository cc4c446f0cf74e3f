"""Recalibration page: which method repairs the model, globally and locally?"""

from __future__ import annotations

import numpy as np
import streamlit as st

from core.audit import CURVE_GAMMAS, numeric_features
from core.figures import (
    klce_pvalue_figure,
    lcb_before_after_figure,
    method_colors,
    mlce_comparison_figure,
    reliability_grid,
)
from core.recalibration import (
    BETTER,
    METRICS,
    RECALIBRATORS,
    RECOMMENDATION_RULE,
    UNCALIBRATED,
    CompareSettings,
    recommend,
)
from core.stattests import format_p_value
from dashboard.cache import recalibration as recal_cache
from dashboard.components import chart
from dashboard.state import (
    active_audit,
    comparison_request,
    request_comparison,
    set_active,
    set_recalibration_comparison,
)

DEFAULTS = ("temperature", "isotonic", "bbq", "lore", "lcb", "group-temperature",
            "multicalibration")
GAMMAS = (0.05, 0.1, 0.2, 0.4, 1.0)
ALPHA = 0.05


def parameter_widget(spec, parameter, column):
    """One widget built from a registry ParameterSpec."""
    key, label = f"recal_{spec.key}_{parameter.name}", parameter.name.replace("_", " ")
    if parameter.kind == "choice":
        return column.selectbox(label, parameter.choices, key=key, help=parameter.meaning,
                                index=parameter.choices.index(parameter.default))
    whole = parameter.kind == "int"
    cast = int if whole else float
    return column.number_input(label, min_value=cast(parameter.low),
                               max_value=cast(parameter.high), value=cast(parameter.default),
                               step=1 if whole else None, format=None if whole else "%g",
                               key=key, help=parameter.meaning)


st.title("Recalibration")
st.caption("Fit each method on the calibration rows, score it on the test rows: does it "
           "repair the model globally (ECE), locally (MLCE, the KLCE test) and for every "
           "group (worst group's MCE)?")
audit = active_audit()
available = [k for k, s in RECALIBRATORS.items() if s.supports(audit.is_binary)]
feature_names, group_names = list(audit.feature_frame.columns), list(audit.groups.columns)

with st.form("recal_form"):
    methods = st.multiselect("Methods", available, key="recal_methods",
                             default=[m for m in DEFAULTS if m in available],
                             format_func=lambda k: RECALIBRATORS[k].name)
    c1, c2 = st.columns(2)
    features = c1.multiselect("Audit features (local methods, MLCE, KLCE)", feature_names,
                              default=feature_names, key="recal_features")
    groups = c2.multiselect("Group attributes (group methods, worst-group MCE)", group_names,
                            default=group_names, key="recal_groups")
    c3, c4, c5, c6 = st.columns(4)
    n_splits = c3.number_input("Random splits", 1, 10, 1, key="recal_splits",
                               help="1: the data's own calibration/test split. More: "
                                    "repeated stratified random halves (mean ± sd).")
    seed = c4.number_input("Seed", 0, 10_000, 0, key="recal_seed")
    gamma = c5.select_slider("MLCE γ", GAMMAS, value=0.2, key="recal_gamma")
    n_resamples = c6.select_slider("KLCE resamples B", (50, 100, 200, 500), value=200,
                                   key="recal_b")
    with st.expander("Method parameters"):
        params = {}
        for key in available:
            spec = RECALIBRATORS[key]
            st.markdown(f"**{spec.name}** — {spec.description} *{spec.reference}*")
            columns = st.columns(max(len(spec.parameters), 1))
            params[key] = {p.name: parameter_widget(spec, p, columns[i])
                           for i, p in enumerate(spec.parameters)}
    if st.form_submit_button("Compare", type="primary"):
        request_comparison(audit.fingerprint, CompareSettings.of(
            {m: params[m] for m in methods}, features=tuple(features), groups=tuple(groups),
            n_splits=int(n_splits), seed=int(seed), gamma=float(gamma),
            n_resamples=int(n_resamples)))

settings = comparison_request(audit.fingerprint)
if settings is None:
    st.info("Choose the methods and press **Compare**.", icon=":material/tune:")
    st.stop()
bar = st.progress(0.0, text="Fitting and scoring…")
result = recal_cache.comparison(audit, settings, lambda f, m: bar.progress(f, text=m))
bar.empty()
set_recalibration_comparison(result.table)  # the Export page's report includes it
st.caption(" ".join(result.notes) + f" {result.test.n:,} test rows.")
for name, reason in result.skipped.items():
    st.warning(f"Skipped {RECALIBRATORS[name].name}: {reason}", icon=":material/block:")

choice = recommend(result.table, ALPHA)
if choice.method is None:
    st.warning(f"**No method is recommended.** {choice.reason}", icon=":material/block:")
else:
    st.success(f"**Recommended: {RECALIBRATORS[choice.method].name}.** {choice.reason}",
               icon=":material/recommend:")
st.caption(f"Rule (α = {ALPHA}): {RECOMMENDATION_RULE}")

st.header("Scores on the test rows")
table = result.table.set_index("method")
means = [c for c in METRICS if c in table]
lower = [c for c in means if BETTER[c] < 0 and table[c].notna().any() and c != "fit_seconds"]
higher = [c for c in means if BETTER[c] > 0 and c not in ("klce_p", "brier_worse_p")]
styled = (table.style.format("{:.4g}", na_rep="—")
          .format(lambda p: format_p_value(p, settings.n_resamples), subset=["klce_p"],
                  na_rep="—")
          .highlight_min(subset=lower, props="font-weight:bold;background-color:#d5f5e3")
          .highlight_max(subset=higher, props="font-weight:bold;background-color:#d5f5e3")
          .map(lambda p: "color:#c0392b;font-weight:bold" if p <= ALPHA else "",
               subset=["klce_p", "brier_worse_p"]))
st.dataframe(styled, width="stretch")
sd = " Columns ending in _sd: standard deviation over the splits." if settings.n_splits > 1 \
    else ""
scope = ", ".join(settings.features) or "the predictions alone"
st.caption("Best per column in green. Lower is better: Brier, NLL, ECE, MCE, MLCE, max group "
           "MCE (worst group level, 5 bins); higher is better: accuracy. klce_p is the "
           f"aggregated KLCE test (3 × 3 bandwidth grid, B = {settings.n_resamples}) over "
           f"{scope}: red = rejects local calibration at α = {ALPHA}. brier_worse_p: "
           "one-sided paired test that the method's Brier score is worse than the "
           "uncalibrated model's (red: it is)." + sd)

st.header("Reliability diagrams")
colors = method_colors(result.probs, UNCALIBRATED)  # one colour a method on every chart
tables = recal_cache.reliability(audit.fingerprint, settings, result)
chart(reliability_grid(tables, columns=min(4, len(tables)), colors=colors),
      key="recal_reliability")

left, right = st.columns(2)
with left:
    st.subheader("Local calibration error over γ")
    curve_bar = st.progress(0.0, text="MLCE curves…")
    curves = recal_cache.curves(audit.fingerprint, settings, CURVE_GAMMAS, result,
                                lambda f, m: curve_bar.progress(f, text=m))
    curve_bar.empty()
    if curves:
        chart(mlce_comparison_figure(curves, result.gamma, colors), key="recal_mlce")
        st.caption("MLCE (Luo et al., eq. 5) on a 2-D PCA of the audit features; lower is "
                   "better at every γ.")
    else:
        st.info("Choose audit features to see the MLCE curves.")
with right:
    st.subheader("KLCE test per method")
    chart(klce_pvalue_figure(result.table, ALPHA, colors), key="recal_klce")
    st.caption("Below the dashed line the test rejects local calibration (I-trustworthy, "
               "Fig. 4): those bars are hatched and outlined in red.")

st.header("Local bias before and after")
chosen = [m for m in result.probs if m != UNCALIBRATED]
numeric = numeric_features(audit, features)
if chosen and numeric:
    s1, s2 = st.columns(2)
    p_values = result.table.set_index("method")["klce_p"]
    method = s1.selectbox("Method", chosen, key="recal_selected",
                          index=int(np.argmax([p_values[m] for m in chosen])),
                          format_func=lambda k: RECALIBRATORS[k].name,
                          help="Preselected: the method with the highest KLCE p-value.")
    feature = s2.selectbox("Against", numeric, key="recal_feature")
    lcb_bar = st.progress(0.0, text="Local bias before and after…")
    trends = recal_cache.lcb_trend(audit.fingerprint, settings, method, feature, result,
                                   lambda f, m: lcb_bar.progress(f, text=m))
    lcb_bar.empty()
    chart(lcb_before_after_figure(trends, feature, colors), key="recal_lcb")
    st.caption("LCB (eq. 7) of the test rows, each left out of its own estimate; cubic fits "
               "with 90% bootstrap bands. A repaired model stays on the zero line.")
    if st.button(f"Make the test rows recalibrated by {RECALIBRATORS[method].name} the "
                 "active dataset", key="recal_activate"):
        recalibrated = result.test.with_probs(
            result.probs[method],
            name=f"{audit.name} — recalibrated ({RECALIBRATORS[method].name})")
        set_active(recalibrated, f"recalibrated by {RECALIBRATORS[method].name} (fitted on "
                                 f"{audit.name}'s calibration rows; test rows only)")
        st.success("Done: every page now audits the recalibrated test rows.",
                   icon=":material/check_circle:")
elif not numeric:
    st.info("Choose a numeric audit feature to see the local bias trend.")
