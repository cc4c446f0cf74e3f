"""A real Dask cluster, started as users start one: `dask scheduler` and two `dask worker`
processes from the command line (:mod:`tests.dask_cluster`). Declared to the app, the Trust
page gets the p-values of local threads; so does the command line with --dask; a worker
killed mid-test changes nothing (Dask reschedules; the kill waits until tasks run, so it
always lands mid-computation); a scheduler killed mid-computation leaves a sentence and the
page finishes on threads."""

from __future__ import annotations

import json

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from core import cli
from core.data.simulations import type_two_paper
from core.kernels import engine
from core.stattests.klce import klce_test
from tests.conftest import APP, upload_frame
from tests.dask_cluster import Cluster, kill_when_busy, p_values

distributed = pytest.importorskip("distributed")


@pytest.fixture
def cluster(tmp_path):
    started = Cluster(tmp_path)
    try:
        yield started
    finally:
        started.close()


def test_a_worker_killed_mid_test_does_not_change_the_p_value(cluster) -> None:
    p, y, X = type_two_paper(np.random.default_rng(5), n=6000, d=3)
    threaded = klce_test(p, y, X, n_resamples=200, seed=1, computation="exact")
    with cluster.client() as client, engine.use("dask", client=client):
        killer = kill_when_busy(cluster, cluster.workers[0])
        clustered = klce_test(p, y, X, n_resamples=200, seed=1, computation="exact")
        killer.join()
        fallback = engine.take_fallback()
    assert killer.busy and cluster.workers[0].poll() is not None  # it died mid-computation
    assert fallback is None and clustered.parameters["engine"].startswith("dask (")
    assert clustered.p_value == threaded.p_value
    np.testing.assert_allclose(clustered.null, threaded.null, rtol=1e-9)


def trust_page(monkeypatch, tmp_path, dask: str | None, b: int = 200,
               exact: bool = False) -> AppTest:
    from dashboard.cache import diagnostics
    from dashboard.state import cached_demo, set_active

    diagnostics.forget_sections()  # the store keys on the data, not on the engine
    monkeypatch.setenv("CALIBRATION_ATLAS_STORE", str(tmp_path / "tables"))
    if dask:
        monkeypatch.setenv("CALIBRATION_ATLAS_DASK", f"lab={dask}")
    else:
        monkeypatch.delenv("CALIBRATION_ATLAS_DASK", raising=False)
    at = AppTest.from_file(str(APP), default_timeout=600)
    set_active(cached_demo("itrustworthy"), "demo: itrustworthy", session=at.session_state)
    at.session_state["trust_b"] = b
    if exact:  # the grid's tiles, not random features (which run on this machine's threads)
        at.session_state["exact_requested"] = {
            ("trust_grid", cached_demo("itrustworthy").fingerprint)}
    at.run()
    at.switch_page("views/trust.py").run()
    assert not at.exception, at.exception
    return at


def test_the_trust_page_and_the_cli_on_the_cluster_give_the_threads_p_values(
        cluster, monkeypatch, tmp_path, capsys) -> None:
    here = trust_page(monkeypatch, tmp_path, None)
    there = trust_page(monkeypatch, tmp_path, cluster.address)
    assert "Now: **dask “lab” (2 workers)**" in " ".join(c.value for c in there.sidebar.caption)
    assert len(p_values(here)) == 2 and p_values(there) == p_values(here)
    table = tmp_path / "audit.csv"
    upload_frame(n=300).to_csv(table, index=False)
    results = {}
    for name, extra in (("threads", []), ("dask", ["--dask", cluster.address])):
        out = tmp_path / name
        assert cli.main(["audit", str(table), "--label", "y", "--prob", "p", "--features",
                         "age,sex", "--formats", "html", "--resamples", "100", "--out",
                         str(out), *extra]) == 0
        document = json.loads((out / "results.json").read_text())
        results[name] = (document["local"]["klce_grid"]["aggregated"]["p_value"],
                         document["local"]["klce_grid"]["p_values"],
                         document["provenance"]["engine"])
    assert "Computing on: dask “command line” (2 workers)" in capsys.readouterr().err
    assert results["dask"][:2] == results["threads"][:2]
    assert results["dask"][2] == ["dask “command line” (2 workers)"]


def test_a_scheduler_killed_mid_computation_falls_back_to_threads(cluster, monkeypatch,
                                                                  tmp_path) -> None:
    here = trust_page(monkeypatch, tmp_path, None, b=2000, exact=True)
    from dashboard.cache import diagnostics

    diagnostics.forget_sections()
    monkeypatch.setenv("CALIBRATION_ATLAS_DASK", f"lab={cluster.address}")
    from dashboard.state import cached_demo, set_active

    at = AppTest.from_file(str(APP), default_timeout=600)
    set_active(cached_demo("itrustworthy"), "demo: itrustworthy", session=at.session_state)
    at.session_state["trust_b"] = 2000
    at.session_state["exact_requested"] = {
        ("trust_grid", cached_demo("itrustworthy").fingerprint)}
    at.run()
    at.switch_page("views/trust.py")
    killer = kill_when_busy(cluster, cluster.scheduler)
    at.run()
    killer.join()
    assert killer.busy  # the scheduler died mid-computation
    assert not at.exception, at.exception
    warnings = " ".join(w.value for w in at.sidebar.warning)
    assert "The Dask cluster “lab” stopped answering during the computation" in warnings
    assert "finished on this machine's threads" in warnings
    assert p_values(at) == p_values(here)
    at.run()  # the session stays on threads
    assert "Now: **threads**" in " ".join(c.value for c in at.sidebar.caption)
