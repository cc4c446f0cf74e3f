"""Reliability page: is the model calibrated overall, and within each group?"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from core.audit import (
    EXTENDED_RESAMPLES,
    ReliabilitySettings,
    binned_table,
    cumulative_curve,
    default_bootstrap,
    extended_rows,
    group_tables,
    resolved,
    skce_computation,
    skce_exact_seconds,
    smooth_curve,
    summary_metrics,
    test_results,
    tests_table,
)
from core.figures import (
    CUMULATIVE_POINTS,
    caption_text,
    cumulative_figure,
    reliability_figure,
    reliability_grid,
    smooth_reliability_figure,
)
from core.metrics import ESTIMATE_CAPTION, SIGNED_METRICS, shown_metrics
from dashboard.cache import diagnostics
from dashboard.components import analysis_part, chart, computation_note, verdict
from dashboard.state import active_audit, exact_requested, record_section

NOTION_HELP = {
    "positive": "P(y = positive class) against the positive outcome",
    "top-label": "confidence of the predicted class against whether it was right",
    "classwise": "one class's probability against whether that class occurred",
}
ALPHA = 0.05
TEST_RESAMPLES = 500

st.title("Reliability")
st.caption(
    "Global calibration: does an event predicted with probability p happen a fraction p of "
    "the time? Binned, smooth and cumulative diagrams, metrics with intervals, and tests."
)
audit = active_audit()
data, part = analysis_part(audit, key="rel_part")

notions = ["positive", "top-label"] if audit.is_binary else ["top-label", "classwise"]
c1, c2, c3, c4, c5 = st.columns([1.3, 1.1, 0.9, 1.1, 1.0])
notion = c1.selectbox("Calibration notion", notions, key="rel_notion",
                      help="; ".join(f"{k}: {v}" for k, v in NOTION_HELP.items()))
class_index = None
if notion == "classwise":
    class_index = c2.selectbox("Class", range(audit.n_classes),
                               format_func=lambda i: audit.classes[i], key="rel_class")
n_bins = c3.slider("Bins", 5, 30, 15, key="rel_bins")
strategy = c4.radio("Bins of", ["uniform", "quantile"], horizontal=True, key="rel_strategy",
                    format_func={"uniform": "equal width", "quantile": "equal mass"}.get)
interval = c5.radio("Interval", ["wilson", "jeffreys"], horizontal=True, key="rel_interval",
                    format_func=str.capitalize)
class_name = audit.classes[class_index] if class_index is not None else None
skce_mode = "exact" if exact_requested("rel_skce", data.fingerprint) else "auto"
st.caption(f"Notion: **{notion}** — {NOTION_HELP[notion]}. Rows: **{data.n:,}** ({part}).")

# the diagrams, then the metrics table under them at the page's full width: its five columns
# ("≈ 0 (below the noise)", intervals, the notion) do not fit beside a diagram at 1400 pixels
diagrams, numbers = st.container(), st.container()
with numbers:
    b1, b2, _ = st.columns([1, 1, 1])
    n_boot = b1.select_slider("Bootstrap resamples", [50, 100, 200, 500, 1000],
                              value=default_bootstrap(data.n), key="rel_boot",
                              help="Default 200; 50 above 100,000 rows, where every resample "
                                   "is a pass over all rows and the intervals are narrow.")
    method = b2.radio("Bootstrap interval", ["basic", "percentile"], horizontal=True,
                      key="rel_boot_method",
                      help="basic: corrects the upward bias of binned errors (default); "
                           "percentile: the quantiles of the resampled values.")
settings = resolved(data, ReliabilitySettings(
    notion, class_index, n_bins, strategy, interval, n_boot, method, TEST_RESAMPLES,
    computation=skce_mode))
record_section("reliability", part, settings)
with diagrams:
    binned, smooth, cumulative = st.tabs(["Binned", "Smooth", "Cumulative differences"])
    table = diagnostics.section(binned_table, data, settings)
    with binned:
        chart(reliability_figure(table, class_name=class_name), key="rel_diagram",
              caption=caption_text(notion=notion, split=part, n=data.n))
    empty = int((table["count"] == 0).sum())
    if empty:
        binned.caption(f"{empty} of {len(table)} bins hold no rows and are not drawn.")
    diagram = diagnostics.section(smooth_curve, data, settings,
                                  spinner="Smoothing the reliability curve…")
    with smooth:
        chart(smooth_reliability_figure(diagram, class_name=class_name), key="rel_smooth",
              caption=caption_text(notion=notion, split=part, n=data.n))
    smooth.caption("Kernel-smoothed curve (Błasiok & Nakkiran 2023), no bins: reflected "
                   f"Gaussian kernel, bandwidth σ = {diagram.bandwidth:.4f} chosen where "
                   "smECE = σ; the width follows the density of predictions; band: "
                   f"{diagram.n_resamples} bootstrap resamples.")
    path = diagnostics.section(cumulative_curve, data, settings)
    with cumulative:
        chart(cumulative_figure(path, class_name=class_name), key="rel_cumulative",
              caption=caption_text(notion=notion, split=part, n=data.n))
    cumulative.caption("Rows sorted by prediction (Arrieta-Ibarra et al. 2022): where the path "
                       "rises the outcomes exceed the predictions, where it falls they are "
                       "below; a steady slope outside the shaded ±2σ range is miscalibration."
                       + (f" Drawn with about {CUMULATIVE_POINTS:,} of the {path.fraction.size:,} "
                          "points: the lowest and highest point of every stretch are kept, so "
                          "the KS and Kuiper extremes show." if path.fraction.size >
                          CUMULATIVE_POINTS else ""))
with numbers:
    summary = pd.concat([
        diagnostics.section(summary_metrics, data, settings,
                            spinner="Bootstrapping the metrics…"),
        diagnostics.section(extended_rows, data, settings,
                            spinner="Bootstrapping the smooth and curve-based metrics…"),
    ], ignore_index=True)
    shown = shown_metrics(summary)
    st.dataframe(shown, width="stretch", hide_index=True,
                 column_config={"value": st.column_config.NumberColumn(
                     "plug-in value", format="%.4f",
                     help="The estimator on the data, before the bias correction")})
    below = [f"{m} {e:+.4f}" for m, e in zip(summary["metric"], summary["estimate"],
                                             strict=True)
             if e < 0 and m not in SIGNED_METRICS]
    st.caption(ESTIMATE_CAPTION + (f" Below the noise (raw bias-corrected values): "
                                   f"{'; '.join(below)}." if below else ""))
    st.caption(
        f"{n_boot} bootstrap resamples ({min(n_boot, EXTENDED_RESAMPLES)} for the rows from "
        f"Smooth ECE on; Wald for slope and intercept), {method} 95% intervals for the "
        "population value"
        + (". Binned errors are biased upward, so a basic interval and its bias-corrected "
           "estimate can lie below the plug-in value." if method == "basic" else
           "; for binned errors these sit above the population value.")
    )
    with st.expander("What the metrics mean"):
        for _, row in summary.iterrows():
            st.markdown(f"**{row['metric']}** — {row['description']}")

st.header("Calibration tests")
tests = diagnostics.section(test_results, data, settings,
                            spinner="Running the calibration tests…")
consistency = tests["consistency"]
verdict(consistency.p_value, ALPHA,
        reject="The SKCE consistency test rejects calibration",
        accept="The SKCE consistency test finds no evidence of miscalibration",
        notion="canonical", n_resamples=consistency.n_resamples)
st.dataframe(tests_table(tests, notion), width="stretch", hide_index=True,
             column_config={"statistic": st.column_config.NumberColumn(format="%.4g")})
st.caption(
    f"SKCE bandwidth σ = {consistency.parameters['bandwidth']:.3g} (median heuristic). "
    "p-values of resampling tests are (1 + #{null ≥ observed}) / (1 + B)."
)
computation_note(skce_computation(summary, tests), "rel_skce", data.fingerprint,
                 skce_exact_seconds(data.n, audit.n_classes, n_boot, TEST_RESAMPLES))


st.header("By group")
if audit.groups.shape[1] == 0:
    st.info("Map group attributes on the Data page to see these diagnostics per group.",
            icon=":material/groups:")
else:
    group = st.selectbox("Group attribute", list(audit.groups.columns), key="rel_group")
    group_bins = min(n_bins, settings.group_bins)
    summary, tables = diagnostics.section(group_tables, data, settings,
                                          spinner="Computing per-group diagnostics…")[group]
    measured = summary.dropna(subset=["mce"])
    if len(measured):
        worst = measured.loc[measured["mce"].idxmax()]
        st.markdown(
            f"Largest group-wise MCE ({notion}): **{worst['mce']:.3f}** in "
            f"**{worst['group']}** ({int(worst['rows']):,} rows)."
        )
    chart(reliability_grid(tables, class_name=class_name),
                    key="rel_grid")
    st.dataframe(summary, width="stretch", hide_index=True, column_config={
        "share": st.column_config.NumberColumn(format="%.3f"),
        **{c: st.column_config.NumberColumn(format="%.4f")
           for c in ("mean_confidence", "observed_frequency", "ece", "mce", "brier")},
        "hosmer_lemeshow_p": st.column_config.NumberColumn("Hosmer–Lemeshow p", format="%.4f"),
    })
    st.caption(f"{group_bins} bins per group; groups with fewer than 30 rows are listed "
               "without metrics.")
