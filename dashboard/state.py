"""The active dataset, shared by every page through Streamlit's session state.

Pages read the dataset with :func:`active_audit` and never rebuild it; the Data page replaces
it with :func:`set_active`. On a fresh session the default demo is loaded, so every page works
before anything is uploaded.
"""

from __future__ import annotations

from collections.abc import MutableMapping

import streamlit as st

from core.data import AuditData
from core.demo import DEMOS, demo_frame, load_demo

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


def remember_upload(table) -> None:
    """Keep the last uploaded table (a :class:`core.readers.LoadedTable`) for the reference
    model tab."""
    st.session_state[_UPLOAD] = table


def last_upload():
    """The last uploaded :class:`core.readers.LoadedTable` of this session, or ``None``."""
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
