"""The GPU engine against the threaded one: same statistic, and its speed at scale.

    python -m benchmarks.gpu [--sizes 20000,100000,1000000] [--resamples 1000]
    python -m benchmarks.gpu --part rff [--sizes 1000000,10000000] [--resamples 200]
    python -m benchmarks.gpu --part stream [--sizes 3000000]

Needs CuPy with a CUDA device (run on a GPU machine).

``--part exact`` (default): for every n, the exact KLCE test (consistency-combined null, the
I-trustworthy Type-II setting with d = 3) on the GPU in float64 and float32; at the first n also
on the threaded engine, with the largest relative difference of the statistic and the null
values, and the float32 error in units of the null's standard deviation.

``--part rff``: the random-feature sums (:func:`core.kernels.rff.accumulate_maps`, the sums of
the streamed audit's kernel pass) through the KLCE test (d = 3) and the SKCE test with
``computation="rff"`` (D = 1,024 features, B resamples), on the threaded engine (one thread per
core of the machine) and on the GPU, one after the other on the same data: both times, their
ratio, and the largest difference of the statistic and of the null values in units of the
null's standard deviation (the GPU computes the features in float32 as the threads do, so the
two differ by the rounding of the float32 products), and the two p-values.

``--part stream``: the streamed audit (:func:`core.stream.run_stream_audit`, default settings)
of the benchmark's scale table (one Parquet file, row groups of 131,072 rows) on the threaded
engine and on the GPU, one after the other: each pass's seconds, and the largest relative
difference of the audit's tests (statistic and p-value) and metrics.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from core.data.simulations import type_two_paper
from core.kernels import engine
from core.kernels.engine import machine_workers
from core.stattests.klce import klce_test
from core.stattests.skce import skce_test


def timed(p, y, X, resamples: int, name: str, dtype: str = "float64"):
    with engine.use(name, dtype=dtype):
        start = time.perf_counter()
        result = klce_test(p, y, X, n_resamples=resamples, seed=0)
        return time.perf_counter() - start, result


def random_features(sizes: list[int], resamples: int) -> None:
    """``--part rff`` (module doc)."""
    tests = {"KLCE": lambda p, y, X: klce_test(p, y, X, n_resamples=resamples, seed=0,
                                               computation="rff"),
             "SKCE": lambda p, y, X: skce_test(p, y, n_resamples=resamples, seed=0,
                                               computation="rff")}
    warm_p, warm_y, warm_X = type_two_paper(np.random.default_rng(1), n=20_000, d=3)
    with engine.use("gpu"):  # CuPy compiles its kernels on first use
        for test in tests.values():
            test(warm_p, warm_y, warm_X)
    print(f"random-feature sums, D = 1,024, B = {resamples}; threads: {machine_workers()}")
    for n in sizes:
        p, y, X = type_two_paper(np.random.default_rng(n), n=n, d=3)
        for name, test in tests.items():
            seconds, results = {}, {}
            for chosen in ("threads", "gpu"):
                with engine.use(chosen):
                    start = time.perf_counter()
                    results[chosen] = test(p, y, X)
                    seconds[chosen] = time.perf_counter() - start
            cpu, gpu = results["threads"], results["gpu"]
            assert str(gpu.parameters["computation"]).startswith("rff"), gpu.parameters
            scale = float(np.std(cpu.null))
            shift = max(abs(cpu.statistic - gpu.statistic),
                        float(np.max(np.abs(cpu.null - gpu.null)))) / scale
            print(f"{name} n = {n:>10,}: threads {seconds['threads']:7.2f} s, "
                  f"gpu {seconds['gpu']:7.2f} s ({seconds['threads'] / seconds['gpu']:.1f}×); "
                  f"largest difference {shift:.1e} null sd; "
                  f"p {cpu.p_value:.4f} / {gpu.p_value:.4f}", flush=True)


def streamed_audit(sizes: list[int]) -> None:
    """``--part stream`` (module doc)."""
    import tempfile
    from pathlib import Path

    from core.audit import AuditSettings
    from core.audit.settings import default_bootstrap
    from core.data.mapping import ColumnMapping
    from core.data.simulations import SCALE_FEATURES, scale_table
    from core.data.stream_sources import open_source
    from core.stream import run_stream_audit

    mapping = ColumnMapping(label="label", probs=("prob",), features=SCALE_FEATURES,
                            groups=("region",))
    print(f"streamed audit of the scale table; threads: {machine_workers()}")
    for n in sizes:
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "scale.parquet"
            scale_table(n).to_parquet(path, index=False, row_group_size=131_072)
            settings = AuditSettings(n_bootstrap=default_bootstrap(n))
            numbers, seconds = {}, {}
            for chosen in ("threads", "gpu"):
                with engine.use(chosen):
                    start = time.perf_counter()
                    audit = run_stream_audit(open_source(path), mapping, settings).result
                    seconds[chosen] = time.perf_counter() - start
                tests = audit.reliability.tests
                numbers[chosen] = np.array(
                    [audit.klce_grid.aggregated.statistic, audit.klce_grid.aggregated.p_value]
                    + [v for test in tests.values() for v in (test.statistic, test.p_value)]
                    + list(audit.reliability.metrics["value"].astype(float)))
                passes = ", ".join(f"{name} {s:.1f} s" for name, s in audit.stream.passes)
                print(f"n = {n:,} {chosen}: {seconds[chosen]:.1f} s ({passes})", flush=True)
            a, b = numbers["threads"], numbers["gpu"]
            scale = np.maximum(np.abs(a), 1e-300)
            finite = np.isfinite(a) & np.isfinite(b)
            print(f"n = {n:,}: threads / gpu {seconds['threads'] / seconds['gpu']:.2f}×; "
                  f"largest relative difference of {finite.sum()} numbers "
                  f"{float(np.max(np.abs(a - b)[finite] / scale[finite])):.1e}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", choices=("exact", "rff", "stream"), default="exact")
    parser.add_argument("--sizes", default=None,
                        help="rows, comma-separated (exact: 20000,100000,1000000; "
                             "rff: 1000000,10000000; stream: 3000000)")
    parser.add_argument("--resamples", type=int, default=None,
                        help="B (exact: 1000; rff: 200)")
    args = parser.parse_args()
    if not engine.gpu_available():
        raise SystemExit("No CUDA device with CuPy: run this on a GPU machine.")
    if args.part == "stream":
        streamed_audit([int(s) for s in (args.sizes or "3000000").split(",")])
        return
    if args.part == "rff":
        random_features([int(s) for s in (args.sizes or "1000000,10000000").split(",")],
                        args.resamples or 200)
        return
    sizes = [int(s) for s in (args.sizes or "20000,100000,1000000").split(",")]
    args.resamples = args.resamples or 1000
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
