"""The engine choice: threads (default), a Dask cluster (same statistic to rounding), GPU."""

from __future__ import annotations

import sys
import types

import numpy as np
import pytest

from core.data.simulations import type_two_paper
from core.kernels import engine
from core.stattests.klce import klce_test


def test_default_is_threads_and_use_restores_the_previous_choice() -> None:
    assert engine.current().name == "threads"
    with pytest.raises(ValueError, match="Unknown engine 'spark'"):
        engine.Engine("spark")
    with pytest.raises(ValueError, match="needs a client"):
        engine.Engine("dask")
    with pytest.raises(ValueError, match="float32"):
        engine.Engine("threads", dtype="float32")
    if not engine.gpu_available():
        with pytest.raises(ValueError, match="CuPy with a CUDA device"):
            engine.use("gpu").__enter__()
    assert engine.current().describe() == "threads"


def test_dask_cluster_gives_the_threaded_statistic(monkeypatch) -> None:
    """Acceptance: n = 20,000, B = 200, a LocalCluster of two worker processes; the statistic
    and every null value equal the threaded engine's to 1e-9 relative."""
    distributed = pytest.importorskip("dask.distributed")
    # Worker processes are spawned, and spawning re-runs the parent's __main__ file: after an
    # AppTest in the same pytest process that is the Streamlit app. A bare __main__ spares them.
    monkeypatch.setitem(sys.modules, "__main__", types.ModuleType("__main__"))
    p, y, X = type_two_paper(np.random.default_rng(5), n=20_000, d=3)
    threaded = klce_test(p, y, X, n_resamples=200, seed=1, computation="exact")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None, timeout=120) as cluster, \
            distributed.Client(cluster) as client, engine.use("dask", client=client) as chosen:
        assert chosen.describe() == "dask (2 workers)"
        clustered = klce_test(p, y, X, n_resamples=200, seed=1, computation="exact")
        assert clustered.parameters["engine"] == "dask (2 workers)"
    assert threaded.parameters["engine"] == "threads"
    np.testing.assert_allclose(clustered.statistic, threaded.statistic, rtol=1e-9)
    np.testing.assert_allclose(clustered.null, threaded.null, rtol=1e-9)
    assert clustered.p_value == threaded.p_value
    assert engine.current().name == "threads"
