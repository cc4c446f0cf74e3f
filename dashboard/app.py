"""Calibration Atlas — entry point: page navigation and the active-dataset sidebar.

Run with ``calibration-atlas app`` (``make run`` in a checkout), or
``streamlit run dashboard/app.py``; its Streamlit defaults are
``dashboard/.streamlit/config.toml``, read as the script's own config.
"""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from dashboard.access import account_sidebar, gate
from dashboard.components import dataset_card, model_picker, stored_table_panel
from dashboard.compute import apply_engine, engine_sidebar, report_fallback
from dashboard.guard import run_page
from dashboard.memory_release import start_memory_release
from dashboard.state import (
    active_audit,
    active_source,
    ensure_active,
    lands_on_overview,
    settings_saved,
)

HERE = Path(__file__).resolve().parent

st.set_page_config(
    page_title="Calibration Atlas",
    page_icon=str(HERE / "assets" / "logo.png"),
    layout="wide",
)
start_memory_release()  # freed heap back to the OS every 30 s (docs/studies/serve-load.md)


def pages(overview_first: bool) -> list:
    """The pages in navigation order; the landing page (``default``) is the Data page, or the
    Overview for a session that opened on a stored table (:func:`lands_on_overview`)."""
    return [
        st.Page(HERE / "views" / "data.py", title="Data", icon=":material/table_view:",
                default=not overview_first),
        st.Page(HERE / "views" / "overview.py", title="Overview", icon=":material/fact_check:",
                default=overview_first),
        st.Page(HERE / "views" / "reliability.py", title="Reliability",
                icon=":material/ssid_chart:"),
        st.Page(HERE / "views" / "trust.py", title="Trust test", icon=":material/verified:"),
        st.Page(HERE / "views" / "local_bias.py", title="Local bias",
                icon=":material/insights:"),
        st.Page(HERE / "views" / "findings.py", title="Findings", icon=":material/flag:"),
        st.Page(HERE / "views" / "lce_landscape.py", title="LCE landscape",
                icon=":material/scatter_plot:"),
        st.Page(HERE / "views" / "recalibration.py", title="Recalibration",
                icon=":material/build:"),
        st.Page(HERE / "views" / "compare.py", title="Compare models",
                icon=":material/compare_arrows:"),
        st.Page(HERE / "views" / "ensembles.py", title="Ensembles", icon=":material/stacks:"),
        st.Page(HERE / "views" / "estimators.py", title="Estimators", icon=":material/tune:"),
        st.Page(HERE / "views" / "over_time.py", title="Over time", icon=":material/timeline:"),
        st.Page(HERE / "views" / "export.py", title="Export", icon=":material/download:"),
    ]


def draw(navigation) -> None:
    """The sidebar and the page the navigation chose.

    The sidebar card is drawn before the page (a page that ends early with ``st.stop()``
    keeps it, and nothing drawn after such a page is shown) and redrawn after it, so that
    a dataset the page just activated shows at once; so is the model picker when the page
    activated another table (its widget key is the table's, so no key repeats in one run).
    The sidebar's elements keep their places whichever table is active (the model picker
    sits in a placeholder of its own): an element that moved would be drawn anew, and the
    Compute engine expander would close under the visitor's hands.
    """
    with st.sidebar:
        picker = st.empty()  # always one block, so a table without a picker keeps the layout
        with picker.container():
            model_picker(shown := active_audit())
        card = st.empty()
        engine_sidebar()
        account_sidebar()
    with card.container():
        dataset_card(active_audit(), active_source())
        stored_table_panel()
    run_page(navigation.run, navigation.title, active_source)
    if active_audit().name != shown.name or active_audit().model_names != shown.model_names:
        with picker.container():  # the page activated another table: its models, at once
            model_picker(active_audit())
    with card.container():
        dataset_card(active_audit(), active_source())
        stored_table_panel(key="forget_table_after")
    with st.sidebar:
        report_fallback()


st.logo(str(HERE / "assets" / "logo.png"))
try:
    gate()  # with sign-in configured, a visitor who has not signed in sees only the sign-in
    ensure_active()  # a new session: the stored table its URL names, with its settings
    apply_engine()
except ValueError as error:  # the operator's settings are wrong: say which, show nothing else
    st.error(f"This server's settings are not valid: {error}", icon=":material/settings:")
    st.stop()
# every page in view, Export too
navigation = st.navigation(pages(lands_on_overview()), expanded=True)
# The widget values this run starts with are stored with the session's table, and again when
# the run ends, however it ends (a newer widget change, st.stop(), a page error): the store
# never lags the widget a visitor last touched.
with settings_saved():
    draw(navigation)
