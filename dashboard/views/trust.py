"""Trust test page: is the model locally calibrated over the audit features (KLCE test)?"""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from core.audit import TrustSettings, trust_section
from core.figures import caption_text, null_histogram_figure, p_value_heatmap_figure
from core.stattests import DEFAULT_NULL, NULL_EXPLANATIONS, NULLS, format_p_value, p_text
from dashboard.cache import diagnostics
from dashboard.components import analysis_part, chart, class_picker, computation_note, verdict
from dashboard.state import active_audit, exact_requested, record_section

#: The grid's multiples of the median heuristic (:func:`core.stattests.klce_grid.bandwidth_grid`).
GRID_FACTORS = (0.25, 0.5, 1.0, 2.0, 4.0)
#: Resamples of the 25-point bandwidth grid (each grid point is one tile-engine pass).
GRID_RESAMPLES = 200
STUDY = Path(__file__).resolve().parents[1] / "assets" / "klce_null_study.md"


def factor_label(factor: float) -> str:
    return f"×{factor:g}" if factor >= 1 else f"×1/{round(1 / factor)}"


st.title("Trust test (KLCE)")
st.markdown(
    "**Is the model's predicted probability right for every kind of case the audit features "
    "describe, not only on average?** A red verdict below means the data show it is wrong "
    "somewhere (the chance that this is a false alarm is at most α); a green one means this "
    "test found no such problem in these rows — not a proof that there is none."
)
with st.expander("How this is computed"):
    st.markdown(
        "The test asks whether the model is locally calibrated: P(y = 1 | prediction, audit "
        "features) equal to the prediction everywhere. The KLCE² statistic (I-trustworthy, "
        "eq. 4) weighs residual pairs by how close they are in prediction and in the audit "
        "features; σ_p and σ_x are the kernel bandwidths — how close counts as close — in the "
        "prediction and in the standardised audit features. Its null distribution comes from "
        "B resamples under the null chosen below."
    )
audit = active_audit()
data, part = analysis_part(audit, key="trust_part")
if audit.feature_frame.shape[1] == 0:
    st.warning("No audit features are mapped, so only the prediction kernel is used. Map "
               "audit features on the Data page to test local calibration over them.",
               icon=":material/warning:")

left, right = st.columns([2, 1])
features = tuple(left.multiselect(
    "Audit features", list(audit.feature_frame.columns),
    default=list(audit.feature_frame.columns), key="trust_features",
    help="Categorical features enter one-hot encoded; all are standardised."))
with right:
    class_index = class_picker(audit, key="trust_class")

c1, c2, c3 = st.columns([1.4, 0.9, 0.6])
null = c1.selectbox("Null", NULLS, index=NULLS.index(DEFAULT_NULL), key="trust_null")
n_resamples = c2.select_slider("Resamples B", [200, 500, 1000, 2000], value=GRID_RESAMPLES,
                               key="trust_b", help="Shared by every cell of the grid")
alpha = c3.selectbox("α", [0.01, 0.05, 0.10], index=1, key="trust_alpha")
st.caption(f"**{null}** — {NULL_EXPLANATIONS[null]}")
subject = "the positive class" if audit.is_binary else f"class '{audit.classes[class_index]}'"
scope = ", ".join(features) if features else "the predictions alone"

st.header("Verdict over all bandwidths")
st.markdown(
    "The kernel bandwidths are the paper's main limitation, so the verdict does not rest on "
    "one choice: the test runs on a 5 × 5 grid around the median heuristic from the same "
    "resamples, and the **aggregated test** compares the largest standardised statistic over "
    "the grid with the same maximum over the resamples — a controlled level, no free choice."
)
grid_computation = "exact" if exact_requested("trust_grid", data.fingerprint) else "auto"
settings = TrustSettings(features, class_index, null, n_resamples, grid_computation)
record_section("trust", part, settings, alpha=alpha)
bar = st.progress(0.0, text="Bandwidth grid…")
grid = diagnostics.section(trust_section, data, settings,
                           lambda fraction, message: bar.progress(fraction, text=message))
bar.empty()
computation_note(grid.aggregated.parameters, "trust_grid", data.fingerprint)
verdict(grid.aggregated.p_value, alpha,
        reject=f"Not locally calibrated over {scope} for {subject}: the aggregated KLCE test "
               "rejects",
        accept=f"No evidence of local miscalibration over {scope} for {subject} at any "
               "bandwidth of the grid",
        notion=f"one-vs-rest, {part}, max over {grid.p_values.size} bandwidth pairs",
        n_resamples=grid.aggregated.n_resamples)
chart(p_value_heatmap_figure(grid.prob_bandwidths, grid.feature_bandwidths, grid.p_values,
                             alpha), key="trust_heatmap", title="KLCE p-values",
      caption=caption_text(notion="one-vs-rest", split=part, n=data.n,
                           bandwidths={"σ_p centre": grid.spec.prob_bandwidth,
                                       "σ_x centre": grid.spec.feature_bandwidth},
                           extra=f"features: {scope} · null: {null}, B = {grid.n_resamples}"))
st.caption(f"p-value at each bandwidth pair (outlined: ≤ α) from B = {grid.n_resamples} shared "
           "resamples; the grid's centre is the median heuristic.")
aggregated = grid.aggregated
chart(null_histogram_figure(aggregated.null, aggregated.statistic,
                            statistic_label="largest standardised KLCE² over the grid"),
      key="trust_null_hist", title="KLCE aggregated test: null and observed",
      caption=caption_text(notion="one-vs-rest", split=part, n=data.n,
                           extra=f"null: {null}, B = {grid.n_resamples}, "
                                 f"{p_text(aggregated.p_value, aggregated.n_resamples)}"))
st.caption("The verdict's statistic — the largest standardised KLCE² over the grid — beside its "
           f"null from the same {grid.n_resamples} resamples.")

st.header("At one bandwidth pair")
st.caption("Each pair is a cell of the grid above — the same statistic, resamples and seed — so "
           "the number here is the cell's, and moving a slider reads another cell.")


@st.fragment
def one_pair() -> None:
    """The grid's cell at the sliders' pair (a lookup: only this part reruns)."""
    s1, s2 = st.columns(2)
    factor_p = s1.select_slider(
        "Prediction bandwidth σ_p", GRID_FACTORS, value=1.0, key="trust_sigma_p",
        format_func=lambda f: f"{factor_label(f)} ({grid.spec.prob_bandwidth * f:.3g})",
        help="Multiples of the median heuristic (log scale).")
    factor_x = 1.0
    if features:
        factor_x = s2.select_slider(
            "Feature bandwidth σ_x", GRID_FACTORS, value=1.0, key="trust_sigma_x",
            format_func=lambda f: f"{factor_label(f)} ({grid.spec.feature_bandwidth * f:.3g})",
            help="Multiples of the median heuristic, in standard deviations of the features.")
    i = GRID_FACTORS.index(factor_p)
    j = GRID_FACTORS.index(factor_x) if grid.feature_bandwidths.size > 1 else 0
    p_value, statistic = float(grid.p_values[i, j]), float(grid.statistics[i, j])
    sigma_p, sigma_x = grid.prob_bandwidths[i], grid.feature_bandwidths[j]
    verdict(p_value, alpha,
            reject="At these bandwidths the KLCE test rejects local calibration",
            accept="At these bandwidths the KLCE test finds no evidence of local "
                   "miscalibration",
            notion=f"σ_p = {sigma_p:.3g}, σ_x = {sigma_x:.3g}; one cell of the grid, not "
                   "the verdict", n_resamples=grid.n_resamples)
    m1, m2, m3, m4 = st.columns(4)
    m1.metric("statistic", f"{statistic:.3g}",
              help="KLCE² at this pair, standardised over the null's variants when the null "
                   "combines several")
    m2.metric("p-value", format_p_value(p_value, grid.n_resamples),
              help="(1 + #null ≥ observed)/(1 + B), from the grid's shared resamples")
    m3.metric("σ_p", f"{sigma_p:.3g}")
    m4.metric("σ_x", f"{sigma_x:.3g}" if features else "— (kernel ≡ 1)")


one_pair()

with st.expander("How the default null was chosen"):
    st.markdown(
        "Each null was run on the paper's simulations (size: model calibrated; power: model "
        "blind to one feature) and on a model miscalibrated only globally. The default is the "
        "valid null with the best power across them."
    )
    if STUDY.exists():
        st.markdown(STUDY.read_text(encoding="utf-8"))
