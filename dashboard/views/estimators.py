"""Estimators page: which calibration-error number to trust (Gruber & Bach's MSE risk)."""

from __future__ import annotations

import streamlit as st

from core.estimators import NOTIONS, SelectionSettings, summary_lines
from core.figures import estimator_curves_figure, estimator_estimates_figure, estimator_risk_figure
from dashboard.cache import estimators as estimator_cache
from dashboard.components import analysis_part, chart
from dashboard.state import active_audit

#: Larger data is cross-validated on a seeded subsample of this many rows.
MAX_ROWS = 20_000
NOTION_HELP = {
    "top-label": "confidence of the predicted class against whether it was right (TCE₂²)",
    "canonical": "the whole probability vector against the one-hot label (CCE₂²)",
}

st.title("Estimators")
st.markdown(
    "**Different ways of measuring calibration error give different numbers on the same "
    "data: which one should be reported?** Each way is scored by how well it predicts rows "
    "it was not fitted on, and the best-scored one gives the number. When the scores are "
    "within their error bars, the ways are equally good and the spread of their numbers is "
    "the honest uncertainty."
)
with st.expander("How this is computed"):
    st.markdown(
        "Binned, kernel-density and kernel-ridge estimators give different calibration errors "
        "on the same data. Each is the mean of a function h(p, p′) that predicts the pair "
        "targets ⟨p − e_y, p′ − e_y′⟩; its mean-squared error on held-out pairs (Gruber & "
        "Bach, eq. 20) says how far to trust it. Hyperparameters are chosen by cross-validated "
        "risk and the chosen estimator's CE² is computed on a held-out test part (eq. 21). The "
        "hyperparameter grids are those of Gruber & Bach's Appendix B."
    )
audit = active_audit()
data, part = analysis_part(audit, key="est_part")

c1, c2, c3 = st.columns([1.4, 1.0, 1.2])
notion = c1.radio("Calibration notion", NOTIONS, horizontal=True, key="est_notion",
                  help="; ".join(f"{k}: {v}" for k, v in NOTION_HELP.items()))
folds = c2.select_slider("Cross-validation folds", [3, 5, 10], value=5, key="est_folds")
fit_rows = c3.select_slider(
    "Training rows per kernel fit", [500, 1000, 2000, 4000], value=1000, key="est_fit_rows",
    help="The kernel estimators (density ratio, kernel ridge) cost training rows × evaluated "
         "rows per grid value; binning always uses every training row.")
settings = SelectionSettings(notion=notion, folds=folds, max_fit_rows=fit_rows,
                             max_rows=MAX_ROWS)
st.caption(
    f"Notion: **{notion}** — {NOTION_HELP[notion]}. Rows: **{data.n:,}** ({part}); 20% are "
    f"held out for the estimate, the rest split into {folds} folds. Cost: every estimator is "
    "fitted at every value of its grid (20 bin counts, 20 bandwidths, 9–18 ridge "
    "constants) in every fold — seconds for a few thousand rows; the kernel estimators use at "
    f"most {fit_rows:,} training rows per fit and data beyond {MAX_ROWS:,} rows is subsampled."
)

bar = st.progress(0.0, text="Cross-validating the estimators…")
try:
    selection = estimator_cache.selection(
        data.fingerprint, settings, data,
        progress=lambda fraction, message: bar.progress(fraction, text=message))
except ValueError as error:  # too few rows for the folds, a single class in the rows, …
    bar.empty()
    st.warning(f"The estimators cannot be compared on these rows: {error}",
               icon=":material/warning:")
    st.stop()
bar.empty()
if selection.n_total > selection.n_rows:
    st.info(f"The data has {selection.n_total:,} rows; the estimators were compared on a "
            f"seeded subsample of {selection.n_rows:,}.", icon=":material/filter_alt:")
if selection.subsampled:
    st.info(f"The kernel estimators were fitted on {fit_rows:,} randomly chosen training rows "
            "per fold (binning on all of them); validation and test use every row.",
            icon=":material/filter_alt:")

lines = summary_lines(selection)
st.success(lines[0], icon=":material/check_circle:")
for line in lines[1:]:
    st.markdown(f"- {line}")

st.header("Validation risk")
chart(estimator_risk_figure(selection.table), key="est_risk")
st.caption(
    f"Risk of each estimator at its chosen hyperparameter, averaged over the {folds} "
    "validation folds (dark: the selected one). The risk includes the label noise every "
    "estimator shares, so its level means little; the paired differences on the right show "
    "whether an estimator is really worse."
    + (" ‘binning, fixed’ is the common default of 15 bins, run through the same pipeline."
       if notion == "top-label" else "")
)

st.header("Risk over each hyperparameter grid")
chart(estimator_curves_figure(selection.curves, selection.table),
                key="est_curves")
st.caption("Mean validation risk ± 1 standard error over the folds; the star marks the "
           "chosen value. A flat curve means the data cannot tell the settings apart.")

st.header("Calibration estimates")
table = estimator_cache.estimates(data.fingerprint, settings, selection, data)
chart(estimator_estimates_figure(table), key="est_estimates")
st.dataframe(table, width="stretch", hide_index=True, column_config={
    **{c: st.column_config.NumberColumn(format="%.5f")
       for c in ("ce2", "ce2_se", "risk", "risk_se")},
    "ce": st.column_config.NumberColumn("√CE²", format="%.4f"),
})
st.caption(
    "CE² of each estimator on the test part (± 1 standard error over its fold fits), and the "
    "binned ECE² the Reliability page shows on all rows: the plug-in ECE₂² is biased upward "
    "by about Σ_b ȳ_b(1 − ȳ_b)/n, the debiased value corrects that but keeps the binning. "
    + ("These binned values measure the top-label notion; binning has no canonical form."
       if notion == "canonical" else "")
)

with st.expander("How to read this page"):
    st.markdown(
        "Trust the estimate whose risk is lowest, but only as far as the error bars allow: "
        "when the paired risk differences are within their standard errors the estimators "
        "are equally good, and the spread of their estimates is the honest uncertainty of "
        "the calibration error. Never pick an estimator by its estimate or by a risk on the "
        "test part — that reuses the rows the estimate is computed on (§3.2.2)."
    )
