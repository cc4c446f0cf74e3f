"""Which computation runs a kernel test: exact tiles, random Fourier features or blocks.

* ``"exact"`` — the tile engine's O(n²·B) double sums (:mod:`core.kernels`);
* ``"rff"`` — random Fourier features, O(n·D·B), level exact for any D (:mod:`core.kernels.rff`);
* ``"block"`` — the linear-time block estimator and its asymptotic z-test;
* ``"auto"`` — exact when its estimated time on this machine is at most
  :data:`AUTO_SECONDS`, random Fourier features above.

The estimate is ``n²/2 · columns`` pair-columns at a speed per pair-column: on the threads
engine (the default) a fixed one, :data:`EXACT_PAIR_SECONDS`, measured once on this machine
and written here, so the same data always gets the same computation, whatever the load or
the machine; on the GPU and Dask engines the speed is measured once per process on a small
tile pass (a card or a cluster keeps exact tests for larger n; their speeds differ by orders
of magnitude). Every result records the computation in ``parameters["computation"]`` and,
when chosen automatically, why.

The plan (:func:`plan`) also sizes the approximation. A random-feature test costs
``n·D·(B + 1)·maps`` multiply-adds plus ``n·B`` label draws (:func:`rff_seconds`, at speeds
measured once on this machine and fixed, so that the same data always gets the same plan);
under ``"auto"``, when that exceeds :data:`RFF_SECONDS` the plan halves D (down to
:data:`MIN_FEATURES`), then halves B (down to :data:`MIN_RESAMPLES`). Both keep the
level exact: the approximate statistic is a fixed function of the data for any D, and a
resampling p-value ``(1 + #{null ≥ T})/(1 + B)`` is valid for any B; they cost power — D
little at large n (the statistic's mean does not depend on D, its random-feature noise falls
with n), B the resolution of the p-value. An exact computation estimated above
:data:`EXACT_LIMIT_SECONDS` is refused, with a sentence pointing to the random-feature one.
"""

from __future__ import annotations

import functools
import time
from dataclasses import dataclass

import numpy as np

from core.data.validation import check_choice, check_count
from core.kernels import engine

COMPUTATIONS = ("auto", "exact", "rff", "block")
#: ``"auto"`` runs the exact test when it is expected to take at most this many seconds.
AUTO_SECONDS = 10.0
#: ``"auto"`` sizes a random-feature test (D, then B) to take at most about this long here.
RFF_SECONDS = 4.0
#: The fewest random features and resamples the plan goes down to.
MIN_FEATURES, MIN_RESAMPLES = 32, 100
#: An exact computation estimated to take longer than this is refused.
EXACT_LIMIT_SECONDS = 3600.0


#: Seconds per (pair, column) of the exact sum on the threads engine, its two threads busy:
#: ``python -m benchmarks.streaming calibrate`` measured 2.1e-10 on this two-core machine
#: (load average 2.5; the audits' own measurements gave 2.0e-10 at load 2). Fixed, not
#: re-measured, so ``"auto"`` chooses exact or random features from the data alone.
EXACT_PAIR_SECONDS = 2e-10


def _seconds_per_pair_column(engine_name: str) -> float:
    """Cost of one (pair, column) of the exact sum: :data:`EXACT_PAIR_SECONDS` on the threads
    engine, measured once per process on the others."""
    if engine_name == "threads":
        return EXACT_PAIR_SECONDS
    return measured_seconds_per_pair_column(engine_name)


@functools.cache
def measured_seconds_per_pair_column(engine_name: str) -> float:
    """Measured cost of one (pair, column) of the exact sum on this machine and engine."""
    from core.kernels.tiles import quadratic_forms

    rng = np.random.default_rng(0)
    n, columns = 2048, 256
    points, E = rng.standard_normal((n, 2)), rng.standard_normal((n, columns))
    with engine.whole_machine():
        quadratic_forms(points, E[:, :2])  # warm-up (thread pool, BLAS)
        start = time.perf_counter()
        quadratic_forms(points, E)
        return (time.perf_counter() - start) / (n * n / 2 * columns)


def exact_seconds(n: int, columns: int) -> float:
    """Estimated time of an exact pass over n rows with ``columns`` residual columns.

    Parameters
    ----------
    n : int
        Rows.
    columns : int
        Residual columns.

    Returns
    -------
    float
        Seconds, from this machine's measured speed.
    """
    return _seconds_per_pair_column(engine.current().name) * n * n / 2 * columns


#: Seconds on this two-core machine, its two threads busy, per row·feature·column of a
#: random-feature chunk product (float32 BLAS), per row·feature of the features (a cosine and
#: a sine), and per row·resample of a label draw (Philox): ``python -m benchmarks.streaming
#: calibrate`` measured 7.7e-11, 9.4e-10 and 5.6e-9 on one thread (load average 1.7). The plan
#: is fixed by them, not re-measured, so the same data always gets the same D and B.
RFF_PRODUCT_SECONDS, RFF_FEATURE_SECONDS, RFF_DRAW_SECONDS = 7.5e-11, 1e-9, 3e-9


def rff_seconds(n: int, n_features: int, n_resamples: int, maps: int = 1,
                per_resample: int = 1) -> float:
    """Estimated time on this machine of a random-feature test: ``maps`` maps of
    ``n_features`` features over ``(n_resamples + 1)·per_resample`` residual columns of ``n``
    rows, and the ``n·n_resamples`` label draws."""
    columns = (n_resamples + 1) * per_resample
    return n * (maps * n_features * (RFF_PRODUCT_SECONDS * columns + RFF_FEATURE_SECONDS)
                + RFF_DRAW_SECONDS * n_resamples * per_resample)


@dataclass(frozen=True)
class Plan:
    """What a kernel test runs: ``label`` (``"exact"``, ``"rff(D)"``, ``"block"``), why,
    and the random features and resamples it uses (the plan may lower both at large n).

    Attributes
    ----------
    label : str
        ``"exact"``, ``"rff(D)"`` or ``"block"``.
    reason : str
        Why, in one sentence.
    n_features : int
        Random features D used.
    n_resamples : int
        Resamples B used.
    exact_seconds : float
        Estimated time of the exact computation here.
    """

    label: str
    reason: str
    n_features: int
    n_resamples: int
    exact_seconds: float  # the exact test's estimated time here, with the resamples asked for


def plan(computation: str, n: int, n_resamples: int, n_features: int,
         exact_only: str | None = None, maps: int = 1, per_resample: int = 1,
         lower: bool = True, min_features: int = MIN_FEATURES,
         seconds: float = RFF_SECONDS) -> Plan:
    """The computation of a kernel test on ``n`` rows with ``n_resamples`` resamples, each
    ``per_resample`` residual columns, evaluated under ``maps`` kernels (a bandwidth grid).

    ``"exact"`` and ``"rff"`` run as asked (``"exact"`` is refused past
    :data:`EXACT_LIMIT_SECONDS`); ``"auto"`` runs exact up to :data:`AUTO_SECONDS`, else random
    Fourier features with ``n_features`` or fewer (not below ``min_features``), and B or
    fewer resamples, sized to take about ``seconds`` (module doc; ``lower=False`` keeps both).
    ``exact_only`` names a reason the approximation cannot serve (e.g. a null whose resamples
    cannot be drawn row by row): ``"auto"`` then stays exact, and asking for ``"rff"`` raises
    a ValueError with that reason.

    Parameters
    ----------
    computation : {"auto", "exact", "rff", "block"}
        What was asked.
    n : int
        Rows.
    n_resamples : int
        Resamples B asked for.
    n_features : int
        Random features D asked for.
    exact_only : str, optional
        Why the approximation cannot serve, if it cannot.
    maps : int, default 1
        Kernels evaluated (grid points).
    per_resample : int, default 1
        Residual columns per resample.
    lower : bool, default True
        Whether the plan may lower D and B.
    min_features : int, default 32
        The floor of D.
    seconds : float, default :data:`RFF_SECONDS`
        The time a random-feature test is sized to (at this machine's fixed speeds).

    Returns
    -------
    Plan
    """
    check_choice(computation, COMPUTATIONS, "computation",
                 f"choose one of {', '.join(COMPUTATIONS)}")
    n_features = check_count("n_features", n_features, 1)
    estimate = exact_seconds(n, (n_resamples + 1) * per_resample * maps)
    if computation == "rff" and exact_only:
        raise ValueError(exact_only)
    if computation == "exact" or (computation == "auto" and exact_only):
        if estimate > EXACT_LIMIT_SECONDS:
            raise ValueError(
                f"The exact computation on {n:,} rows would take about {duration(estimate)} "
                f"here, past the {duration(EXACT_LIMIT_SECONDS)} an exact kernel sum may take. "
                "Use computation='rff' (random Fourier features: the test's level stays "
                "exact, O(n·D·B)) or 'auto'"
                + (f"; {exact_only[0].lower()}{exact_only[1:]}" if exact_only else ".")
                + (" Run it on a GPU or a Dask cluster, where the exact sums are faster."
                   if exact_only else ""))
        return Plan("exact", exact_only or "as asked", n_features, n_resamples, estimate)
    if computation != "auto":
        label = f"rff({n_features})" if computation == "rff" else computation
        return Plan(label, "as asked", n_features, n_resamples, estimate)
    if estimate <= AUTO_SECONDS:
        return Plan("exact", f"the exact test takes about {estimate:.1f} s here", n_features,
                    n_resamples, estimate)
    reason = (f"the exact test would take about {estimate:,.0f} s here (over "
              f"{AUTO_SECONDS:g} s); random Fourier features keep the level exact")
    features, resamples = n_features, n_resamples

    budget = seconds

    def seconds() -> float:
        return rff_seconds(n, features, resamples, maps, per_resample)

    while lower and seconds() > budget and features > min_features:
        features = max(min_features, features // 2)
    while lower and seconds() > budget and resamples > MIN_RESAMPLES:
        resamples = max(MIN_RESAMPLES, resamples // 2)
    lowered = [f"D = {features}" if features != n_features else "",
               f"B = {resamples:,} resamples" if resamples != n_resamples else ""]
    if any(lowered):
        reason += (f"; at {n:,} rows the plan takes {' and '.join(x for x in lowered if x)} "
                   f"(about {seconds():,.0f} s here; the level stays exact)")
    return Plan(f"rff({features})", reason, features, resamples, estimate)


def choose(computation: str, n: int, columns: int, n_features: int,
           exact_only: str | None = None) -> tuple[str, str]:
    """``(label, reason)`` of :func:`plan` for a test of ``columns`` residual columns in all,
    without lowering D or B (for callers that cannot change them).

    Parameters
    ----------
    computation : {"auto", "exact", "rff", "block"}
        What was asked.
    n : int
        Rows.
    columns : int
        Residual columns in all.
    n_features : int
        Random features D.
    exact_only : str, optional
        Why the approximation cannot serve, if it cannot.

    Returns
    -------
    label, reason : str
    """
    chosen = plan(computation, n, max(columns - 1, 0), n_features, exact_only, lower=False)
    return chosen.label, chosen.reason


def duration(seconds: float) -> str:
    """``"40 s"``, ``"12 minutes"``, ``"3.5 hours"``, ``"2.1 days"``."""
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} minutes"
    if seconds < 172800:
        return f"{seconds / 3600:.1f} hours"
    return f"{seconds / 86400:.1f} days"


def summary(parameters: dict) -> str:
    """One sentence for a page or report: which computation ran and why, from a result's
    ``parameters`` (``"computation"``, ``"computation_reason"``).

    Parameters
    ----------
    parameters : dict
        A result's ``parameters`` with ``computation`` and ``computation_reason``.
    """
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
