"""Compare models page: a challenger against the champion on the same rows, paired inference."""

from __future__ import annotations

import streamlit as st

from core.audit import TrustSettings, audit_part, trust_section
from core.compare import CRITERIA, CRITERION_NAMES, CompareSettings, decide
from core.figures import (
    caption_text,
    differences_figure,
    dumbbell_figure,
    reliability_overlay_figure,
)
from core.report import build_comparison_report
from core.stattests import format_p_value
from dashboard.cache import compare as compare_cache
from dashboard.cache import diagnostics
from dashboard.components import chart
from dashboard.state import active_audit, export_file, set_export_file, set_model_comparison

# The tables fit a 1400-pixel window: numbers rounded, short headers; the long text of how
# each difference was tested is listed under the table instead of in a column.
TABLE_COLUMNS = {"name": "criterion", "value_a": "champion (A)", "value_b": "challenger (B)",
                 "difference": "B − A", "ci_low": "CI low", "ci_high": "CI high",
                 "p_value": "p-value"}
SLICE_COLUMNS = ["slice", "criterion", "rows", "value_a", "value_b", "difference", "ci_low",
                 "ci_high", "p_adjusted", "bias_a", "bias_b"]
SLICE_CONFIG = {
    "rows": st.column_config.NumberColumn("rows", format="%d"),
    **{key: st.column_config.NumberColumn(label, format="%.4f") for key, label in (
        ("value_a", "A"), ("value_b", "B"), ("difference", "B − A"), ("ci_low", "CI low"),
        ("ci_high", "CI high"), ("bias_a", "bias A"), ("bias_b", "bias B"))},
    "p_adjusted": st.column_config.NumberColumn("adj. p", format="%.4f",
                                                help="Adjusted by max-|T| over every group "
                                                     "and slice"),
    "p_value": st.column_config.NumberColumn("p", format="%.4f"),
}

@st.fragment
def report_download(result, settings: CompareSettings) -> None:
    """The page's sections as one self-contained HTML report (as `calibration-atlas compare`
    writes), in a fragment so that preparing it never reruns the page."""
    name = f"comparison-{settings.champion}-vs-{settings.challenger}.html"
    if st.button("Prepare the comparison report (HTML)", key="cmp_report"):
        with st.spinner("Drawing the figures and writing the report…"):
            report = build_comparison_report(result, audit, settings, pdf=False)
        set_export_file("cmp_report", name, report.html.encode())
    prepared = export_file("cmp_report")
    if prepared is not None and prepared[0] == name:
        st.download_button(f"Download {name}", prepared[1], file_name=name, mime="text/html",
                           on_click="ignore", key="cmp_report_download",
                           icon=":material/download:")


st.title("Compare models")
st.caption("Is the challenger better calibrated than the champion — for everyone and for every "
           "group? Both models' predictions on the same rows, compared with paired tests.")
audit = active_audit()
names = list(audit.model_names)
if len(names) < 2:
    st.info("This table has one model's predictions. To compare models, load a table with "
            "several prediction sets — on the Data page's upload tab, map the other models' "
            "probability columns under *Other models' probability columns* (a binary table "
            "with `p_prod, p_new` is recognised) — or use the census demo, which has a "
            "challenger model.", icon=":material/info:")
    st.stop()

with st.form("compare_form"):
    c1, c2, c3 = st.columns(3)
    champion = c1.selectbox("Champion (A)", names, index=names.index(audit.model),
                            key="cmp_champion")
    others = [n for n in names if n != champion] or names
    challenger = c2.selectbox("Challenger (B)", others, key="cmp_challenger")
    parts = ["test", "all"] if audit.split is not None and (audit.split == "test").any() \
        else ["all"]
    part = c3.radio("Rows", parts, horizontal=True, key="cmp_part",
                    format_func=lambda p: "test split" if p == "test" else "all rows")
    feature_names = list(audit.feature_frame.columns)
    features = st.multiselect("Audit features (KLCE kernel and feature slices)", feature_names,
                              default=feature_names, key="cmp_features")
    c4, c5, c6, c7 = st.columns(4)
    criteria = c4.multiselect("Criteria", CRITERIA, default=list(CRITERIA), key="cmp_criteria",
                              format_func=CRITERION_NAMES.get)
    alpha = c5.select_slider("Level α", (0.01, 0.05, 0.1), value=0.05, key="cmp_alpha")
    n_resamples = c6.select_slider("Bootstrap draws B", (100, 200, 500, 1000), value=200,
                                   key="cmp_b")
    seed = c7.number_input("Seed", 0, 10_000, 0, key="cmp_seed")
    st.form_submit_button("Compare", type="primary")

if champion == challenger:
    st.warning("Choose two different models.", icon=":material/warning:")
    st.stop()
if not criteria:
    st.warning("Choose at least one criterion.", icon=":material/warning:")
    st.stop()
settings = CompareSettings(challenger=challenger, champion=champion, features=tuple(features),
                           part=part, alpha=float(alpha), criteria=tuple(criteria),
                           n_resamples=int(n_resamples), seed=int(seed))
bar = st.progress(0.0, text="Comparing the models…")
result = compare_cache.comparison(audit, settings, lambda f, m: bar.progress(min(f, 1.0), m))
set_model_comparison(audit.fingerprint, result)
bar.empty()

worse = result.worse(criteria)
bad_slices = result.worse_slices()
decision = decide(result)
st.markdown(f"### **{decision.headline}**")
st.markdown("\n".join(f"- {reason}" for reason in decision.reasons))
st.caption(f"Rule: {decision.rule}")
box = st.error if worse or not bad_slices.empty else st.success
with st.expander("The full verdict"):
    box(result.verdict, icon=":material/balance:")
caption = caption_text(notion=result.parameters["notion"], split=part, n=result.n,
                       extra=f"{champion} (A) vs {challenger} (B), α = {alpha:g}")

st.subheader("Paired differences (challenger − champion)")
st.dataframe(result.table[list(TABLE_COLUMNS)].rename(columns=TABLE_COLUMNS), width="stretch",
             hide_index=True, column_config={
                 k: st.column_config.NumberColumn(format="%.4g") for k in
                 ("champion (A)", "challenger (B)", "B − A", "CI low", "CI high", "p-value")})
with st.expander("How each difference was tested"):
    st.markdown("\n".join(f"- **{name}**: {method}" for name, method in zip(
        result.table["name"], result.table["method"], strict=True)))
st.caption(f"Intervals are {1 - alpha:.0%} intervals; every criterion is a loss, so a negative "
           "difference favours the challenger. Brier and log loss: Diebold–Mariano test of the "
           "per-row differences (rows independent, no lag window). ECE² (debiased, the same "
           f"{result.parameters['n_bins']} equal-width bins for both), smooth ECE² and KLCE²: "
           "unbiased squared calibration errors (0 for a calibrated model, however sharp), "
           "their difference tested by a studentised wild bootstrap. Measured levels and "
           "power: README, *Comparing models*.")
chart(differences_figure(result.table, result.alpha), key="cmp_differences", caption=caption,
      title="Paired differences")
st.markdown("**Each model's local calibration** — the Trust page's verdict (the aggregated "
            "KLCE test over its 5 × 5 bandwidth grid) for each model on these rows")
trust = TrustSettings(tuple(features))
lines = []
for role, name in (("champion (A)", champion), ("challenger (B)", challenger)):
    rows, _ = audit_part(audit.with_model(name), part)
    grid = diagnostics.section(trust_section, rows, trust,
                               spinner=f"Trust test of {name}…").aggregated
    answer = (f"not locally calibrated at α = {alpha:g}" if grid.p_value <= alpha
              else f"no evidence of local miscalibration at α = {alpha:g}")
    lines.append(f"- **{name}** — {role}: {answer} (aggregated KLCE "
                 f"p = {format_p_value(grid.p_value, grid.n_resamples)})")
st.markdown("\n".join(lines))
if not result.klce_tests.empty:
    with st.expander("Each model's KLCE test at the comparison's one kernel"):
        # each model's test ran with the comparison's B: "≤ 1/(B+1)" at the floor
        st.dataframe(result.klce_tests.assign(p_value=[
            format_p_value(p, settings.n_resamples) for p in result.klce_tests["p_value"]]),
            width="stretch", hide_index=True,
            column_config={"klce": st.column_config.NumberColumn("KLCE²", format="%.4g")})
        st.caption(f"On the comparison's {result.parameters['klce_rows']:,} kernel rows at the "
                   "median-heuristic bandwidths of the champion, exact, B as above: the kernel "
                   "of the KLCE² difference above. It is one bandwidth pair, so it can differ "
                   "from the Trust page's verdict over the whole grid, which is the answer.")

st.subheader("Reliability, both models on the same bins")
chart(reliability_overlay_figure(result), key="cmp_reliability", caption=caption,
      title="Reliability of both models")

st.subheader("Per group: champion → challenger")
if result.groups.empty:
    st.info("No group attributes are mapped; map some on the Data page to compare the models "
            "group by group.", icon=":material/info:")
else:
    criterion = st.radio("Score", ("brier", "log_loss"), horizontal=True, key="cmp_dumbbell",
                         format_func=CRITERION_NAMES.get)
    chart(dumbbell_figure(result, criterion), key="cmp_dumbbell_chart", caption=caption,
          title="Per-group comparison")
    st.caption("Blue circle: champion; diamond: challenger, red where it is significantly worse "
               "and green where better after max-|T| adjustment over every group and slice "
               "below (family-wise error ≈ α).")

st.subheader("Where the challenger is worse")
if bad_slices.empty:
    st.success(f"In none of the {result.slices['slice'].nunique()} groups and slices compared "
               "is the challenger significantly worse.", icon=":material/check_circle:")
else:
    st.dataframe(bad_slices[SLICE_COLUMNS], width="stretch", hide_index=True,
                 column_config=SLICE_CONFIG)
    st.caption("Simultaneous intervals and adjusted p-values (max-|T| over all slices). "
               "bias = observed − predicted in the slice, for each model.")
with st.expander("Every group and slice compared"):
    st.dataframe(result.slices[[*SLICE_COLUMNS, "p_value", "direction"]].replace(
        {"direction": {"no significant difference": "not significant"}}), width="stretch",
        hide_index=True, column_config=SLICE_CONFIG)
report_download(result, settings)
