"""The equal-mass pass of a streamed audit (:mod:`core.stream`, pass 4): the exact order
statistics (:mod:`core.metrics.order_statistics`: their first histograms come with pass 2,
further rounds where long tied runs need them, :class:`OrderTask`), then the sums over
equal-mass bins, Hosmer–Lemeshow's equal-size groups and every slice's cells
(:class:`QuantileTask`, :func:`merge_quantiles`).
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from core.data.groups import MIN_GROUP_ROWS
from core.data.stream_decoding import Chunk, decode
from core.data.stream_sources import Partition
from core.local.slice_streamed import (
    CellSums,
    RawCoding,
    cell_sums,
    order_keys,
    order_positions,
    row_hashes,
    row_targets,
)
from core.metrics.order_statistics import OrderStatistics, merge_parts
from core.metrics.streamed import BinnedSums, poisson_weights, quantile_binning, quantile_targets
from core.stattests.goodness_of_fit import StreamedGroups, group_boundaries
from core.stream.plan import StreamPlan, vector_values
from core.stream.row_sums import bootstrap_sums, merge_bootstrap_sums


@dataclass(frozen=True)
class OrderTask:
    """A further round of the exact order statistics (long tied runs)."""

    plan: StreamPlan
    request: dict

    def __call__(self, partition: Partition, frame: pd.DataFrame) -> dict:
        chunk = decode(frame, self.plan.schema, partition.start)
        rows, _ = self.plan.audited(chunk, partition)
        return {key: OrderStatistics.part(self.request, key, self.plan.order_vectors(rows, key))
                for key in self.request}


def merge_orders(total: dict, part: dict) -> dict:
    return merge_parts([total, part])


@dataclass(frozen=True)
class QuantileTask:
    """Pass 4: the sums over equal-mass bins and equal-size groups, the slices' cells, and
    the per-row and equal-width sums with a Poisson bootstrap (:func:`bootstrap_sums`: the
    same weights as the equal-mass bins', drawn once)."""

    plan: StreamPlan
    binnings: dict  # (vector, bins) → Binning
    groups: dict  # vector → StreamedGroups (Hosmer–Lemeshow)
    codings: tuple[RawCoding, ...] = ()  # the slice columns' raw codings

    def __call__(self, partition: Partition, frame: pd.DataFrame) -> dict:
        plan = self.plan
        chunk = decode(frame, plan.schema, partition.start)
        rows, start = plan.audited(chunk, partition)
        weights = poisson_weights(start, rows.rows, plan.bootstrap, plan.settings.seed)
        binned = {}
        for (key, bins), binning in self.binnings.items():
            grouped = len(key) == 3 and isinstance(key[0], tuple)
            conf, outcome = vector_values(rows, key)
            sums = BinnedSums(binning.n_bins, 0 if grouped else plan.bootstrap)
            sums.add(conf, outcome, binning.ids(conf), None if grouped else weights)
            binned[key, bins] = sums
        hl = {key: groups.part(*vector_values(rows, key)) for key, groups in self.groups.items()}
        return {"binned": binned, "hl": hl, "cells": slice_cells(plan, self.codings, rows, start),
                "bootstrap": bootstrap_sums(plan, rows, weights)}


def slice_cells(plan: StreamPlan, codings: tuple[RawCoding, ...], rows: Chunk, start: int
                ) -> CellSums:
    """The slices' cell sums of a chunk's audited rows (the first of them the ``start``-th
    audited row): :func:`core.local.slice_streamed.cell_sums`."""
    targets = row_targets(rows.probs, rows.y, plan.slice_notion, plan.schema.classes)
    return cell_sums(plan.slice_raw(rows, codings), tuple(c.size for c in codings),
                     plan.settings.slice_depth, targets, row_hashes(start, rows.rows))


def merge_quantiles(total: dict, part: dict) -> dict:
    """Pass 4's sums of a partition added to those of the partitions before it (tied
    rows' outcomes kept in row order)."""
    for key, sums in part["binned"].items():
        total["binned"][key].merge(sums)
    for key, value in part["hl"].items():
        total["hl"][key] = StreamedGroups.merge(total["hl"][key], value)
    total["cells"] = total["cells"].merge(part["cells"])
    total["bootstrap"] = merge_bootstrap_sums(total["bootstrap"], part["bootstrap"])
    return total


def start_order(plan: StreamPlan, sums: dict) -> OrderStatistics:
    """The order statistics every equal-mass number needs, with pass 2's histograms."""
    sizes, wanted = {}, {}
    n_bins, group_bins = plan.settings.n_bins, plan.group_bins
    for key in plan.quantile_vectors():
        if len(key) == 3 and isinstance(key[0], tuple):
            series, group, code = key
            level = sums["groups"].get((group, code))
            n = int(level[0].n) if level is not None else 0
            positions = list(group_boundaries(n)) if n >= MIN_GROUP_ROWS else []
            if plan.settings.strategy == "quantile" and n >= MIN_GROUP_ROWS:
                positions += quantile_targets(n, group_bins)
        else:
            n = plan.n_audited
            positions = quantile_targets(n, n_bins)
            if key in plan.series and len(plan.series) == 1:
                positions += list(group_boundaries(n))
        sizes[key], wanted[key] = n, positions
    for j, tally in sums["tallies"].items():
        if tally.distinct is None:  # quantile ranges: their edges' order statistics
            negative, positive = order_keys(j)
            sizes[negative], sizes[positive] = tally.negative, tally.rows - tally.negative
            wanted.update(order_positions(tally, j, plan.settings.slice_ranges))
    order = OrderStatistics.start(sizes, wanted)
    order.update({key: part for key, part in sums["order"].items() if key in order.intervals})
    return order


def quantile_plan(plan: StreamPlan, sums: dict, order: OrderStatistics
                  ) -> tuple[dict | None, dict]:
    """The equal-mass binnings (``(vector, bins) → Binning``) and Hosmer–Lemeshow's groups
    (``vector → StreamedGroups``), or ``(None, {})`` after asking the order statistics for
    the positions still missing (the neighbours of long tied runs)."""
    binnings, groups, missing = {}, {}, {}
    single = len(plan.series) == 1
    for key in plan.quantile_vectors():
        grouped = len(key) == 3 and isinstance(key[0], tuple)
        n = order.sizes[key]
        if grouped and n < MIN_GROUP_ROWS:
            continue
        bins = plan.group_bins if grouped else plan.settings.n_bins
        if not grouped or plan.settings.strategy == "quantile":
            binning, needed = quantile_binning(order, key, n, bins)
            if binning is None:
                missing.setdefault(key, []).extend(needed)
            else:
                binnings[key, bins] = binning
        if single and (key[0] if grouped else key) == plan.series[0]:
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


def slice_edges_pending(plan: StreamPlan, order: OrderStatistics) -> bool:
    """Whether a numeric slice column's quantile edges still need a round."""
    return any(order.intervals.get(key) for j in plan.numeric_slices() for key in order_keys(j))
