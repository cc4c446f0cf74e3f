"""The random-feature pass of a streamed audit (:mod:`core.stream`, pass 3): the KLCE
bandwidth grid, the SKCE consistency test and the SKCE value as sums of random Fourier
features (:mod:`core.kernels.rff`), their maps and plans (:func:`kernel_setup`), the batches'
sums added chunk by chunk (:class:`KernelTask`, :class:`KernelMerge`) and the tests' results
from them (:func:`kernel_results`).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np
import pandas as pd

from core.audit.reliability import SKCE_RESAMPLES
from core.data.stream_decoding import decode
from core.data.stream_sources import Partition
from core.kernels import engine
from core.kernels.computation import Plan
from core.kernels.computation import plan as computation_plan
from core.kernels.rff import (
    CHUNK_ROWS,
    DEFAULT_FEATURES,
    TEST_FEATURES,
    FourierAccumulator,
    FourierMap,
    bernoulli_columns,
)
from core.kernels.spec import KernelSpec, one_vs_rest, product_points
from core.kernels.tiles import Standardizer, median_heuristic
from core.metrics.order_statistics import OrderStatistics, merge_parts
from core.metrics.skce_estimate import VALUE_FEATURES, SkceFourierSums, prediction_residuals
from core.stattests.klce import fourier_maps, fourier_values, null_scheme
from core.stattests.klce_grid import GridTestResult, bandwidth_grid, grid_result
from core.stattests.result import TestResult, resampling_result
from core.stattests.skce import TEST_SECONDS, consistency_columns
from core.stream.plan import StreamPlan
from core.stream.row_sums import standardizer_of

#: Why the kernel tests of a streamed audit never run exactly.
STREAMED_REASON = ("the rows are streamed, and an exact kernel sum needs every pair of rows "
                   "at once; random Fourier features keep the level exact")


@dataclass(frozen=True)
class KernelSetup:
    """The maps and plans of pass 3's random-feature sums."""

    standardizer: Standardizer | None
    grid_map: FourierMap
    grid_bandwidths: np.ndarray  # (maps, columns)
    grid_plan: Plan
    skce_map: FourierMap
    skce_sigma: float
    skce_plan: Plan
    value_map: FourierMap
    value_plan: Plan
    value_resamples: int
    kernel_spec: KernelSpec  # the grid's centre, resolved
    grids: tuple[np.ndarray, np.ndarray]  # σ_p and σ_x of the grid


@dataclass(frozen=True)
class Fragment:
    """Audited rows ``start …`` of one random-feature chunk that a batch boundary cut: what
    the chunk's sums need, kept until the rest of the chunk's rows arrive (:meth:`then`)."""

    start: int
    coordinates: np.ndarray
    p: np.ndarray
    residual: np.ndarray
    Z: np.ndarray
    R: np.ndarray

    @property
    def stop(self) -> int:
        return self.start + int(self.p.shape[0])

    def complete(self, n: int) -> bool:
        """Whether these are all the rows of their chunk (``n`` audited rows in all)."""
        return self.start % CHUNK_ROWS == 0 and (self.stop % CHUNK_ROWS == 0 or self.stop == n)

    def then(self, other: Fragment) -> Fragment:
        """These rows followed by ``other``'s (the next ones)."""
        return Fragment(self.start, *(np.concatenate([a, b]) for a, b in zip(
            (self.coordinates, self.p, self.residual, self.Z, self.R),
            (other.coordinates, other.p, other.residual, other.Z, other.R), strict=True)))


@dataclass(frozen=True)
class KernelTask:
    """Pass 3: the random-feature sums of the KLCE grid, the SKCE test and the SKCE value,
    with the order statistics' next round.

    The sums are accumulated chunk by chunk, the chunks at multiples of
    :data:`~core.kernels.rff.CHUNK_ROWS` among the audited rows, as in memory. A chunk that
    a batch boundary cuts is not summed in pieces (the float32 chunk products would round
    otherwise): its rows travel with the result as :class:`Fragment` and
    :class:`KernelMerge` sums the chunk once the neighbouring batch brings the rest, so the
    sums are the same whatever the batches."""

    plan: StreamPlan
    setup: KernelSetup
    request: dict

    def __call__(self, partition: Partition, frame: pd.DataFrame) -> dict:
        plan, setup = self.plan, self.setup
        chunk = decode(frame, plan.schema, partition.start)
        rows, start = plan.audited(chunk, partition)
        p, outcome = one_vs_rest(rows.probs, rows.y, plan.tested)
        X = rows.X[:, plan.feature_index]
        if setup.standardizer is not None and X.shape[1]:
            X = setup.standardizer.transform(X)
        coordinates = product_points(p, X, 1.0, 1.0)
        Z, R = prediction_residuals(rows.probs, rows.y)
        result = self.empty()
        # chunks at multiples of CHUNK_ROWS among the audited rows, as in memory
        edges = sorted({0, rows.rows, *range(-start % CHUNK_ROWS, rows.rows, CHUNK_ROWS)})
        for a, b in zip(edges[:-1], edges[1:], strict=True):
            piece = Fragment(start + a, coordinates[a:b], p[a:b], outcome[a:b] - p[a:b],
                             Z[a:b], R[a:b])
            if piece.complete(plan.n_audited):
                self.add(result, piece)
            else:
                result["fragments"].append(piece)
        result["order"] = {key: OrderStatistics.part(self.request, key,
                                                     plan.order_vectors(rows, key))
                           for key in self.request}
        return result

    def empty(self) -> dict:
        """Sums of no rows."""
        setup = self.setup
        m = int(setup.skce_map.weights.shape[0])
        return {"grid": FourierAccumulator(setup.grid_map, setup.grid_bandwidths),
                "test": FourierAccumulator(setup.skce_map, np.ones((1, m))),
                "value": SkceFourierSums(setup.value_map, m,
                                         setup.value_resamples, self.plan.settings.seed),
                "fragments": [], "order": {}}

    def add(self, sums: dict, piece: Fragment) -> None:
        """A whole chunk's rows added to the three random-feature sums."""
        setup, seed = self.setup, self.plan.settings.seed
        rows = slice(0, int(piece.p.shape[0]))
        grid_columns = bernoulli_columns(piece.p, piece.residual, setup.grid_plan.n_resamples,
                                         seed, offset=piece.start)
        test_columns = consistency_columns(piece.Z, piece.R, setup.skce_plan.n_resamples, seed,
                                           offset=piece.start)
        sums["grid"].add(piece.coordinates, grid_columns(rows))
        sums["test"].add(piece.Z / setup.skce_sigma, test_columns(rows))
        sums["value"].add(piece.Z / setup.skce_sigma, piece.R, piece.start)


@dataclass(frozen=True)
class KernelMerge:
    """Pass 3's sums of a batch added to those of the batches before it; a chunk cut by
    their boundary is summed once its rows meet (:class:`KernelTask`)."""

    task: KernelTask

    def __call__(self, total: dict, part: dict) -> dict:
        total["grid"].merge(part["grid"])
        total["test"].merge(part["test"])
        total["value"] = total["value"] + part["value"]
        total["order"] = merge_parts([total["order"], part["order"]])
        left, right = total["fragments"], list(part["fragments"])
        if left and right and left[-1].stop == right[0].start:
            joined = left.pop().then(right.pop(0))
            if joined.complete(self.task.plan.n_audited):
                self.task.add(total, joined)
            else:
                left.append(joined)
        total["fragments"] = left + right
        return total


def kernel_plan(computation: str, n: int, resamples: int, features: int, maps: int = 1,
                per_resample: int = 1, min_features: int | None = None,
                seconds: float | None = None) -> Plan:
    """:func:`core.kernels.computation.plan` for streamed rows: random features always
    (``"auto"``: D and B sized to the data, to about ``seconds`` when given; ``"rff"``: as
    asked)."""
    options = {} if min_features is None else {"min_features": min_features}
    if seconds is not None:
        options["seconds"] = seconds
    chosen = computation_plan(computation, n, resamples, features, None, maps, per_resample,
                              **options)
    if chosen.label == "exact":
        return Plan(f"rff({features})", STREAMED_REASON, features, resamples,
                    chosen.exact_seconds)
    return dataclasses.replace(chosen, reason=chosen.reason.replace(
        "the exact test would take", "exact sums (over every pair of rows, all held at once) "
        "would take"))


def kernel_setup(plan: StreamPlan, sums: dict) -> KernelSetup:
    """Standardisation and bandwidths from pass 2 (the median heuristic on the same rows as
    in memory), and the plans (D, B) of the three random-feature sums."""
    settings, n = plan.settings, plan.n_audited
    standardizer = standardizer_of(sums["moments"]) if plan.feature_index else None
    positions, rows = sums["median"]
    lookup = np.argsort(positions)  # the gathered rows, put in the order they were drawn
    rows = rows.take(lookup[np.searchsorted(positions[lookup], plan.median)])
    p, _ = one_vs_rest(rows.probs, rows.y, plan.tested)
    sigma_p = median_heuristic(p)
    X = rows.X[:, plan.feature_index]
    sigma_x = np.inf if standardizer is None else median_heuristic(standardizer.transform(X))
    kernel_spec = KernelSpec(float(sigma_p), float(sigma_x), True, plan.tested)
    p_grid = bandwidth_grid(sigma_p)
    x_grid = bandwidth_grid(sigma_x) if np.isfinite(sigma_x) else np.array([np.inf])
    pairs = [(a, b) for a in p_grid for b in x_grid]
    dimension = 1 + (X.shape[1] if np.isfinite(sigma_x) else 0)
    grid_plan = kernel_plan(settings.computation, n, settings.grid_resamples,
                            settings.grid_features, len(pairs))
    grid_map, per_column = fourier_maps(dimension, dimension - 1, pairs, grid_plan.n_features,
                                        settings.seed)
    Z, _ = prediction_residuals(rows.probs, rows.y)
    m = 1 if plan.schema.n_classes == 2 else plan.schema.n_classes
    skce_plan = kernel_plan(settings.computation, n, settings.test_resamples, TEST_FEATURES,
                            per_resample=m, seconds=TEST_SECONDS)
    resamples = min(settings.n_bootstrap, SKCE_RESAMPLES)
    value_plan = kernel_plan(settings.computation, n, resamples, DEFAULT_FEATURES,
                             per_resample=m, min_features=VALUE_FEATURES)
    return KernelSetup(standardizer, grid_map, per_column, grid_plan,
                       FourierMap.draw(Z.shape[1], skce_plan.n_features, settings.seed),
                       float(median_heuristic(Z)), skce_plan,
                       FourierMap.draw(Z.shape[1], value_plan.n_features, settings.seed),
                       value_plan, value_plan.n_resamples if resamples else 0, kernel_spec,
                       (p_grid, x_grid))


def kernel_results(plan: StreamPlan, kernel: dict, setup: KernelSetup
                   ) -> tuple[GridTestResult, TestResult]:
    """The KLCE grid's result and the SKCE consistency test from the random-feature sums."""
    settings, n = plan.settings, plan.n_audited
    m = 1 if plan.schema.n_classes == 2 else plan.schema.n_classes
    values = kernel["test"].sums()[0].plain().reshape(-1, m).sum(axis=1) / (n * (n - 1))
    consistency = resampling_result(
        values[0], values[1:], "consistency", bandwidth=setup.skce_sigma,
        estimator="unbiased", seed=settings.seed, engine=engine.current().describe(),
        computation=setup.skce_plan.label, computation_reason=setup.skce_plan.reason)
    variants = null_scheme(settings.null)[1]
    p_grid, x_grid = setup.grids
    grid_values = fourier_values(kernel["grid"].sums(), variants, n).reshape(
        p_grid.size, x_grid.size, len(variants), -1)
    grid = grid_result(grid_values, p_grid, x_grid, settings.null, variants,
                       setup.grid_plan.n_resamples, settings.seed, setup.kernel_spec,
                       setup.grid_plan.label, setup.grid_plan.reason, np.inf)
    return grid, consistency
