"""Local bias page: where is the model biased, for whom, and by how much (LCB, eq. 7)?"""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from core.figures.local_bias import lcb_figure
from core.figures.style import caption_text
from core.kernels.spec import one_vs_rest
from core.local.lcb_trends import lcb_trends, trend_note
from dashboard.cache import diagnostics
from dashboard.components import about, chart, class_picker
from dashboard.state import active_audit

NONE = "(none)"
FACTORS = (1 / 16, 1 / 8, 1 / 4, 1 / 2, 1.0, 2.0)
MAX_POINTS = 20_000  # points drawn in the scatter (a seeded sample of the evaluated rows)

st.title("Local bias (LCB)")
st.caption(
    "The local calibration bias (I-trustworthy, eq. 7) is the kernel-weighted mean of "
    "observed minus predicted around each person: positive where the model underestimates "
    "the risk, negative where it overestimates it."
)
audit = active_audit()
reference, query, how = diagnostics.reference_and_query(audit)
st.caption(f"Rows: {how} ({reference.n:,} reference rows, {query.n:,} evaluated).")

numeric = [c for c in audit.feature_frame.columns
           if pd.api.types.is_numeric_dtype(audit.feature_frame[c])]
left, right = st.columns([2, 1])
features = tuple(left.multiselect(
    "Audit features (kernel)", list(audit.feature_frame.columns),
    default=list(audit.feature_frame.columns), key="lcb_features"))
with right:
    class_index = class_picker(audit, key="lcb_class")

cv_p, cv_x, cv_table = diagnostics.lcb_bandwidths(reference.fingerprint, features, class_index,
                                            reference)
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
st.caption(f"σ_p = {sigma_p:.3g} (prediction), σ_x = {sigma_x:.3g} (standardised features)"
           + (" — chosen by leave-one-out cross-validation." if choice != "manual" else "."))

key = reference.fingerprint + query.fingerprint
estimate = diagnostics.lcb_values(key, features, class_index, sigma_p, sigma_x, reference, query)
if estimate.plan.computation != "exact" and st.toggle(
        f"Exact LCB: every row from every reference row ({about(estimate.plan.exact_seconds)})",
        key="lcb_exact"):
    estimate = diagnostics.lcb_values(key, features, class_index, sigma_p, sigma_x, reference,
                                      query, "exact")
st.caption(estimate.describe())
values, rows = estimate.values, estimate.rows
shown = query if rows is None else query.subset(rows)  # the evaluated rows
p, _ = one_vs_rest(shown.probs, shown.y, None if audit.is_binary else class_index)

g1, g2, g3, g4 = st.columns(4)
x_options = numeric or ["predicted probability"]
x_name = g1.selectbox("Against", x_options, key="lcb_x")
groups = list(audit.groups.columns)
color = g2.selectbox("Colour by", [NONE, *groups], index=1 if groups else 0, key="lcb_color")
facet = g3.selectbox("Facet by", [NONE, *groups], index=2 if len(groups) > 1 else 0,
                     key="lcb_facet")
degree = g4.slider("Polynomial degree", 1, 5, 3, key="lcb_degree")

x = p if x_name == "predicted probability" else \
    shown.feature_frame[x_name].to_numpy(dtype=float)
points = pd.DataFrame({x_name: x, "lcb": values})
for column in {color, facet} - {NONE}:
    points[column] = shown.groups[column].to_numpy()
labels = [points[c].astype(str) for c in (facet, color) if c != NONE]
trend_groups = (labels[0] if len(labels) == 1 else labels[0] + " | " + labels[1]) \
    if labels else None
valid = ~np.isnan(values)
trends = lcb_trends(x[valid], values[valid],
                    None if trend_groups is None else trend_groups[valid].to_numpy(),
                    degree=degree, n_resamples=200)
chart(lcb_figure(points[valid], trends, x_name, None if color == NONE else color,
                 None if facet == NONE else facet, MAX_POINTS), key="lcb_scatter",
      title="Local calibration bias",
      caption=caption_text(notion="one-vs-rest", bandwidths={"σ_p": sigma_p, "σ_x": sigma_x},
                           split=how, n=min(int(valid.sum()), MAX_POINTS),
                           extra=f"degree-{degree} trends, 90% bands"))
skipped = trend_note(x[valid], None if trend_groups is None else trend_groups[valid].to_numpy(),
                     degree)
st.caption(
    f"Points: LCB of {min(int(valid.sum()), MAX_POINTS):,} evaluated rows (a seeded sample "
    f"when there are more); lines: degree-{degree} polynomial fits per group with "
    "90% bootstrap bands (the spread of the fit over the plotted points). "
    + (f"{int((~valid).sum())} rows had no reference neighbours and are not drawn."
       if (~valid).any() else "")
    + (f" {skipped}" if skipped else "")
)

st.info("Which slices of the data are miscalibrated — levels, ranges and their "
        "intersections, tested together with a stated error rate and intervals — is the "
        "**Findings** page.", icon=":material/flag:")
