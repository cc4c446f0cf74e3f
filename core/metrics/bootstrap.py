"""The vectorised bootstrap of the metrics table (private to :mod:`core.metrics`).

Each block of resamples is a matrix of row multiplicities, and every binned statistic of every
resample — quantile cuts recomputed inside the resample included — comes out of prefix sums
over the rows sorted by confidence, with no Python loop over resamples.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from core.data.validation import probability_matrix
from core.metrics.binning import (
    ace_from_sums,
    cut_positions,
    debiased_from_sums,
    ece_from_sums,
    mce_from_sums,
    run_sides,
)
from core.metrics.descriptions import METRIC_KEYS
from core.metrics.orders import sort_order
from core.metrics.scores import brier_rows, class_outcomes, confidence_outcome_of, correct, nll_rows

#: Largest number of matrix elements (resamples × rows) one resampling block holds.
BLOCK_ELEMENTS = 1_000_000
#: Rows per block of the prefix sums of the vectorised bootstrap.
_PREFIX_BLOCK = 64


def bootstrap_blocks(n: int, n_resamples: int, seed: int | None) -> Iterator[np.ndarray]:
    """Row-index sets of the bootstrap resamples, in blocks of ``(rows, n)``.

    One generator for every bootstrap here, so :func:`bootstrap_ci` and
    :func:`metrics_table` draw identical resamples from the same seed.
    """
    rng = np.random.default_rng(seed)
    block = max(1, BLOCK_ELEMENTS // n)
    for start in range(0, n_resamples, block):
        yield rng.integers(0, n, size=(min(block, n_resamples - start), n))


class SortedScore:
    """One (confidence, outcome) vector, prepared to bin many weighted resamples at once.

    A resample is a row of multiplicities ``w_j`` over the rows sorted by confidence. Every
    quantity needed — bin counts ``Σ w_j``, ``Σ w_j c_j``, ``Σ w_j o_j`` between two sorted
    positions, and the order statistics behind the quantile cuts — is a prefix sum at a few
    positions. Prefix sums come from totals of blocks of ``_PREFIX_BLOCK`` consecutive rows plus
    the partial block before the position, so no ``(resamples × n)`` cumulative sum is formed.
    """

    def __init__(self, conf: np.ndarray, outcome: np.ndarray) -> None:
        n = conf.shape[0]
        order = sort_order(conf)  # any order within ties: every cut falls between runs
        self.n = n
        self.n_blocks = n // _PREFIX_BLOCK + 1  # ≥ 1 spare slot, so position n is in a block
        size = self.n_blocks * _PREFIX_BLOCK
        # Index n of a resample's weight row is a zero column that pads the last block.
        self.order = np.concatenate([order, np.full(size - n, n)])
        self.conf = conf[order]
        # Runs of tied confidences in sorted order: run of each position, first and end.
        starts = np.flatnonzero(np.concatenate([[True], self.conf[1:] != self.conf[:-1]]))
        self.run_of = np.cumsum(np.concatenate([[False], self.conf[1:] != self.conf[:-1]]))
        self.run_first, self.run_end = starts, np.append(starts[1:], n)
        values = np.zeros((2, size))
        values[0, :n] = self.conf
        values[1, :n] = outcome[order]
        self.values = values.reshape(2, self.n_blocks, _PREFIX_BLOCK)

    def _prefix_at(self, w: np.ndarray, prefix: np.ndarray, pos: np.ndarray) -> np.ndarray:
        """``Σ_{j < pos} w_j·(1, c_j, o_j)`` for positions ``pos`` (resamples × Q) → (3, ·, Q)."""
        block, offset = np.divmod(pos, _PREFIX_BLOCK)
        row = np.arange(w.shape[0])[:, None]
        part = w[row, block] * (np.arange(_PREFIX_BLOCK) < offset[..., None])
        vals = self.values[:, block]
        return np.stack([
            prefix[0][row, block] + part.sum(axis=-1),
            prefix[1][row, block] + (part * vals[0]).sum(axis=-1),
            prefix[2][row, block] + (part * vals[1]).sum(axis=-1),
        ])

    def _order_statistics(self, w: np.ndarray, prefix_w: np.ndarray,
                          t: np.ndarray) -> np.ndarray:
        """Sorted position of the t-th smallest row (0-based, rows counted with their
        multiplicity) of every resample; ``t`` is (Q,) ints → (resamples, Q)."""
        rows, n = w.shape[0], self.n
        # Block holding the t-th value: the last b with prefix_w[b] ≤ t, found for all rows
        # by one search of the concatenated rows (row r shifted by r(n + 1)).
        shift = (n + 1) * np.arange(rows)[:, None]
        flat = (prefix_w + shift).ravel()
        block = np.searchsorted(flat, (t[None, :] + shift).ravel(), side="right")
        block = block.reshape(rows, -1) - (self.n_blocks + 1) * np.arange(rows)[:, None] - 1
        row = np.arange(rows)[:, None]
        running = prefix_w[row, block][..., None] + np.cumsum(w[row, block], axis=-1)
        inside = (running <= t[None, :, None]).sum(axis=-1)
        return block * _PREFIX_BLOCK + inside

    def _quantile_cuts(self, w: np.ndarray, prefix: np.ndarray, n_bins: int) -> np.ndarray:
        """:func:`core.metrics.binning.quantile_cuts` of every resample, as sorted positions.

        The run of tied confidences holding the resample's ``⌊(n − 1)j/K⌋``-th row decides
        cut j by its mid-rank (:func:`core.metrics.binning.run_sides`); its first position and size
        in the resample are the weight prefix sums at the run's ends.
        """
        n = self.n
        target = (n - 1) * np.arange(1, n_bins) // n_bins
        run = self.run_of[self._order_statistics(w, prefix[0], target)]
        first, end = self.run_first[run], self.run_end[run]
        before = self._prefix_at(w, prefix, np.concatenate([first, end], axis=1))[0]
        size = before[:, n_bins - 1:] - before[:, : n_bins - 1]
        return cut_positions(run_sides(before[:, : n_bins - 1], size, n, n_bins), first, end)

    def bin_sums(self, weights: np.ndarray, n_bins: int,
                 strategies: tuple[str, ...]) -> dict[str, tuple[np.ndarray, ...]]:
        """Per-bin ``(n_b, Σ c, Σ o)`` of every resample, for each strategy.

        ``weights`` is ``(resamples, n + 1)`` row multiplicities in the original row order with
        a trailing zero column, of any numeric type (the smallest integer type that holds
        them is the quickest to gather into sorted order); quantile cuts are recomputed
        inside every resample (the tie rule of :func:`core.metrics.binning.run_sides`).
        """
        rows, n = weights.shape[0], self.n
        w = weights[:, self.order].astype(np.float64, copy=False).reshape(
            rows, self.n_blocks, _PREFIX_BLOCK)
        prefix = np.zeros((3, rows, self.n_blocks + 1))
        np.cumsum(w.sum(axis=-1), axis=-1, out=prefix[0, :, 1:])
        np.cumsum(np.einsum("rbl,bl->rb", w, self.values[0]), axis=-1, out=prefix[1, :, 1:])
        np.cumsum(np.einsum("rbl,bl->rb", w, self.values[1]), axis=-1, out=prefix[2, :, 1:])
        sums = {}
        for strategy in strategies:
            if strategy == "uniform":
                inner = np.linspace(0.0, 1.0, n_bins + 1)[1:-1]
                cut = np.broadcast_to(np.searchsorted(self.conf, inner, side="right"),
                                      (rows, n_bins - 1))
            else:
                cut = self._quantile_cuts(w, prefix, n_bins)
            bounds = np.concatenate([np.zeros((rows, 1), dtype=np.int64), cut,
                                     np.full((rows, 1), n, dtype=np.int64)], axis=1)
            at = self._prefix_at(w, prefix, bounds)
            sums[strategy] = tuple(np.diff(at, axis=-1))
        return sums


def bootstrap_draws(
    p: np.ndarray, y: np.ndarray, notion: str, n_bins: int, strategy: str,
    n_resamples: int, seed: int | None,
) -> dict[str, np.ndarray]:
    """Every metric of :func:`metrics_table` on every bootstrap resample (vectorised)."""
    n = y.shape[0]
    P, outcomes = probability_matrix(p), class_outcomes(p, y)
    per_row = np.column_stack([correct(p, y), brier_rows(p, y), nll_rows(p, y, 1e-15)])
    classes = [SortedScore(P[:, k], outcomes[:, k]) for k in range(P.shape[1])]
    top_label = SortedScore(*confidence_outcome_of(p, y, "top-label", None))
    if notion == "classwise":
        notion_scores = classes
    elif notion == "positive":
        notion_scores = [classes[1]]  # (P(y=1), 1[y=1]) is class 1 of the one-vs-rest pairs
    else:
        notion_scores = [top_label]
    shared = {id(s) for s in notion_scores}
    notion_strategies = tuple(dict.fromkeys((strategy, "quantile")))
    draws: dict[str, list[np.ndarray]] = {key: [] for key in METRIC_KEYS}
    for block in bootstrap_blocks(n, n_resamples, seed):
        rows = block.shape[0]
        # Multiplicity of every row in every resample, plus a zero column at index n.
        offsets = (n + 1) * np.arange(rows)[:, None]
        counts = np.bincount((block + offsets).ravel(), minlength=rows * (n + 1))
        counts = counts.reshape(rows, n + 1)
        weights = counts.astype(np.float64)
        # the scores gather the multiplicities into their sorted orders: as bytes where they
        # fit (a row drawn 256 times in one resample does not happen at any n here), four
        # times less memory to walk at random than float64, the same numbers once converted
        compact = counts.astype(np.uint8 if counts.max() < 256 else np.int64)
        means = weights[:, :n] @ per_row / n
        for j, key in enumerate(("accuracy", "brier", "nll")):
            draws[key].append(means[:, j])
        notion_sums = {id(s): s.bin_sums(compact, n_bins, notion_strategies)
                       for s in notion_scores}
        class_sums = [notion_sums[id(s)]["quantile"] if id(s) in shared
                      else s.bin_sums(compact, n_bins, ("quantile",))["quantile"]
                      for s in classes]
        binned = [sums[strategy] for sums in notion_sums.values()]
        draws["ece_l1"].append(np.mean([ece_from_sums(*s, "l1") for s in binned], axis=0))
        # classwise ℓ2: the root of the mean over classes of the squares (one class: itself)
        draws["ece_l2"].append(np.sqrt(np.mean(
            [ece_from_sums(*s, "l2") ** 2 for s in binned], axis=0)))
        draws["mce"].append(np.max([mce_from_sums(*s) for s in binned], axis=0))
        draws["ace"].append(np.mean([ace_from_sums(*s) for s in class_sums], axis=0))
        top_sums = (notion_sums[id(top_label)]["quantile"] if id(top_label) in shared
                    else top_label.bin_sums(compact, n_bins, ("quantile",))["quantile"])
        draws["ace_top_label"].append(ace_from_sums(*top_sums))
        draws["ece_debiased"].append(np.mean(
            [debiased_from_sums(*sums["quantile"]) for sums in notion_sums.values()], axis=0))
    return {key: np.concatenate(parts) for key, parts in draws.items()}
