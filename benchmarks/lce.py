"""LCE (Luo et al., eq. 4) through the tile engine against straightforward baselines.

    .venv/bin/python -m benchmarks.lce [--n 10000] [--n-large 200000] [--full-exact]
    .venv/bin/python -m benchmarks.lce calibrate
    .venv/bin/python -m benchmarks.lce pieces --before DIR [--rows 1000000] [--repeats 2]
    .venv/bin/python -m benchmarks.lce sweep --before DIR [--rows 1000000] [--repeats 2]

``calibrate`` times the three LCE methods on 100,000 rows of a 2-D embedding (15 confidence
bins, best of three) and prints the per-operation costs next to the fixed ones that
:func:`core.local.lce_plan.plan_method` plans with (:data:`~core.local.lce_plan.PAIR_SECONDS`
…): what to update them from on another machine.

Part 1, n = 10,000 points: the exact LCE of :func:`core.local.lce_estimate.lce` (per confidence
bin, one tiled ``kernel_matmul``) against a dense numpy implementation that builds every bin's full
kernel matrix, and a per-point Python loop timed on a subsample of query points and
extrapolated to all n; ratios are baseline / tile engine. Cases: a 2-D embedding with the
confidences of a 10-class classifier (15 bins), the worst case of one bin holding every point,
and a 10-D embedding. "pairs" is Σ_b n_b², the number of kernel evaluations.

Part 2, n = 200,000 points in 2-D: the binned (grid) approximation against the exact values on
a random subsample of query points (each against its full bin), for two bandwidths and two
grid sizes; the exact time for all n is extrapolated from the subsample (``--full-exact``
times it once instead). The worst-case bound is :func:`core.local.lce_grid.binned_error_bound`.

``pieces`` times the audit's local pieces on the 10⁶-row scale table
(:func:`core.data.simulations.scale_table`, audited as the command line does, read back from a
Parquet file as ``benchmarks.streaming profile`` does): ``lce_section``, ``lcb_section`` and
the report's LCB profile (:func:`core.audit.local_bias.profile_of`, whose cost is
:func:`core.local.lcb_trends.lcb_trends`). Each run is a fresh process, alternately with the
``core`` of the tree ``--before`` (made with ``git archive REV | tar -x -C DIR``; its ``core``
is run with this tree's benchmarks) and with this tree's, ``--repeats`` times each, each piece
twice in each; it prints the CPU seconds (``time.process_time``, every thread) and wall seconds
of each piece (the best of the runs), their ratio, and the largest relative difference between
the two codes' results (every number of the sections, the curve, the LCB values and the
trends).

``sweep`` times the exact sweep alone (:func:`core.local.lce_sweep.sweep_sums_bin`) on the
inputs the MLCE curve gives it in that audit (the sample's 2-D map, each confidence bin at
the curve's γ that the plan sweeps), the ``--before`` tree's module and this tree's
alternately in one process: CPU seconds, their ratio, the largest relative difference of the
sums and how many are equal to the bit.

Target (DESIGN.md): LCE for n = 10,000 in under 1 s on two cores.
"""

from __future__ import annotations

import argparse
import functools
import math
import os
import pickle
import shutil
import subprocess
import sys
import tempfile
import time
import timeit
from pathlib import Path

import numpy as np

from benchmarks.common import load, measure, row
from core.data.simulations import spatially_miscalibrated_classifier as classifier
from core.kernels.engine import whole_machine
from core.kernels.tiles import kernel_matmul
from core.local import lce_plan
from core.local.lce_estimate import _prepare, _sweep_signed, lce
from core.local.lce_grid import binned_error_bound, binned_sums
from core.local.lce_inputs import LCE_TILE, confidence_bins

LOOP_QUERIES = 100
EXACT_QUERIES = 2_000
WIDTHS = (22, 10, 9, 9, 9, 9, 11)


def dense_lce(conf: np.ndarray, correct: np.ndarray, X: np.ndarray, gamma: float,
              n_bins: int = 15) -> np.ndarray:
    """Eq. 4 with every bin's n_b × n_b kernel matrix in memory."""
    bins = confidence_bins(conf, n_bins)
    out = np.empty(conf.shape[0])
    for b in np.unique(bins):
        rows = np.flatnonzero(bins == b)
        Xb = X[rows]
        K = np.zeros((rows.shape[0], rows.shape[0]))
        for k in range(X.shape[1]):
            K += np.abs(Xb[:, None, k] - Xb[None, :, k])
        K = np.exp(-K / (X.shape[1] * gamma))
        out[rows] = np.abs(K @ (conf[rows] - correct[rows]) / K.sum(axis=1))
    return out


def loop_lce(conf: np.ndarray, correct: np.ndarray, X: np.ndarray, gamma: float,
             queries: np.ndarray, n_bins: int = 15) -> np.ndarray:
    """Eq. 4 point by point with a Python loop over the query's bin."""
    bins = confidence_bins(conf, n_bins).tolist()
    points = X.tolist()
    scale = X.shape[1] * gamma
    out = []
    for j in queries.tolist():
        num = den = 0.0
        for i in range(len(points)):
            if bins[i] != bins[j]:
                continue
            k = math.exp(-sum(abs(a - b) for a, b in zip(points[j], points[i], strict=True))
                         / scale)
            num += (conf[i] - correct[i]) * k
            den += k
        out.append(abs(num / den))
    return np.asarray(out)


def exact_at(conf: np.ndarray, correct: np.ndarray, X: np.ndarray, gamma: float,
             queries: np.ndarray, n_bins: int = 15) -> np.ndarray:
    """Exact eq. 4 at the query rows only, each against all points of its bin (tile engine)."""
    bins = confidence_bins(conf, n_bins)
    V = np.column_stack([conf - correct, np.ones(conf.shape[0])])
    out = np.empty(queries.shape[0])
    for b in np.unique(bins[queries]):
        mine = bins[queries] == b
        ref = np.flatnonzero(bins == b)
        sums = kernel_matmul(X[queries[mine]], X[ref], V[ref], gamma, kind="laplacian",
                             tile_size=256)
        out[mine] = np.abs(sums[:, 0] / sums[:, 1])
    return out


def pairs(conf: np.ndarray, n_bins: int) -> float:
    counts = np.bincount(confidence_bins(conf, n_bins))
    return float((counts.astype(np.float64) ** 2).sum())


def part_exact(n: int, gamma: float) -> None:
    print(f"Exact LCE, n = {n:,}, γ = {gamma}; per-point loop on {LOOP_QUERIES} queries, "
          "extrapolated")
    print(row("case", "pairs", "tile s", "tile MiB", "dense s", "dense MiB", "loop s",
              widths=WIDTHS))
    rng = np.random.default_rng(1)
    for name, d, n_bins in (("2-D, 15 bins", 2, 15), ("2-D, 1 bin (worst)", 2, 1),
                            ("10-D, 15 bins", 10, 15)):
        conf, correct, X = classifier(n, d, seed=d)
        lce(conf[:200], correct[:200], X[:200], gamma, n_bins, method="exact")  # warm-up
        tile_s, tile_mib, tile = measure(
            lambda: lce(conf, correct, X, gamma, n_bins, method="exact"), repeats=3)  # noqa: B023
        dense_s, dense_mib, dense = measure(
            lambda: dense_lce(conf, correct, X, gamma, n_bins))  # noqa: B023
        np.testing.assert_allclose(tile, dense, rtol=1e-9, atol=1e-12)
        queries = rng.choice(n, LOOP_QUERIES, replace=False)
        start = time.perf_counter()
        looped = loop_lce(conf, correct, X, gamma, queries, n_bins)
        loop_s = (time.perf_counter() - start) * n / LOOP_QUERIES
        np.testing.assert_allclose(looped, tile[queries], rtol=1e-9, atol=1e-12)
        print(row(name, f"{pairs(conf, n_bins):.2e}", f"{tile_s:.3f}", f"{tile_mib:.1f}",
                  f"{dense_s:.2f}", f"{dense_mib:.0f}", f"{loop_s:.0f}", widths=WIDTHS))
        print(row("  ratio to tile", "", "1", "1", f"{dense_s / tile_s:.1f}x",
                  f"{dense_mib / tile_mib:.0f}x", f"{loop_s / tile_s:.0f}x", widths=WIDTHS))


def part_binned(n: int, full_exact: bool) -> None:
    conf, correct, X = classifier(n, 2, seed=7)
    queries = np.random.default_rng(2).choice(n, min(EXACT_QUERIES, n), replace=False)
    label = "all rows" if full_exact else f"{queries.shape[0]:,} query rows, extrapolated"
    print(f"\nBinned vs exact, n = {n:,} in 2-D (unit box), pairs {pairs(conf, 15):.2e}; "
          f"exact on {label}")
    print(row("γ / grid", "binned s", "bin MiB", "exact s", "speed-up", "max err", "mean err",
              "bound", widths=(12, 9, 9, 9, 9, 10, 10, 9)))
    for gamma in (0.05, 0.2):
        if full_exact:
            exact_s, _, exact = measure(
                lambda: lce(conf, correct, X, gamma, method="exact"))  # noqa: B023
            reference, at = exact, np.arange(n)
        else:
            start = time.perf_counter()
            reference = exact_at(conf, correct, X, gamma, queries)
            exact_s = (time.perf_counter() - start) * n / queries.shape[0]
            at = queries
        for grid in (256, 1024):
            binned_s, binned_mib, binned = measure(
                lambda: lce(conf, correct, X, gamma, method="binned",  # noqa: B023
                            grid_size=grid))  # noqa: B023
            err = np.abs(binned[at] - reference)
            print(row(f"{gamma} / {grid}", f"{binned_s:.3f}", f"{binned_mib:.0f}",
                      f"{exact_s:.1f}", f"{exact_s / binned_s:.0f}x", f"{err.max():.2e}",
                      f"{err.mean():.2e}", f"{binned_error_bound(X, gamma, grid):.3f}",
                      widths=(12, 9, 9, 9, 9, 10, 10, 9)))


def calibrate(n: int = 100_000) -> None:
    """The per-operation costs of :func:`core.local.lce_plan.plan_method`, measured here."""
    conf, correct, X = classifier(n, 2, seed=7)
    data = _prepare(conf, correct, X, 15)
    sizes = data.bin_sizes
    levels = float(sum(size * max(1, math.ceil(math.log2(max(size, 2)))) for size in sizes))
    points = X[:4096]
    V = np.column_stack([conf[:4096] - correct[:4096], np.ones(4096)])

    def best(call) -> float:  # after a warm-up, the best of three (no tracemalloc)
        call()
        return min(timeit.repeat(call, number=1, repeat=3))

    print(f"n = {n:,}, {sizes.size} confidence bins; load average "
          f"{os.getloadavg()[0]:.1f}", flush=True)
    with whole_machine():
        pair = best(lambda: kernel_matmul(points, points, V, 0.1, kind="laplacian",
                                          tile_size=LCE_TILE)) / 4096**2
        sweep = best(lambda: _sweep_signed(data, [0.2])) / levels
    coarse, fine = (best(functools.partial(binned_sums, data.residual, data.features,
                                           data.groups, 0.2, grid))
                    for grid in (256, 1024))
    cells = sizes.size * (1024**2 - 256**2)
    cell = (fine - coarse) / cells
    row_cost = (coarse - cell * sizes.size * 256**2) / n
    print("| unit | measured (s) | fixed in core.local.lce_plan (s) |")
    print("|---|---:|---:|")
    for name, value, fixed in (
            ("pair of the tile engine's sums (d = 2)", pair, lce_plan.PAIR_SECONDS),
            ("row · level of the sweep at one γ", sweep, lce_plan.SWEEP_SECONDS),
            ("row of the binned grid", row_cost, lce_plan.BINNED_ROW_SECONDS),
            ("cell · bin of the binned grid", cell, lce_plan.BINNED_CELL_SECONDS)):
        print(f"| {name} | {value:.2e} | {fixed:.1e} |")
    print(f"load average {os.getloadavg()[0]:.1f}")


# --------------------------------------------------------------------------- audit pieces

PIECES = ("lce_section", "lcb_section", "lcb_trends (profile_of)")


def _audited(data_path: str):
    """The audit, its settings, the audited part and the feature columns of the table at
    ``data_path``, as the command line reads them (imports only names the base's ``core``
    has too)."""
    from core.audit.rows import audit_part, feature_columns
    from core.cli import audit as audit_command
    from core.cli import entry
    from core.data.simulations import SCALE_FEATURES

    options = entry.build_parser().parse_args(
        ["audit", data_path, "--label", "label", "--prob", "prob", "--features",
         ",".join(SCALE_FEATURES), "--groups", "region", "--formats", "png,html"])
    audit = audit_command.load_audit(options)
    settings = audit_command.audit_settings_from_options(options, audit)
    data, _ = audit_part(audit, settings.part)
    return audit, settings, data, feature_columns(audit, settings.features)


def pieces_run(data_path: str, out: str) -> None:
    """One process: the three pieces on the table at ``data_path``, one after the other,
    timed (CPU and wall seconds), their results pickled to ``out``. Imports only names
    that the base branch's ``core`` has too."""
    from core.audit import OnceStore
    from core.audit.landscape import lce_section
    from core.audit.local_bias import ProfileSettings, lcb_section, profile_of
    from core.audit.settings import LocalBiasSettings
    from core.report.charts import TREND_DEGREE, TREND_RESAMPLES

    audit, settings, data, features = _audited(data_path)
    times, results = {}, {}

    def timed(name, call):  # the best of two runs (a loaded machine's noise is one-sided)
        for _ in range(2):
            cpu, wall = time.process_time(), time.perf_counter()
            results[name] = call()
            spent = (time.process_time() - cpu, time.perf_counter() - wall)
            times[name] = min(times.get(name, spent), spent)

    # each section once, as in run_audit (its store: the feature map computed once)
    timed(PIECES[0], lambda: lce_section(data, settings.landscape(features),
                                         store=OnceStore()))
    timed(PIECES[1], lambda: lcb_section(audit, settings.local_bias(features),
                                         store=OnceStore()))
    groups = list(audit.groups.columns[:2])
    profile = ProfileSettings(LocalBiasSettings(features), color=groups[0] if groups else None,
                              facet=groups[1] if len(groups) > 1 else None,
                              degree=TREND_DEGREE, n_resamples=TREND_RESAMPLES,
                              seed=settings.seed)
    timed(PIECES[2], lambda: profile_of(audit, results[PIECES[1]], profile))
    lce, lcb, trends = (results[name] for name in PIECES)
    numbers = {"lce curve": lce.curve[["gamma", "mlce", "mean_lce", "error_bound"]]
               .to_numpy(float), "lce at γ": [lce.mlce], "mce": [lce.mce],
               "lcb values": lcb.values, "lcb cv table": lcb.cv_table.to_numpy(float),
               "lcb bandwidths": [lcb.spec.prob_bandwidth, lcb.spec.feature_bandwidth],
               "trends": trends.trends[["x", "fit", "low", "high", "rows"]].to_numpy(float),
               "profile points": trends.points["lcb"].to_numpy(float)}
    texts = {"lce": repr([lce.curve["method"].tolist(), lce.map, lce.computation]),
             "lcb": repr([lcb.reference, lcb.computation, lcb.exact_seconds, lcb.method,
                          None if lcb.rows is None else lcb.rows.tolist()]),
             "trends": repr([trends.trends["group"].tolist(), trends.skipped,
                             trends.without_neighbours])}
    with open(out, "wb") as handle:
        pickle.dump({"times": times, "numbers": numbers, "texts": texts}, handle)


def _relative(mine, theirs) -> float:
    mine, theirs = np.asarray(mine, float), np.asarray(theirs, float)
    if mine.shape != theirs.shape:
        return float("inf")
    same = (mine == theirs) | (np.isnan(mine) & np.isnan(theirs))
    if same.all():
        return 0.0
    scale = np.maximum(np.abs(theirs), np.finfo(float).tiny)
    return float(np.max(np.where(same, 0.0, np.abs(mine - theirs) / scale)))


def pieces(rows: int, repeats: int, before: Path) -> None:
    """The three pieces with the core of the tree ``before`` and with this tree's, alternately,
    in fresh processes on the same file: CPU and wall seconds, ratios, largest relative
    differences."""
    here = Path(__file__).resolve().parents[1]
    base = before.name
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        path = _scale_parquet(rows, root)
        tree = root / "base"
        shutil.copytree(before / "core", tree / "core")
        shutil.copytree(here / "benchmarks", tree / "benchmarks")  # only core differs
        print(f"n = {rows:,}; pieces one after the other in fresh processes, alternately "
              f"{base}'s core and this branch's; {load()}", flush=True)
        runs: dict[str, list[dict]] = {base: [], "this branch": []}
        for k in range(repeats):
            for name, root_of in ((base, tree), ("this branch", here)):
                out = root / f"{name.replace(' ', '_')}{k}.pickle"
                env = dict(os.environ, PYTHONPATH=str(root_of))
                subprocess.run([sys.executable, "-m", "benchmarks.lce", "pieces-run",
                                "--data", str(path), "--out", str(out)],
                               cwd=root_of, env=env, check=True)
                with open(out, "rb") as handle:
                    runs[name].append(pickle.load(handle))
                cpu = "  ".join(f"{p.split()[0]} {runs[name][-1]['times'][p][0]:.2f}"
                                for p in PIECES)
                print(f"  run {k + 1}, {name}: CPU s {cpu}; {load()}", flush=True)
    widths = (26, 12, 12, 8, 12, 12, 8)
    print(row("piece", "base CPU s", "this CPU s", "ratio", "base wall s", "this wall s",
              "ratio", widths=widths))
    for piece in PIECES:
        old = [min(run["times"][piece][k] for run in runs[base]) for k in (0, 1)]
        new = [min(run["times"][piece][k] for run in runs["this branch"]) for k in (0, 1)]
        print(row(piece, f"{old[0]:.2f}", f"{new[0]:.2f}", f"{old[0] / new[0]:.2f}x",
                  f"{old[1]:.2f}", f"{new[1]:.2f}", f"{old[1] / new[1]:.2f}x", widths=widths))
    total = [sum(min(run["times"][p][0] for run in runs[side]) for p in PIECES)
             for side in (base, "this branch")]
    print(row("all three", f"{total[0]:.2f}", f"{total[1]:.2f}", f"{total[0] / total[1]:.2f}x",
              widths=widths))
    print("largest relative difference, this branch against base (every run against the "
          "first base run):")
    first = runs[base][0]
    for key in first["numbers"]:
        worst = max(_relative(run["numbers"][key], first["numbers"][key])
                    for side in runs.values() for run in side)
        print(f"  {key}: {worst:.2e}")
    texts = all(run["texts"] == first["texts"] for side in runs.values() for run in side)
    print(f"  methods, captions, rows and groups identical: {'yes' if texts else 'NO'}")
    print(load())


def _scale_parquet(rows: int, folder: Path) -> Path:
    from benchmarks.streaming import ROW_GROUP
    from core.data.simulations import scale_table

    path = folder / "scale.parquet"
    scale_table(rows).to_parquet(path, index=False, row_group_size=ROW_GROUP)
    return path


def sweep(rows: int, repeats: int, before: Path) -> None:
    """The exact sweep alone (:func:`core.local.lce_sweep.sweep_sums_bin`) on the MLCE
    curve's inputs in the audit of the scale table: its sample's 2-D map, cut into the
    confidence bins, at the curve's γ that the plan gives the sweep. The ``before`` tree's
    module and this tree's, alternately in this process, every bin at those γ in one call
    each as ``_sweep_signed`` makes them: CPU seconds (the best of ``repeats``), ratio, the
    largest relative difference and how many sums are equal to the bit."""
    import importlib.util

    from core import metrics
    from core.audit import OnceStore
    from core.audit.landscape import CURVE_GAMMAS, LCE_BINS, feature_map, lce_rows
    from core.local.lce_plan import plan_methods
    from core.local.lce_sweep import sweep_sums_bin

    with tempfile.TemporaryDirectory() as folder:
        _, settings, data, features = _audited(str(_scale_parquet(rows, Path(folder))))
    landscape = settings.landscape(features)
    coords, _ = OnceStore().section(feature_map, data, landscape)
    conf, correct = metrics.confidence_outcome(data.probs, data.y, "top-label")
    sample = lce_rows(data.n, landscape.seed)
    if sample is not None:
        conf, correct, coords = conf[sample], correct[sample], coords[sample]
    prepared = _prepare(conf, correct, coords, LCE_BINS)
    plans = plan_methods(prepared.features, CURVE_GAMMAS, landscape.computation, None,
                         LCE_BINS, prepared.bin_sizes)
    gammas = [g for g, plan in zip(CURVE_GAMMAS, plans, strict=True) if plan.name == "sweep"]
    spec = importlib.util.spec_from_file_location("before_lce_sweep",
                                                  before / "core" / "local" / "lce_sweep.py")
    old = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = old  # its dataclasses look their module up
    spec.loader.exec_module(old)
    bins = sorted(prepared.groups, key=len, reverse=True)
    inputs = [(prepared.features[r], np.vstack([prepared.residual[r] + 1.0, np.ones(r.size)]))
              for r in bins]
    print(f"n = {rows:,}: {coords.shape[0]:,} sampled rows in {len(bins)} bins "
          f"({', '.join(f'{r.size:,}' for r in bins)}), {len(gammas)} γ by the sweep "
          f"({gammas[0]:.4g} … {gammas[-1]:.4g}); {load()}", flush=True)
    best, sums = {}, {}
    for _ in range(repeats):
        for name, call in ((before.name, old.sweep_sums_bin), ("this branch", sweep_sums_bin)):
            start = time.process_time()
            sums[name] = [call(points, weights, gammas) for points, weights in inputs]
            best[name] = min(best.get(name, math.inf), time.process_time() - start)
    same = sum(int((a == b).sum()) for a, b in zip(*sums.values(), strict=True))
    total = sum(a.size for a in sums[before.name])
    worst = max(_relative(b, a) for a, b in zip(*sums.values(), strict=True))
    print(f"CPU s, best of {repeats}: {before.name} {best[before.name]:.2f}, this branch "
          f"{best['this branch']:.2f}, ratio {best[before.name] / best['this branch']:.2f}x; "
          f"largest relative difference {worst:.2e}, {same:,} of {total:,} sums equal to the "
          f"bit; {load()}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", nargs="?",
                        choices=("calibrate", "pieces", "pieces-run", "sweep"),
                        help="calibrate: the LCE plan's per-operation costs; pieces: the "
                             "audit's local pieces at 10⁶ rows, base's code against this "
                             "branch's (pieces-run: one process of it); sweep: the exact "
                             "sweep alone on the audit's LCE inputs, base's against this "
                             "branch's")
    parser.add_argument("--n", type=int, default=10_000)
    parser.add_argument("--n-large", type=int, default=200_000)
    parser.add_argument("--gamma", type=float, default=0.2)
    parser.add_argument("--full-exact", action="store_true",
                        help="time the exact LCE on all n-large rows (minutes)")
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--before", type=Path,
                        help="pieces, sweep: a copy of the code compared (git archive REV | "
                             "tar -x -C DIR)")
    parser.add_argument("--data")
    parser.add_argument("--out")
    args = parser.parse_args()
    if args.command == "calibrate":
        calibrate()
        return
    if args.command == "pieces":
        if args.before is None:
            parser.error("pieces needs --before DIR (git archive REV | tar -x -C DIR)")
        pieces(args.rows, args.repeats, args.before)
        return
    if args.command == "sweep":
        if args.before is None:
            parser.error("sweep needs --before DIR (git archive REV | tar -x -C DIR)")
        sweep(args.rows, args.repeats, args.before)
        return
    if args.command == "pieces-run":
        pieces_run(args.data, args.out)
        return
    part_exact(args.n, args.gamma)
    part_binned(args.n_large, args.full_exact)


if __name__ == "__main__":
    main()
