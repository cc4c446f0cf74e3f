"""The engine choice: threads (default), a Dask cluster (same statistic to rounding), GPU."""

from __future__ import annotations

import sys
import types

import numpy as np
import pytest
from threadpoolctl import threadpool_limits

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


def test_lanes_share_the_cores_and_a_finished_lane_frees_its_share(monkeypatch) -> None:
    monkeypatch.setattr(engine.os, "cpu_count", lambda: 4)
    assert engine.default_workers() == 4
    share = engine.CoreShare(2)
    with engine.sharing(share):
        assert engine.default_workers() == 2  # two lanes: half the cores each
        with engine.whole_machine():  # a speed probe measures the machine
            assert engine.default_workers() == 4
        share.finish()  # the other lane ended
        assert engine.default_workers() == 4
    assert engine.default_workers() == 4  # outside any lane


def test_random_feature_sums_do_not_depend_on_the_threads_that_run_them() -> None:
    from core.kernels.rff import FourierMap, accumulate_maps, bernoulli_columns

    rng = np.random.default_rng(3)
    n = 40_000
    points, p = rng.standard_normal((n, 2)), rng.uniform(0.1, 0.9, n)
    residuals = (rng.random(n) < p) - p
    fourier = FourierMap.draw(2, 16, seed=1)
    bandwidths = np.array([[1.0, 1.0], [0.5, 2.0]])

    def sums():
        columns = bernoulli_columns(p, residuals, 20, seed=5)
        return accumulate_maps(points, columns, fourier, bandwidths, chunk_rows=4096)

    alone = sums()
    # one thread where the machine has up to 4, BLAS held to one thread as the audit's lanes
    # hold it (a pool of several threads holds it so too)
    with engine.sharing(engine.CoreShare(8)), threadpool_limits(limits=1, user_api="blas"):
        assert engine.default_workers() == 1
        in_a_lane = sums()
    for a, b in zip(alone, in_a_lane, strict=True):
        np.testing.assert_array_equal(a.S, b.S)  # the same bits
        np.testing.assert_array_equal(a.u, b.u)
