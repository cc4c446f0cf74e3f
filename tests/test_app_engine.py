"""The sidebar's compute-engine setting: a Dask scheduler by address, a clear message when
none answers, and the choice applied to the session's computations."""

from __future__ import annotations

import sys
import types

import pytest
from streamlit.testing.v1 import AppTest

from core.kernels import engine
from tests.conftest import APP


def _sidebar_app() -> AppTest:
    at = AppTest.from_file(str(APP), default_timeout=120)
    at.run()
    assert not at.exception, at.exception
    return at


def _engine_widgets(at: AppTest):
    radio = next(r for r in at.sidebar.radio if r.key == "engine_name_widget")
    return radio


def test_an_unreachable_scheduler_gets_a_message_and_the_engine_stays_local() -> None:
    at = _sidebar_app()
    _engine_widgets(at).set_value("dask").run()
    address = next(t for t in at.sidebar.text_input if t.key == "engine_address_widget")
    address.set_value("tcp://127.0.0.1:9").run()
    next(b for b in at.sidebar.button if b.key == "engine_apply").click().run()
    assert not at.exception, at.exception
    errors = " ".join(e.value for e in at.sidebar.error)
    assert "Could not reach a Dask scheduler at tcp://127.0.0.1:9" in errors
    assert "compute_engine" not in at.session_state or \
        at.session_state["compute_engine"][0] != "dask"


def test_a_scheduler_address_routes_the_sessions_kernel_sums_to_dask(monkeypatch) -> None:
    distributed = pytest.importorskip("dask.distributed")
    # spawned workers re-run the parent's __main__ (see tests/test_engine.py)
    monkeypatch.setitem(sys.modules, "__main__", types.ModuleType("__main__"))
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                                  dashboard_address=None, timeout=120) as cluster:
        at = _sidebar_app()
        _engine_widgets(at).set_value("dask").run()
        address = next(t for t in at.sidebar.text_input if t.key == "engine_address_widget")
        address.set_value(cluster.scheduler_address).run()
        next(b for b in at.sidebar.button if b.key == "engine_apply").click().run()
        assert not at.exception, at.exception
        assert at.session_state["compute_engine"] == ("dask", cluster.scheduler_address)
        captions = " ".join(c.value for c in at.sidebar.caption)
        assert "Now: **dask (1 workers)**" in captions
    assert engine.current().name == "threads"  # the test process itself is untouched
