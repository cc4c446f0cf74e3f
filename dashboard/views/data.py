"""Data page: choose a demo, upload a table, or train a reference model; inspect the result."""

from __future__ import annotations

from dataclasses import dataclass, replace

import pandas as pd
import streamlit as st

from core.data import (
    DEMOS,
    REFERENCE_MODELS,
    SUPPORTED_SUFFIXES,
    AuditData,
    ColumnGuess,
    ColumnMapping,
    DataError,
    FeatureScreen,
    LeftOut,
    LoadedTable,
    ValidationNote,
    check_limits,
    compas_like_frame,
    deduplicate_columns,
    default_model_features,
    demo_mapping,
    group_member_columns,
    guess_columns,
    model_name,
    read_table,
    summarise_columns,
    train_reference_model,
)
from core.figures import class_balance_figure
from core.report import csv_text
from dashboard.components import chart, validation_report
from dashboard.state import (
    OPEN_TRAIN,
    UPLOAD_WIDGET,
    active_audit,
    active_source,
    cached_demo,
    cached_demo_frame,
    last_upload,
    reference_form_key,
    remember_upload,
    set_active,
    settings,
    store_raw_upload,
    upload_key,
)
from dashboard.workspace import Recipe

NONE = "(none)"
AUTOMATIC = "(automatic)"
TABS = ("Demo data", "Upload a table", "Train a reference model")
#: The tab the page itself opened (a raw upload opens the Train tab); ``None``: the first.
OPENED_TAB = "data_tab"
#: How many times the page has opened a tab itself: part of the tabs' key, so each opening is
#: a new element that shows its ``default`` tab, while the visitor's own clicks stay in the
#: browser.
TAB_OPENINGS = "data_tab_openings"
PREVIEW_ROWS = 500
EXAMPLE_CSV = """y,p,age,sex,race
1,0.81,34,female,Black
0,0.12,51,male,White
0,0.35,29,female,Hispanic"""


@st.cache_data(show_spinner="Reading the file…", max_entries=8)
def cached_read(content: bytes, name: str) -> LoadedTable:
    return read_table(content, name)


@st.cache_data(show_spinner="Checking which columns a model may learn from…", max_entries=16)
def cached_screen(source_key: str, label: str, seed: int, _frame: pd.DataFrame) -> FeatureScreen:
    """The default model features of a raw table (leaks, identifiers, dates left out), keyed
    by the table's key (its file hash or demo name), the label and the split seed."""
    return default_model_features(_frame, label, seed=seed)


def overview_link() -> None:
    """Under a table just made active: the way to its verdicts."""
    st.page_link("views/overview.py", label="See the verdicts on this table",
                 icon=":material/fact_check:")


def demo_tab() -> None:
    keys = list(DEMOS)
    key = st.selectbox(
        "Demo dataset", keys, format_func=lambda k: DEMOS[k].title, key="demo_choice",
    )
    st.markdown(DEMOS[key].description)
    with st.expander("What was planted"):
        st.markdown(DEMOS[key].planted)
    source = f"demo: {DEMOS[key].title}"
    if active_source() == source:
        st.caption("This demo is the active dataset.")
    elif st.button("Use this demo", type="primary", key="use_demo"):
        set_active(cached_demo(key), source, recipe=Recipe.demo(key, source))
        st.success(f"Now auditing the demo “{DEMOS[key].title}”.")
        overview_link()


def upload_tab() -> None:
    uploaded = st.file_uploader(
        "Upload a table (CSV, TSV or Parquet)",
        type=[s.lstrip(".") for s in SUPPORTED_SUFFIXES], key=UPLOAD_WIDGET,
    )
    if uploaded is None:
        st.markdown(
            "One row per prediction. Needed: a **label** column (integers or class names) and "
            "the model's **predicted probabilities** — one column with P(y = 1) for a binary "
            "model, or one column per class (`p_cat`, `p_dog`, …) — or logits. Optional: the "
            "**audit features** to test local calibration on (numeric or categorical), "
            "**group** attributes, a **split** column (train / calibration / test). Example:"
        )
        st.code(EXAMPLE_CSV, language="text")
        return
    limits = settings()
    try:
        check_limits(uploaded.getvalue(), uploaded.name, limits.max_megabytes, limits.max_rows)
        table = cached_read(uploaded.getvalue(), uploaded.name)
    except DataError as error:
        st.error(str(error), icon=":material/error:")
        return
    file_key = upload_key(uploaded.getvalue())
    new_file = last_upload() is None or last_upload()[1] != file_key
    remember_upload(table, file_key)
    frame = table.frame
    st.caption(f"Read {len(frame):,} rows × {frame.shape[1]} columns from {table.source}.")
    for note in table.notes:
        st.info(note, icon=":material/info:")
    if not cached_guess(file_key, frame).probs:
        # a raw table: no predictions to audit yet, its place is the Train tab
        if new_file:
            store_raw_upload(uploaded.name, uploaded.getvalue())
            st.session_state[OPEN_TRAIN] = True
            st.rerun()
        st.info(f"**{uploaded.name}** has no column of predicted probabilities or logits: it "
                "is a raw table. Train a reference model on it in the **Train a reference "
                "model** tab, where it is the chosen raw table.", icon=":material/model_training:")
        return
    st.dataframe(frame.head(20), width="stretch", hide_index=True)

    mapping = mapping_form(frame, f"map_{file_key}")
    if st.button("Validate and use this table", type="primary", key="use_upload"):
        source = f"upload: {uploaded.name}"
        activate(frame, mapping, uploaded.name, source, table.notes,
                 Recipe("upload", uploaded.name, source, mapping, uploaded.getvalue()))


def mapping_form(frame, key: str) -> ColumnMapping:
    """Widgets mapping columns to roles, pre-filled with :func:`guess_columns`."""
    guess = guess_columns(frame)
    columns = [str(c) for c in frame.columns]
    left, right = st.columns(2)
    with left:
        label = st.selectbox(
            "Label column", columns,
            index=columns.index(guess.label) if guess.label in columns else 0, key=f"{key}_label",
        )
        probs = st.multiselect(
            "Probability columns (one for binary P(y=1), or one per class)", columns,
            default=list(guess.probs), key=f"{key}_probs",
        )
        logits = st.checkbox(
            "These columns hold logits (log-odds or unnormalised scores)", value=guess.logits,
            key=f"{key}_logits",
        )
        positive = AUTOMATIC
        if len(probs) <= 2 and label in columns:
            values = sorted(frame[label].dropna().astype(str).unique())[:20]
            positive = st.selectbox(
                "Positive class (the event the probability refers to)", [AUTOMATIC, *values],
                key=f"{key}_positive",
            )
    with right:
        features = st.multiselect(
            "Audit features (local calibration is tested over these)", columns,
            default=list(guess.features), key=f"{key}_features",
        )
        if guess.features_note:
            st.caption(guess.features_note)
        groups = st.multiselect(
            "Group attributes (for per-group diagnostics)", columns,
            default=list(guess.groups), key=f"{key}_groups",
        )
        split = st.selectbox(
            "Split column (train / calibration / test)", [NONE, *columns],
            index=1 + columns.index(guess.split) if guess.split else 0, key=f"{key}_split",
        )
        time = st.selectbox(  # the Over time page monitors the table along this column
            "Time column (when each outcome was observed; optional)", [NONE, *columns],
            key=f"{key}_time",
            help="Dates, timestamps, ISO weeks (2026-W41), quarters (2026-Q3) or ordered "
                 "period labels; the Over time page monitors calibration along it.")
        members = st.multiselect(
            "Ensemble member columns (optional)", columns, default=list(guess.members),
            key=f"{key}_members",
        )
        models = st.multiselect(
            "Other models' probability columns (optional)", columns,
            default=list(guess.models), key=f"{key}_models",
            help="Predictions of other models on the same rows, to compare on the Compare "
                 "models page or audit instead (sidebar): one column per model for a binary "
                 "label (named after the column), or one column per class per model, in the "
                 "class order above, named by their common prefix (b_cat, b_dog → b).",
        )
    return ColumnMapping(
        label=label, probs=tuple(probs), logits=logits,
        positive=None if positive == AUTOMATIC else positive,
        features=tuple(features), groups=tuple(groups),
        split=None if split == NONE else split, time=None if time == NONE else time,
        members=group_member_columns(members, max(len(probs), 2)),
        models=tuple((model_name(cols), cols)
                     for cols in group_member_columns(models, max(len(probs), 2))),
    )


def activate(frame, mapping: ColumnMapping, name: str, source: str,
             read_notes: tuple[str, ...] = (), recipe: Recipe | None = None,
             warnings: tuple[str, ...] = ()) -> None:
    """Validate and make active; what was done before validation (the reader's repairs such
    as repeated headers, the reference model's training and its warnings) opens the
    validation report. ``recipe`` is how the table is stored for a reload (default: the
    validated columns)."""
    if not mapping.probs:
        st.error("Choose at least one probability column.", icon=":material/error:")
        return
    try:
        audit = AuditData.from_mapping(frame, mapping, name=name)
    except DataError as error:
        st.error(str(error), icon=":material/error:")
        return
    notes = tuple(ValidationNote("warning", w, "leakage") for w in warnings) + \
        tuple(ValidationNote("info", n) for n in read_notes)
    set_active(replace(audit, report=notes + audit.report), source, recipe=recipe, notes=notes)
    st.success(f"Now auditing {name}: {audit.n:,} rows passed validation.")
    overview_link()


@dataclass(frozen=True)
class RawSource:
    """A raw table for the reference-model workflow, its key and its default column roles."""

    key: str
    frame: pd.DataFrame
    label: str | None
    audit_features: tuple[str, ...]
    groups: tuple[str, ...]
    audit_note: str | None = None


@st.cache_data(show_spinner=False)
def compas_raw() -> pd.DataFrame:
    """The generated COMPAS-shaped raw table, its repeated names resolved as on upload."""
    return deduplicate_columns(compas_like_frame()).frame


@st.cache_data(show_spinner=False, max_entries=8)
def cached_guess(key: str, _frame: pd.DataFrame) -> ColumnGuess:
    """The guessed roles of a raw table, once per table (``key``: file hash or demo)."""
    return guess_columns(_frame)


def raw_source(key: str, frame: pd.DataFrame) -> RawSource:
    guess = cached_guess(key, frame)
    return RawSource(key, frame, guess.label, guess.features, guess.groups, guess.features_note)


def reference_sources() -> dict[str, RawSource]:
    """The uploaded table (if any, listed first: the default), the census demo without its
    model's predictions and a generated COMPAS-shaped table."""
    sources = {}
    upload = last_upload()
    if upload is not None:
        table, key = upload
        sources[f"uploaded: {table.source}"] = raw_source(key, table.frame)
    mapping = demo_mapping("census")
    models = [c for _, columns in mapping.models for c in columns]
    raw = cached_demo_frame("census").drop(columns=[*mapping.probs, *models, mapping.split])
    sources["demo: census features without the model's predictions"] = RawSource(
        "census", raw, mapping.label, mapping.features, mapping.groups)
    sources["demo: COMPAS-shaped table (generated, the 53 columns of ProPublica's file)"] = \
        raw_source("compas", compas_raw())
    return sources


def _feature_box(item: str | LeftOut, key: str, checked: bool) -> bool:
    """One model-feature checkbox; a left-out column says why under it."""
    column = item if isinstance(item, str) else item.column
    ticked = st.checkbox(column, value=checked, key=reference_form_key(f"{key}_{column}"))
    if not isinstance(item, str):
        st.caption(item.sentence)
    return ticked


def model_feature_list(screen: FeatureScreen, others: list[str], key: str) -> list[str]:
    """Every column with its status, as ticks: the proposed ones ticked, the ones left out
    with why — the outcome or likely recorded after it, then other models' scores, in view;
    identifiers, dates and the rest folded. Returns the ticked columns in table order."""
    proposed = [c for c in screen.kept if c in others]
    flagged = [item for item in screen.left_out if item.column in others and item.grade]
    scores = [item for item in screen.left_out if item.column in others
              and item.reason == "score"]
    rest = [item for item in screen.left_out if item.column in others
            and not item.grade and item.reason != "score"]
    st.markdown(f"**Model features** (what the model sees): {len(proposed)} of {len(others)} "
                "columns proposed. Tick or untick to change.")
    ticked = set()
    grid = st.columns(3)
    for i, column in enumerate(proposed):
        with grid[i % 3]:
            if _feature_box(column, key, True):
                ticked.add(column)
    if flagged:
        st.markdown(f"**Left out: the outcome itself, or likely recorded after it** "
                    f"({len(flagged)})")
        for item in flagged:
            if _feature_box(item, key, False):
                ticked.add(item.column)
    if scores:
        st.markdown(f"**Left out: other models' scores** ({len(scores)})")
        for item in scores:
            if _feature_box(item, key, False):
                ticked.add(item.column)
    if rest:
        with st.expander(f"{len(rest)} other column{'s' if len(rest) != 1 else ''} left out "
                         "(identifiers, dates, unusable), and why"):
            for item in rest:
                if _feature_box(item, key, False):
                    ticked.add(item.column)
    for item in screen.flagged():
        if item.column in ticked:
            st.warning(item.ticked, icon=":material/warning:")
    return [c for c in others if c in ticked]


def reference_tab() -> None:
    st.markdown(
        "No predictions yet? Train a reference model on one third of a raw table, then audit "
        "its predictions on the other two thirds (a calibration and a test split), as in the "
        "COMPAS audit of the I-trustworthy paper."
    )
    st.caption(
        "To redo that audit, choose the random forest with scikit-learn's defaults (the "
        "paper's overfit forest); the default random forest keeps leaves of at least 5 rows "
        "and comes out far better calibrated."
    )
    sources = reference_sources()
    source = st.selectbox("Raw table", list(sources), key=reference_form_key("source"))
    defaults = sources[source]
    frame = defaults.frame
    if source.startswith("uploaded: ") and not cached_guess(defaults.key, frame).probs:
        st.info(f"**{source.split(': ', 1)[1]}** has no predicted probabilities: train a "
                "reference model on it here; its predictions on the calibration and test rows "
                "become the audited table.", icon=":material/model_training:")
    columns = [str(c) for c in frame.columns]
    left, right = st.columns(2)
    with left:
        label = st.selectbox(
            "Label column", columns,
            index=columns.index(defaults.label) if defaults.label in columns else 0,
            key=reference_form_key(f"label_{source}"),
        )
        others = [c for c in columns if c != label]
        seed = st.number_input(
            "Split seed", min_value=0, value=0, step=1, key=reference_form_key("seed"),
            help="Seeds the stratified train / calibration / test split (and the model): the "
                 "same seed gives the same split, so a published audit can be redone.")
        try:
            screen = cached_screen(defaults.key, label, int(seed), frame)
        except DataError as error:
            st.error(str(error), icon=":material/error:")
            return
        model = st.selectbox(
            "Model", list(REFERENCE_MODELS), format_func=REFERENCE_MODELS.get,
            index=list(REFERENCE_MODELS).index("random_forest"), key=reference_form_key("model"),
        )
    with right:
        audit_features = st.multiselect(
            "Audit features", others,
            default=[c for c in defaults.audit_features if c in others],
            key=reference_form_key(f"audit_{source}"),
        )
        if defaults.audit_note:
            st.caption(defaults.audit_note)
        groups = st.multiselect(
            "Group attributes", others, default=[c for c in defaults.groups if c in others],
            key=reference_form_key(f"groups_{source}"),
        )
    model_features = model_feature_list(screen, others, f"feature_{source}_{label}")
    if st.button("Train and audit this model", type="primary", key=reference_form_key("train")):
        try:
            with st.spinner("Training the reference model…"):
                result = train_reference_model(
                    frame, label, model_features, model=model, seed=int(seed)
                )
        except DataError as error:
            st.error(str(error), icon=":material/error:")
            return
        for warning in result.warnings:
            st.warning(warning, icon=":material/warning:")
        if result.check is not None and result.check.warning is None:
            st.caption(f"Test AUC of the reference model: {result.check.test_auc:.3f}.")
        mapping = replace(result.mapping, features=tuple(audit_features), groups=tuple(groups))
        name = f"{REFERENCE_MODELS[model]} on {source.split(': ', 1)[1]}"
        activate(result.frame, mapping, name, f"reference model: {name}",
                 result.notes, warnings=result.warnings)
        st.download_button(
            "Download the table with predictions (CSV)",
            csv_text(result.frame).encode(), file_name="reference_predictions.csv",
            mime="text/csv",
        )


def overview(audit: AuditData, source: str) -> None:
    st.header(audit.name)
    st.caption(source)
    if audit.description:
        with st.expander("About this dataset"):
            st.markdown(audit.description)
    cols = st.columns(4)
    cols[0].metric("Rows", f"{audit.n:,}")
    cols[1].metric("Classes", "binary" if audit.is_binary else audit.n_classes)
    cols[2].metric("Audit features", audit.feature_frame.shape[1])
    cols[3].metric("Group attributes", audit.groups.shape[1])

    st.subheader("Validation report")
    validation_report(audit.report)

    frame = audit.to_frame()
    st.subheader("Preview")
    st.caption(f"Preview: first {min(PREVIEW_ROWS, audit.n):,} of {audit.n:,} rows.")
    st.dataframe(frame.head(PREVIEW_ROWS), width="stretch", hide_index=True)

    left, right = st.columns([3, 2])
    with left:
        st.subheader("Columns")
        numeric, categorical = summarise_columns(frame)
        st.dataframe(numeric, width="stretch", hide_index=True)
        st.dataframe(categorical, width="stretch", hide_index=True)
    with right:
        st.subheader("Class balance")
        balance = audit.class_balance()
        chart(class_balance_figure(balance), key="data_balance")
        st.dataframe(balance, width="stretch", hide_index=True)


def pending_upload_note() -> None:
    """Under the tabs: a raw upload waiting for a model is not what the pages audit yet."""
    upload = last_upload()
    if upload is not None and not cached_guess(upload[1], upload[0].frame).probs \
            and f"on {upload[0].source}" not in active_audit().name:
        st.info(f"The pages still audit **{active_audit().name}**: the raw table "
                f"{upload[0].source} becomes the audited table once a reference model is "
                "trained on it (tab above).", icon=":material/info:")


st.title("Data")
st.caption("Choose the predictions to audit. The chosen dataset is used by every page.")
if st.session_state.pop(OPEN_TRAIN, False):
    st.session_state[OPENED_TAB] = TABS[2]
    st.session_state[TAB_OPENINGS] = st.session_state.get(TAB_OPENINGS, 0) + 1
# Switching tabs stays in the browser (no ``on_change``): with tabs that rerun the script, a
# file chosen while that rerun draws the Upload tab again was dropped by the uploader, and the
# visitor's upload silently never arrived.
demo, upload, reference = st.tabs(list(TABS), default=st.session_state.get(OPENED_TAB),
                                  key=f"data_tabs_{st.session_state.get(TAB_OPENINGS, 0)}")
with demo:
    demo_tab()
with upload:
    upload_tab()
with reference:
    reference_tab()
st.divider()
pending_upload_note()
overview(active_audit(), active_source())
