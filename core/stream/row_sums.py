"""The first two passes of a streamed audit (:mod:`core.stream`): the schema
(:class:`SchemaTask`) and every sum over rows (:class:`SumsTask`), with how a partition's
sums are added to those before it (:func:`merge_sums`, :func:`merge_moments`); and the sums
over rows that carry the Poisson bootstrap (:func:`bootstrap_sums`), which pass 4 adds where
it draws the same weights for its own sums.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from core.data.mapping import ColumnMapping
from core.data.stream_decoding import Chunk, chunk_digest, concatenate, decode
from core.data.stream_schema import schema_part
from core.data.stream_sources import Partition
from core.kernels.tiles import Standardizer
from core.local.slice_streamed import ColumnTally, order_keys
from core.metrics.order_statistics import OrderStatistics, first_interval, merge_parts
from core.metrics.streamed import (
    BinnedSums,
    RowSums,
    series_values,
    uniform_binning,
)
from core.stattests import clinical as clinical_tests
from core.stream.plan import StreamPlan


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
    """Pass 2: every sum over rows (module doc) but those with a Poisson bootstrap
    (:func:`bootstrap_sums`, in pass 4)."""

    plan: StreamPlan

    def __call__(self, partition: Partition, frame: pd.DataFrame) -> dict:
        plan = self.plan
        chunk = decode(frame, plan.schema, partition.start)
        rows, start = plan.audited(chunk, partition)
        groups = {}
        group_bins = uniform_binning(plan.group_bins)
        for group in plan.schema.mapping.groups:
            for code in np.unique(rows.groups[group]):
                level = rows.take(rows.groups[group] == code)
                level_rows = RowSums(plan.schema.n_classes)
                level_rows.add(level.probs, level.y)
                binned = {}
                for key in plan.series:
                    conf, outcome = series_values(level.probs, level.y, key)
                    sums = BinnedSums(group_bins.n_bins)
                    sums.add(conf, outcome, group_bins.ids(conf))
                    binned[key] = sums
                groups[group, int(code)] = (level_rows, binned)
        spiegelhalter = np.zeros(2)
        if len(plan.series) == 1:
            conf, outcome = series_values(rows.probs, rows.y, plan.series[0])
            spiegelhalter[:] = clinical_tests.spiegelhalter_sums(conf, outcome)
        request = {key: (first_interval(0),) for key in [
            *plan.quantile_vectors(), *(k for j in plan.numeric_slices() for k in order_keys(j))]}
        order = {key: OrderStatistics.part(request, key, plan.order_vectors(rows, key))
                 for key in request}
        tallies = {j: ColumnTally.of(plan.slice_data(rows, j), plan.settings.slice_ranges)
                   for j in plan.numeric_slices()}
        table_rows = np.arange(partition.start, partition.start + chunk.rows)
        sample = chunk.take(np.isin(table_rows, plan.sample, assume_unique=True))
        median_at = np.flatnonzero((plan.median >= start) & (plan.median < start + rows.rows))
        median = (plan.median[median_at], rows.take(plan.median[median_at] - start))
        return {"groups": groups,
                "spiegelhalter": spiegelhalter, "moments": moments(rows.X[:, plan.feature_index]),
                "order": order, "sample": sample, "median": median, "tallies": tallies,
                "digest": chunk_digest(chunk), "notes": chunk.notes}


def bootstrap_sums(plan: StreamPlan, rows: Chunk, weights: np.ndarray | None
                   ) -> tuple[RowSums, dict]:
    """The per-row scores (accuracy, Brier, log loss, the class balance) and the notion's
    equal-width bins, each with its Poisson bootstrap: ``(row sums, {series: binned sums})``
    of a batch's audited rows with their ``weights`` (``(rows, B)``). They need nothing from
    an earlier pass, and pass 4 draws the same weights for its equal-mass bins, so they are
    added there: each row's ``B`` weights are drawn once in the audit instead of twice."""
    row_sums = RowSums(plan.schema.n_classes, plan.bootstrap)
    row_sums.add(rows.probs, rows.y, weights)
    table_bins = uniform_binning(plan.settings.n_bins)
    notion = {}
    for key in plan.metric_series:
        conf, outcome = series_values(rows.probs, rows.y, key)
        sums = BinnedSums(table_bins.n_bins, plan.bootstrap)
        sums.add(conf, outcome, table_bins.ids(conf), weights)
        notion[key] = sums
    return row_sums, notion


def merge_bootstrap_sums(total: tuple[RowSums, dict], part: tuple[RowSums, dict]
                         ) -> tuple[RowSums, dict]:
    """:func:`bootstrap_sums` of a batch added to those of the batches before it."""
    total[0].merge(part[0])
    for key, sums in part[1].items():
        total[1][key].merge(sums)
    return total


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
