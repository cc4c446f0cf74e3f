"""Findings page: which slices of the data are miscalibrated, with a controlled error rate?"""

from __future__ import annotations

import streamlit as st

from core.audit import (
    FindingsSettings,
    LocalBiasSettings,
    lcb_section,
    slice_class,
    slice_lcb_points,
    slice_reliability,
    slice_section,
)
from core.figures import (
    caption_text,
    null_histogram_figure,
    slice_forest_figure,
    slice_lcb_figure,
    slice_reliability_figure,
    slice_treemap_figure,
)
from core.stattests import format_p_value
from dashboard.cache import diagnostics
from dashboard.components import analysis_part, chart
from dashboard.state import active_audit, record_section

RATES = {"fwer": "Family-wise (FWER)", "fdr": "False discovery rate (FDR)"}
COLUMNS = {"gap": st.column_config.NumberColumn("gap", format="%+.3f"),
           "ci_low": st.column_config.NumberColumn("interval from", format="%+.3f"),
           "ci_high": st.column_config.NumberColumn("to", format="%+.3f"),
           "observed": st.column_config.NumberColumn("observed", format="%.3f"),
           "predicted": st.column_config.NumberColumn("predicted", format="%.3f"),
           "p_adjusted": st.column_config.TextColumn("adjusted p")}

st.title("Findings: miscalibrated slices")
st.markdown(
    "**Which groups of rows does the model get wrong?** A flagged slice is a group — a level "
    "of a feature, a range of a number, or a combination of them — whose observed rate "
    "differs from the model's average prediction by more than chance allows. The error rate "
    "stated below holds for the whole list at once, so each flag can be acted on."
)
with st.expander("How this is computed"):
    st.markdown(
        "Every level of each feature and group, quantile ranges of each numeric feature and "
        "their intersections are tested for a gap between the observed rate and the mean "
        "prediction — all at once, so that the error rate stated below holds for the whole "
        "list, not for each slice alone. With the family-wise error rate (FWER), the adjusted "
        "p-values and the simultaneous intervals come from the Westfall–Young max-|T| "
        "step-down over B resamples; with the false discovery rate (FDR), from "
        "Benjamini–Hochberg, with intervals adjusted for the selection (false coverage rate, "
        "Benjamini–Yekutieli)."
    )
audit = active_audit()
data, part = analysis_part(audit, key="find_part")
known = [*audit.feature_frame.columns,
         *[g for g in audit.groups.columns if g not in audit.feature_frame.columns]]
left, right = st.columns([2, 1])
names = tuple(left.multiselect("Features and groups", known, default=known, key="find_columns"))
rate = right.radio("Error rate", list(RATES), format_func=RATES.get, key="find_error",
                   help="FWER: the chance that any flagged slice is a false alarm. FDR: the "
                        "expected share of false alarms among the flagged slices (flags "
                        "more, each flag is weaker evidence).")
c1, c2, c3, c4 = st.columns(4)
alpha = c1.selectbox("α", [0.01, 0.05, 0.10], index=1, key="find_alpha")
depth = c2.selectbox("Columns per slice", [1, 2, 3], index=1, key="find_depth")
ranges = c3.slider("Ranges per numeric column", 2, 8, 4, key="find_ranges")
resamples = c4.select_slider("Resamples B", [200, 500, 1000, 2000], value=1000, key="find_b")
notion = None if audit.is_binary else st.radio(
    "Classes", ["classwise", "top-label"], horizontal=True, key="find_notion",
    format_func={"classwise": "every class, one vs rest", "top-label": "top label"}.get)
settings = FindingsSettings(names, alpha, rate, ranges, depth, resamples, notion)
record_section("findings", part, settings)

bar = st.progress(0.0, text="Slices…")
result = diagnostics.section(slice_section, data, settings,
                             lambda fraction, text: bar.progress(fraction, text=text))
bar.empty()
st.info(result.statement(), icon=":material/rule:")
st.caption(result.family.describe() + f" Resamples ran on: {result.engine}.")
SHOWN = ["slice", *(["class"] if len(result.classes) > 1 else []), "rows", "observed",
         "predicted", "gap", "ci_low", "ci_high", "p_adjusted"]
# max-|T| adjusted p-values are resampling p-values: "≤ 1/(B+1)" at their floor
floor_b = result.n_resamples if result.error_rate == "fwer" else 0


def with_p_text(frame):
    return frame.assign(p_adjusted=[format_p_value(p, floor_b, 3) for p in frame["p_adjusted"]])


found = with_p_text(result.findings_view())
if len(found):
    st.error(result.summary(), icon=":material/flag:")
    st.dataframe(found[[*SHOWN, "listed"]], hide_index=True, width="stretch",
                 column_config={**COLUMNS, "listed": st.column_config.NumberColumn(
                     "listed under it", help="flagged slices whose gap this finding explains")})
else:
    # Neutral, not green: nothing flagged is not "calibrated" (issue 31).
    st.info(f"{result.summary()} {result.coverage()} Open **Trust test** in the sidebar for "
            "that test.", icon=":material/search_off:")
st.markdown(
    "**Reading a finding.** The model's rate is off on that slice by the gap, and the interval "
    "bounds how far — the size of the worst slice is not inflated by its being the worst. A "
    "flag does not say why (a feature the model lacks, a shifted population, label noise), "
    "and a slice that is **not** flagged is not shown to be calibrated: its interval says how "
    "large a gap the data still allow. Slices below the minimum size were not tested."
)
listed = with_p_text(result.significant[~result.significant["finding"]])
if len(listed):
    with st.expander(f"{len(listed)} flagged slices listed under a finding"):
        st.dataframe(listed[[*SHOWN, "listed_under"]], hide_index=True, width="stretch",
                     column_config=COLUMNS)
interval = ("simultaneous" if rate == "fwer" else "FCR-adjusted") + f" {1 - alpha:.0%} interval"
caption = caption_text(notion=result.notion, split=part, n=data.n,
                       extra=f"{result.n_tested:,} tests · {rate.upper()} at α = {alpha:g}")
if result.n_tested:
    st.header("Gaps and their intervals")
    chart(slice_forest_figure(result.table, interval=interval), key="find_forest",
          title="Slices: gap and interval", caption=caption)
    if any(s.depth for s in result.family.slices):
        st.header("The deepest slices")
        shown_class = result.classes[0] if len(result.classes) == 1 else st.selectbox(
            "Class", result.classes, key="find_tree_class")
        chart(slice_treemap_figure(result, shown_class), key="find_treemap",
              title="Slices: gaps of the deepest slices", caption=caption)
        st.caption("Each tile is a slice, coloured by its gap (red: the model underestimates "
                   "the rate; blue: it overestimates) and sized by the outcomes the model "
                   "misses there, rows × |gap|, so that a small slice with a large gap stays "
                   "visible; flagged slices (★, black outline) come first in each group.")

    st.header("Look closer at one slice")
    choices = list(zip(result.table["slice"], result.table["class"], strict=True))
    chosen = st.selectbox("Slice", range(len(choices)), key="find_slice",
                          format_func=lambda i: choices[i][0] + (
                              f" ({choices[i][1]})" if len(result.classes) > 1 else ""))
    name, class_name = choices[chosen]
    k = result.family.names.index(name)
    class_index = slice_class(result, class_name)
    inside_rel, rest_rel = slice_reliability(data, result.family.mask(k), result.notion,
                                             class_index)
    left, right = st.columns(2)
    with left:
        chart(slice_reliability_figure(inside_rel, rest_rel, name, result.notion),
              key="find_reliability", title=f"Reliability: {name}", caption=caption)
    with right:
        if result.notion == "top-label":
            st.caption("The LCB profile is one class against the rest; choose 'every class' "
                       "above to see it.")
        else:
            bias = diagnostics.section(lcb_section, audit, LocalBiasSettings(
                tuple(audit.feature_frame.columns), class_index),
                spinner="Estimating the local bias (LCB)…")
            how = bias.reference
            points, x_name = slice_lcb_points(audit, bias, result.family.slices[k], names)
            chart(slice_lcb_figure(points.dropna(subset=["lcb"]), x_name, name),
                  key="find_lcb", title=f"LCB profile: {name}",
                  caption=caption_text(notion="one-vs-rest", split=how, n=len(points)))
            st.caption(f"Local calibration bias of each row ({how}; cross-validated "
                       "bandwidths, as on the Local bias page); dotted lines: the mean inside "
                       "and outside the slice.")
    if rate == "fwer":
        with st.expander("The max-|T| null behind the adjusted p-values"):
            chart(null_histogram_figure(result.null_maxima,
                                        float(result.table["statistic"].abs().max()),
                                        statistic_label="largest |T| over the slices"),
                  key="find_null", title="Max-|T| null", caption=caption)
            st.caption(f"Critical value {result.critical_value:.2f}: a slice whose |T| exceeds "
                       "it has an interval that excludes 0.")
