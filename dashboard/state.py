"""The active dataset, shared by every page through Streamlit's session state.

Pages read the dataset with :func:`active_audit` and never rebuild it; the Data page replaces
it with :func:`set_active`. On a fresh session the default demo is loaded, so every page works
before anything is uploaded.
"""

from __future__ import annotations

from collections.abc import MutableMapping

import streamlit as st

from core.data.audit_data import AuditData
from core.data.demo import DEMOS, demo_frame, load_demo

DEFAULT_DEMO = "census"
_AUDIT = "active_audit"
_SOURCE = "active_source"
_UPLOAD = "uploaded_table"


@st.cache_data(show_spinner="Generating the demo data…")
def cached_demo(key: str) -> AuditData:
    """The demo's validated container; generated once per server process."""
    return load_demo(key)


@st.cache_data(show_spinner=False)
def cached_demo_frame(key: str):
    return demo_frame(key)


def ensure_active() -> None:
    """Load the default demo when the session has no dataset yet."""
    if _AUDIT not in st.session_state:
        set_active(cached_demo(DEFAULT_DEMO), f"demo: {DEMOS[DEFAULT_DEMO].title}")


def set_active(audit: AuditData, source: str, session: MutableMapping | None = None) -> None:
    """Make ``audit`` the active dataset; ``source`` says where it came from (the sidebar shows
    it). ``session`` defaults to this session's state (tests pass an AppTest's)."""
    state = st.session_state if session is None else session
    state[_AUDIT] = audit
    state[_SOURCE] = source


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


def remember_upload(table) -> None:
    """Keep the last uploaded table (a :class:`core.data.readers.LoadedTable`) for the reference
    model tab."""
    st.session_state[_UPLOAD] = table


def last_upload():
    """The last uploaded :class:`core.data.readers.LoadedTable` of this session, or ``None``."""
    return st.session_state.get(_UPLOAD)


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

#: Page widget keys whose values the Export page's audit uses, with the AuditSettings field
#: each sets and how the widget's value becomes the setting's.
PAGE_SETTINGS = {
    "rel_part": ("part", lambda v: "all" if v == "all rows" else v),
    "rel_notion": ("notion", str),
    "rel_bins": ("n_bins", int),
    "rel_strategy": ("strategy", str),
    "rel_interval": ("interval", str),
    "rel_boot": ("n_bootstrap", int),
    "rel_boot_method": ("bootstrap_method", str),
    "rel_class": ("class_index", int),
    "trust_class": ("class_index", int),
    "trust_features": ("features", tuple),
    "trust_null": ("null", str),
    "trust_alpha": ("alpha", float),
    "lce_method": ("embedding", str),
    "lce_gamma": ("gamma", float),
    "lcb_ranges": ("subgroup_ranges", int),
}
_PAGE_SNAPSHOT = "export_page_settings"
_EXPORT_FILES = "export_files"
_RECALIBRATION = "recalibration_comparison"


def page_settings() -> dict:
    """The settings the pages' widgets hold now, as AuditSettings fields.

    Streamlit forgets a page's widget values once another page has run, so the values seen
    are remembered (under a key of their own) and the latest seen wins. ``rel_class`` only
    counts when the Reliability page's notion is classwise; ``trust_class`` wins over it.
    """
    remembered = dict(st.session_state.get(_PAGE_SNAPSHOT, {}))
    for key, (field_name, convert) in PAGE_SETTINGS.items():
        if key in st.session_state and st.session_state[key] is not None:
            if key == "rel_class" and st.session_state.get("rel_notion") != "classwise":
                continue
            remembered[field_name] = convert(st.session_state[key])
    st.session_state[_PAGE_SNAPSHOT] = remembered
    return dict(remembered)


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


# --------------------------------------------------------------------------- computations

_EXACT = "exact_requested"


def exact_requested(key: str, fingerprint: str) -> bool:
    """Whether the user asked for the exact computation of ``key`` on this dataset."""
    return (key, fingerprint) in st.session_state.get(_EXACT, set())


def request_exact(key: str, fingerprint: str) -> None:
    """Remember that the exact computation of ``key`` is wanted on this dataset."""
    st.session_state[_EXACT] = st.session_state.get(_EXACT, set()) | {(key, fingerprint)}


_ENGINE = "compute_engine"


def engine_choice() -> tuple[str | None, str | None]:
    """``(engine name, Dask address)`` chosen in the sidebar, or ``(None, None)``."""
    return st.session_state.get(_ENGINE, (None, None))


def set_engine_choice(name: str, address: str | None) -> None:
    st.session_state[_ENGINE] = (name, address)
