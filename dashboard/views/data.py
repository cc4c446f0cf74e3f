"""Data page: choose a demo, upload a table, or train a reference model; inspect the result."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, replace

import pandas as pd
import streamlit as st

from core.data.audit_data import AuditData
from core.data.column_guess import group_member_columns, guess_columns
from core.data.demo import DEMOS, demo_mapping
from core.data.mapping import ColumnMapping
from core.data.problems import DataError, ValidationNote
from core.data.readers import SUPPORTED_SUFFIXES, LoadedTable, check_limits, read_table
from core.data.reference_model import REFERENCE_MODELS, train_reference_model
from core.data.table import summarise_columns
from core.figures.data import class_balance_figure
from dashboard.components import chart, validation_report
from dashboard.state import (
    active_audit,
    active_source,
    cached_demo,
    cached_demo_frame,
    last_upload,
    remember_upload,
    set_active,
    settings,
)
from dashboard.workspace import Recipe

NONE = "(none)"
AUTOMATIC = "(automatic)"
PREVIEW_ROWS = 500
EXAMPLE_CSV = """y,p,age,sex,race
1,0.81,34,female,Black
0,0.12,51,male,White
0,0.35,29,female,Hispanic"""


@st.cache_data(show_spinner="Reading the file…", max_entries=8)
def cached_read(content: bytes, name: str) -> LoadedTable:
    return read_table(content, name)


def demo_tab() -> None:
    keys = list(DEMOS)
    key = st.selectbox(
        "Demo dataset", keys, format_func=lambda k: DEMOS[k].title, key="demo_choice",
    )
    st.markdown(DEMOS[key].description)
    if st.button("Use this demo", type="primary", key="use_demo"):
        source = f"demo: {DEMOS[key].title}"
        set_active(cached_demo(key), source, recipe=Recipe.demo(key, source))
        st.success(f"Now auditing the demo “{DEMOS[key].title}”.")


def upload_tab() -> None:
    uploaded = st.file_uploader(
        "Upload a table (CSV, TSV or Parquet)",
        type=[s.lstrip(".") for s in SUPPORTED_SUFFIXES], key="upload_file",
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
    remember_upload(table)
    frame = table.frame
    st.caption(f"Read {len(frame):,} rows × {frame.shape[1]} columns from {table.source}.")
    for note in table.notes:
        st.info(note, icon=":material/info:")
    st.dataframe(frame.head(20), width="stretch", hide_index=True)

    file_key = hashlib.sha1(uploaded.getvalue()).hexdigest()[:10]
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
        groups = st.multiselect(
            "Group attributes (for per-group diagnostics)", columns,
            default=list(guess.groups), key=f"{key}_groups",
        )
        split = st.selectbox(
            "Split column (train / calibration / test)", [NONE, *columns],
            index=1 + columns.index(guess.split) if guess.split else 0, key=f"{key}_split",
        )
        members = st.multiselect(
            "Ensemble member columns (optional)", columns, default=list(guess.members),
            key=f"{key}_members",
        )
    return ColumnMapping(
        label=label, probs=tuple(probs), logits=logits,
        positive=None if positive == AUTOMATIC else positive,
        features=tuple(features), groups=tuple(groups),
        split=None if split == NONE else split,
        members=group_member_columns(members, max(len(probs), 2)),
    )


def activate(frame, mapping: ColumnMapping, name: str, source: str,
             read_notes: tuple[str, ...] = (), recipe: Recipe | None = None) -> None:
    """Validate and make active; what was done before validation (the reader's repairs such
    as repeated headers, the reference model's training) opens the validation report.
    ``recipe`` is how the table is stored for a reload (default: the validated columns)."""
    if not mapping.probs:
        st.error("Choose at least one probability column.", icon=":material/error:")
        return
    try:
        audit = AuditData.from_mapping(frame, mapping, name=name)
    except DataError as error:
        st.error(str(error), icon=":material/error:")
        return
    notes = tuple(ValidationNote("info", n) for n in read_notes)
    set_active(replace(audit, report=notes + audit.report), source, recipe=recipe)
    st.success(f"Now auditing {name}: {audit.n:,} rows passed validation.")


@dataclass(frozen=True)
class RawSource:
    """A raw table for the reference-model workflow and its default column roles."""

    frame: pd.DataFrame
    label: str | None
    model_features: tuple[str, ...]
    audit_features: tuple[str, ...]
    groups: tuple[str, ...]


def reference_sources() -> dict[str, RawSource]:
    """The uploaded table (if any) and the census demo without its model's predictions."""
    sources = {}
    table: LoadedTable | None = last_upload()
    if table is not None:
        guess = guess_columns(table.frame)
        sources[f"uploaded: {table.source}"] = RawSource(
            table.frame, guess.label, guess.features, guess.groups, guess.groups)
    mapping = demo_mapping("census")
    raw = cached_demo_frame("census").drop(columns=[*mapping.probs, mapping.split])
    model_features = tuple(c for c in raw.columns if c != mapping.label)
    sources["demo: census features without the model's predictions"] = RawSource(
        raw, mapping.label, model_features, mapping.features, mapping.groups)
    return sources


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
    source = st.selectbox("Raw table", list(sources), key="ref_source")
    defaults = sources[source]
    frame = defaults.frame
    columns = [str(c) for c in frame.columns]
    others = [c for c in columns if c != defaults.label]
    left, right = st.columns(2)
    with left:
        label = st.selectbox(
            "Label column", columns,
            index=columns.index(defaults.label) if defaults.label in columns else 0,
            key=f"ref_label_{source}",
        )
        model_features = st.multiselect(
            "Model features (what the model sees)", others,
            default=[c for c in defaults.model_features if c in others],
            key=f"ref_model_{source}",
        )
        model = st.selectbox(
            "Model", list(REFERENCE_MODELS), format_func=REFERENCE_MODELS.get,
            index=list(REFERENCE_MODELS).index("random_forest"), key="ref_model",
        )
        seed = st.number_input(
            "Split seed", min_value=0, value=0, step=1, key="ref_seed",
            help="Seeds the stratified train / calibration / test split (and the model): the "
                 "same seed gives the same split, so a published audit can be redone.")
    with right:
        audit_features = st.multiselect(
            "Audit features", others,
            default=[c for c in defaults.audit_features if c in others],
            key=f"ref_audit_{source}",
        )
        groups = st.multiselect(
            "Group attributes", others, default=[c for c in defaults.groups if c in others],
            key=f"ref_groups_{source}",
        )
    if st.button("Train and audit this model", type="primary", key="ref_train"):
        try:
            with st.spinner("Training the reference model…"):
                result = train_reference_model(
                    frame, label, model_features, model=model, seed=int(seed)
                )
        except DataError as error:
            st.error(str(error), icon=":material/error:")
            return
        mapping = replace(result.mapping, features=tuple(audit_features), groups=tuple(groups))
        name = f"{REFERENCE_MODELS[model]} on {source.split(': ', 1)[1]}"
        activate(result.frame, mapping, name, f"reference model: {name}",
                 result.notes)
        st.download_button(
            "Download the table with predictions (CSV)",
            result.frame.to_csv(index=False).encode(), file_name="reference_predictions.csv",
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


st.title("Data")
st.caption("Choose the predictions to audit. The chosen dataset is used by every page.")
demo, upload, reference = st.tabs(["Demo data", "Upload a table", "Train a reference model"])
with demo:
    demo_tab()
with upload:
    upload_tab()
with reference:
    reference_tab()
st.divider()
overview(active_audit(), active_source())
