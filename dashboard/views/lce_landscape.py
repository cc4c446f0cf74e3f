"""LCE landscape page: where in feature space is each confidence bin miscalibrated?"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import streamlit as st

from core import metrics
from core.audit import (
    LCE_BINS,
    LandscapeSettings,
    curve_computation,
    curve_over_gammas,
    feature_map,
    lce_rows,
)
from core.figures import lce_cdf_figure, lce_profile_figure, lce_scatter_figure, mlce_curve_figure
from core.local import bin_lce_cdf, bin_summary, confidence_bins
from dashboard.cache import diagnostics
from dashboard.components import about, analysis_part, chart
from dashboard.state import active_audit, record_section

GAMMAS = (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0)
MAX_POINTS = 25_000  # per kind of point in the scatter: at most 50,000 sent
METHOD_LABELS = {"pca": "PCA", "tsne": "t-SNE", "umap": "UMAP"}
N_BINS = LCE_BINS

st.title("LCE landscape")
st.markdown(
    "**Among predictions made with the same confidence, are there regions of similar rows "
    "where the model is more (or less) sure than it should be?** The map places similar rows "
    "near each other and colours each by how far the model's confidence is from the accuracy "
    "on rows like it. Strongly coloured patches are errors that the average over all rows of "
    "the same confidence can hide."
)
with st.expander("How this is computed"):
    st.markdown(
        "The local calibration error (Luo et al., eq. 4) of every prediction: within its "
        "confidence bin, the kernel-weighted gap between confidence and accuracy of its "
        "neighbours in an embedding of the audit features. Top-label notion; 15 equal-width "
        "bins. The kernel bandwidth γ sets how far “neighbours” reaches. MLCE (eq. 5) is the "
        "largest LCE; as γ grows it tends to the global MCE (Lemma 1)."
    )
audit = active_audit()
data, part = analysis_part(audit, key="lce_part")
if audit.feature_frame.shape[1] == 0:
    st.warning("Map audit features on the Data page: the landscape is drawn over them (with "
               "one feature, the LCE is drawn against it; with two or more, over an embedding).",
               icon=":material/warning:")
    st.stop()

c1, c2, c3 = st.columns([2, 1, 1])
features = tuple(c1.multiselect("Audit features", list(audit.feature_frame.columns),
                                default=list(audit.feature_frame.columns), key="lce_features"))
if not features:
    st.info("Choose at least one audit feature.")
    st.stop()
encoded = data.feature_matrix(features)
profile = encoded.shape[1] == 1  # one numeric feature: no plane to embed, draw LCE against it
if profile:
    method = "profile"
    c2.caption("One audit feature: the LCE is drawn against it. Choose two or more features "
               "(or a categorical one) for an embedding.")
else:
    method = c2.radio("Embedding", list(METHOD_LABELS), format_func=METHOD_LABELS.get,
                      horizontal=True, key="lce_method")
signed = c3.toggle("Signed LCE", value=True, key="lce_signed",
                   help="Signed: confidence − accuracy (positive = over-confident).")

settings = LandscapeSettings(features, "pca" if profile else method)  # the map's settings
bar = st.progress(0.0, text="Map of the audit features…" if profile else
                  f"{METHOD_LABELS[method]} embedding…")
try:
    standardized, embedding = diagnostics.section(
        feature_map, data, settings, lambda fraction, message: bar.progress(fraction, text=message))
except ValueError as error:  # too few distinct rows for t-SNE/UMAP, constant features
    bar.empty()
    st.warning(f"{error}", icon=":material/warning:")
    st.stop()
bar.empty()
if profile:
    feature_name = features[0]
    coords = encoded[:, 0]
    fitted = f"the LCE is computed on '{feature_name}' z-scored"
else:
    coords = embedding.coords
    fitted = f"the embedding was fitted on {embedding.n_fit:,} rows"
#: the map's key: the data and the map's settings
map_key = f"{data.fingerprint}:{features}:{settings.embedding}"

conf, correct = metrics.confidence_outcome(data.probs, data.y, "top-label")
gamma = st.select_slider("Kernel bandwidth γ", GAMMAS, value=0.2, key="lce_gamma",
                         help="Laplacian kernel exp(−‖a − b‖₁ / (d·γ)) on the standardised "
                              "embedding: small γ = very local, large γ → the bin's global "
                              "error.")
plan = diagnostics.lce_plan(map_key, gamma, standardized, conf)
exact = not plan.exact and st.toggle(
    f"Exact LCE ({about(plan.exact_seconds)} per γ)", key="lce_exact",
    help="The binned grid's error bound is a worst case; the exact computation removes it.")
computation = "exact" if exact else "auto"
settings = replace(settings, gamma=gamma, computation=computation)
record_section("landscape", part, settings)
result = diagnostics.lce_values(map_key, gamma, signed, standardized, conf, correct, computation)
values = result.values
st.caption(f"LCE at γ = {gamma:g} on {data.n:,} rows: {result.method.describe()}.")
summary = bin_summary(conf, correct, np.abs(values), N_BINS)
filled = summary[summary["count"] > 0]
# The labels name the bin by what does not depend on γ: a label that changes with the slider
# would make the widget forget the chosen bin.
labels = {int(r.bin): f"({r.bin_lower:.2f}, {r.bin_upper:.2f}] — {int(r.count):,} rows, "
                      f"bin error {r.calibration_error:.3f}"
          for r in filled.itertuples()}
largest = int(filled.loc[filled["count"].idxmax(), "bin"])
chosen = st.selectbox("Confidence bin", list(labels), index=list(labels).index(largest),
                      format_func=labels.get, key="lce_bin")

in_bin = confidence_bins(conf, N_BINS) == chosen
left, right = st.columns([3, 2])
with left:
    where = (f"bin ({summary.loc[chosen, 'bin_lower']:.2f}, "
             f"{summary.loc[chosen, 'bin_upper']:.2f}]")
    if profile:
        figure = lce_profile_figure(coords, values, in_bin, signed, feature_name,
                                    f"LCE against {feature_name} — {where}", MAX_POINTS)
    else:
        spread = st.toggle(
            "Spread the points evenly (rank axes)", value=True, key="lce_spread",
            help="Draws each embedding coordinate's rank among the rows instead of its value: "
                 "one-hot features put thousands of rows on a few stripes, ranked (and "
                 "jittered by ±2% of the axis) they fill the square in the same order. Only "
                 "the drawing changes, not the LCE.")
        figure = lce_scatter_figure(coords, values, in_bin, signed,
                                    f"{METHOD_LABELS[method]} of {', '.join(features)} — {where}",
                                    MAX_POINTS, spread=spread)
    shown = min(int(in_bin.sum()), MAX_POINTS) + min(int((~in_bin).sum()), MAX_POINTS)
    chart(figure, key="lce_scatter", caption=(
        f"{shown:,} of {data.n:,} rows drawn (at most {MAX_POINTS:,} of the bin and "
        f"{MAX_POINTS:,} of the others, a seeded sample)" if shown < data.n else ""))
with right:
    cdf = bin_lce_cdf(conf, correct, np.abs(values), chosen, N_BINS)
    chart(lce_cdf_figure(cdf.values, cdf.fraction, cdf.calibration_error,
                                   cdf.mean_lce), key="lce_cdf")
    st.markdown(
        f"In this bin the average confidence and accuracy differ by "
        f"**{cdf.calibration_error:.3f}**, but the mean local error is **{cdf.mean_lce:.3f}** "
        f"and **{cdf.share_above:.0%}** of its points have a larger LCE than the bin's error: "
        + ("over- and under-confident regions cancel in the bin average."
           if cdf.share_above > 0.5 else "the local errors are mostly within the bin's error.")
    )

st.header("MLCE against the bandwidth")
bar = st.progress(0.0, text="MLCE over γ…")
rows = lce_rows(data.n)  # beyond 200,000 rows: a seeded sample, as in the report
curve = diagnostics.section(curve_over_gammas, data, settings,
                            lambda f, m: bar.progress(f, text=m))
bar.empty()
mce = metrics.mce(data.probs, data.y, N_BINS, "uniform", notion="top-label")
chart(mlce_curve_figure(curve, mce, gamma), key="lce_mlce")
st.caption(
    "MLCE, the largest LCE, falls from the worst individual error at small γ to the "
    f"global MCE ({mce:.3f}) as γ grows. On {data.n:,} rows ({part}); {fitted}. "
    + curve_computation(curve)
    + ("" if rows is None else
       f" The curve is computed on a seeded sample of {rows.size:,} of the {data.n:,} rows.")
)
