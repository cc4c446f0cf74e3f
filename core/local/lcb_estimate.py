"""Local calibration bias (LCB): where the model is biased, and by how much.

I-trustworthy eq. 7 (Vashistha & Farahi, §3.3): the kernel-weighted mean residual around a
query point (p', x'),

    LCB(p', x') = Σ_i e_i k(p_i, p') l(x_i, x') / Σ_i k(p_i, p') l(x_i, x'),   e_i = y_i − p_i,

over a labelled reference set (the calibration split in the paper's COMPAS audit; without a
separate query set the same rows are used leaving each row out of its own sum). A query
point whose total kernel weight is below ``MIN_WEIGHT`` has no neighbours and gets NaN. Positive
LCB: more events than predicted — the model underestimates the risk there. Kernels and
bandwidths are those of KLCE² (:mod:`core.stattests.klce`); query features are standardised
with the reference set's means and standard deviations.

Trends per group and the subgroup ranking are in :mod:`core.local.lcb_trends`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

from core.data.validation import check_choice, check_probs, check_probs_labels
from core.kernels.resampling import row_sample
from core.kernels.spec import KernelSpec, inputs_for, query_points, resolve, spec_from
from core.kernels.tiles import kernel_matmul

#: Total kernel weight below which a query point has no reference neighbours (LCB is NaN).
MIN_WEIGHT = 1e-12


def lcb(
    probs: np.ndarray,
    y: np.ndarray,
    X: np.ndarray | None,
    query_probs: np.ndarray | None = None,
    query_X: np.ndarray | None = None,
    prob_bandwidth: float | None = None,
    feature_bandwidth: float | None = None,
    standardize: bool = True,
    class_index: int | None = None,
    *,
    spec: KernelSpec | None = None,
) -> np.ndarray:
    """LCB at every query row (eq. 7); no query given = the reference rows, leave-one-out.

    Kernel settings as keyword arguments or one :class:`~core.kernels.spec.KernelSpec`; query
    rows are standardised with the reference rows' centre and scale.

    Parameters
    ----------
    probs : array_like
        ``(n,)`` P(y = 1) of a binary model, or ``(n, m)`` class probabilities.
        The reference rows (the calibration split).
    y : array_like
        ``(n,)`` integer labels ``0..m-1``.
    X : array_like or None
        ``(n, d)`` numeric audit features (one-hot encoded categoricals); ``None`` or no
        columns: the prediction kernel alone.
    query_probs, query_X : array_like, optional
        The rows where LCB is evaluated; ``None``: the reference rows, leave-one-out.
    prob_bandwidth, feature_bandwidth : float, optional
        Bandwidths of the prediction and feature kernels; ``None``: the median heuristic.
    standardize : bool, default True
        Scale each feature column to unit spread before the feature kernel.
    class_index : int, optional
        For several classes: the class whose residual is tested (default: every class).
    spec : KernelSpec, optional
        The kernel settings as one value (:class:`core.kernels.KernelSpec`), instead of the
        keyword arguments above.

    Returns
    -------
    numpy.ndarray
        LCB at every query row: ``(n_query,)``, or ``(n_query, m)`` for every class.
    """
    p, labels = check_probs_labels(probs, y)
    inputs = inputs_for(p, labels, X, spec_from(spec, prob_bandwidth, feature_bandwidth,
                                                standardize, class_index))
    same = query_probs is None
    query = inputs.points if same else query_points(inputs, check_probs(query_probs), query_X)
    weights = np.column_stack([inputs.residuals, np.ones(inputs.p.shape[0])])
    sums = kernel_matmul(query, inputs.points, weights, 1.0, exclude_self=same)
    return np.divide(sums[:, 0], sums[:, 1], out=np.full(sums.shape[0], np.nan),
                     where=sums[:, 1] > MIN_WEIGHT)


# --------------------------------------------------------------------------- LCB at scale

COMPUTATIONS = ("auto", "exact", "sampled")
#: ``computation="auto"`` computes LCB exactly while that is estimated to take at most this.
AUTO_SECONDS = 10.0
#: The sampled LCB: reference rows (a seeded sample) the smoother averages over…
SAMPLE_REFERENCE = 20_000
#: …and query rows (a seeded sample) it is evaluated at — the most a chart draws.
SAMPLE_QUERY = 50_000
#: Evaluated rows on which the effective number of neighbours is measured.
NEIGHBOUR_ROWS = 2_000


#: Seconds on this two-core machine, both threads working, per (query, reference) pair of
#: :func:`kernel_matmul` with two weight columns, and per kernel coordinate of such a pair:
#: 4,096 × 4,096 pairs measured 6.6e-9 at 1 to 4 coordinates and 8.7e-9 at 8 (load average
#: 8.3). The plan is fixed by them, not re-measured: the same data always gets the same
#: computation (exact or sampled) and the same sentence.
PAIR_SECONDS, COORDINATE_SECONDS = 6e-9, 3e-10


def _seconds_per_pair(columns: int) -> float:
    """Estimated time of one (query, reference) pair on ``columns`` kernel coordinates."""
    return PAIR_SECONDS + COORDINATE_SECONDS * columns


@dataclass(frozen=True)
class LcbPlan:
    """Which LCB computation runs: ``"exact"`` (every query row from every reference row) or
    ``"sampled"`` (the seeded row samples ``reference_rows`` and ``query_rows``), with the
    estimated time of each and why."""

    computation: str
    reference_rows: np.ndarray | None  # None: all reference rows
    query_rows: np.ndarray | None  # None: all query rows
    seconds: float
    exact_seconds: float
    reason: str
    seed: int


def plan_lcb(n_reference: int, n_query: int, same: bool, columns: int,
             computation: str = "auto", seed: int = 0,
             reference_size: int = SAMPLE_REFERENCE,
             query_size: int = SAMPLE_QUERY) -> LcbPlan:
    """Exact LCB while its estimated time (``n_query · n_reference`` pairs at the fixed cost
    :data:`PAIR_SECONDS` plus :data:`COORDINATE_SECONDS` per kernel coordinate) is at most
    :data:`AUTO_SECONDS`, else the sampled LCB (:func:`lcb_estimate`).

    Sampled rows are drawn with ``numpy.random.default_rng(seed)``: first ``reference_size``
    reference rows, then ``query_size`` query rows — from the rows *not* drawn as reference
    when the query rows are the reference rows (``same``), so no row is in its own estimate,
    as in the exact leave-one-out computation.
    """
    check_choice(computation, COMPUTATIONS, "computation",
                 f"choose one of {', '.join(COMPUTATIONS)}")
    speed = _seconds_per_pair(columns)
    exact_seconds = speed * n_query * n_reference
    if computation == "exact" or (computation == "auto" and exact_seconds <= AUTO_SECONDS):
        reason = "as asked" if computation == "exact" else \
            f"the exact LCB takes about {exact_seconds:.1f} s here"
        return LcbPlan("exact", None, None, exact_seconds, exact_seconds, reason, seed)
    rng = np.random.default_rng(seed)
    m = min(reference_size, n_reference if not same else max(n_reference // 2, 1))
    reference_rows = np.sort(rng.choice(n_reference, m, replace=False))
    if same:  # the rows not drawn as reference, in order (setdiff1d without its sort)
        drawn = np.zeros(n_query, dtype=bool)
        drawn[reference_rows] = True
        pool = np.flatnonzero(~drawn)
    else:
        pool = np.arange(n_query)
    query_rows = np.sort(rng.choice(pool, min(query_size, pool.size), replace=False))
    reason = "as asked" if computation == "sampled" else \
        (f"the exact LCB would take about {exact_seconds:,.0f} s here "
         f"(over {AUTO_SECONDS:g} s)")
    return LcbPlan("sampled", reference_rows, query_rows,
                   speed * reference_rows.size * query_rows.size, exact_seconds, reason, seed)


@dataclass(frozen=True)
class LcbEstimate:
    """LCB (eq. 7) at the evaluated query rows, with how it was computed.

    ``values[k]`` is the LCB of query row ``rows[k]`` (``rows`` is ``None`` when every query
    row was evaluated, in order). For the sampled computation ``neighbours`` is the median
    effective number of reference neighbours ``(Σ_i k_i)² / Σ_i k_i²`` of the evaluated rows
    (measured on up to :data:`NEIGHBOUR_ROWS` of them) and ``noise`` the standard deviation
    of the residuals divided by its square root — the order of the sampling noise of one
    LCB value; NaN for the exact computation.
    """

    values: np.ndarray
    rows: np.ndarray | None
    plan: LcbPlan
    n_reference: int
    n_query: int
    neighbours: float = float("nan")
    noise: float = float("nan")

    def describe(self) -> str:
        """One sentence for a caption: which computation ran, on which rows."""
        if self.plan.computation == "exact":
            return (f"Exact: every one of the {self.n_query:,} evaluated rows from all "
                    f"{self.n_reference:,} reference rows.")
        return (f"Sampled: LCB at {self.plan.query_rows.size:,} of {self.n_query:,} rows from "
                f"a reference of {self.plan.reference_rows.size:,} of {self.n_reference:,} "
                f"rows (seed {self.plan.seed}; {self.plan.reason}); median effective "
                f"neighbours {self.neighbours:,.0f}, so one value's sampling noise is about "
                f"±{self.noise:.3f} (the full reference: about "
                f"±{self.noise * np.sqrt(self.plan.reference_rows.size / self.n_reference):.3f}"
                ").")


def lcb_estimate(
    probs: np.ndarray,
    y: np.ndarray,
    X: np.ndarray | None,
    query_probs: np.ndarray | None = None,
    query_X: np.ndarray | None = None,
    *,
    spec: KernelSpec,
    computation: str = "auto",
    seed: int = 0,
    reference_size: int = SAMPLE_REFERENCE,
    query_size: int = SAMPLE_QUERY,
) -> LcbEstimate:
    """LCB (eq. 7) exactly, or from seeded row samples when the exact sums are too slow.

    The exact computation is :func:`lcb` (unchanged: all query rows, all reference rows,
    leave-one-out when no query is given). It costs ``n_query · n_reference`` kernel pairs —
    about 10¹² at a million rows, hours on two cores. The sampled one (:func:`plan_lcb`)
    evaluates the same estimator with a seeded sample of ``reference_size`` reference rows
    at a seeded sample of ``query_size`` query rows, ``reference_size · query_size`` pairs
    (10⁹ by default, seconds), whatever the data size.

    Why this approximation: LCB is a Nadaraya–Watson smoother of the residuals, so with a
    uniform random subsample of the reference rows it is the same estimator on fewer rows —
    no bias beyond the smoother's own (the bandwidths stay those chosen by cross-validation,
    which itself runs on a 1,500-row sample, :func:`select_bandwidths`), only more variance:
    each value averages over ``n_eff = (Σk)²/Σk²`` effective neighbours instead of about
    ``n_eff · N/m``, so its noise is about ``sd(e)/√n_eff`` instead of ``√(m/N)`` times
    that. Both are measured and stated (:meth:`LcbEstimate.describe`). A grid smoother was
    not an option: the product kernel runs on the prediction plus every encoded audit
    feature (ten dimensions for the scale table), too many for a grid. Evaluating at a
    sample of the query rows loses nothing a page shows: the scatter draws at most 50,000
    points, and subgroup means over thousands of sampled rows differ from the all-row means
    by far less than the noise of the values themselves.

    Parameters
    ----------
    probs : array_like
        ``(n,)`` P(y = 1) of a binary model, or ``(n, m)`` class probabilities.
        The reference rows.
    y : array_like
        ``(n,)`` integer labels ``0..m-1``.
    X : array_like or None
        ``(n, d)`` audit features.
    query_probs, query_X : array_like, optional
        Where LCB is evaluated; ``None``: the reference rows, leave-one-out.
    spec : KernelSpec
        The kernel settings.
    computation : {"auto", "exact", "sampled"}
        Exact sums, the seeded samples, or the cheaper that is accurate enough.
    seed : int, default 0
        Seed of the samples.
    reference_size, query_size : int
        Sample sizes of the sampled computation.

    Returns
    -------
    LcbEstimate
    """
    p, labels = check_probs_labels(probs, y)
    inputs = inputs_for(p, labels, X, spec)
    same = query_probs is None
    n_reference = inputs.p.shape[0]
    n_query = n_reference if same else np.shape(query_probs)[0]
    plan = plan_lcb(n_reference, n_query, same, inputs.points.shape[1], computation, seed,
                    reference_size, query_size)
    if plan.computation == "exact":
        values = lcb(probs, y, X, query_probs, query_X, spec=spec)
        return LcbEstimate(values, None, plan, n_reference, n_query)
    query = inputs.points if same else query_points(inputs, check_probs(query_probs), query_X)
    query = query[plan.query_rows]
    reference = inputs.points[plan.reference_rows]
    e = inputs.residuals[plan.reference_rows]
    sums = kernel_matmul(query, reference, np.column_stack([e, np.ones(e.size)]), 1.0)
    values = np.divide(sums[:, 0], sums[:, 1], out=np.full(sums.shape[0], np.nan),
                       where=sums[:, 1] > MIN_WEIGHT)
    # effective neighbours: k² is the Gaussian kernel of the coordinates scaled by √2
    probe = np.linspace(0, query.shape[0] - 1, min(NEIGHBOUR_ROWS, query.shape[0])).astype(int)
    with threadpool_limits(limits=1, user_api="blas"):  # few tile rows (select_bandwidths)
        squares = kernel_matmul(query[probe] * np.sqrt(2.0), reference * np.sqrt(2.0),
                                np.ones(reference.shape[0]), 1.0)
    total = sums[probe, 1]
    with np.errstate(divide="ignore", invalid="ignore"):
        n_eff = np.where(squares > 0, total**2 / squares, 0.0)
    neighbours = float(np.median(n_eff))
    noise = float(np.std(e) / np.sqrt(neighbours)) if neighbours > 0 else float("inf")
    return LcbEstimate(values, plan.query_rows, plan, n_reference, n_query, neighbours, noise)


def select_bandwidths(
    probs: np.ndarray,
    y: np.ndarray,
    X: np.ndarray | None,
    factors: Sequence[float] = (0.0625, 0.125, 0.25, 0.5, 1.0, 2.0),
    standardize: bool = True,
    class_index: int | None = None,
    max_rows: int = 1500,
    seed: int = 0,
) -> tuple[float, float, pd.DataFrame]:
    """Bandwidths for LCB by leave-one-out cross-validation of the residual smoother.

    LCB is a Nadaraya–Watson regression of the residuals e on (p, x); its bandwidths trade
    bias for noise, and the median heuristic — a sensible scale for a test statistic — is
    often far too wide for a map of the bias (one-hot group columns dominate the median
    distance, so every group borrows from every other). The score of a bandwidth pair is
    ``CV(σ_p, σ_x) = (1/n) Σ_i (e_i − LCB_{−i}(p_i, x_i))²`` on at most ``max_rows`` rows
    (a seeded subsample), over the median heuristic × ``factors`` for each kernel; the
    minimiser is returned with the table of scores. When the residuals carry no local
    structure the widest pair wins and LCB stays flat near zero.

    Parameters
    ----------
    probs : array_like
        ``(n,)`` P(y = 1) of a binary model, or ``(n, m)`` class probabilities.
    y : array_like
        ``(n,)`` integer labels ``0..m-1``.
    X : array_like or None
        ``(n, d)`` numeric audit features (one-hot encoded categoricals); ``None`` or no
        columns: the prediction kernel alone.
    factors : sequence of float
        Multiples of the median heuristic tried for each kernel.
    standardize : bool, default True
        Scale each feature column to unit spread.
    class_index : int, optional
        For several classes: the class whose residual is tested (default: every class).
    max_rows : int, default 1500
        Rows of the seeded subsample scored.
    seed : int, default 0
        Seed of the subsample.

    Returns
    -------
    prob_bandwidth, feature_bandwidth : float
        The minimiser of CV.
    scores : pandas.DataFrame
        CV of every pair tried.
    """
    p, labels = check_probs_labels(probs, y)
    full = inputs_for(p, labels, X, KernelSpec(np.inf, np.inf, standardize, class_index))
    n = full.p.shape[0]
    rows = row_sample(n, max_rows, seed)
    sample = replace(full, p=full.p[rows], residuals=full.residuals[rows],
                     features=full.features[rows], points=full.points[rows])
    base = resolve(KernelSpec(standardize=standardize, class_index=class_index), sample.p,
                   sample.features)
    base_p, base_x = base.prob_bandwidth, base.feature_bandwidth
    e = sample.residuals
    weights = np.column_stack([e, np.ones(e.size)])
    scores = []
    # the sums of at most 1,500 rows are a few tile rows, computed with the BLAS threads the
    # library finds: held to one, as each tile task of a larger sum is, they take half the
    # CPU time of two (and the scores do not depend on how many threads BLAS starts)
    with threadpool_limits(limits=1, user_api="blas"):
        for fp in factors:
            for fx in factors if np.isfinite(base_x) else (1.0,):
                points = sample.at(base_p * fp, base_x * fx).points
                sums = kernel_matmul(points, points, weights, 1.0, exclude_self=True)
                # a row with no neighbour at this bandwidth is predicted to have no bias
                fitted = np.divide(sums[:, 0], sums[:, 1], out=np.zeros(e.size),
                                   where=sums[:, 1] > MIN_WEIGHT)
                scores.append((base_p * fp, base_x * fx,
                               float(np.mean((e - fitted) ** 2))))
    table = pd.DataFrame(scores, columns=["prob_bandwidth", "feature_bandwidth", "cv_error"])
    best = table.loc[table["cv_error"].idxmin()]
    return float(best["prob_bandwidth"]), float(best["feature_bandwidth"]), table

