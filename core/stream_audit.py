"""The audit of a table larger than memory: a few passes over its partitions, on this
machine's threads or a Dask cluster, into the same :class:`~core.audit.AuditResult` as
:func:`core.audit.run_audit`.

No pass holds more than a few batches of rows (:mod:`core.data.stream`): the table's row
groups or partitions are cut into batches whose size the memory plan gives
(:func:`core.kernels.memory.batch_plan`: the rows a batch's arrays allow within the budget),
whatever the file's layout. Each pass returns sums, and the batches' sums add up
(:func:`core.kernels.engine.map_partitions`); every draw and chunk is keyed to row numbers,
so the batch boundaries change no number:

1. **schema** — the label values, categorical levels and split counts (which rows each
   partition audits);
2. **sums** — every sum over rows: per-row scores (accuracy, Brier, log loss) and the class
   balance, the equal-width bins of the notion's series overall and per group level, the
   Spiegelhalter sums, the audited features' moments (the kernel tests' standardisation), the
   first histogram of every exact order statistic (:mod:`core.metrics.order_statistics`; the
   numeric slice columns' quantile edges among them), the Poisson bootstrap of all of them,
   the slice columns' tallies (:class:`~core.local.slice_streamed.ColumnTally`) and the rows
   of the seeded sample;
3. **random features** — the KLCE bandwidth grid, the SKCE consistency test and the SKCE
   value with its Poisson bootstrap, each resample's labels drawn per row from the
   counter-based generator at the row's number among the audited rows, so the sums equal the
   in-memory ones (:mod:`core.kernels.rff`); with the order statistics' second round;
4. **equal-mass bins and slices** — once the order statistics are exact (a further pass where
   long tied runs need one): ACE, top-label ACE, the debiased ECE and their bootstrap,
   equal-mass reliability tables, and Hosmer–Lemeshow's equal-size groups, overall and per
   group level; and every slice's cell sums, from which the findings' family of slices and
   their exact sums are built as in memory (:mod:`core.local.slice_streamed`).

What is not a sum over rows — the smooth ECE, ICI, the calibration slope and Cox's test,
the CORP decompositions, the cumulative differences and their tests, the SKCE block test,
LCB and the LCE, and the slice findings' max-``|T|`` null (B consistency resamples of each row) —
is computed by the in-memory functions on a seeded sample of
:data:`SAMPLE_ROWS` rows of the table, drawn by row number (so it is the same sample
wherever the partitions are read), and the result says which numbers came from it
(:class:`~core.audit.StreamInfo`). The kernel tests run with random Fourier features: an exact
sum over all pairs of rows needs them all at once.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from core import metrics as metric_functions
from core.audit import (
    SKCE_RESAMPLES,
    SKCE_ROW,
    AuditResult,
    AuditSettings,
    ReliabilitySection,
    StreamInfo,
    extended_metrics,
    feature_columns_of,
    lcb_section,
    lce_section,
)
from core.data.audit_data import AuditData
from core.data.groups import MIN_GROUP_ROWS
from core.data.mapping import ColumnMapping
from core.data.problems import DataError, quote_list
from core.data.stream import (
    Chunk,
    Partition,
    StreamSchema,
    TableSource,
    audit_data,
    categorical_columns,
    chunk_digest,
    combine_schema,
    concatenate,
    decode,
    decode_columns,
    merge_notes,
    schema_columns,
    schema_part,
    stream_fingerprint,
)
from core.kernels import engine
from core.kernels.computation import Plan
from core.kernels.computation import plan as computation_plan
from core.kernels.computation import summary as computation_summary
from core.kernels.memory import MemoryPlan, batch_plan, default_budget
from core.kernels.resampling import row_sample
from core.kernels.rff import (
    CHUNK_ROWS,
    DEFAULT_FEATURES,
    TEST_FEATURES,
    FourierAccumulator,
    FourierMap,
    bernoulli_columns,
)
from core.kernels.spec import KernelSpec, one_vs_rest, product_points
from core.kernels.tiles import MEDIAN_SAMPLE, Standardizer, median_heuristic
from core.local.slice_discovery import (
    SliceDiscovery,
    prediction_column_name,
    prediction_values,
    slice_notion_of,
    slice_targets,
)
from core.local.slice_streamed import (
    CellSums,
    ColumnTally,
    RawCoding,
    SliceColumn,
    StreamedFamily,
    cell_sums,
    order_keys,
    order_positions,
    order_values,
    raw_codings,
    row_hashes,
    row_targets,
    streamed_discovery,
    streamed_family,
)
from core.metrics.intervals import bootstrap_interval
from core.metrics.order_statistics import OrderStatistics, first_interval, merge_parts
from core.metrics.scores import resolve_notion
from core.metrics.skce_estimate import VALUE_FEATURES, SkceFourierSums, prediction_residuals
from core.metrics.streamed import (
    TOP,
    BinnedSums,
    RowSums,
    binned_value,
    class_series,
    metrics_table_from,
    notion_series,
    poisson_weights,
    quantile_binning,
    quantile_targets,
    reliability_table_from,
    series_values,
    uniform_binning,
)
from core.stattests import clinical as clinical_tests
from core.stattests import cumulative as cumulative_tests
from core.stattests.goodness_of_fit import StreamedGroups, group_boundaries
from core.stattests.klce import fourier_maps, fourier_values, null_scheme
from core.stattests.klce_grid import GridTestResult, bandwidth_grid, grid_result
from core.stattests.result import TestResult, resampling_result
from core.stattests.skce import bound_test, consistency_columns, skce_test

Progress = Callable[[float, str], None]

#: Rows of the seeded sample of the sections that are not sums over rows.
SAMPLE_ROWS = 200_000
#: Why the kernel tests of a streamed audit never run exactly.
STREAMED_REASON = ("the rows are streamed, and an exact kernel sum needs every pair of rows "
                   "at once; random Fourier features keep the level exact")


@dataclass(frozen=True)
class StreamedAudit:
    """A streamed audit: the :class:`AuditResult` (with its :class:`StreamInfo`) and the
    seeded sample of the table as an :class:`AuditData` (its figures draw rows from it)."""

    result: AuditResult
    sample: AuditData


# --------------------------------------------------------------------------- the plan


@dataclass(frozen=True)
class Spec:
    """What every partition task needs: the schema, the settings, the audited rows."""

    schema: StreamSchema
    settings: AuditSettings
    notion: str
    class_index: int | None  # the classwise notion's class (None otherwise)
    tested: int | None  # the class the kernel tests test one-vs-rest (None: positive class)
    part: str | None  # the split audited (None: all rows)
    offsets: tuple[int, ...]  # audited rows before each partition
    n_audited: int
    feature_index: tuple[int, ...]  # encoded columns of the chosen audit features
    bootstrap: int
    sample: np.ndarray  # table rows of the seeded sample, sorted
    median: np.ndarray  # audited indices of the median heuristic's rows (its order)
    slice_columns: tuple[SliceColumn, ...] = ()  # the columns slices are cut on
    slice_sources: tuple[tuple[str, int, int], ...] = ()  # ("X"|"group", first, width)
    slice_notion: str = "positive"  # what the slices test (discover_slices' notion)

    def slice_data(self, chunk: Chunk, j: int) -> np.ndarray:
        """Slice column ``j`` of a chunk: a numeric feature's values, a categorical
        feature's or group's level codes (into the table's sorted levels)."""
        kind, first, width = self.slice_sources[j]
        if kind == "group":
            return chunk.groups[self.slice_columns[j].name]
        if kind == "prediction":
            return prediction_values(chunk.probs)
        if self.slice_columns[j].kind == "numeric":
            return chunk.X[:, first]
        block = chunk.X[:, first:first + width]
        return np.where(block.any(axis=1), block.argmax(axis=1), -1)

    def slice_raw(self, chunk: Chunk, codings: tuple[RawCoding, ...]) -> np.ndarray:
        """The raw codes of a chunk's rows, one column per slice column
        (:class:`core.local.slice_streamed.RawCoding`)."""
        if not codings:
            return np.zeros((chunk.rows, 0), dtype=np.int64)
        return np.column_stack([coding.codes(self.slice_data(chunk, j))
                                for j, coding in enumerate(codings)])

    def numeric_slices(self) -> list[int]:
        return [j for j, c in enumerate(self.slice_columns) if c.kind == "numeric"]

    def order_vectors(self, chunk: Chunk, key: tuple) -> np.ndarray:
        """The values of an order-statistics vector on a chunk: a confidence series
        (:func:`vector_values`) or a numeric slice column's (:func:`order_keys`)."""
        if key[0] == "slice-column":
            return order_values(self.slice_data(chunk, key[1]), key)
        return vector_values(chunk, key)[0]

    @property
    def series(self) -> list[tuple]:
        """The diagram's series: the notion's, one class for classwise."""
        return notion_series(self.notion, self.schema.n_classes, self.class_index)

    @property
    def metric_series(self) -> list[tuple]:
        """The series the binned metrics average over: every class for classwise, as
        :func:`core.metrics.metrics_table` (the diagram's class among them)."""
        return notion_series(self.notion, self.schema.n_classes)

    @property
    def group_bins(self) -> int:
        return min(self.settings.n_bins, self.settings.group_bins)

    def audited(self, chunk: Chunk, partition: Partition) -> tuple[Chunk, int]:
        """The chunk's audited rows and the audited index of the first of them."""
        start = self.offsets[partition.index]
        if self.part is None:
            return chunk, start
        return chunk.take(chunk.split == self.part), start

    def quantile_vectors(self) -> list[tuple]:
        """Every series whose exact order statistics some number needs."""
        classes = [class_series(k) for k in range(self.schema.n_classes)]
        vectors = list(dict.fromkeys([*self.series, *classes, TOP]))
        for group in self.schema.mapping.groups:
            for code in range(len(self.schema.levels[group])):
                vectors += [(key, group, code) for key in self.series]
        return vectors


def vector_values(chunk: Chunk, key: tuple) -> tuple[np.ndarray, np.ndarray]:
    """A vector's confidences and outcomes on a chunk: a series, or a series within one
    level of a group attribute."""
    if len(key) == 3 and isinstance(key[0], tuple):
        series, group, code = key
        rows = chunk.groups[group] == code
        conf, outcome = series_values(chunk.probs[rows], chunk.y[rows], series)
        return conf, outcome
    return series_values(chunk.probs, chunk.y, key)


# --------------------------------------------------------------------------- tasks


@dataclass(frozen=True)
class SchemaTask:
    mapping: ColumnMapping
    categorical: tuple[str, ...]

    def __call__(self, partition: Partition, frame: pd.DataFrame) -> list:
        return [schema_part(frame, self.mapping, self.categorical, partition.start)]


def join(a: list, b: list) -> list:
    """The partitions' results side by side, in order."""
    return a + b


@dataclass(frozen=True)
class SumsTask:
    """Pass 2: every sum over rows (module doc)."""

    spec: Spec

    def __call__(self, partition: Partition, frame: pd.DataFrame) -> dict:
        spec = self.spec
        chunk = decode(frame, spec.schema, partition.start)
        rows, start = spec.audited(chunk, partition)
        weights = poisson_weights(start, rows.rows, spec.bootstrap, spec.settings.seed)
        row_sums = RowSums(spec.schema.n_classes, spec.bootstrap)
        row_sums.add(rows.probs, rows.y, weights)
        table_bins = uniform_binning(spec.settings.n_bins)
        notion = {}
        for key in spec.metric_series:
            conf, outcome = series_values(rows.probs, rows.y, key)
            sums = BinnedSums(table_bins.n_bins, spec.bootstrap)
            sums.add(conf, outcome, table_bins.ids(conf), weights)
            notion[key] = sums
        groups = {}
        group_bins = uniform_binning(spec.group_bins)
        for group in spec.schema.mapping.groups:
            for code in np.unique(rows.groups[group]):
                level = rows.take(rows.groups[group] == code)
                level_rows = RowSums(spec.schema.n_classes)
                level_rows.add(level.probs, level.y)
                binned = {}
                for key in spec.series:
                    conf, outcome = series_values(level.probs, level.y, key)
                    sums = BinnedSums(group_bins.n_bins)
                    sums.add(conf, outcome, group_bins.ids(conf))
                    binned[key] = sums
                groups[group, int(code)] = (level_rows, binned)
        spiegelhalter = np.zeros(2)
        if len(spec.series) == 1:
            conf, outcome = series_values(rows.probs, rows.y, spec.series[0])
            spiegelhalter[:] = clinical_tests.spiegelhalter_sums(conf, outcome)
        request = {key: (first_interval(0),) for key in [
            *spec.quantile_vectors(), *(k for j in spec.numeric_slices() for k in order_keys(j))]}
        order = {key: OrderStatistics.part(request, key, spec.order_vectors(rows, key))
                 for key in request}
        tallies = {j: ColumnTally.of(spec.slice_data(rows, j), spec.settings.slice_ranges)
                   for j in spec.numeric_slices()}
        table_rows = np.arange(partition.start, partition.start + chunk.rows)
        sample = chunk.take(np.isin(table_rows, spec.sample, assume_unique=True))
        median_at = np.flatnonzero((spec.median >= start) & (spec.median < start + rows.rows))
        median = (spec.median[median_at], rows.take(spec.median[median_at] - start))
        return {"rows": row_sums, "notion": notion, "groups": groups,
                "spiegelhalter": spiegelhalter, "moments": moments(rows.X[:, spec.feature_index]),
                "order": order, "sample": sample, "median": median, "tallies": tallies,
                "digest": chunk_digest(chunk), "notes": chunk.notes}


def moments(X: np.ndarray) -> tuple:
    """``(count, mean, M2, minimum, maximum, first row)`` of each column (Chan et al.'s
    pairwise update merges them, :func:`merge_moments`)."""
    n = X.shape[0]
    if n == 0:
        d = X.shape[1]
        return (0, np.zeros(d), np.zeros(d), np.full(d, np.inf), np.full(d, -np.inf),
                np.full(d, np.nan))
    mean = X.mean(axis=0)
    return (n, mean, ((X - mean) ** 2).sum(axis=0), X.min(axis=0), X.max(axis=0), X[0].copy())


def merge_moments(a: tuple, b: tuple) -> tuple:
    """Chan, Golub & LeVeque (1979): the moments of two sets of rows, in order."""
    n_a, mean_a, m2_a, lo_a, hi_a, first_a = a
    n_b, mean_b, m2_b, lo_b, hi_b, first_b = b
    if n_a == 0:
        return b
    if n_b == 0:
        return a
    n = n_a + n_b
    delta = mean_b - mean_a
    return (n, mean_a + delta * n_b / n, m2_a + m2_b + delta**2 * n_a * n_b / n,
            np.minimum(lo_a, lo_b), np.maximum(hi_a, hi_b), first_a)


def standardizer_of(moment: tuple) -> Standardizer:
    """:meth:`Standardizer.fit` of the rows whose moments these are."""
    n, mean, m2, lo, hi, first = moment
    constant = lo == hi
    center = np.where(constant, first, mean)
    sd = np.where(constant, 1.0, np.sqrt(m2 / max(n, 1)))
    return Standardizer(tuple(center.tolist()), tuple(sd.tolist()))


def merge_sums(total: dict, part: dict) -> dict:
    """Pass 2's sums of a partition added to those of the partitions before it."""
    total["rows"].merge(part["rows"])
    for key, sums in part["notion"].items():
        total["notion"][key].merge(sums)
    for level, (rows, binned) in part["groups"].items():
        if level not in total["groups"]:
            total["groups"][level] = (rows, binned)
            continue
        total["groups"][level][0].merge(rows)
        for key, sums in binned.items():
            total["groups"][level][1][key].merge(sums)
    total["spiegelhalter"] = total["spiegelhalter"] + part["spiegelhalter"]
    total["moments"] = merge_moments(total["moments"], part["moments"])
    total["tallies"] = {j: tally.merge(part["tallies"][j])
                        for j, tally in total["tallies"].items()}
    total["order"] = merge_parts([total["order"], part["order"]])
    total["notes"] = total["notes"] + part["notes"]
    total["sample"] = concatenate([total["sample"], part["sample"]])
    total["median"] = (np.concatenate([total["median"][0], part["median"][0]]),
                       concatenate([total["median"][1], part["median"][1]]))
    with np.errstate(over="ignore"):  # the digests add mod 2⁶⁴
        total["digest"] = total["digest"] + part["digest"]
    return total


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
    the chunk's sums need, kept until the rest of the chunk's rows arrive (:func:`join`)."""

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

    spec: Spec
    setup: KernelSetup
    request: dict

    def __call__(self, partition: Partition, frame: pd.DataFrame) -> dict:
        spec, setup = self.spec, self.setup
        chunk = decode(frame, spec.schema, partition.start)
        rows, start = spec.audited(chunk, partition)
        p, outcome = one_vs_rest(rows.probs, rows.y, spec.tested)
        X = rows.X[:, spec.feature_index]
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
            if piece.complete(spec.n_audited):
                self.add(result, piece)
            else:
                result["fragments"].append(piece)
        result["order"] = {key: OrderStatistics.part(self.request, key,
                                                     spec.order_vectors(rows, key))
                           for key in self.request}
        return result

    def empty(self) -> dict:
        """Sums of no rows."""
        setup = self.setup
        m = int(setup.skce_map.weights.shape[0])
        return {"grid": FourierAccumulator(setup.grid_map, setup.grid_bandwidths),
                "test": FourierAccumulator(setup.skce_map, np.ones((1, m))),
                "value": SkceFourierSums(setup.value_map, m,
                                         setup.value_resamples, self.spec.settings.seed),
                "fragments": [], "order": {}}

    def add(self, sums: dict, piece: Fragment) -> None:
        """A whole chunk's rows added to the three random-feature sums."""
        setup, seed = self.setup, self.spec.settings.seed
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
            if joined.complete(self.task.spec.n_audited):
                self.task.add(total, joined)
            else:
                left.append(joined)
        total["fragments"] = left + right
        return total


def merge_orders(total: dict, part: dict) -> dict:
    return merge_parts([total, part])


@dataclass(frozen=True)
class OrderTask:
    """A further round of the exact order statistics (long tied runs)."""

    spec: Spec
    request: dict

    def __call__(self, partition: Partition, frame: pd.DataFrame) -> dict:
        chunk = decode(frame, self.spec.schema, partition.start)
        rows, _ = self.spec.audited(chunk, partition)
        return {key: OrderStatistics.part(self.request, key, self.spec.order_vectors(rows, key))
                for key in self.request}


@dataclass(frozen=True)
class QuantileTask:
    """Pass 4: the sums over equal-mass bins and equal-size groups."""

    spec: Spec
    binnings: dict  # (vector, bins) → Binning
    groups: dict  # vector → StreamedGroups (Hosmer–Lemeshow)
    codings: tuple[RawCoding, ...] = ()  # the slice columns' raw codings

    def __call__(self, partition: Partition, frame: pd.DataFrame) -> dict:
        spec = self.spec
        chunk = decode(frame, spec.schema, partition.start)
        rows, start = spec.audited(chunk, partition)
        weights = poisson_weights(start, rows.rows, spec.bootstrap, spec.settings.seed)
        binned = {}
        for (key, bins), binning in self.binnings.items():
            grouped = len(key) == 3 and isinstance(key[0], tuple)
            conf, outcome = vector_values(rows, key)
            sums = BinnedSums(binning.n_bins, 0 if grouped else spec.bootstrap)
            sums.add(conf, outcome, binning.ids(conf), None if grouped else weights)
            binned[key, bins] = sums
        hl = {key: groups.part(*vector_values(rows, key)) for key, groups in self.groups.items()}
        return {"binned": binned, "hl": hl, "cells": slice_cells(spec, self.codings, rows, start)}


def slice_cells(spec: Spec, codings: tuple[RawCoding, ...], rows: Chunk, start: int
                ) -> CellSums:
    """The slices' cell sums of a chunk's audited rows (the first of them the ``start``-th
    audited row): :func:`core.local.slice_streamed.cell_sums`."""
    targets = row_targets(rows.probs, rows.y, spec.slice_notion, spec.schema.classes)
    return cell_sums(spec.slice_raw(rows, codings), tuple(c.size for c in codings),
                     spec.settings.slice_depth, targets, row_hashes(start, rows.rows))


def merge_quantiles(total: dict, part: dict) -> dict:
    """Pass 4's sums of a partition added to those of the partitions before it (tied
    rows' outcomes kept in row order)."""
    for key, sums in part["binned"].items():
        total["binned"][key].merge(sums)
    for key, value in part["hl"].items():
        total["hl"][key] = StreamedGroups.merge(total["hl"][key], value)
    total["cells"] = total["cells"].merge(part["cells"])
    return total


# --------------------------------------------------------------------------- the audit


def check_settings(settings: AuditSettings) -> None:
    """What a streamed audit cannot do, in a sentence."""
    if settings.computation == "exact":
        raise ValueError("A streamed audit cannot compute exact kernel sums: they need every "
                         "pair of rows at once. Use computation='auto' or 'rff' (random "
                         "Fourier features: the tests keep their level).")
    if settings.computation == "block":
        raise ValueError("The KLCE bandwidth grid has no block version; use computation='auto' "
                         "or 'rff' for a streamed audit.")
    scheme, _ = null_scheme(settings.null)
    if scheme != "consistency":
        raise ValueError(f"The '{settings.null}' null needs all rows at once; a streamed audit "
                         "offers the consistency nulls (consistency-combined, "
                         "consistency-centred, consistency), whose resamples are drawn row by "
                         "row.")


def kernel_plan(computation: str, n: int, resamples: int, features: int, maps: int = 1,
                per_resample: int = 1, min_features: int | None = None) -> Plan:
    """:func:`core.kernels.computation.plan` for streamed rows: random features always
    (``"auto"``: D and B sized to the data; ``"rff"``: as asked)."""
    options = {} if min_features is None else {"min_features": min_features}
    chosen = computation_plan(computation, n, resamples, features, None, maps, per_resample,
                              **options)
    if chosen.label == "exact":
        return Plan(f"rff({features})", STREAMED_REASON, features, resamples,
                    chosen.exact_seconds)
    return dataclasses.replace(chosen, reason=chosen.reason.replace(
        "the exact test would take", "exact sums (over every pair of rows, all held at once) "
        "would take"))


def audited_model(mapping: ColumnMapping, model: str | None) -> ColumnMapping:
    """The mapping with only the audited prediction set's columns (``model``, one of
    ``mapping.model_names``; ``None``: the one in ``probs``): a streamed audit reads no other
    model's columns."""
    names = mapping.model_names
    if model is None or model == names[0]:
        return dataclasses.replace(mapping, model=names[0], models=())
    sets = dict(mapping.models)
    if model not in sets:
        raise ValueError(f"Unknown model '{model}'; this table has {quote_list(list(names))}.")
    return dataclasses.replace(mapping, probs=tuple(sets[model]), model=model, models=())


def memory_plan(settings: AuditSettings, budget: int | None = None) -> MemoryPlan:
    """The batches of a streamed audit at ``settings`` within ``budget`` bytes (default:
    :func:`core.kernels.memory.default_budget`), on the current engine's workers
    (:func:`core.kernels.memory.batch_plan`)."""
    workers = max(1, engine.default_workers())
    return batch_plan(default_budget() if budget is None else int(budget), workers,
                      engine.in_flight(workers), settings.n_bootstrap, settings.n_bins,
                      max(settings.grid_resamples, settings.test_resamples), DEFAULT_FEATURES)


def run_stream_audit(source: TableSource, mapping: ColumnMapping,
                     settings: AuditSettings | None = None, progress: Progress | None = None,
                     sample_rows: int = SAMPLE_ROWS, model: str | None = None,
                     memory: int | None = None, batch_rows: int | None = None
                     ) -> StreamedAudit:
    """Audit a table read partition by partition (module doc) at ``settings``.

    Parameters
    ----------
    source : TableSource
        :func:`core.data.stream.open_source` of a Parquet file or folder, or a DataFrame.
    mapping : ColumnMapping
        Which column plays which role (as :meth:`AuditData.from_mapping`).
    settings : AuditSettings, optional
        The pages' defaults when not given.
    progress : callable, optional
        ``progress(fraction, message)``, after every partition of every pass.
    sample_rows : int
        Rows of the seeded sample of the sections that are not sums over rows.
    model : str, optional
        Which of the mapping's prediction sets to audit (``mapping.model_names``; default the
        one in ``probs``); only its columns are read.
    memory : int, optional
        The memory budget in bytes that the batches are sized to
        (:func:`memory_plan`; default a share of this machine's memory).
    batch_rows : int, optional
        Rows of a batch, overriding the plan's (the results do not depend on it).

    Returns
    -------
    StreamedAudit

    Raises
    ------
    DataError
        A bad row or column, named by its row in the table.
    ValueError
        A setting a streamed audit cannot run, or a budget too small for one batch.
    """
    settings = settings or AuditSettings()
    plan = memory_plan(settings, memory)
    if batch_rows is not None:
        plan = dataclasses.replace(plan, batch_rows=int(batch_rows), target=0)
    # threads read the table's rows in order, cut at multiples of the batch; a cluster
    # reads each row group (frame partition) as one task, cut from its own first row
    source = source.batched(plan.batch_rows, across_units=engine.current().name != "dask")
    several = len(mapping.model_names) > 1
    mapping = audited_model(mapping, model)
    passes: list[tuple[str, float]] = []
    report, run = _runner(source, progress, passes)
    spec, sums, setup, kernel, order = kernel_passes(source, mapping, settings, run,
                                                     sample_rows)
    binnings, groups = quantile_plan(spec, sums, order)
    round_ = 0
    while binnings is None or slice_edges_pending(spec, order):
        round_ += 1
        merged = run(f"Order statistics, round {round_ + 2}", OrderTask(spec, order.request()),
                     decode_columns(mapping), merge_orders, 0.75, 0.8)
        order.update(merged)
        binnings, groups = quantile_plan(spec, sums, order)
    codings = raw_codings(spec.slice_columns, sums["tallies"], order,
                          settings.slice_ranges)
    quantiles = run("Equal-mass bins, equal-size groups and slices",
                    QuantileTask(spec, binnings, groups, codings),
                    decode_columns(mapping), merge_quantiles, 0.8, 0.9)
    report(0.9, "The seeded sample: smooth and curve metrics, LCB, LCE…")
    begun = time.perf_counter()
    result, sample = assemble(source, spec, sums, kernel, setup, quantiles, binnings, groups,
                              codings, lambda f, m: report(0.9 + 0.1 * f, m))
    passes.append(("Sample sections", time.perf_counter() - begun))
    report(1.0, "Audit complete")
    stream = dataclasses.replace(result.stream, passes=tuple(passes),
                                 batch_rows=plan.batch_rows, memory_target=plan.target,
                                 memory_budget=plan.budget,
                                 batching=plan.describe() if plan.target else
                                 f"batches of {plan.batch_rows:,} rows (as asked)")
    notes = (stream.describe(), *result.notes[1:])  # the first: how the rows were read
    if several:
        notes = (f"Audited model: '{mapping.model}' (columns {quote_list(list(mapping.probs))}); "
                 "the table's other prediction sets were not read.", *notes)
    return StreamedAudit(dataclasses.replace(result, notes=notes, stream=stream), sample)


def slice_edges_pending(spec: Spec, order: OrderStatistics) -> bool:
    """Whether a numeric slice column's quantile edges still need a round."""
    return any(order.intervals.get(key) for j in spec.numeric_slices() for key in order_keys(j))


def _runner(source: TableSource, progress: Progress | None, passes: list):
    """``(report, run)``: progress reporting, and a pass over the partitions that reports
    each partition done and records its time in ``passes``."""
    def report(fraction: float, message: str) -> None:
        if progress is not None:
            progress(fraction, message)

    def run(name: str, task, columns, reduce, low: float, high: float):
        begun = time.perf_counter()

        def tick(done: int, total: int) -> None:
            report(low + (high - low) * done / max(total, 1),
                   f"{name}: {done:,} of {total:,} batches")

        report(low, f"{name}: 0 of {len(source.partitions):,} batches")
        result = engine.map_partitions(task, source, columns, reduce, tick)
        passes.append((name, time.perf_counter() - begun))
        return result

    return report, run


def kernel_passes(source: TableSource, mapping: ColumnMapping, settings: AuditSettings, run,
                  sample_rows: int) -> tuple:
    """The schema, sums and random-feature passes: ``(spec, sums, setup, kernel, order)``."""
    check_settings(settings)
    if not source.partitions:
        raise ValueError(f"{source.name} has no rows.")
    missing = [c for c in decode_columns(mapping) if c not in source.columns]
    if missing:
        raise DataError(f"The table has no column {quote_list(missing)}. Its columns are "
                        f"{quote_list(list(source.columns))}.")
    first = source.read(source.partitions[0], decode_columns(mapping))
    categorical = categorical_columns(first, mapping)
    parts = run("Reading the labels and levels", SchemaTask(mapping, categorical),
                schema_columns(mapping, categorical), join, 0.0, 0.05)
    schema = combine_schema(parts, mapping, categorical, source.name)
    spec = make_spec(schema, settings, sample_rows)
    sums = run("Sums over rows", SumsTask(spec), decode_columns(mapping), merge_sums, 0.05,
               0.3)
    order = start_order(spec, sums)
    setup = kernel_setup(spec, sums)
    task = KernelTask(spec, setup, order.request())
    kernel = run(f"Random features ({setup.grid_plan.label} × "
                 f"{len(setup.grid_bandwidths)} bandwidth pairs, B = "
                 f"{setup.grid_plan.n_resamples})", task, decode_columns(mapping),
                 KernelMerge(task), 0.3, 0.75)
    for piece in kernel.pop("fragments"):  # none: the last chunk ends at the last row
        task.add(kernel, piece)
    order.update(kernel["order"])
    return spec, sums, setup, kernel, order


def stream_tests(source: TableSource, mapping: ColumnMapping,
                 settings: AuditSettings | None = None, progress: Progress | None = None
                 ) -> tuple[GridTestResult, TestResult]:
    """Only the streamed kernel tests — the KLCE bandwidth grid and the SKCE consistency
    test — from the schema, sums and random-feature passes (their level study,
    ``benchmarks/streaming.py level``)."""
    settings = settings or AuditSettings()
    _, run = _runner(source, progress, [])
    spec, _, setup, kernel, _ = kernel_passes(source, mapping, settings, run, 0)
    return kernel_results(spec, kernel, setup)


def kernel_results(spec: Spec, kernel: dict, setup: KernelSetup
                   ) -> tuple[GridTestResult, TestResult]:
    """The KLCE grid's result and the SKCE consistency test from the random-feature sums."""
    settings, n = spec.settings, spec.n_audited
    m = 1 if spec.schema.n_classes == 2 else spec.schema.n_classes
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


def make_spec(schema: StreamSchema, settings: AuditSettings, sample_rows: int) -> Spec:
    """The settings resolved against the table: notion, classes, audited rows, features,
    the seeded sample and the median heuristic's rows."""
    binary = schema.n_classes == 2
    probe = np.full((1, schema.n_classes), 1.0 / schema.n_classes)
    notion = resolve_notion(settings.notion, probe) if settings.notion else \
        ("positive" if binary else "top-label")
    class_index = settings.class_index if notion == "classwise" else None
    if notion == "classwise" and class_index is None:
        raise ValueError("A reliability diagram shows one class at a time for the 'classwise' "
                         f"notion: set class_index (0 to {schema.n_classes - 1}).")
    tested = None if binary else (0 if settings.class_index is None else settings.class_index)
    has_part = schema.mapping.split is not None and settings.part != "all" and \
        schema.part_rows(settings.part).sum() > 0
    rows = schema.part_rows(settings.part if has_part else "all")
    offsets = tuple(int(x) for x in np.concatenate([[0], np.cumsum(rows)[:-1]]))
    n_audited = int(rows.sum())
    chosen = feature_columns_of(schema.mapping.features, settings.features)
    names = schema.feature_names
    index = tuple(i for i, name in enumerate(names)
                  if name in chosen or name.split("=", 1)[0] in chosen)
    median = np.random.default_rng(0).choice(n_audited, MEDIAN_SAMPLE, replace=False) \
        if n_audited > MEDIAN_SAMPLE else np.arange(n_audited)
    columns, sources = slice_columns_of(schema, chosen)
    return Spec(schema, settings, notion, class_index, tested,
                settings.part if has_part else None, offsets, n_audited, index,
                settings.n_bootstrap, row_sample(schema.n, sample_rows, settings.seed), median,
                columns, sources, slice_notion_of(settings.slice_notion if not binary else None,
                                                  binary))


def slice_columns_of(schema: StreamSchema, features: tuple[str, ...]
                     ) -> tuple[tuple[SliceColumn, ...], tuple[tuple[str, int, int], ...]]:
    """The columns slices are cut on (:func:`core.audit.slice_names`: the audit features, then
    the group attributes that are not among them, then the prediction's quantile ranges as
    :func:`core.local.slice_discovery.discover_slices` adds them) and where each lies in a
    chunk."""
    offsets, at = {}, 0
    for column in schema.mapping.features:
        width = len(schema.levels[column]) if column in schema.categorical else 1
        offsets[column] = (at, width)
        at += width
    columns, sources = [], []
    for name in features:
        first, width = offsets[name]
        categorical = name in schema.categorical
        columns.append(SliceColumn(name, "categorical" if categorical else "numeric",
                                   schema.levels[name] if categorical else ()))
        sources.append(("X", first, width))
    for name in schema.mapping.groups:
        if name not in features:
            columns.append(SliceColumn(name, "categorical", schema.levels[name]))
            sources.append(("group", 0, 0))
    columns.append(SliceColumn(prediction_column_name(c.name for c in columns), "numeric", ()))
    sources.append(("prediction", 0, 0))
    return tuple(columns), tuple(sources)


def start_order(spec: Spec, sums: dict) -> OrderStatistics:
    """The order statistics every equal-mass number needs, with pass 2's histograms."""
    sizes, wanted = {}, {}
    n_bins, group_bins = spec.settings.n_bins, spec.group_bins
    for key in spec.quantile_vectors():
        if len(key) == 3 and isinstance(key[0], tuple):
            series, group, code = key
            level = sums["groups"].get((group, code))
            n = int(level[0].n) if level is not None else 0
            positions = list(group_boundaries(n)) if n >= MIN_GROUP_ROWS else []
            if spec.settings.strategy == "quantile" and n >= MIN_GROUP_ROWS:
                positions += quantile_targets(n, group_bins)
        else:
            n = spec.n_audited
            positions = quantile_targets(n, n_bins)
            if key in spec.series and len(spec.series) == 1:
                positions += list(group_boundaries(n))
        sizes[key], wanted[key] = n, positions
    for j, tally in sums["tallies"].items():
        if tally.distinct is None:  # quantile ranges: their edges' order statistics
            negative, positive = order_keys(j)
            sizes[negative], sizes[positive] = tally.negative, tally.rows - tally.negative
            wanted.update(order_positions(tally, j, spec.settings.slice_ranges))
    order = OrderStatistics.start(sizes, wanted)
    order.update({key: part for key, part in sums["order"].items() if key in order.intervals})
    return order


def quantile_plan(spec: Spec, sums: dict, order: OrderStatistics
                  ) -> tuple[dict | None, dict]:
    """The equal-mass binnings (``(vector, bins) → Binning``) and Hosmer–Lemeshow's groups
    (``vector → StreamedGroups``), or ``(None, {})`` after asking the order statistics for
    the positions still missing (the neighbours of long tied runs)."""
    binnings, groups, missing = {}, {}, {}
    single = len(spec.series) == 1
    for key in spec.quantile_vectors():
        grouped = len(key) == 3 and isinstance(key[0], tuple)
        n = order.sizes[key]
        if grouped and n < MIN_GROUP_ROWS:
            continue
        bins = spec.group_bins if grouped else spec.settings.n_bins
        if not grouped or spec.settings.strategy == "quantile":
            binning, needed = quantile_binning(order, key, n, bins)
            if binning is None:
                missing.setdefault(key, []).extend(needed)
            else:
                binnings[key, bins] = binning
        if single and (key[0] if grouped else key) == spec.series[0]:
            boundaries = [int(b) for b in group_boundaries(n)]
            if all((key, b) in order.resolved for b in boundaries):
                groups[key] = StreamedGroups.of(n, {b: (
                    order.at(key, b).value, order.at(key, b).below, order.at(key, b).equal)
                    for b in boundaries})
            else:
                missing.setdefault(key, []).extend(boundaries)
    if missing:
        order.add(missing)
        return None, {}
    return binnings, groups


def kernel_setup(spec: Spec, sums: dict) -> KernelSetup:
    """Standardisation and bandwidths from pass 2 (the median heuristic on the same rows as
    in memory), and the plans (D, B) of the three random-feature sums."""
    settings, n = spec.settings, spec.n_audited
    standardizer = standardizer_of(sums["moments"]) if spec.feature_index else None
    positions, rows = sums["median"]
    lookup = np.argsort(positions)  # the gathered rows, put in the order they were drawn
    rows = rows.take(lookup[np.searchsorted(positions[lookup], spec.median)])
    p, _ = one_vs_rest(rows.probs, rows.y, spec.tested)
    sigma_p = median_heuristic(p)
    X = rows.X[:, spec.feature_index]
    sigma_x = np.inf if standardizer is None else median_heuristic(standardizer.transform(X))
    spec_ = KernelSpec(float(sigma_p), float(sigma_x), True, spec.tested)
    p_grid = bandwidth_grid(sigma_p)
    x_grid = bandwidth_grid(sigma_x) if np.isfinite(sigma_x) else np.array([np.inf])
    pairs = [(a, b) for a in p_grid for b in x_grid]
    dimension = 1 + (X.shape[1] if np.isfinite(sigma_x) else 0)
    grid_plan = kernel_plan(settings.computation, n, settings.grid_resamples,
                            settings.grid_features, len(pairs))
    grid_map, per_column = fourier_maps(dimension, dimension - 1, pairs, grid_plan.n_features,
                                        settings.seed)
    Z, _ = prediction_residuals(rows.probs, rows.y)
    m = 1 if spec.schema.n_classes == 2 else spec.schema.n_classes
    skce_plan = kernel_plan(settings.computation, n, settings.test_resamples, TEST_FEATURES,
                            per_resample=m)
    resamples = min(settings.n_bootstrap, SKCE_RESAMPLES)
    value_plan = kernel_plan(settings.computation, n, resamples, DEFAULT_FEATURES,
                             per_resample=m, min_features=VALUE_FEATURES)
    return KernelSetup(standardizer, grid_map, per_column, grid_plan,
                       FourierMap.draw(Z.shape[1], skce_plan.n_features, settings.seed),
                       float(median_heuristic(Z)), skce_plan,
                       FourierMap.draw(Z.shape[1], value_plan.n_features, settings.seed),
                       value_plan, value_plan.n_resamples if resamples else 0, spec_,
                       (p_grid, x_grid))


# --------------------------------------------------------------------------- assembling

#: What a streamed audit computes over every audited row, and what on its sample.
EXACT = ("the reliability table, accuracy, Brier, log loss and the binned errors (ECE, MCE, "
         "ACE, debiased ECE)", "the Hosmer–Lemeshow and Spiegelhalter tests",
         "the group tables", "the SKCE, its consistency test and the KLCE bandwidth grid "
         "(random Fourier features)", "every slice's rows, counts, gaps, statistics and "
         "intervals")
SAMPLED = ("the smooth ECE, ICI, E50, E90, Emax, calibration slope and intercept, Brier and "
           "log-loss decompositions, cumulative metrics and their tests, Cox's test and the "
           "SKCE block test", "LCB", "MLCE over γ", "the slice findings' max-|T| null "
           "(consistency resamples of the sample's rows)")


def on_sample(result, rows: int, total: int):
    """A test result computed on the seeded sample, saying so in its parameters."""
    return dataclasses.replace(result, parameters={
        **result.parameters, "rows": rows,
        "scope": f"a seeded sample of {rows:,} of the {total:,} audited rows"})


def assemble(source: TableSource, spec: Spec, sums: dict, kernel: dict, setup: KernelSetup,
             quantiles: dict, binnings: dict, groups: dict, codings: tuple[RawCoding, ...],
             progress: Progress) -> tuple[AuditResult, AuditData]:
    """The :class:`AuditResult` of the passes' sums and of the sample's sections."""
    settings, schema, n = spec.settings, spec.schema, spec.n_audited
    notion, series, n_bins = spec.notion, spec.series, settings.n_bins
    notes = merge_notes(list(schema.notes) + list(sums["notes"]))
    fingerprint = stream_fingerprint(sums["digest"], schema)
    sample = audit_data(sums["sample"], schema, source.name, notes)  # its own fingerprint
    part = sample.split_part(spec.part) if spec.part else sample
    binned = quantiles["binned"]

    if settings.strategy == "quantile":
        table_sums, table_binning = binned[series[0], n_bins], binnings[series[0], n_bins]
    else:
        table_sums, table_binning = sums["notion"][series[0]], uniform_binning(n_bins)
    table = reliability_table_from(table_sums, table_binning, notion, settings.strategy,
                                   settings.interval, class_index=spec.class_index)
    notion_sums = {"uniform": [sums["notion"][k] for k in spec.metric_series],
                   "quantile": [binned[k, n_bins] for k in spec.metric_series]}
    summary = metrics_table_from(
        sums["rows"], notion_sums,
        [binned[class_series(k), n_bins] for k in range(schema.n_classes)],
        binned[TOP, n_bins], notion, n_bins, settings.strategy, method=settings.bootstrap_method)
    progress(0.1, "The seeded sample: smooth and curve metrics…")
    sampled = f" On a seeded sample of {part.n:,} of the {n:,} audited rows."
    extended = extended_metrics(part.probs, part.y, notion, spec.class_index,
                                settings.n_bootstrap, settings.bootstrap_method, settings.seed)
    extended["description"] = extended["description"] + sampled
    metrics_frame = pd.concat([summary, skce_row(kernel["value"], setup, settings), extended],
                              ignore_index=True)

    grid, consistency = kernel_results(spec, kernel, setup)
    tests = {"consistency": consistency}
    tests["block"] = on_sample(skce_test(part.probs, part.y, method="block"), part.n, n)
    tests["bound"] = bound_test(tests["consistency"].statistic, n, setup.skce_sigma)
    tests["hosmer-lemeshow"] = groups[series[0]].finish(quantiles["hl"][series[0]])
    conf, outcome = metric_functions.confidence_outcome(part.probs, part.y, notion,
                                                        spec.class_index)
    curve_tests = {
        "spiegelhalter": lambda: clinical_tests.spiegelhalter_from_sums(
            *sums["spiegelhalter"], notion),
        "cox": lambda: on_sample(clinical_tests.cox_test(conf, outcome.astype(np.int64)),
                                 part.n, n),
        "cumulative-ks": lambda: on_sample(cumulative_tests.cumulative_test(
            conf, outcome.astype(np.int64), "ks"), part.n, n),
        "cumulative-kuiper": lambda: on_sample(cumulative_tests.cumulative_test(
            conf, outcome.astype(np.int64), "kuiper"), part.n, n)}
    for key, run_test in curve_tests.items():
        if np.ndim(conf) == 1:
            try:
                tests[key] = run_test()
            except ValueError:
                continue
    group_sections = {g: group_tables(spec, sums, quantiles, binnings, groups, g)
                      for g in schema.mapping.groups}
    reliability = ReliabilitySection(table, metrics_frame, tests, group_sections, notion)

    features = feature_columns_of(schema.mapping.features, settings.features)
    progress(0.4, "The seeded sample: local bias…")
    bias = lcb_section(sample, features, settings.class_index, seed=settings.seed)
    bias = dataclasses.replace(bias, computation=bias.computation + sampled)
    progress(0.5, "Slice findings: the max-|T| null on the seeded sample…")
    slices = stream_slices(spec, sums, quantiles, codings,
                           lambda f: progress(0.5 + 0.1 * f, "Slice findings: resampling "
                                              f"{f:.0%} of the sample"))
    progress(0.6, "The seeded sample: MLCE over γ…")
    lce = lce_section(part, features, settings.embedding, settings.gamma, settings.seed,
                      progress=lambda f, msg: progress(0.6 + 0.4 * f, msg))
    if lce is not None:
        lce = dataclasses.replace(lce, computation=lce.computation + sampled)
    info = StreamInfo(source.describe(), schema.n, len(source.partitions),
                      engine.current().describe(), sample.n, sample.fingerprint, EXACT, SAMPLED,
                      sums["rows"].class_balance(schema.classes))
    result_notes = () if features else (
        "No audit features are mapped: the KLCE test uses the prediction kernel only and "
        "there is no LCE landscape.",)
    result = AuditResult(settings, source.name, fingerprint, n,
                         spec.part or "all rows", features, reliability, grid, bias, lce,
                         slices, (info.describe(), *result_notes), info)
    return result, sample


def slice_family(spec: Spec, quantiles: dict, codings: tuple[RawCoding, ...]
                 ) -> StreamedFamily:
    """The slices of the audited rows and their exact sums, from pass 4's cell sums."""
    return streamed_family(codings, quantiles["cells"], spec.settings.slice_ranges,
                           spec.settings.slice_depth, spec.n_audited)


def stream_slices(spec: Spec, sums: dict, quantiles: dict, codings: tuple[RawCoding, ...],
                  progress: Callable[[float], None] | None = None) -> SliceDiscovery:
    """The findings of a streamed audit: every slice's sums over all audited rows, the
    max-``|T|`` null from the seeded sample's audited rows
    (:func:`core.local.slice_streamed.streamed_discovery`)."""
    settings = spec.settings
    rows = sums["sample"]
    if spec.part is not None:
        rows = rows.take(rows.split == spec.part)
    scores, targets = slice_targets(rows.probs, rows.y, spec.slice_notion, spec.schema.classes,
                                    settings.slice_resamples)
    return streamed_discovery(
        slice_family(spec, quantiles, codings), spec.slice_raw(rows, codings), scores, targets,
        alpha=settings.alpha, error_rate=settings.error_rate, notion=spec.slice_notion,
        n_resamples=settings.slice_resamples, seed=settings.seed, n_rows=spec.n_audited,
        progress=progress)


def skce_row(value: SkceFourierSums, setup: KernelSetup, settings: AuditSettings
             ) -> pd.DataFrame:
    """The metrics table's canonical SKCE row (:func:`core.audit.metrics_with_skce`) from the
    streamed random-feature sums and their Poisson bootstrap."""
    draws, plugin = value.draws()
    low = high = np.nan
    if setup.value_resamples:
        low, high = bootstrap_interval(draws[1:], draws[0], 0.95, settings.bootstrap_method,
                                       plugin=plugin)
    ran = {"computation": setup.value_plan.label,
           "computation_reason": setup.value_plan.reason}
    return pd.DataFrame([{
        "metric": SKCE_ROW, "value": float(draws[0]), "estimate": float(draws[0]),
        "ci_low": float(np.clip(low, 0.0, None)), "ci_high": float(np.clip(high, 0.0, None)),
        "notion": "canonical",
        "description": "Squared kernel calibration error of the whole probability vector, "
                       "Gaussian kernel with median-heuristic bandwidth (Widmann et al. 2019); "
                       "0 when calibrated, can be slightly negative. Poisson bootstrap. "
                       + computation_summary(ran),
        **ran}])


def group_tables(spec: Spec, sums: dict, quantiles: dict, binnings: dict, groups: dict,
                 group: str) -> tuple[pd.DataFrame, dict[str, pd.DataFrame]]:
    """:func:`core.audit.group_diagnostics` of one group attribute from the sums: the
    per-level table and each level's reliability table."""
    schema, settings = spec.schema, spec.settings
    levels = {code: level for (g, code), level in sums["groups"].items() if g == group}
    names = schema.levels[group]
    order = sorted(levels, key=lambda code: (-levels[code][0].n, names[code]))
    bins, strategy = spec.group_bins, settings.strategy
    rows, tables = [], {}
    for code in order:
        level_rows, uniform = levels[code]
        count = level_rows.n
        row = {"group": names[code], "rows": count, "share": count / spec.n_audited}
        if count >= MIN_GROUP_ROWS:
            binned = uniform if strategy == "uniform" else \
                {key: quantiles["binned"][(key, group, code), bins] for key in spec.series}
            series = [binned[key] for key in spec.series]
            single = len(spec.series) == 1
            totals = series[0].sums
            row.update({
                "mean_confidence": float(totals[1].sum() / count) if single else np.nan,
                "observed_frequency": float(totals[2].sum() / count) if single else np.nan,
                "ece": binned_value(series, "ece"), "mce": binned_value(series, "mce"),
                "brier": float(level_rows.sums[2] / count),
                "hosmer_lemeshow_p": groups[(spec.series[0], group, code)].finish(
                    quantiles["hl"][(spec.series[0], group, code)]).p_value
                if single else np.nan})
            binning = uniform_binning(bins) if strategy == "uniform" else \
                binnings[(spec.series[0], group, code), bins]
            tables[names[code]] = reliability_table_from(
                series[0], binning, spec.notion, strategy, class_index=spec.class_index,
                n_resamples=500)
        rows.append(row)
    columns = ["group", "rows", "share", "mean_confidence", "observed_frequency", "ece", "mce",
               "brier", "hosmer_lemeshow_p"]
    return pd.DataFrame(rows).reindex(columns=columns), tables

