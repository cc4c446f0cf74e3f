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
