"""Calibration Atlas — entry point: page navigation and the active-dataset sidebar.

Run with ``make run`` (or ``streamlit run dashboard/app.py``).
"""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from dashboard.components import dataset_card, model_picker
from dashboard.compute import apply_engine, engine_sidebar
from dashboard.guard import run_page
from dashboard.state import active_audit, active_source

HERE = Path(__file__).resolve().parent

st.set_page_config(
    page_title="Calibration Atlas",
    page_icon=str(HERE.parent / "assets" / "logo.png"),
    layout="wide",
)

PAGES = [
    st.Page(HERE / "views" / "data.py", title="Data", icon=":material/table_view:", default=True),
    st.Page(HERE / "views" / "reliability.py", title="Reliability",
            icon=":material/ssid_chart:"),
    st.Page(HERE / "views" / "trust.py", title="Trust test", icon=":material/verified:"),
    st.Page(HERE / "views" / "local_bias.py", title="Local bias", icon=":material/insights:"),
    st.Page(HERE / "views" / "lce_landscape.py", title="LCE landscape",
            icon=":material/scatter_plot:"),
    st.Page(HERE / "views" / "recalibration.py", title="Recalibration", icon=":material/build:"),
    st.Page(HERE / "views" / "compare.py", title="Compare models",
            icon=":material/compare_arrows:"),
    st.Page(HERE / "views" / "ensembles.py", title="Ensembles", icon=":material/stacks:"),
    st.Page(HERE / "views" / "estimators.py", title="Estimators", icon=":material/tune:"),
    st.Page(HERE / "views" / "export.py", title="Export", icon=":material/download:"),
]

st.logo(str(HERE.parent / "assets" / "logo.png"))
navigation = st.navigation(PAGES)
# The sidebar card is drawn before the page (a page that ends early with st.stop() keeps it)
# and redrawn after it, so that a dataset the page just activated shows at once.
with st.sidebar:
    model_picker(active_audit())
    card = st.empty()
with card.container():
    dataset_card(active_audit(), active_source())
apply_engine()
engine_sidebar()
run_page(navigation.run, navigation.title, active_source)
with card.container():
    dataset_card(active_audit(), active_source())
