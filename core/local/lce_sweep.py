"""The exact sweep for the LCE (:mod:`core.local.lce_estimate`) on 1-D and 2-D features.

``"sweep"`` (1-D and 2-D features) — exact to rounding in O(n log² n): the L1 Laplacian
factorises within each quadrant around a point into a factor of each point, so the sums
are weighted dominance sums, computed by divide and conquer over the x order with prefix
sums along y (:func:`sweep_sums_bin`). About 3 CPU s per γ on a million rows in 2-D (15
confidence bins, one thread, layout included), where the pair sums would take hours.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np

# --------------------------------------------------------------------------- sweep method

#: Largest spread of ``w/a`` inside one block for which the sweep uses plain prefix sums
#: (terms are scaled by ``exp(w − min w)`` ≤ e^SAFE, far from float64's overflow at e^709).
_SWEEP_SAFE_RANGE = 600.0


#: Runs of at most this many senders are prefix-summed column by column (one vectorised
#: step per position across all runs) rather than by ``accumulate`` along each short run.
_COLUMN_RUNS = 64


@dataclass(frozen=True)
class _SweepLevel:
    """One level of the divide-and-conquer over the x order, independent of γ and weights.

    The rows (in x order) are cut into blocks of ``2·half`` consecutive x ranks; within a
    block the first half (smaller x) sends to the second for s_x = 1, the second to the first
    for s_x = −1, and every row receives in exactly one s_x. For each y direction (index 0:
    s_y = 1, index 1: s_y = −1) the senders are laid out as ``runs = 2·blocks`` runs of
    ``half`` — each block's s_x = 1 senders, then each block's s_x = −1 senders — in y order
    (reversed for s_y = −1), a short run padded at its end (at its start, for s_y = −1) with
    the dummy row ``m`` of zero weight. A prefix sum along each run, with a zero put first,
    holds at ``pointer[r]`` what row r receives from the other half of its block. ``source_*``
    are given at the senders, ``receiver_*`` at the rows (in row order): ``raw`` is
    ``w·a = s_x x + s_y y`` of the quadrant, ``shifted`` that minus a lower bound of it over the
    block (≥ 0, at most ``spread``, the largest x-range + y-range of a block).
    """

    half: int
    runs: int
    spread: float
    source_rows: tuple[np.ndarray, np.ndarray]
    source_raw: tuple[np.ndarray, np.ndarray]
    source_shifted: tuple[np.ndarray, np.ndarray]
    receiver_raw: tuple[np.ndarray, np.ndarray]
    receiver_shifted: tuple[np.ndarray, np.ndarray]
    pointer: tuple[np.ndarray, np.ndarray]


def _sweep_levels(points: np.ndarray) -> Iterator[_SweepLevel]:
    m = points.shape[0]
    order = np.arange(m)
    by_x = np.lexsort((order, points[:, 0]))
    rank = np.empty(m + 1, dtype=np.int64)
    rank[by_x] = order
    rank[m] = -1
    by_y = np.lexsort((order, points[:, 1]))
    ranks_by_y = rank[by_y]
    px, py = np.append(points[:, 0], 0.0), np.append(points[:, 1], 0.0)
    for k in range(int(np.ceil(np.log2(m))) if m > 1 else 0):
        half, width = 1 << k, 2 << k
        blocks = -(-m // width)
        shape = (blocks, width)
        # each block's rows in y order, block after block, the last padded with the row m
        # (a stable sort by block, its keys in their smallest type: numpy radix-sorts those)
        key = ranks_by_y >> (k + 1)
        key = key.astype(np.min_scalar_type((m - 1) >> (k + 1)))
        flat = np.take(by_y, np.argsort(key, kind="stable"))
        flat = np.concatenate([flat, np.full(blocks * width - m, m)])
        real = flat != m
        left = real & (((np.take(rank, flat) >> k) & 1) == 0)
        x, y = np.take(px, flat), np.take(py, flat)
        last = (blocks - 1) * width  # the last block's first row, a real one
        x[m:], y[m:] = x[last], y[last]  # so the padding leaves its minimum and maximum
        low = np.column_stack([x.reshape(shape).min(axis=1), y.reshape(shape).min(axis=1)])
        high = np.column_stack([x.reshape(shape).max(axis=1), y.reshape(shape).max(axis=1)])
        x[m:], y[m:] = low[-1, 0], low[-1, 1]  # padding: inside the last block's box
        # the senders' positions in `flat`, in runs (s_x = 1's, then s_x = −1's); at each
        # position, how many of the other half's senders its block has before it
        runs = np.full((2 * blocks, half), min(m, flat.size - 1))  # a padding position
        before = np.empty(flat.size, dtype=np.int64)
        for s, sends in enumerate((left, real & ~left)):
            count = np.cumsum(sends)
            count[width:] -= np.repeat(count[width - 1:-1:width], width)
            at = np.flatnonzero(sends)
            runs[s * blocks + at // width, np.take(count, at) - 1] = at
            np.copyto(before, count, where=~sends)
        where = np.empty(m, dtype=np.int64)
        where[flat[:m]] = order
        from_left = ~np.take(left, where)  # the row receives in s_x = 1
        run = where // width + np.where(from_left, 0, blocks)
        counted = np.take(before, where)
        start = run * (half + 1)
        # w·a = s_x x + s_y y of each quadrant and its lower bound over a block,
        # (s_x = 1 ? min x : −max x) + (s_y = 1 ? min y : −max y)
        sent_x, sent_y = np.take(x, runs), np.take(y, runs)
        sent_x[blocks:] *= -1.0
        got_x, got_y = np.take(np.where(left, -x, x), where), np.take(y, where)
        layout = []
        for sy, y_low in ((1.0, low[:, 1]), (-1.0, -high[:, 1])):
            lowest = np.concatenate([low[:, 0], -high[:, 0]]) + np.concatenate([y_low, y_low])
            raw = sent_x + sy * sent_y
            shifted = raw - lowest[:, None]
            got_raw = got_x + sy * got_y
            got_shifted = got_raw - np.take(lowest, run)
            senders = runs if sy > 0 else runs[:, ::-1]
            if sy < 0:
                raw, shifted = raw[:, ::-1], shifted[:, ::-1]
            layout.append((np.take(flat, senders).ravel(), raw.ravel(), shifted.ravel(),
                           got_raw, got_shifted,
                           start + (counted if sy > 0 else half - counted)))
        yield _SweepLevel(half, 2 * blocks, float(np.max((high - low).sum(axis=1))),
                          *zip(*layout, strict=True))


def _prefix(values: np.ndarray, forward: bool, in_logs: bool) -> np.ndarray:
    """Inclusive prefix sums (or log-sum-exp) along the last axis, forwards or backwards
    (d = 1)."""
    if not forward:
        values = values[..., ::-1]
    total = np.logaddexp.accumulate(values, axis=-1) if in_logs else np.cumsum(values, axis=-1)
    return total if forward else total[..., ::-1]


def sweep_sums_bin(points: np.ndarray, weights: np.ndarray, gammas: Sequence[float]
                    ) -> np.ndarray:
    """``S[g, c, j] = Σ_i weights[c, i] · exp(−‖x_j − x_i‖₁ / (d·γ_g))`` over all rows i of one
    confidence bin (j itself included), exactly, for d = 1 or 2 and non-negative weights.

    d = 2: each pair i ≠ j lies in exactly one quadrant of j (strict orders: by x then row
    number, by y then row number). In the quadrant with signs (s_x, s_y), the kernel is
    ``exp((w_i − w_j)/a)``, ``w = s_x·x + s_y·y``, ``a = d·γ``, with ``w_i ≤ w_j`` — a product
    of a factor of i and a factor of j. So each quadrant's sum is a weighted 2-D dominance sum,
    computed by divide and conquer on the x ranks: at level k, every block of 2^(k+1)
    consecutive x ranks sends its lower half's weights to its upper half (or back, for
    s_x = −1) with one prefix sum along the y order (forwards for s_y = 1, backwards for
    s_y = −1) over the half that sends, which each row of the other half reads at its place
    (``_SweepLevel``). Every pair is counted at exactly one level, in exactly one
    quadrant. To stay in float64 range each block's terms are scaled by
    ``exp(w − min_block w)`` when the level's largest spread of ``w/a`` allows, and summed as
    logarithms (``logaddexp``) when it does not (small γ). d = 1 is the same with one block
    and no y. Time O(m log² m)… O(m log m) per γ after an O(m log² m) layout shared by every
    γ; memory O(m) beyond the result.
    """
    if points.shape[1] == 1:
        return _sweep_1d(points, weights, gammas)
    return _sweep_2d(points, weights, gammas)


def _sweep_1d(points: np.ndarray, weights: np.ndarray, gammas: Sequence[float]) -> np.ndarray:
    m = points.shape[0]
    channels = weights.shape[0]
    result = np.empty((len(gammas), channels, m))
    padded_w = np.hstack([weights, np.zeros((channels, 1))])
    with np.errstate(divide="ignore"):
        log_w = np.log(padded_w)
    order = np.lexsort((np.arange(m), points[:, 0]))
    x = points[order, 0]
    w_sorted, lw_sorted = padded_w[:, order], log_w[:, order]
    for g, gamma in enumerate(gammas):
        scaled = x / gamma
        total = w_sorted.copy()
        for sign in (1.0, -1.0):  # i before j (x_i ≤ x_j), then i after j
            w = sign * scaled
            terms = lw_sorted + w
            shifted = np.full_like(terms, -np.inf)
            if sign > 0:
                shifted[:, 1:] = _prefix(terms, True, True)[:, :-1]
            else:
                shifted[:, :-1] = _prefix(terms, False, True)[:, 1:]
            with np.errstate(over="ignore", invalid="ignore"):
                total += np.exp(shifted - w)
        result[g][:, order] = total
    return result


def _prefix_runs(terms: np.ndarray, sums: np.ndarray, in_logs: bool) -> None:
    """``sums[..., 1:]`` = the inclusive prefix sums (or log-sum-exp) of ``terms`` along the
    last axis, ``sums[..., 0]`` = 0 (or −∞): each run summed in order, so the same numbers
    whether by ``accumulate`` or column by column."""
    add = np.logaddexp if in_logs else np.add
    sums[..., 0] = -np.inf if in_logs else 0.0
    if terms.shape[-1] > _COLUMN_RUNS:
        add.accumulate(terms, axis=-1, out=sums[..., 1:])
        return
    sums[..., 1] = terms[..., 0]
    for j in range(1, terms.shape[-1]):
        add(sums[..., j], terms[..., j], out=sums[..., j + 1])


def _sweep_2d(points: np.ndarray, weights: np.ndarray, gammas: Sequence[float]) -> np.ndarray:
    m = points.shape[0]
    channels = weights.shape[0]
    padded_w = np.hstack([weights, np.zeros((channels, 1))])
    with np.errstate(divide="ignore"):
        log_w = np.log(padded_w)
    out = np.empty((len(gammas), channels, m))
    out[:] = weights
    for level in _sweep_levels(points):
        shape = (channels, level.runs, level.half)
        sums = np.empty((channels, level.runs, level.half + 1))
        flat_sums = sums.reshape(channels, -1)
        source_w = [np.take(padded_w, rows, axis=1) for rows in level.source_rows]
        source_lw = None
        for g, gamma in enumerate(gammas):
            a = 2.0 * float(gamma)
            in_logs = level.spread / a > _SWEEP_SAFE_RANGE
            if in_logs and source_lw is None:
                source_lw = [np.take(log_w, rows, axis=1) for rows in level.source_rows]
            for s in (0, 1):  # s_y = 1, then −1
                if in_logs:  # Σ exp(lw_i + w_i) as log-sum-exp, then exp(that − w_j)
                    terms = source_lw[s] + level.source_raw[s] / a
                    _prefix_runs(terms.reshape(shape), sums, True)
                    part = np.take(flat_sums, level.pointer[s], axis=1)
                    part -= level.receiver_raw[s] / a
                    with np.errstate(over="ignore", invalid="ignore"):
                        np.exp(part, out=part)
                else:  # Σ weight_i exp(w_i − min w), then divided by exp(w_j − min w)
                    scale = level.source_shifted[s] / a
                    np.exp(scale, out=scale)
                    terms = source_w[s] * scale
                    _prefix_runs(terms.reshape(shape), sums, False)
                    part = np.take(flat_sums, level.pointer[s], axis=1)
                    scale = level.receiver_shifted[s] / a
                    part /= np.exp(scale, out=scale)
                if s == 0:
                    got = part
                else:
                    got += part
            out[g] += got
    return out
