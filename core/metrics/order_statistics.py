"""Exact order statistics of vectors too long to sort in memory, by histogram refinement.

Equal-mass bins, Hosmer–Lemeshow's equal-size groups and the percentile edges of a
reliability table need, for a vector of confidences in [0, 1] streamed partition by partition,
the value ``v`` at a sorted position ``t`` together with how many values lie below it
(``below``) and how many equal it (``equal``) — the tie rule of
:func:`core.metrics.binning.run_sides` works on exactly these. Sorting is not possible when the
vector does not fit in memory; each pass here narrows down every wanted position instead:

* a non-negative float64 is ordered like its bit pattern read as an unsigned integer (its
  *key*), so a position's value lies in an interval of keys ``[lo, hi]`` with a known count of
  values below ``lo``; at the start that is every key, with none below;
* a pass over the data counts the values of each open interval in ``2¹⁶`` equal sub-ranges of
  keys (a histogram); the sub-range holding the position becomes the new interval — 16 bits
  of the 62 a key has in [0, 1] per pass;
* once an interval holds at most :data:`COLLECT` values, the next pass collects them (as
  distinct values with their counts) and the position is read off exactly; an interval of a
  single key needs no collecting (a spike of one repeated value).

So every position is exact after at most five passes, usually two (a histogram, then a
collection). Each pass is a sum over rows — histograms add, collections merge — so the
partitions can be processed anywhere and in any order (:meth:`OrderStatistics.part`,
:func:`merge_parts`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

#: Sub-ranges of a histogram pass.
BINS_BITS = 16
#: An interval holding at most this many values is collected on the next pass.
COLLECT = 2_000_000


#: The key of +∞, above every finite non-negative float.
TOP_KEY = 0x7FF0000000000000


def first_interval(count: int) -> Interval:
    """Every key, as the first pass histograms it (whatever the count: a pass that cannot
    know the vector's length yet — the first of a streamed audit — can compute it)."""
    return Interval(0, TOP_KEY, count, 0, False)


def keys_of(values: np.ndarray) -> np.ndarray:
    """The order-preserving unsigned keys of non-negative floats (``-0.0`` read as ``0.0``)."""
    return (np.asarray(values, dtype=np.float64) + 0.0).view(np.uint64)


@dataclass(frozen=True)
class Interval:
    """Keys ``lo … hi`` (inclusive) of one vector holding ``count`` values, ``below`` values
    lying below ``lo``; ``collect`` on the next pass, or histogram it in sub-ranges of
    ``2**shift`` keys."""

    lo: int
    hi: int
    count: int
    below: int
    collect: bool = False

    @property
    def shift(self) -> int:
        return max(0, int(self.hi - self.lo).bit_length() - BINS_BITS)


@dataclass(frozen=True)
class Resolved:
    """Position ``position`` of a vector: its ``value``, the values ``below`` it and the
    values ``equal`` to it."""

    value: float
    below: int
    equal: int


@dataclass
class OrderStatistics:
    """The wanted positions of several streamed vectors (keyed by any hashable name), their
    open intervals and what is resolved. Usage: while :meth:`pending`, run a pass in which
    every partition calls :meth:`part` with each vector's values of its rows, then
    :meth:`update` with the merged parts (:func:`merge_parts`)."""

    sizes: dict
    wanted: dict
    resolved: dict = field(default_factory=dict)
    intervals: dict = field(default_factory=dict)

    @classmethod
    def start(cls, sizes: dict, wanted: dict) -> OrderStatistics:
        """``sizes[key]`` values of each vector; ``wanted[key]`` the sorted positions
        (0-based) to find."""
        stats = cls({k: int(v) for k, v in sizes.items()},
                    {k: sorted({int(p) for p in ps if 0 <= int(p) < sizes[k]})
                     for k, ps in wanted.items()})
        for key, positions in stats.wanted.items():
            if positions:
                stats.intervals[key] = {first_interval(stats.sizes[key]): positions}
        return stats

    def pending(self) -> bool:
        return any(self.intervals.values())

    def request(self) -> dict:
        """What a pass computes: each vector's open intervals (small, picklable)."""
        return {key: tuple(spans) for key, spans in self.intervals.items() if spans}

    @staticmethod
    def part(request: dict, key: object, values: np.ndarray) -> list:
        """One partition's contribution for vector ``key``: per open interval, a histogram of
        its keys, or its distinct values and their counts (the keys are sorted once)."""
        spans = request.get(key, ())
        if not spans:
            return []
        keys = np.sort(keys_of(values))
        out = []
        for span in spans:
            inside = keys[np.searchsorted(keys, np.uint64(span.lo), side="left"):
                          np.searchsorted(keys, np.uint64(span.hi), side="right")]
            if span.collect:
                starts = np.flatnonzero(np.concatenate([[True], inside[1:] != inside[:-1]])) \
                    if inside.size else np.empty(0, dtype=np.int64)
                out.append((inside[starts], np.diff(np.append(starts, inside.size))))
            else:
                bins = (inside - np.uint64(span.lo)) >> np.uint64(span.shift)
                out.append(np.bincount(bins.astype(np.int64), minlength=1 << BINS_BITS))
        return out

    def update(self, merged: dict) -> None:
        """Narrow every open interval with the pass's merged contributions."""
        for key, spans in list(self.intervals.items()):
            new: dict[Interval, list[int]] = {}
            for span, result in zip(spans, merged.get(key, []), strict=True):
                positions = spans[span]
                if span.collect:
                    unique, counts = result
                    cumulative = np.cumsum(counts)
                    for position in positions:
                        k = int(np.searchsorted(cumulative, position - span.below, side="right"))
                        before = span.below + (int(cumulative[k - 1]) if k else 0)
                        value = float(np.array([unique[k]], dtype=np.uint64).view(np.float64)[0])
                        self.resolved[key, position] = Resolved(value, before, int(counts[k]))
                    continue
                cumulative = np.cumsum(result)
                for position in positions:
                    k = int(np.searchsorted(cumulative, position - span.below, side="right"))
                    before = span.below + (int(cumulative[k - 1]) if k else 0)
                    lo = span.lo + (k << span.shift)
                    hi = min(span.hi, lo + (1 << span.shift) - 1)
                    if lo == hi:  # one key: a single value, repeated
                        value = float(np.array([lo], dtype=np.uint64).view(np.float64)[0])
                        self.resolved[key, position] = Resolved(value, before, int(result[k]))
                        continue
                    count = int(result[k])
                    new.setdefault(Interval(lo, hi, count, before, count <= COLLECT),
                                   []).append(position)
            self.intervals[key] = new

    def at(self, key: object, position: int) -> Resolved:
        return self.resolved[key, int(position)]

    def add(self, wanted: dict) -> None:
        """Ask for more positions (a second round: the neighbours of tied runs)."""
        for key, positions in wanted.items():
            fresh = sorted({int(p) for p in positions if 0 <= int(p) < self.sizes[key]}
                           - {p for (k, p) in self.resolved if k == key})
            if fresh:
                spans = self.intervals.setdefault(key, {})
                spans.setdefault(first_interval(self.sizes[key]), []).extend(fresh)


def merge_parts(parts: Sequence[dict]) -> dict:
    """The contributions of several partitions (each ``{key: part(...)}``) as one: histograms
    added, collections merged into distinct values with summed counts."""
    merged: dict = {}
    for part in parts:
        for key, results in part.items():
            if key not in merged:
                merged[key] = list(results)
                continue
            for i, result in enumerate(results):
                if isinstance(result, tuple):
                    values = np.concatenate([merged[key][i][0], result[0]])
                    counts = np.concatenate([merged[key][i][1], result[1]])
                    unique, inverse = np.unique(values, return_inverse=True)
                    merged[key][i] = (unique, np.bincount(inverse.ravel(), weights=counts)
                                      .astype(np.int64))
                else:
                    merged[key][i] = merged[key][i] + result
    return merged
