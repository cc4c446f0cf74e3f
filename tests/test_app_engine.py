"""The sidebar's compute engine: only the engines the operator declared, picked by name.

No widget anywhere in the dashboard takes an address (a walk over every page's widgets); a
declared cluster routes the session's kernel sums to Dask; one that does not answer gets a
sentence and the session computes here."""

from __future__ import annotations

import sys
import types

import pytest
from streamlit.testing.v1 import AppTest

from core.kernels import engine
from tests.conftest import APP

VIEWS = sorted(p.name for p in (APP.parent / "views").glob("*.py") if p.name != "__init__.py")
TEXT_WIDGETS = ("text_input", "text_area", "chat_input", "number_input")
ADDRESS_WORDS = ("address", "scheduler", "tcp://", "tls://", "host", "url", "dask")


@pytest.fixture(autouse=True)
def store(tmp_path, monkeypatch):
    monkeypatch.setenv("CALIBRATION_ATLAS_STORE", str(tmp_path / "tables"))
    for name in ("CALIBRATION_ATLAS_DASK", "CALIBRATION_ATLAS_ENGINE", "CALIBRATION_ATLAS_CONFIG"):
        monkeypatch.delenv(name, raising=False)


def sidebar_app() -> AppTest:
    at = AppTest.from_file(str(APP), default_timeout=300)
    at.run()
    assert not at.exception, at.exception
    return at


def engine_radio(at: AppTest):
    return next(r for r in at.sidebar.radio if r.key == "engine_name_widget")


def widgets(at: AppTest):
    """Every input widget of the page and the sidebar, with its kind."""
    for kind in ("text_input", "text_area", "chat_input", "number_input", "radio",
                 "selectbox", "multiselect", "slider", "select_slider", "checkbox", "toggle",
                 "button", "date_input", "time_input", "color_picker"):
        for widget in getattr(at, kind, []):
            yield kind, widget
        for widget in getattr(at.sidebar, kind, []):
            yield kind, widget


def test_no_widget_on_any_page_takes_an_engine_address(monkeypatch) -> None:
    monkeypatch.setenv("CALIBRATION_ATLAS_DASK", "lab=tcp://127.0.0.1:9")
    from dashboard.state import cached_demo, set_active

    at = AppTest.from_file(str(APP), default_timeout=600)
    set_active(cached_demo("itrustworthy"), "demo: itrustworthy", session=at.session_state)
    at.session_state["trust_b"] = 200
    at.run()
    seen = 0
    for view in VIEWS:
        at.switch_page(f"views/{view}")
        at.run()
        assert not at.exception, (view, at.exception)
        for kind, widget in widgets(at):
            seen += 1
            text = " ".join(str(getattr(widget, a, "") or "") for a in
                            ("label", "key", "placeholder", "help")).lower()
            if kind in TEXT_WIDGETS:
                assert not any(word in text for word in ADDRESS_WORDS), (view, kind, text)
        assert not any(getattr(at.sidebar, kind, []) for kind in TEXT_WIDGETS), view
        options = engine_radio(at).options
        assert options == ["This machine (threads)", "Dask cluster “lab”"], options
    assert seen > 100  # the walk saw the pages' widgets, not an empty app


def test_an_unreachable_declared_cluster_gets_a_message_and_the_session_stays_here(
        monkeypatch) -> None:
    monkeypatch.setenv("CALIBRATION_ATLAS_DASK", "lab=tcp://127.0.0.1:9")
    monkeypatch.setenv("CALIBRATION_ATLAS_ENGINE", "threads")
    at = sidebar_app()
    engine_radio(at).set_value("lab").run()
    assert not at.exception, at.exception
    warnings = " ".join(w.value for w in at.sidebar.warning)
    assert "The Dask cluster “lab” (tcp://127.0.0.1:9) did not answer within 5 s" in warnings
    assert "computes on this machine's threads" in warnings
    assert "Now: **threads**" in " ".join(c.value for c in at.sidebar.caption)


def test_a_declared_cluster_routes_the_sessions_kernel_sums_to_dask(monkeypatch) -> None:
    distributed = pytest.importorskip("dask.distributed")
    # spawned workers re-run the parent's __main__ (see tests/test_engine.py)
    monkeypatch.setitem(sys.modules, "__main__", types.ModuleType("__main__"))
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                                  dashboard_address=None, timeout=120) as cluster:
        monkeypatch.setenv("CALIBRATION_ATLAS_DASK", f"lab={cluster.scheduler_address}")
        monkeypatch.setenv("CALIBRATION_ATLAS_ENGINE", "threads")
        at = sidebar_app()
        assert engine_radio(at).value == "threads"
        engine_radio(at).set_value("lab").run()
        assert not at.exception, at.exception
        assert at.session_state["compute_engine"] == "lab"
        captions = " ".join(c.value for c in at.sidebar.caption)
        assert "Now: **dask “lab” (1 workers)**" in captions
        monkeypatch.setenv("CALIBRATION_ATLAS_DASK", "")  # the operator withdraws it
        at.run()
        assert engine_radio(at).options == ["This machine (threads)"]
        assert "Now: **threads**" in " ".join(c.value for c in at.sidebar.caption)
    assert engine.current().name == "threads"  # the test process itself is untouched
