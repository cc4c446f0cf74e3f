"""The active dataset, shared by every page through Streamlit's session state.

Pages read the dataset with :func:`active_audit` and never rebuild it; the Data page replaces
it with :func:`set_active`. On a fresh session the default demo is loaded, so every page works
before anything is uploaded — unless the page's URL carries the token of a stored table
(:mod:`dashboard.workspace`): then that table, its mapping, the page settings, the engine
and the audited model saved with it come back, after a browser reload as after a server
restart.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import io
from collections.abc import Iterator, MutableMapping
from dataclasses import replace

import numpy as np
import pandas as pd
import streamlit as st

from core.audit import (
    AuditSettings,
    FindingsSettings,
    LandscapeSettings,
    LocalBiasSettings,
    PageSettings,
    ReliabilitySettings,
    TrustSettings,
    compose,
    settings_for,
)
from core.data import (
    DEMOS,
    AuditData,
    DataError,
    ValidationNote,
    demo_frame,
    load_demo,
    read_table,
)
from dashboard.settings import ServerSettings, server_settings
from dashboard.workspace import QUERY_KEY, Recipe, TableStore, table_of

DEFAULT_DEMO = "census"
_AUDIT = "active_audit"
_SOURCE = "active_source"
_UPLOAD = "uploaded_table"
_TOKEN = "stored_table_token"
_SAVED = "saved_settings"
_NOTICE = "stored_table_notice"
_LANDS_ON_OVERVIEW = "lands_on_overview"


@st.cache_data(show_spinner="Generating the demo data…")
def cached_demo(key: str) -> AuditData:
    """The demo's validated container; generated once per server process."""
    return load_demo(key)


@st.cache_data(show_spinner=False)
def cached_demo_frame(key: str):
    return demo_frame(key)


def ensure_active() -> None:
    """Give a new session its dataset: the stored table its URL names, else the default
    demo."""
    if _AUDIT in st.session_state:
        return
    restored = restore_table()
    st.session_state[_LANDS_ON_OVERVIEW] = restored
    if not restored:
        st.session_state[_AUDIT] = cached_demo(DEFAULT_DEMO)
        st.session_state[_SOURCE] = f"demo: {DEMOS[DEFAULT_DEMO].title}"


def lands_on_overview() -> bool:
    """Whether this session's landing page is the Overview: it opened on a stored table (a
    link with its token), so its data are active and the verdicts are the first thing to
    see; a new visitor lands on the Data page. Decided once, when the session starts, so
    the page at the app's root address never changes under the visitor."""
    return bool(st.session_state.get(_LANDS_ON_OVERVIEW, False))


def set_active(audit: AuditData, source: str, session: MutableMapping | None = None,
               recipe: Recipe | None = None,
               notes: tuple[ValidationNote, ...] = ()) -> None:
    """Make ``audit`` the active dataset; ``source`` says where it came from (the sidebar shows
    it). ``session`` defaults to this session's state (tests pass an AppTest's; nothing is
    stored then). In a session, the dataset is stored (:func:`store_table`) from ``recipe``
    — how to rebuild it — or, without one, from its own columns
    (:func:`dashboard.workspace.table_of`) with ``notes``, what was said before validation
    (a reference model's warnings), which a rebuilt table's report opens with again."""
    state = st.session_state if session is None else session
    state[_AUDIT] = audit
    state[_SOURCE] = source
    if session is None:
        store_table(recipe or Recipe.derived(*table_of(audit), audit.name, source, notes))


# --------------------------------------------------------------------------- stored tables


def settings() -> ServerSettings:
    """The operator's settings of this server (:mod:`dashboard.settings`)."""
    return server_settings()


def table_store() -> TableStore:
    chosen = settings()
    return TableStore(chosen.store_folder, chosen.retention_days, chosen.max_tables)


def stored_token() -> str | None:
    """The token of this session's stored table, or ``None``."""
    return st.session_state.get(_TOKEN)


def store_table(recipe: Recipe) -> None:
    """Write the active dataset's recipe and the saved settings to the store, under this
    session's token (a new one on first use), and put the token into the page's URL."""
    _store("table", lambda store: store.save(recipe, _saved(), stored_token()))


def _store(what: str, write) -> None:
    """Run ``write(store)``, which returns the session's token, and put the token into the
    page's URL; a store that cannot be written leaves a notice about ``what`` instead."""
    try:
        token = write(table_store())
    except OSError as error:
        st.session_state[_NOTICE] = (
            f"This {what} could not be stored on the server ({error.strerror or error}); it "
            "stays in this tab, but a reload will not bring it back.")
        return
    st.session_state[_TOKEN] = token
    st.query_params[QUERY_KEY] = token


def restore_table() -> bool:
    """Make the table that the URL's token names active, with its settings; whether one was.
    A token that names nothing (forgotten, expired, never issued) leaves a notice."""
    token = st.query_params.get(QUERY_KEY)
    if token is None:
        return False
    stored = table_store().load(token)
    audit = None
    if stored is not None and stored.recipe is not None:
        try:
            audit = rebuild(stored.recipe)
        except (DataError, ValueError, OSError):
            audit = None
    if stored is None or (audit is None and stored.recipe is not None):
        del st.query_params[QUERY_KEY]
        st.session_state[_NOTICE] = (
            "The table this link named is not stored on this server (forgotten, older than "
            "the retention, or never stored here); the demo is shown instead.")
        return False
    saved = stored.settings
    st.session_state[_TOKEN] = stored.token
    st.session_state[_SAVED] = saved
    if stored.raw is not None:
        with contextlib.suppress(DataError, ValueError, OSError):
            name, content = stored.raw
            remember_upload(read_table(content, name), upload_key(content))
    for key, value in saved.get("widgets", {}).items():
        if key in SAVED_WIDGETS or str(key).startswith(REFERENCE_FORM):
            st.session_state[key] = value
    if isinstance(saved.get("sections"), dict):
        _restore_sections(saved["sections"])
    if isinstance(saved.get("engine"), str):
        set_engine_choice(saved["engine"])
    if stored.recipe is None:  # only a raw upload is kept: the demo, and the upload to train on
        st.session_state[OPEN_TRAIN] = True
        return False
    model = saved.get("model")
    if isinstance(model, str) and model in audit.model_names and model != audit.model:
        audit = audit.with_model(model)  # the sidebar's "Audited model", as it was left
    st.session_state[_AUDIT] = audit
    st.session_state[_SOURCE] = stored.recipe.source
    return True


def rebuild(recipe: Recipe) -> AuditData:
    """The dataset a stored recipe describes: the demo, or the file read and mapped again."""
    if recipe.kind == "demo":
        if recipe.name not in DEMOS:
            raise ValueError(f"unknown demo {recipe.name!r}")
        return cached_demo(recipe.name)
    if recipe.kind == "upload":
        table = read_table(recipe.content, recipe.name)
        audit = AuditData.from_mapping(table.frame, recipe.mapping,
                                       name=recipe.title or recipe.name)
        notes = tuple(ValidationNote("info", n) for n in table.notes)
        return replace(audit, report=recipe.validation_notes() + notes + audit.report)
    frame = pd.read_parquet(io.BytesIO(recipe.content))
    audit = AuditData.from_mapping(frame, recipe.mapping, name=recipe.title)
    return replace(audit, report=recipe.validation_notes() + audit.report)


def forget_table() -> None:
    """Delete this session's stored table, drop the token from the URL and go back to the
    default demo."""
    table_store().forget(stored_token())
    for key in (_TOKEN, _SAVED, _AUDIT, _SOURCE, _UPLOAD, UPLOAD_KEY, UPLOAD_WIDGET):
        st.session_state.pop(key, None)
    if QUERY_KEY in st.query_params:
        del st.query_params[QUERY_KEY]
    ensure_active()


def take_notice() -> str | None:
    """A sentence about the stored table for the sidebar (once), or ``None``."""
    return st.session_state.pop(_NOTICE, None)


def _plain(value: object) -> object:
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, np.generic):
        return value.item()
    return value


def _saved() -> dict:
    """The settings stored with the table: the page widgets' latest values, the engine and,
    for a table with several prediction sets, the audited model."""
    saved = dict(st.session_state.get(_SAVED, {}))
    widgets = dict(saved.get("widgets", {}))
    reference_form = [k for k in st.session_state if str(k).startswith(REFERENCE_FORM)
                      and not str(k).startswith(REFERENCE_BUTTON)]  # a button cannot be set
    for key in (*SAVED_WIDGETS, *reference_form):
        value = st.session_state.get(key)
        if value is not None and isinstance(_plain(value), (str, int, float, bool, list)):
            widgets[key] = _plain(value)
    saved["widgets"] = widgets
    saved["sections"] = _plain_sections()
    engine = st.session_state.get(_ENGINE)
    saved["engine"] = engine if isinstance(engine, str) else None
    audit = st.session_state.get(_AUDIT)
    several = audit is not None and len(audit.model_names) > 1
    saved["model"] = audit.model if several else None
    return saved


def save_settings() -> None:
    """Store the current page settings and engine with this session's table when they
    differ from the last ones written, and keep the token in the URL (page switches may drop
    it). :func:`settings_saved` calls it at the start and the end of every run."""
    token = stored_token()
    if token is None:
        return
    saved = _saved()
    if saved != st.session_state.get(_SAVED):
        with contextlib.suppress(OSError):  # else it stays stored with earlier settings
            table_store().save_settings(token, saved)
        # only once written: a run stopped by a newer widget change before the write (a
        # Streamlit call can raise the rerun) leaves the next run to write it
        st.session_state[_SAVED] = saved
    if st.query_params.get(QUERY_KEY) != token:
        st.query_params[QUERY_KEY] = token


@contextlib.contextmanager
def settings_saved() -> Iterator[None]:
    """Store the page settings at the start of a run and again when it ends, however it ends.

    A run starts with the values of the widgets the visitor changed, but a widget drawn for
    the first time, or set by the page, only has its value once the page has drawn it; and a
    run that a newer widget change stops (Streamlit's fast reruns raise at the next ``st``
    call) or that a page ends with ``st.stop()`` never reaches the code after the page. The
    write in ``finally`` covers all three, so the store never lags the last value the
    visitor set: the last run of a burst of changes always writes its values, at its start
    and at its end. Both writes compare with the last values written and skip an equal one.

    Yields
    ------
    None
        The body of the run: navigation, sidebar and page.
    """
    save_settings()
    try:
        yield
    finally:
        save_settings()


def active_audit() -> AuditData:
    ensure_active()
    return st.session_state[_AUDIT]


def active_source() -> str:
    ensure_active()
    return st.session_state[_SOURCE]


def set_audited_model(name: str, session: MutableMapping | None = None) -> None:
    """Audit the active table's prediction set ``name`` on every page (the sidebar's model
    choice). The dataset's fingerprint changes with the model, so every cached result is the
    chosen model's."""
    state = st.session_state if session is None else session
    state[_AUDIT] = state[_AUDIT].with_model(name)
    if session is None:
        save_settings()  # the choice is stored with the table and survives a reload


#: Prefix of the Data page's reference-model form widgets (``ref_source_…``, ``ref_label_…``).
REFERENCE_FORM = "ref_"
UPLOAD_KEY = "uploaded_table_key"
#: The reference form's Train button (``ref_train_…``), whose value is never stored.
REFERENCE_BUTTON = REFERENCE_FORM + "train_"
#: The Data page's file uploader (forgetting the table empties it too, or the file still in it
#: would be stored again).
UPLOAD_WIDGET = "upload_file"
#: Set when the Data page should open its Train tab on the next run (a raw upload).
OPEN_TRAIN = "open_train_tab"


def upload_key(content: bytes) -> str:
    """The key of an uploaded file: the first ten hex digits of its SHA-1."""
    return hashlib.sha1(content).hexdigest()[:10]


def store_raw_upload(name: str, content: bytes) -> None:
    """Keep a raw upload (no probability column) on the server under this session's token, so
    that a reload brings it back to the Train tab; the token goes into the page's URL."""
    _store("upload", lambda store: store.save_raw(name, content, _saved(), stored_token()))


def remember_upload(table, key: str) -> None:
    """Keep the last uploaded table (a :class:`core.data.readers.LoadedTable`) for the reference
    model tab; ``key`` identifies the file's contents. A new file starts a fresh reference
    form (:func:`reference_form_key`); the widgets of the old one are forgotten."""
    if st.session_state.get(UPLOAD_KEY) != key:
        for name in [k for k in st.session_state if str(k).startswith(REFERENCE_FORM)]:
            del st.session_state[name]
    st.session_state[_UPLOAD] = table
    st.session_state[UPLOAD_KEY] = key


def reference_form_key(name: str) -> str:
    """The key of one reference-form widget. It carries the last upload's key: Streamlit keeps
    a widget's value (in the browser too) for as long as its key lives, so a new upload must
    bring new keys for the form to open on the new table with its defaults instead of an
    earlier choice such as the demo raw table."""
    return f"{REFERENCE_FORM}{name}_{st.session_state.get(UPLOAD_KEY, 'none')}"


def last_upload():
    """The last uploaded table of this session and its key: ``(LoadedTable, key)``, or
    ``None``."""
    table = st.session_state.get(_UPLOAD)
    return None if table is None else (table, st.session_state[UPLOAD_KEY])


# --------------------------------------------------------------------------- recalibration

_COMPARISON = "recalibration_request"


def request_comparison(fingerprint: str, settings: object) -> None:
    """Remember the comparison the Recalibration page was asked for, for this dataset."""
    st.session_state[_COMPARISON] = (fingerprint, settings)


def comparison_request(fingerprint: str) -> object | None:
    """The settings of the last comparison asked for on this dataset, or ``None``."""
    stored = st.session_state.get(_COMPARISON)
    return stored[1] if stored is not None and stored[0] == fingerprint else None


# --------------------------------------------------------------------------- export

#: Widgets whose values are stored with the session's table and come back after a reload.
SAVED_WIDGETS = (
    "rel_part", "rel_notion", "rel_bins", "rel_strategy", "rel_interval", "rel_boot",
    "rel_boot_method", "rel_class", "trust_class", "trust_features", "trust_null",
    "trust_alpha", "trust_b", "lce_method", "lce_gamma", "lce_signed", "find_alpha",
    "find_error", "find_depth", "find_ranges", "find_b", "find_notion",
)
#: The section settings each page records (:func:`record_section`), by page.
SECTION_TYPES = {"reliability": ReliabilitySettings, "trust": TrustSettings,
                 "local_bias": LocalBiasSettings, "findings": FindingsSettings,
                 "landscape": LandscapeSettings}
_SECTIONS = "page_sections"
_EXPORT_FILES = "export_files"
_RECALIBRATION = "recalibration_comparison"


def record_section(page: str, part: str | None, settings, alpha: float | None = None) -> None:
    """Remember the section settings a page (a key of :data:`SECTION_TYPES`) computed its
    section with, on the rows ``part`` (``None``: the page's own choice of rows), and its
    verdict level ``alpha``: the Export page's report asks for the same sections
    (:func:`page_settings`). Stored with the table, so a reload keeps them."""
    record = dict(st.session_state.get(_SECTIONS, {}))
    record[page] = {"part": part, "alpha": alpha, "settings": settings}
    st.session_state[_SECTIONS] = record


def page_settings() -> PageSettings:
    """The sections the pages showed in this session (or before a reload), as
    :class:`core.audit.PageSettings` (a page not opened: ``None``)."""
    record = st.session_state.get(_SECTIONS, {})
    shown = {page: entry["settings"] for page, entry in record.items()}
    parts = [record[p]["part"] for p in ("reliability", "trust", "findings", "landscape")
             if p in record and record[p]["part"] is not None]
    trust = record.get("trust", {})
    return PageSettings(part=parts[0] if parts else "test",
                        trust_alpha=trust.get("alpha"), **shown)


def pages_audit(audit: AuditData) -> tuple[AuditSettings, tuple[str, ...]]:
    """The audit of the sections the pages showed (:func:`core.audit.compose`) fitted to
    ``audit``, and a sentence for each setting two pages chose differently — or for a page
    setting this data cannot use (then the defaults are audited)."""
    shown, differences = compose(page_settings())
    try:
        return settings_for(audit, shown), differences
    except ValueError as error:
        return settings_for(audit, {}), (f"{error} The defaults are used instead.",)


def _plain_sections() -> dict:
    """:func:`record_section`'s record as JSON values."""
    return {page: {"part": entry["part"], "alpha": entry["alpha"],
                   "settings": dataclasses.asdict(entry["settings"])}
            for page, entry in st.session_state.get(_SECTIONS, {}).items()}


def _restore_sections(saved: dict) -> None:
    """Bring back a stored record of :func:`record_section` (a malformed entry is dropped)."""
    record = {}
    for page, entry in saved.items():
        with contextlib.suppress(KeyError, TypeError, ValueError):
            values = {k: tuple(v) if isinstance(v, list) else v
                      for k, v in entry["settings"].items()}
            record[page] = {"part": entry["part"], "alpha": entry["alpha"],
                            "settings": SECTION_TYPES[page](**values)}
    st.session_state[_SECTIONS] = record


def export_file(key: str) -> tuple[str, bytes] | None:
    """The file an export control prepared for ``key``: ``(file name, bytes)``, or None."""
    return st.session_state.get(_EXPORT_FILES, {}).get(key)


def set_export_file(key: str, name: str, data: bytes) -> None:
    """Remember the file an export control prepared (the download button serves it)."""
    files = dict(st.session_state.get(_EXPORT_FILES, {}))
    files[key] = (name, data)
    st.session_state[_EXPORT_FILES] = files


def recalibration_comparison():
    """The recalibration comparison table the Recalibration page made active for the report
    (a DataFrame with the columns of ``core.report.schema.COMPARISON_COLUMNS``), or None."""
    return st.session_state.get(_RECALIBRATION)


def set_recalibration_comparison(table) -> None:
    """Hand a recalibration comparison table to the report (``None`` removes it)."""
    st.session_state[_RECALIBRATION] = table


_CREDAL = "credal_comparison"


def set_credal_comparison(fingerprint: str, comparison) -> None:
    """Hand the Ensembles page's credal-set comparison of the active dataset (a
    :class:`core.ensembles.CredalComparison`) to the report."""
    st.session_state[_CREDAL] = (fingerprint, comparison)


def credal_comparison(fingerprint: str):
    """The credal-set comparison last run on the dataset with this fingerprint, or None."""
    stored = st.session_state.get(_CREDAL)
    return stored[1] if stored is not None and stored[0] == fingerprint else None


_MODELS = "model_comparison"


def set_model_comparison(fingerprint: str, comparison) -> None:
    """Hand the Compare models page's champion–challenger comparison (a
    :class:`core.compare.ComparisonResult`) to the Overview's verdict."""
    st.session_state[_MODELS] = (fingerprint, comparison)


def model_comparison(fingerprint: str):
    """The champion–challenger comparison last run on this dataset, or None."""
    stored = st.session_state.get(_MODELS)
    return stored[1] if stored is not None and stored[0] == fingerprint else None


# --------------------------------------------------------------------------- computations

_EXACT = "exact_requested"


def exact_requested(key: str, fingerprint: str) -> bool:
    """Whether the user asked for the exact computation of ``key`` on this dataset."""
    return (key, fingerprint) in st.session_state.get(_EXACT, set())


def request_exact(key: str, fingerprint: str) -> None:
    """Remember that the exact computation of ``key`` is wanted on this dataset."""
    st.session_state[_EXACT] = st.session_state.get(_EXACT, set()) | {(key, fingerprint)}


_ENGINE = "compute_engine"
_ENGINE_NOTICE = "compute_engine_notice"
#: The sidebar's engine radio.
ENGINE_WIDGET = "engine_name_widget"


def engine_choice() -> str | None:
    """The name of the declared engine chosen in the sidebar, or ``None`` (the default)."""
    chosen = st.session_state.get(_ENGINE)
    return chosen if isinstance(chosen, str) else None


def set_engine_choice(name: str | None, widget: bool = True) -> None:
    """Choose a declared engine by name for this session (``None``: the default); with
    ``widget``, the sidebar's radio follows (only before it is drawn, or from its
    callback)."""
    st.session_state[_ENGINE] = name
    if not widget:
        return
    if name is None:
        st.session_state.pop(ENGINE_WIDGET, None)
    else:
        st.session_state[ENGINE_WIDGET] = name


def engine_notice() -> tuple[str, float] | None:
    """Why the chosen cluster is not used, and until when (``time.monotonic()``) it is not
    tried again; ``None`` when it is in use."""
    return st.session_state.get(_ENGINE_NOTICE)


def set_engine_notice(notice: tuple[str, float] | None) -> None:
    st.session_state[_ENGINE_NOTICE] = notice
