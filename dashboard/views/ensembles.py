"""Ensembles page: is some convex combination of the members calibrated (credal-set test)?"""

from __future__ import annotations

import streamlit as st

from core.ensembles import (
    ENSEMBLE_ROWS,
    ESTIMATORS,
    NULL_LABELS,
    NULLS,
    WEIGHT_LABELS,
    WEIGHTS,
    CredalSettings,
    null_description,
    tested_rows,
)
from core.figures import (
    credal_p_values_figure,
    credal_weights_figure,
    credal_weights_map_figure,
    null_histogram_figure,
    reliability_grid,
)
from core.stattests import format_p_value
from dashboard.cache import diagnostics
from dashboard.cache import ensembles as ensemble_cache
from dashboard.components import chart, verdict
from dashboard.state import active_audit, cached_demo, set_credal_comparison

st.title("Ensembles")
st.caption(
    "Is the ensemble a trustworthy picture of what the model does not know? Its members span "
    "a credal set — every convex combination of their predictions. The test of Jürgens et "
    "al. asks whether some combination, with weights λ(x) that may change over the feature "
    "space, is calibrated; if none is, the truth cannot lie inside the set."
)
audit = active_audit()
sources = (["active dataset"] if audit.members is not None else []) + ["ensemble demo"]
source = st.radio("Ensemble", sources, horizontal=True, key="ens_source")
if audit.members is None:
    st.info("The active dataset has no ensemble member columns (map them on the Data page); "
            "the page uses the ensemble demo.", icon=":material/info:")
data = audit if source == "active dataset" else cached_demo("ensemble")

left, right = st.columns(2)
names = list(data.member_names)
chosen = left.multiselect("Members", names, default=names, key="ens_members")
features = tuple(right.multiselect(
    "Features the weights λ(x) may depend on", list(data.feature_frame.columns),
    default=list(data.feature_frame.columns), key="ens_features"))
if len(chosen) < 2:
    st.warning("Choose at least two members: a credal set needs two predictions to combine.",
               icon=":material/warning:")
    st.stop()
c1, c2, c3, c4 = st.columns([1, 1.6, 1, 0.6])
estimator = c1.selectbox("Estimator", list(ESTIMATORS), key="ens_estimator",
                         format_func=lambda k: ESTIMATORS[k].label)
headline = c2.selectbox("Test", WEIGHTS, format_func=WEIGHT_LABELS.get, key="ens_weights")
n_resamples = c3.select_slider("Resamples B", [50, 100, 200, 500], value=100, key="ens_b")
alpha = c4.selectbox("α", [0.01, 0.05, 0.10], index=1, key="ens_alpha")
st.caption(f"**{ESTIMATORS[estimator].label}** — {ESTIMATORS[estimator].description}")
null = st.selectbox(
    "Null distribution", NULLS, format_func=NULL_LABELS.get, key="ens_null_kind",
    help="Algorithm 1 holds the learned λ(x) fixed and resamples the test rows. It is "
         "liberal when λ(x) is learned from few rows: on the paper's binary simulations "
         "(400 rows to learn, 400 to test) it rejects a calibrated credal set about 10–13% of "
         "the time at α = 0.05, because the learned combination misses the calibrated one. "
         "'refit' repeats the whole procedure in every resample — labels of all rows redrawn "
         "from the learned combination, λ(x) learned again — so the null carries that error "
         "and the level holds (measured 0.03–0.07), at some power against a truth barely "
         "outside the set; it trains B more networks (a minute or more on a few thousand rows, "
         "with a progress bar).")

settings = CredalSettings(estimator=estimator, n_resamples=n_resamples, alpha=alpha,
                          null=null)
if data.n > ENSEMBLE_ROWS:
    st.info(f"The tests use a seeded sample of {ENSEMBLE_ROWS:,} of the "
            f"{data.n:,} rows (seed 0): the estimators' kernel densities grow with the square of "
            "the test rows.", icon=":material/speed:")
members = tuple(names.index(name) for name in chosen)
bar = st.progress(0.0, text="Preparing the credal-set tests…")
try:
    comparison = ensemble_cache.credal_comparison(
        data.fingerprint, members, features, settings, data,
        progress=lambda fraction, message: bar.progress(fraction, text=message))
except ValueError as err:
    bar.empty()
    st.error(str(err), icon=":material/error:")
    st.stop()
bar.empty()
if source == "active dataset":  # the Export page's report gets this comparison
    set_credal_comparison(audit.fingerprint, comparison)
result = comparison.results[headline]
n_test = result.rows.size

st.header("Verdict")
verdict(result.p_value, alpha,
        reject="No convex combination of the chosen members is calibrated: the credal-set "
               "test rejects",
        accept="Consistent with a calibrated credal set: the test finds no evidence against "
               "a calibrated combination",
        notion=f"{WEIGHT_LABELS[headline]}, {ESTIMATORS[estimator].label}, {null} null, "
               f"{n_test:,} test rows", n_resamples=result.n_resamples)
if headline == "learned" and null != "refit" and result.rejects(alpha):
    st.info("This null holds the learned λ(x) fixed; λ(x) learned from a few hundred rows "
            "misses the calibrated combination often enough to reject a calibrated credal set "
            "more often than α. Before concluding, rerun with the null 'the whole procedure "
            "again', which refits λ(x) in every resample.", icon=":material/info:")
m1, m2, m3, m4 = st.columns(4)
m1.metric(ESTIMATORS[estimator].label, f"{result.statistic:.3g}")
m2.metric("p-value", format_p_value(result.p_value, result.n_resamples),
          help=f"(1 + #null ≥ observed)/(1 + B); the paper's #null > observed / B: "
               f"{result.p_value_paper:.4f}")
m3.metric("members", f"{len(chosen)}")
parts = result.parameters
m4.metric("test rows", f"{n_test:,}",
          help=f"The rows are split at random: {parts['n_optimisation']:,} to learn λ(x), "
               f"{parts['n_validation']:,} to stop its training early, {n_test:,} to test.")
chart(null_histogram_figure(result.null, result.statistic,
                                      statistic_label=ESTIMATORS[estimator].label), key="ens_null")
st.caption(f"Null distribution from {n_resamples} resamples: "
           f"{null_description(null, headline)}, from the tested combination.")

st.header("The three tests")
table = comparison.table()
chart(credal_p_values_figure(table, alpha), key="ens_pvalues")
# fits a 1400-pixel window: the estimator is named above, the nulls under the table
st.dataframe(table.drop(columns=["weights", "estimator", "null"]), hide_index=True,
             width="stretch", column_config={
                 "test": st.column_config.TextColumn("test", width="large"),
                 "statistic": st.column_config.NumberColumn(
                     ESTIMATORS[estimator].label, format="%.4g"),
                 "p_value": st.column_config.NumberColumn("p-value", format="%.4f"),
                 "p_value_paper": st.column_config.NumberColumn(
                     "p (paper's)", format="%.4f",
                     help="#null > observed / B, as Jürgens et al. count")})
nulls = dict(zip(table["test"], table["null"], strict=True))
st.caption("All three test the same rows. The mean ignores the instance; the Dir(1)-sampled "
           "test (Mortier et al.) minimises over constant weights on the tested rows, which "
           "makes it conservative; the learned λ(x) is fitted on separate rows. Null: "
           + (next(iter(nulls.values())) if len(set(nulls.values())) == 1
              else "; ".join(f"{t}: {n}" for t, n in nulls.items())) + ".")

st.header("Which member is trusted where")
learned = comparison.results["learned"]
if learned.parameters.get("best_iteration") == 0:
    st.warning("The weight network never beat its starting point (the plain mean) on the "
               "validation rows, so the learned test is the mean test here: the validation "
               "labels could not tell the members' combinations apart.",
               icon=":material/info:")
shown_rows = tested_rows(data)[learned.rows]  # rows of the data
if features:
    picked = st.selectbox("Against feature", features, key="ens_feature")
    column = data.feature_matrix((picked,))[shown_rows]
    if column.shape[1] == 1:
        chart(credal_weights_figure(column[:, 0], learned.weights, chosen, picked),
              key="ens_weights_feature")
    else:
        st.caption(f"'{picked}' is categorical; see the map below.")
    if data.feature_matrix(features).shape[1] >= 2:
        bar = st.progress(0.0, text="Embedding the features…")
        embedding = diagnostics.embedding(data.fingerprint, features, "pca", data,
                                    progress=lambda f, m: bar.progress(f, text=m))
        bar.empty()
        chart(credal_weights_map_figure(embedding.coords[shown_rows],
                                                  learned.weights, chosen,
                                                  ("PCA 1", "PCA 2")), key="ens_weights_map")
        st.caption("Test rows on a PCA map of the standardised features, coloured by the "
                   "member with the largest learned weight (fainter: a closer call).")
else:
    st.info("No features chosen: the learned weights are one constant combination.",
            icon=":material/info:")

st.header("Reliability: ensemble mean and learned combination")
tables = ensemble_cache.reliability_tables(data.fingerprint, members, features, settings,
                                           comparison)
chart(reliability_grid(tables, columns=2), key="ens_reliability")
st.caption(f"Both on the {n_test:,} test rows, 10 equal-width bins.")

with st.expander("What a calibrated credal set means"):
    st.markdown(
        "An ensemble of M members predicts M probability vectors for each instance; their "
        "convex hull is a *credal set*, a set-valued statement of epistemic uncertainty. If it "
        "is valid, the true conditional distribution lies inside it everywhere. That cannot "
        "be checked directly from one label per instance, but a necessary condition can: "
        "some combination f_λ(x) = Σ_m λ_m(x) f_m(x), with weights on the simplex that may "
        "depend on x, must be **calibrated** — P(y | f_λ(x)) = f_λ(x). The test learns the "
        "most calibrated λ(x) on one part of the data (a small neural network trained with "
        "a proper score plus a calibration penalty, stopped early on a second part) and "
        "tests its calibration on the third with a consistency bootstrap (Jürgens et al., "
        "Algorithm 1). A rejection means no combination is calibrated: the set is too "
        "narrow or biased. Not rejecting is no proof of validity — calibration is necessary, "
        "not sufficient."
    )
