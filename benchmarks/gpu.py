"""The GPU engine against the threaded one: same statistic, and its speed at scale.

    python -m benchmarks.gpu [--sizes 20000,100000,1000000] [--resamples 1000]

Needs CuPy with a CUDA device (run on a GPU machine). For every n: the exact KLCE test
(consistency-combined null, the I-trustworthy Type-II setting with d = 3) on the GPU in float64
and float32; at the first n also on the threaded engine, with the largest relative difference of
the statistic and the null values, and the float32 error in units of the null's standard
deviation.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from core.data.simulations import type_two_paper
from core.kernels import engine
from core.stattests.klce import klce_test


def timed(p, y, X, resamples: int, name: str, dtype: str = "float64"):
    with engine.use(name, dtype=dtype):
        start = time.perf_counter()
        result = klce_test(p, y, X, n_resamples=resamples, seed=0)
        return time.perf_counter() - start, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="20000,100000,1000000")
    parser.add_argument("--resamples", type=int, default=1000)
    args = parser.parse_args()
    if not engine.gpu_available():
        raise SystemExit("No CUDA device with CuPy: run this on a GPU machine.")
    sizes = [int(s) for s in args.sizes.split(",")]
    print(f"KLCE test, B = {args.resamples}, consistency-combined null")
    for k, n in enumerate(sizes):
        p, y, X = type_two_paper(np.random.default_rng(n), n=n, d=3)
        gpu64, r64 = timed(p, y, X, args.resamples, "gpu")
        gpu32, r32 = timed(p, y, X, args.resamples, "gpu", "float32")
        line = f"n = {n:>9,}: gpu float64 {gpu64:8.2f} s, float32 {gpu32:8.2f} s"
        shift = abs(r32.statistic - r64.statistic) / np.std(r64.null)
        line += f", float32 shift {shift:.2e} null sd, p {r64.p_value:.4f} / {r32.p_value:.4f}"
        if k == 0:
            cpu, rc = timed(p, y, X, args.resamples, "threads")
            diff = max(abs(rc.statistic - r64.statistic) / abs(rc.statistic),
                       float(np.max(np.abs(rc.null - r64.null) / np.abs(rc.null).max())))
            line += f"; threads {cpu:.2f} s ({cpu / gpu64:.0f}× the GPU), rel. diff {diff:.1e}"
        print(line, flush=True)


if __name__ == "__main__":
    main()
