"""Which computation runs a kernel test: exact tiles, random Fourier features or blocks.

* ``"exact"`` — the tile engine's O(n²·B) double sums (:mod:`core.kernels`);
* ``"rff"`` — random Fourier features, O(n·D·B), level exact for any D (:mod:`core.kernels.rff`);
* ``"block"`` — the linear-time block estimator and its asymptotic z-test;
* ``"auto"`` — exact when its estimated time on this machine is at most
  :data:`AUTO_SECONDS`, random Fourier features above.

The estimate is ``n²/2 · columns`` pair-columns at the speed measured once per process on a
small tile pass (so a faster machine, or the GPU engine, keeps exact tests for larger n).
Every result records the computation in ``parameters["computation"]`` and, when chosen
automatically, why.
"""

from __future__ import annotations

import functools
import time

import numpy as np

from core.data.validation import check_choice, check_count
from core.kernels import engine

COMPUTATIONS = ("auto", "exact", "rff", "block")
#: ``"auto"`` runs the exact test when it is expected to take at most this many seconds.
AUTO_SECONDS = 10.0


@functools.cache
def _seconds_per_pair_column(engine_name: str) -> float:
    """Measured cost of one (pair, column) of the exact sum on this machine and engine."""
    from core.kernels.tiles import quadratic_forms

    rng = np.random.default_rng(0)
    n, columns = 2048, 256
    points, E = rng.standard_normal((n, 2)), rng.standard_normal((n, columns))
    quadratic_forms(points, E[:, :2])  # warm-up (thread pool, BLAS)
    start = time.perf_counter()
    quadratic_forms(points, E)
    return (time.perf_counter() - start) / (n * n / 2 * columns)


def exact_seconds(n: int, columns: int) -> float:
    """Estimated time of an exact pass over n rows with ``columns`` residual columns."""
    return _seconds_per_pair_column(engine.current().name) * n * n / 2 * columns


def choose(computation: str, n: int, columns: int, n_features: int,
           exact_only: str | None = None) -> tuple[str, str]:
    """``(label, reason)``: the computation that runs, e.g. ``"rff(1024)"``, and why.

    ``exact_only`` names a reason the approximation cannot serve (e.g. a null whose resamples
    cannot be drawn chunk by chunk): ``"auto"`` then stays exact, and asking for ``"rff"``
    raises a ValueError with that reason.
    """
    check_choice(computation, COMPUTATIONS, "computation",
                 f"choose one of {', '.join(COMPUTATIONS)}")
    n_features = check_count("n_features", n_features, 1)
    if computation == "rff" and exact_only:
        raise ValueError(exact_only)
    if computation != "auto":
        return (f"rff({n_features})" if computation == "rff" else computation), "as asked"
    if exact_only:
        return "exact", exact_only
    estimate = exact_seconds(n, columns)
    if estimate <= AUTO_SECONDS:
        return "exact", f"the exact test takes about {estimate:.1f} s here"
    return (f"rff({n_features})",
            f"the exact test would take about {estimate:,.0f} s here (over {AUTO_SECONDS:g} s); "
            f"random Fourier features keep the level exact")


def summary(parameters: dict) -> str:
    """One sentence for a page or report: which computation ran and why, from a result's
    ``parameters`` (``"computation"``, ``"computation_reason"``)."""
    label = parameters.get("computation", "exact")
    reason = parameters.get("computation_reason", "")
    if label.startswith("rff("):
        what = f"with random Fourier features (D = {label[4:-1]})"
    elif label == "rff":
        what = "with random Fourier features"
    elif label.startswith("block("):
        what = f"with the linear-time block estimator (blocks of {label[6:-1]} rows)"
    else:
        what = "exactly"
    return f"Computed {what}: {reason}." if reason else f"Computed {what}."
