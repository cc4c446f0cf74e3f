"""Local bias page: where is the model biased, for whom, and by how much (LCB, eq. 7)?"""

from __future__ import annotations

from dataclasses import replace

import streamlit as st

from core.audit import (
    PREDICTION,
    LocalBiasSettings,
    ProfileSettings,
    axis_options,
    lcb_bandwidths,
    lcb_profile,
    reference_and_query,
)
from core.figures import caption_text, lcb_figure
from dashboard.cache import diagnostics
from dashboard.components import about, chart, class_picker
from dashboard.state import active_audit, record_section

NONE = "(none)"
FACTORS = (1 / 16, 1 / 8, 1 / 4, 1 / 2, 1.0, 2.0)
MAX_POINTS = 20_000  # points drawn in the scatter (a seeded sample of the evaluated rows)

st.title("Local bias (LCB)")
st.markdown(
    "**Where, and for whom, does the model over- or underestimate the risk (the probability "
    "of the outcome), and by how much?** Each point is one row: above zero, rows like it "
    "had the outcome more often than the model predicted (it underestimates their risk); "
    "below zero, less often (it overestimates). This page shows sizes, not a test: which "
    "gaps are beyond chance, the Findings page says."
)
with st.expander("How this is computed"):
    st.markdown(
        "The local calibration bias (I-trustworthy, eq. 7) is the kernel-weighted mean of "
        "observed minus predicted around each person: positive where the model underestimates "
        "the risk, negative where it overestimates it. σ_p and σ_x are the kernel bandwidths "
        "in the prediction and in the standardised audit features — how far “around each "
        "person” reaches."
    )
audit = active_audit()
reference, query, how = reference_and_query(audit)
st.caption(f"Rows: {how} ({reference.n:,} reference rows, {query.n:,} evaluated).")

left, right = st.columns([2, 1])
features = tuple(left.multiselect(
    "Audit features (kernel)", list(audit.feature_frame.columns),
    default=list(audit.feature_frame.columns), key="lcb_features"))
with right:
    class_index = class_picker(audit, key="lcb_class")

settings = LocalBiasSettings(features, class_index)
cv_p, cv_x, cv_table = diagnostics.section(lcb_bandwidths, audit, settings,
                                           spinner="Cross-validating the LCB bandwidths…")
c1, c2, c3 = st.columns(3)
choice = c1.radio("Bandwidths", ["cross-validated", "manual"], horizontal=True,
                  key="lcb_bw_mode",
                  help="Cross-validated: the pair that best predicts each reference row's "
                       "residual from its neighbours (leave-one-out).")
sigma_p, sigma_x = cv_p, cv_x
if choice == "manual":
    fp = c2.select_slider("σ_p (× cross-validated)", FACTORS + (4.0, 8.0), value=1.0,
                          key="lcb_fp")
    fx = c3.select_slider("σ_x (× cross-validated)", FACTORS + (4.0, 8.0), value=1.0,
                          key="lcb_fx") if features else 1.0
    sigma_p, sigma_x = cv_p * fp, cv_x * fx
    settings = replace(settings, prob_bandwidth=sigma_p, feature_bandwidth=sigma_x)
st.caption(f"σ_p = {sigma_p:.3g} (prediction), σ_x = {sigma_x:.3g} (standardised features)"
           + (" — chosen by leave-one-out cross-validation." if choice != "manual" else "."))

g1, g2, g3, g4 = st.columns(4)
x_name = g1.selectbox("Against", axis_options(audit, features), key="lcb_x")
groups = list(audit.groups.columns)
color = g2.selectbox("Colour by", [NONE, *groups], index=1 if groups else 0, key="lcb_color")
facet = g3.selectbox("Facet by", [NONE, *groups], index=2 if len(groups) > 1 else 0,
                     key="lcb_facet")
degree = g4.slider("Polynomial degree", 1, 5, 3, key="lcb_degree")


def profile_at(lcb: LocalBiasSettings):
    return diagnostics.section(lcb_profile, audit, ProfileSettings(
        lcb, None if x_name == PREDICTION else x_name, None if color == NONE else color,
        None if facet == NONE else facet, degree), spinner="Estimating the local bias (LCB)…")


profile = profile_at(settings)
if profile.section.method != "exact" and st.toggle(
        f"Exact LCB: every row from every reference row ({about(profile.section.exact_seconds)})",
        key="lcb_exact"):
    settings = replace(settings, computation="exact")
    profile = profile_at(settings)
if choice != "manual":
    record_section("local_bias", None, settings)
st.caption(profile.section.computation)
valid = len(profile.points)
chart(lcb_figure(profile.points, profile.trends, profile.x_name,
                 None if color == NONE else color, None if facet == NONE else facet,
                 MAX_POINTS), key="lcb_scatter",
      title="Local calibration bias",
      caption=caption_text(notion="one-vs-rest", bandwidths={"σ_p": sigma_p, "σ_x": sigma_x},
                           split=how, n=min(valid, MAX_POINTS),
                           extra=f"degree-{degree} trends, 90% bands"))
st.caption(
    f"Points: LCB of {min(valid, MAX_POINTS):,} evaluated rows (a seeded sample "
    f"when there are more); lines: degree-{degree} polynomial fits per group with "
    "90% bootstrap bands (the spread of the fit over the plotted points). "
    + ("Panels: the largest mean |LCB| first, all on one y scale. " if facet != NONE else "")
    + (f"{profile.without_neighbours} rows had no reference neighbours and are not drawn."
       if profile.without_neighbours else "")
    + (f" {profile.skipped}" if profile.skipped else "")
)

st.info("Which slices of the data are miscalibrated — levels, ranges and their "
        "intersections, tested together with a stated error rate and intervals — is the "
        "**Findings** page.", icon=":material/flag:")
