"""Slice discovery at scale: the whole family's resampled statistics in one chunked product
against a per-slice loop, in one process.

    .venv/bin/python -m benchmarks.slices [--sizes 100000,1000000] [--resamples 1000]
        [--engine threads|gpu] [--baseline-slices 60]

The table: 10 audit columns — 5 categorical (3 to 6 levels) and 5 numeric (4 ranges) —
depth 2, every slice of at least 1 % of the rows (about 900 slices), B consistency resamples,
FWER mode. Measured: :func:`core.local.discover_slices` end to end, with its parts (slice
enumeration, the resampled sums through the tile engine, per-slice p-values and the max-|T|
adjustment). Baselines: the same resampled sums by a Python loop over the slices — the
slice's rows taken from its mask and B resampled outcome columns summed over them — with
the resamples drawn once as an n × B matrix (shared draws: n × B bytes of memory) or drawn
by each slice for its own rows (own draws: a tool that tests slices one by one), the draws'
time included; timed over ``--baseline-slices`` slices and scaled to the family (the time
is linear in the slices' rows; above :data:`BASELINE_ROWS` rows it is measured there and
scaled by the rows, marked "est."). Ratios = baseline / our resampled sums. Targets (two
cores): 10⁵ rows within 10 s, 10⁶ rows within 60 s.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd

from core.kernels import engine
from core.local import discover_slices, enumerate_slices

LEVELS = (3, 4, 5, 6, 6)


def table(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray, pd.DataFrame]:
    rng = np.random.default_rng(seed)
    columns = {f"c{j}": rng.choice(np.array([f"level {i}" for i in range(levels)],
                                            dtype=object), n)
               for j, levels in enumerate(LEVELS)}
    columns.update({f"x{j}": rng.standard_normal(n) for j in range(5)})
    frame = pd.DataFrame(columns)
    p = rng.beta(2, 5, n)
    return p, (rng.random(n) < p).astype(np.int64), frame


#: The baseline holds n × B draws (one byte each): above this many rows it is measured at
#: this size and scaled by the rows (it is linear in them).
BASELINE_ROWS = 200_000


def baseline(p: np.ndarray, family, resamples: int, slices: int, seed: int
             ) -> tuple[float, float]:
    """Seconds of two per-slice loops for the whole family, from ``slices`` of its slices:
    (shared draws: the n × B outcomes drawn once, then each slice's rows summed; own draws:
    each slice draws its own B resamples of its rows, as a tool testing slices one by one
    does)."""
    rng = np.random.default_rng(seed)
    start = time.perf_counter()
    draws = np.empty((p.size, resamples), dtype=bool)
    for first in range(0, p.size, 4096):
        rows = slice(first, first + 4096)
        draws[rows] = rng.random((draws[rows].shape[0], resamples)) < p[rows, None]
    drawing = time.perf_counter() - start
    chosen = np.random.default_rng(1).choice(family.n_slices, min(slices, family.n_slices),
                                             replace=False)
    scale = family.sizes.sum() / family.sizes[chosen].sum()
    start = time.perf_counter()
    for k in chosen:
        draws[np.flatnonzero(family.mask(k))].sum(axis=0)
    shared = drawing + (time.perf_counter() - start) * scale
    start = time.perf_counter()
    for k in chosen:
        rows = np.flatnonzero(family.mask(k))
        (rng.random((rows.size, resamples)) < p[rows, None]).sum(axis=0)
    return shared, (time.perf_counter() - start) * scale


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100000,1000000")
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--engine", default="threads", choices=("threads", "gpu"))
    parser.add_argument("--baseline-slices", type=int, default=60)
    args = parser.parse_args()
    print(f"discover_slices: 10 columns, depth 2, B = {args.resamples}, FWER, engine "
          f"{args.engine}")
    print(f"{'rows':>10} {'slices':>7} {'total s':>8} {'enumerate':>10} {'resample':>9} "
          f"{'p-values':>9} {'loop, shared draws':>19} {'loop, own draws':>16}")
    for n in (int(s) for s in args.sizes.split(",")):
        p, y, frame = table(n)
        marks: dict[str, float] = {}
        with engine.use(args.engine):
            start = time.perf_counter()
            result = discover_slices(p, y, frame, n_resamples=args.resamples,
                                     progress=lambda f, m, marks=marks: marks.setdefault(
                                         m.split("…")[0].split(":")[0], time.perf_counter()))
            total = time.perf_counter() - start
        times = [*marks.values(), start + total]
        steps = {name: times[i + 1] - times[i] for i, name in enumerate(marks)}
        enumerate_s = steps.get("Enumerating the slices", 0.0)
        resample_s = sum(v for k, v in steps.items() if k.startswith("Resampling"))
        pvalues_s = total - enumerate_s - resample_s
        measured = min(n, BASELINE_ROWS)
        family = enumerate_slices(table(measured)[2])
        shared, own = (seconds * n / measured for seconds in baseline(
            p[:measured], family, args.resamples, args.baseline_slices, 0))
        note = "" if measured == n else " (est.)"
        print(f"{n:>10,} {result.n_tested:>7,} {total:>8.1f} {enumerate_s:>10.1f} "
              f"{resample_s:>9.1f} {pvalues_s:>9.1f} "
              f"{f'{shared:.1f} s ({shared / resample_s:.1f}×)':>19} "
              f"{f'{own:.1f} s ({own / resample_s:.0f}×)':>16}{note}", flush=True)


if __name__ == "__main__":
    main()
